"""Reflow: re-place a run of a voice's kept notes on the grid so that a missing note fits.

Dense textures leave no free window for a missing pitch class: every grid step of the gap is held by
the same pitch class in another voice, and moving a single neighbour (trim, shift by one step) meets
another conflict. Reflow solves the voice's local placement exactly: the notes around the gap keep
their order and pitches (other voices stay fixed); each gets a grid onset where it meets no
collision or crossing, as near its old onset as the run allows (earliest/latest feasible onsets give
the range), then its old duration where that stays clean. The run widens until a placement exists.
"""

from __future__ import annotations

import random
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

    def __init__(self, cand: Candidate, midis: Sequence[int], kept: bool, pushes: bool | str = False,
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
            if not ver.collisions(trial) and not ver.crossing(trial):
                return trial.midi
        if self.pushes:
            for trial in trials:
                if not ver.crossing(trial):
                    return trial.midi
        for trial in trials:
            if _clean(ver, trial, self.kept):
                return trial.midi
        if self.pushes == "all":  # the last resort: crossed notes will be moved away too
            return trials[0].midi if trials else None
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
           rung: str = "reflow", push_all: bool | str = False) -> Candidate | None:
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
        notes = [_Note(c, _octaves(ver, c), True, push_all, cache=cache) for c in run_before]
        notes += [_Note(cand, midis, False, push_all or pushes, cache)]
        notes += [_Note(c, _octaves(ver, c), True, push_all, cache=cache) for c in run_after]
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
        moved = note.cand if (onset, duration, midi) == (note.cand.onset, note.cand.duration, note.cand.midi) \
            else note.cand.changed("reflow", onset=onset, duration=duration, midi=midi)
        if not kept and moved is not note.cand:
            moved = moved.changed(new_rung)
        if kept:
            ctx.undo.append((note.cand.id, note.cand))
            ver.kept[note.cand.id].cand = moved
        else:
            result = moved
    return result


def reflow_pushing(ctx: RepairContext, cand: Candidate, midis: Sequence[int]) -> bool:
    """When no placement exists with the other voices fixed: place the note where only same-pitch-class
    notes of other voices stand in its way, then reflow each of those in its own voice; failing that,
    let the re-placed notes of its voice push such notes too (dense textures). Keeps the note and
    returns True, or leaves every note as it was and returns False."""
    for push_all in (False, True, "all"):
        state = ctx.checkpoint()
        if _push(ctx, cand, midis, push_all):
            ctx.undo.clear()
            return True
        ctx.restore(state)
    return False


def _push(ctx: RepairContext, cand: Candidate, midis: Sequence[int], push_all: bool | str) -> bool:
    """One pushing reflow: ``push_all`` False (only the new note may collide), True (every re-placed
    note of its voice may collide) or ``"all"`` (they may also cross: crossed notes move too)."""
    ver = ctx.verifier
    fixed = reflow(ctx, cand, midis, pushes=True, push_all=push_all)
    if fixed is None:
        return False
    crossing = push_all == "all"
    ver.add(fixed)
    section = cand.slot.section
    voice = [ver.kept[k].cand for k in ver.voice_order(cand.voice) if ver.kept[k].cand.slot.section == section]
    blockers = {b.id: b for c in (voice if push_all else [fixed])
                for b in ver.collisions(c) + (ver.crossing(c) if crossing else [])}
    for blocker in blockers.values():
        if blocker.id not in ver.kept:
            continue
        current = ver.kept[blocker.id].cand
        ver.remove(current.id)
        moved = reflow(ctx, replace(current, until=None), _octaves(ver, current), rung="reflow")
        if moved is None or ver.problems(moved, crossing_ok=True):
            return False
        ver.add(moved)
    touched = {cand.voice, *(b.voice for b in blockers.values())}
    return not any(ver.problems(k.cand, crossing_ok=True) for k in list(ver.kept.values())
                   if k.cand.voice in touched and k.cand.slot.section == section)




