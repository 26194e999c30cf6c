"""Reflow: re-place a run of a voice's kept notes on the grid so that a missing note fits.

Dense textures leave no free window for a missing pitch class: every grid step of the gap is held by
the same pitch class in another voice, and moving a single neighbour (trim, shift by one step) meets
another conflict. Reflow solves the voice's local placement exactly: the notes around the gap keep
their order and pitches (other voices stay fixed); each gets a grid onset where it meets no
collision or crossing, as near its old onset as the run allows (earliest/latest feasible onsets give
the range), then its old duration where that stays clean. The run widens until a placement exists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction

from serialkit.harness.repair import RepairContext
from serialkit.harness.verify import Candidate, Verifier


def _ceil(value: Fraction, grid: Fraction) -> Fraction:
    return -(-value // grid) * grid


def _floor(value: Fraction, grid: Fraction) -> Fraction:
    return (value // grid) * grid


def _clean(ver: Verifier, cand: Candidate, kept: bool = False) -> bool:
    """No collision, and no crossing beyond what the run already holds: a kept note that crossed may
    still cross notes already counted; a new note may cross within the task's crossing budget."""
    if ver.collisions(cand):
        return False
    cross = {o.id for o in ver.crossing(cand)}
    if not cross:
        return True
    if kept:
        return cand.id in ver.crossing_ids and cross <= ver.crossing_ids
    return len(ver.crossing_ids | cross | {cand.id}) <= ver.crossing_budget


class _Note:
    """One note of the run: the kept candidate (or the new one) and the pitches it may take."""

    def __init__(self, cand: Candidate, midis: Sequence[int], kept: bool, pushes: bool = False,
                 cache: dict[tuple[str, Fraction, Fraction], int | None] | None = None) -> None:
        self.cand = cand
        self.midis = tuple(midis)
        self.kept = kept
        self.pushes = pushes  # the note may collide: the colliding notes will be moved away after
        self.cache = {} if cache is None else cache  # other voices stay fixed during one reflow

    def fits(self, ver: Verifier, onset: Fraction, duration: Fraction) -> int | None:
        """The first pitch with which the note is clean at this span (uncrossed first), or None."""
        key = (self.cand.id, onset, duration)
        if key not in self.cache:
            self.cache[key] = self._fits(ver, onset, duration)
        return self.cache[key]

    def _fits(self, ver: Verifier, onset: Fraction, duration: Fraction) -> int | None:
        trials = [self.cand.changed("retime", onset=onset, duration=duration, midi=m) for m in self.midis]
        for trial in trials:
            if (self.pushes or not ver.collisions(trial)) and not ver.crossing(trial):
                return trial.midi
        for trial in trials:
            if _clean(ver, trial, self.kept):
                return trial.midi
        return None


def _place(ver: Verifier, notes: list[_Note], left: Fraction, right: Fraction,
           grid: Fraction) -> list[tuple[Fraction, int]] | None:
    """Grid onsets (and pitches) for the notes in order within [left, right), or None."""
    steps_left, last = _ceil(left, grid), _floor(right, grid) - grid
    latest: list[Fraction] = []
    t = last
    for note in reversed(notes):  # latest feasible onsets
        while t >= steps_left and note.fits(ver, t, grid) is None:
            t -= grid
        if t < steps_left:
            return None
        latest.append(t)
        t -= grid
    latest.reverse()
    out: list[tuple[Fraction, int]] = []
    lower = steps_left
    for note, hi in zip(notes, latest, strict=True):
        want = min(max(_floor(note.cand.onset, grid), lower), hi)
        best: tuple[Fraction, int] | None = None
        for delta in range(int((hi - lower) / grid) + 1):
            for t in (want - delta * grid, want + delta * grid):
                if lower <= t <= hi and best is None:
                    midi = note.fits(ver, t, grid)
                    if midi is not None:
                        best = (t, midi)
            if best is not None:
                break
        if best is None:
            return None
        out.append(best)
        lower = best[0] + grid
    return out


def _octaves(ver: Verifier, cand: Candidate) -> tuple[int, ...]:
    """A kept note's own pitch first, then its pitch class in the voice's other octaves (nearest
    first): a dense texture may leave a note no place between its neighbours in its old octave."""
    voice = ver.task.voice(cand.voice)
    assert voice.low is not None and voice.high is not None
    others = sorted((m for m in range(voice.low, voice.high + 1) if m % 12 == cand.midi % 12 and m != cand.midi),
                    key=lambda m: (abs(m - cand.midi), m))
    return (cand.midi, *others)


