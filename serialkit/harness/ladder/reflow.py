"""Reflow: re-place a run of a voice's kept notes on the grid so that a missing note fits; the
``reflow`` and ``complete`` rungs.

Dense textures leave no free window for a missing pitch class: every grid step of the gap is held by
the same pitch class in another voice, and moving a single neighbour (trim, shift by one step) meets
another conflict. Reflow solves the voice's local placement exactly: the notes around the gap keep
their order and pitches (other voices stay fixed); each gets a grid onset where it meets no
collision or crossing, as near its old onset as the run allows (earliest/latest feasible onsets give
the range), then its old duration where that stays clean. The run widens until a placement exists.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction
from functools import partial

from serialkit.harness.ladder.context import Ladder, Problems, Try
from serialkit.harness.ladder.rewrite import rewrite_segment
from serialkit.harness.ladder.room import make_room
from serialkit.harness.outcome import event_id
from serialkit.harness.tasks import Slot
from serialkit.harness.verify import ProposedNote, Verifier


def _ceil(value: Fraction, grid: Fraction) -> Fraction:
    return -(-value // grid) * grid


def _floor(value: Fraction, grid: Fraction) -> Fraction:
    return (value // grid) * grid


def _clean(ver: Verifier, cand: ProposedNote, kept: bool = False) -> bool:
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

    def __init__(self, cand: ProposedNote, midis: Sequence[int], kept: bool, pushes: bool | str = False,
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


def _octaves(ver: Verifier, cand: ProposedNote) -> tuple[int, ...]:
    """A kept note's own pitch first, then its pitch class in the voice's other octaves (nearest
    first): a dense texture may leave a note no place between its neighbours in its old octave."""
    voice = ver.task.voice(cand.voice)
    assert voice.low is not None and voice.high is not None
    others = sorted((m for m in range(voice.low, voice.high + 1) if m % 12 == cand.midi % 12 and m != cand.midi),
                    key=lambda m: (abs(m - cand.midi), m))
    return (cand.midi, *others)


def reflow(ctx: Ladder, cand: ProposedNote, midis: Sequence[int], widest: int = 48, pushes: bool = False,
           rung: str = "reflow", push_all: bool | str = False) -> ProposedNote | None:
    """Place ``cand`` (a note for an empty slot, with the pitches it may take) by re-placing up to
    ``widest`` kept notes on each side of it in its voice and section (the trial around it undoes
    their moves if the note is not kept). Returns the placed candidate (not yet kept), or None."""
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


def _commit(ctx: Ladder, notes: list[_Note], placed: list[tuple[Fraction, int]],
            right: Fraction, new_rung: str) -> ProposedNote:
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
            ver.kept[note.cand.id].cand = moved
        else:
            result = moved
    return result


def push(ctx: Ladder, cand: ProposedNote, midis: Sequence[int], push_all: bool | str = False) -> ProposedNote | None:
    """When no placement exists with the other voices fixed: place the note where only same-pitch-class
    notes of other voices stand in its way, then reflow each of those in its own voice. ``push_all``
    False (only the new note may collide), True (every re-placed note of its voice may collide) or
    ``"all"`` (they may also cross: crossed notes move too). Returns the note, kept in place (the
    caller's trial keeps it with every move, or rolls them back), or None."""
    ver = ctx.verifier
    fixed = reflow(ctx, cand, midis, pushes=True, push_all=push_all)
    if fixed is None:
        return None
    crossing = push_all == "all"
    ver.add(fixed)  # kept in place while the notes in its way move
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
            return None
        ver.add(moved)
    touched = {cand.voice, *(b.voice for b in blockers.values())}
    if any(ver.problems(k.cand, crossing_ok=True) for k in list(ver.kept.values())
           if k.cand.voice in touched and k.cand.slot.section == section):
        return None
    return ver.kept[fixed.id].cand


def reflowed(ctx: Ladder, cand: ProposedNote, midis: Sequence[int], relax: bool = False) -> tuple[Try, ...]:
    """The reflow tries for a note, for ``settle`` in this order: its voice re-placed with the other
    voices fixed; then pushing the notes in its way (the new note only, its voice's re-placed notes,
    crossings too); with ``relax`` (a hole) last the whole section re-placed at once."""
    tries: list[Try] = [partial(reflow, ctx, cand, midis)]
    tries += [partial(push, ctx, cand, midis, how) for how in (False, True, "all")]
    if relax:
        tries.append(partial(relax_section, ctx, cand, midis))
    return tuple(tries)


def relax_section(ctx: Ladder, cand: ProposedNote, midis: Sequence[int],
                  iterations: int = 6000) -> ProposedNote | None:
    """The last resort for dense textures, when no voice can make room with the others fixed: place
    the note by re-placing every note of its section at once (all voices; order, pitch class and
    voice kept, octave free), by min-conflicts search on the grid with one-step spans (two notes
    meet only on the same step), then give each note back as much of its old duration as stays clean.
    Returns the note, kept in place (the caller's trial keeps it with the moves, or rolls them back)."""
    ver = ctx.verifier
    grid = ctx.grid
    sec = ver.task.section(cand.slot.section)
    steps = int((sec.end - sec.start) / grid)
    order = {v: i for i, v in enumerate(ver.task.voice_ids)}
    lines: dict[str, list[ProposedNote]] = {}
    for voice in ver.task.voice_ids:
        lines[voice] = [ver.kept[k].cand for k in ver.voice_order(voice) if ver.kept[k].cand.slot.section == sec.id]
    mine = lines[cand.voice]
    at = sum(1 for c in mine if c.slot.index < cand.slot.index)
    lines[cand.voice] = [*mine[:at], cand, *mine[at:]]
    notes = [replace(c, until=None) for v in ver.task.voice_ids for c in lines[v]]
    lines = {v: [n for n in notes if n.voice == v] for v in lines}
    if any(len(line) > steps for line in lines.values()):
        return None
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
        return None
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
    if any(ver.problems(ver.kept[c.id].cand, crossing_ok=True) for c in notes):
        return None
    return ver.kept[cand.id].cand


# the rungs -------------------------------------------------------------------------------------
COMPLETE_PER_STATEMENT = 3  # notes the completion may write per scheduled statement


def _nearest(ctx: Ladder, voice_id: str, pc: int, midi: int) -> list[int]:
    """The voice's pitches of pitch class ``pc``, nearest ``midi`` first."""
    voice = ctx.verifier.task.voice(voice_id)
    assert voice.low is not None and voice.high is not None
    return sorted((m for m in range(voice.low, voice.high + 1) if m % 12 == pc), key=lambda m: (abs(m - midi), m))


def reflow_note(cand: ProposedNote, problems: Problems, ctx: Ladder) -> ProposedNote | None:
    """The ``reflow`` rung (serialkit's ladder), the last before a pending note is dropped: keep the
    proposed note — its scheduled pitch class (written by the harness, ``rewrite``, when the model's
    was wrong) in the nearest octave — by re-placing its voice's neighbours on the grid, or by
    pushing the notes of other voices in its way."""
    midis = _nearest(ctx, cand.voice, cand.slot.pc, cand.midi)
    if not midis or ctx.verifier.filled(cand.slot):
        return None
    base = cand.changed("rewrite", claimed_pc=cand.slot.pc, until=None) if cand.midi % 12 != cand.slot.pc \
        else replace(cand, until=None)
    return ctx.settle(*reflowed(ctx, base, midis), add=False)


def complete_holes(holes: list[Slot], ctx: Ladder) -> list[Slot]:
    """The ``complete`` rung (serialkit's ladder), after the attempts: write each still-missing note
    deterministically — its scheduled pitch class placed in its window (``rewrite`` with no model in
    it), which neighbours widen by giving up time or moving their runs into a rest; failing that,
    reflowed. At most ``COMPLETE_PER_STATEMENT`` notes per scheduled statement, never a section the
    proposer did not write: the candidate stays the model's. Returns the slots still empty."""
    task = ctx.verifier.task
    statements = sum(len(task.blueprint.forms_for(ctx.section, v)) for v in task.voice_ids)
    per = Counter((s.voice, s.statement) for s in holes)
    if len(holes) > COMPLETE_PER_STATEMENT * statements or max(per.values(), default=0) > COMPLETE_PER_STATEMENT:
        return holes
    return [slot for slot in holes if not _complete(slot, ctx)]


def _complete(slot: Slot, ctx: Ladder, widen: int = 4) -> bool:
    ver, grid = ctx.verifier, ctx.grid
    voice = ver.task.voice(slot.voice)
    assert voice.low is not None and voice.high is not None
    centre = (voice.low + voice.high) // 2
    for _ in range(widen):
        lo, hi = ver.window(slot)
        if hi - lo >= grid:
            cand = ProposedNote(event_id(slot), slot, lo, min(hi - lo, 2 * grid), centre, slot.pc,
                             None, ("rewrite",), max(ctx.attempt, 1), ())
            if ctx.settle(partial(rewrite_segment, cand, ver.problems(cand), ctx)):
                return True
        if not make_room(ver, [slot], need_steps=hi - lo + grid):
            break
    midis = _nearest(ctx, slot.voice, slot.pc, centre)
    if not midis:
        return False
    lo, _ = ver.window(slot)
    cand = ProposedNote(event_id(slot), slot, lo, 2 * grid, midis[0], slot.pc, None, ("rewrite",), max(ctx.attempt, 1), ())
    return ctx.settle(*reflowed(ctx, cand, midis, relax=True)) is not None


__all__ = ["COMPLETE_PER_STATEMENT", "complete_holes", "push", "reflow", "reflow_note", "reflowed", "relax_section"]