def relax_section(ctx: RepairContext, cand: Candidate, midis: Sequence[int], iterations: int = 6000) -> bool:
    """The last resort for dense textures, when no voice can make room with the others fixed: place
    the note by re-placing every note of its section at once (all voices; order, pitch class and
    voice kept, octave free), by min-conflicts search on the grid with one-step spans (two notes
    meet only on the same step), then give each note back as much of its old duration as stays clean.
    Keeps the note and returns True, or leaves every note as it was and returns False."""
    ver = ctx.verifier
    grid = ctx.grid
    sec = ver.task.section(cand.slot.section)
    steps = int((sec.end - sec.start) / grid)
    order = {v: i for i, v in enumerate(ver.task.voice_ids)}
    lines: dict[str, list[Candidate]] = {}
    for voice in ver.task.voice_ids:
        lines[voice] = [ver.kept[k].cand for k in ver.voice_order(voice) if ver.kept[k].cand.slot.section == sec.id]
    mine = lines[cand.voice]
    at = sum(1 for c in mine if c.slot.index < cand.slot.index)
    lines[cand.voice] = [*mine[:at], cand, *mine[at:]]
    notes = [replace(c, until=None) for v in ver.task.voice_ids for c in lines[v]]
    lines = {v: [n for n in notes if n.voice == v] for v in lines}
    if any(len(line) > steps for line in lines.values()):
        return False
    index = {c.id: i for i, c in enumerate(notes)}
    options = [tuple(midis) if c.id == cand.id else _octaves(ver, c) for c in notes]
    step = [min(steps - 1, max(0, int((c.onset - sec.start) // grid))) for c in notes]
    midi = [o[0] for o in options]
    crossed = set(ver.crossing_ids)
    rng = random.Random(f"relax/{cand.id}")
    neighbours = {}
    for line in lines.values():
        for k, c in enumerate(line):
            neighbours[index[c.id]] = (index[line[k - 1].id] if k else None,
                                       index[line[k + 1].id] if k + 1 < len(line) else None)
    by_step: dict[int, set[int]] = {}
    for i, s in enumerate(step):
        by_step.setdefault(s, set()).add(i)

    def cost(i: int, s: int, m: int) -> int:
        prev, nxt = neighbours[i]
        bad = (prev is not None and step[prev] >= s) + (nxt is not None and step[nxt] <= s)
        for j in by_step.get(s, ()):
            if j == i or notes[j].voice == notes[i].voice:
                continue
            if midi[j] % 12 == m % 12:
                bad += 1
            above = order[notes[j].voice] < order[notes[i].voice]
            if (above and midi[j] < m) or (not above and midi[j] > m):
                bad += 0 if notes[i].id in crossed and notes[j].id in crossed else 1
        return bad

    for _ in range(iterations):
        conflicted = [i for i in range(len(notes)) if cost(i, step[i], midi[i])]
        if not conflicted:
            break
        i = rng.choice(conflicted)
        prev, nxt = neighbours[i]
        lo = 0 if prev is None else max(0, step[prev] - 2)
        hi = steps - 1 if nxt is None else min(steps - 1, step[nxt] + 2)
        trials = [(cost(i, s, m), abs(s - step[i]), rng.random(), s, m) for s in range(lo, hi + 1) for m in options[i]
                  if (s, m) != (step[i], midi[i])]
        if not trials:
            continue
        if rng.random() < 0.2:  # a random step now and then: min-conflicts alone gets stuck
            _, _, _, s, m = rng.choice(trials)
        else:
            _, _, _, s, m = min(trials)
        by_step[step[i]].discard(i)
        step[i], midi[i] = s, m
        by_step.setdefault(s, set()).add(i)
    else:
        return False
    state = ctx.checkpoint()
    for c in notes:
        if c.id in ver.kept:
            ver.remove(c.id)
    placed = []
    for i, c in enumerate(notes):
        onset = sec.start + step[i] * grid
        if (onset, midi[i]) == (c.onset, c.midi) and c.id != cand.id:
            moved = c.changed("reflow", duration=grid) if c.duration != grid else c
        else:
            moved = c.changed("reflow", onset=onset, duration=grid, midi=midi[i])
        placed.append((c, moved))
        ver.add(moved)
    for i, (old, moved) in enumerate(placed):  # durations back, as long as they stay clean
        _, nxt = neighbours[i]
        limit = sec.end if nxt is None else sec.start + step[nxt] * grid
        duration = _floor(min(max(old.duration, grid), limit - moved.onset), grid)
        while duration > grid and ver.problems(moved.changed("reflow", duration=duration), crossing_ok=True):
            duration -= grid
        if duration != moved.duration:
            ver.kept[moved.id].cand = moved.changed("reflow", duration=duration) if (
                duration != old.duration or moved.onset != old.onset or moved.midi != old.midi) else old
    if all(not ver.problems(ver.kept[c.id].cand, crossing_ok=True) for c in notes):
        ctx.undo.clear()
        return True
    ctx.restore(state)
    return False


__all__ = ["reflow", "reflow_pushing", "relax_section"]