def reflow(ctx: RepairContext, cand: Candidate, midis: Sequence[int], widest: int = 48, pushes: bool = False,
           rung: str = "rewrite") -> Candidate | None:
    """Place ``cand`` (a note for an empty slot, with the pitches it may take) by re-placing up to
    ``widest`` kept notes on each side of it in its voice and section; the neighbours' changes are
    logged in ``ctx.undo``. Returns the placed candidate (not yet kept), or None."""
    ver = ctx.verifier
    grid = ctx.grid
    sec = ver.task.section(cand.slot.section)
    order = [ver.kept[k].cand for k in ver.voice_order(cand.voice) if ver.kept[k].cand.slot.section == sec.id]
    split = sum(1 for c in order if c.slot.index < cand.slot.index)
    cache: dict[tuple[str, Fraction, Fraction], int | None] = {}
    before, after = order[:split], order[split:]
    for k in sorted({0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, widest, max(len(before), len(after))}):
        run_before = before[max(0, len(before) - k):]
        run_after = after[:k]
        left = before[len(before) - k - 1].end if len(before) > k else sec.start
        right = after[k].onset if len(after) > k else sec.end
        notes = [_Note(c, _octaves(ver, c), True, cache=cache) for c in run_before]
        notes += [_Note(cand, midis, False, pushes, cache)] + [_Note(c, _octaves(ver, c), True, cache=cache)
                                                               for c in run_after]
        for note in notes:  # the run is re-placed: its old spans must not block itself
            if note.cand.id in ver.kept:
                ver.kept[note.cand.id].cand = note.cand.changed("retime", duration=Fraction(0))
        placed = _place(ver, notes, left, right, grid)
        for note in notes:
            if note.cand.id in ver.kept:
                ver.kept[note.cand.id].cand = note.cand
        if placed is not None:
            return _commit(ctx, notes, placed, right, rung)
        if k >= len(before) and k >= len(after) or k >= widest:
            break
    return None


def _commit(ctx: RepairContext, notes: list[_Note], placed: list[tuple[Fraction, int]],
            right: Fraction, new_rung: str) -> Candidate:
    """Move the run's kept notes to their new onsets with the longest clean durations."""
    ver = ctx.verifier
    grid = ctx.grid
    result = notes[0].cand
    for i, (note, (onset, midi)) in enumerate(zip(notes, placed, strict=True)):
        nxt = placed[i + 1][0] if i + 1 < len(placed) else right
        target = max(grid, min(note.cand.duration, nxt - onset))
        duration = _floor(target, grid) if target >= grid else grid
        kept = note.cand.id in ver.kept
        if kept:  # its old span must not count against its new one
            ver.kept[note.cand.id].cand = note.cand.changed("retime", duration=Fraction(0))
        while duration > grid and not _clean(ver, note.cand.changed("retime", onset=onset, duration=duration,
                                                                     midi=midi), kept):
            duration -= grid
        rung = "retime" if kept else new_rung
        moved = note.cand if (onset, duration, midi) == (note.cand.onset, note.cand.duration, note.cand.midi) \
            else note.cand.changed(rung, onset=onset, duration=duration, midi=midi)
        if kept:
            ctx.undo.append((note.cand.id, note.cand))
            ver.kept[note.cand.id].cand = moved
        else:
            result = moved
    return result


def reflow_pushing(ctx: RepairContext, cand: Candidate, midis: Sequence[int]) -> bool:
    """When no placement exists with the other voices fixed: place the note where only same-pitch-class
    notes of other voices stand in its way, then reflow each of those in its own voice. Keeps the
    note and returns True, or leaves every note as it was and returns False."""
    ver = ctx.verifier
    state = ver.snapshot()
    ctx.undo.clear()
    fixed = reflow(ctx, cand, midis, pushes=True)
    if fixed is not None:
        blockers = ver.collisions(fixed)
        ver.add(fixed)
        for blocker in blockers:
            ver.remove(blocker.id)
            moved = reflow(ctx, replace(blocker, until=None), (blocker.midi,), rung="retime")
            if moved is None or ver.problems(moved, crossing_ok=True):
                break
            ver.add(moved)
        else:
            if not ver.problems(ver.kept[fixed.id].cand, crossing_ok=True):
                ctx.undo.clear()
                return True
    ver.restore(state)
    ctx.undo.clear()
    return False


__all__ = ["reflow", "reflow_pushing"]
