"""The repair ladder: trim the tail, yield, retime, model patch, rewrite the row segment."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from typing import Any

from serialkit.harness.tasks import Slot
from serialkit.harness.verify import TIME_CODES, Candidate, Verifier

Problems = dict[str, list[Candidate]]
Rung = Callable[[Candidate, Problems, "RepairContext"], "Candidate | None"]


@cache
def _timing_rungs(name: str) -> tuple[tuple[str, Rung], ...]:
    """The rungs before the first batched (model) rung of a ladder: its deterministic timing rungs."""
    out = []
    for rung in ladder(name):
        if rung.batch:
            break
        out.append((rung.name, rung.fn))
    return tuple(out)


@dataclass
class RepairContext:
    """What rungs may use: the verifier, the timing rungs of the ladder (registry order), and the
    undo log of changes made to other notes. This is the ladder's one trial mechanism: a one-note
    trial starts at a ``mark`` and ``settle`` keeps its result (and the logged changes) if clean, or
    rolls them back to the mark; a trial over many notes starts at a ``checkpoint`` and ends kept
    or ``restore``d."""

    verifier: Verifier
    undo: list[tuple[str, Candidate]] = field(default_factory=list)
    timing: tuple[tuple[str, Rung], ...] = field(default_factory=lambda: _timing_rungs("serialkit"))

    @property
    def grid(self) -> Fraction:
        """The task's onset grid."""
        return self.verifier.task.texture.grid

    def mark(self) -> int:
        """Where a trial starts in the undo log."""
        return len(self.undo)

    def rollback(self, mark: int = 0) -> None:
        """Undo every change made to other notes since ``mark`` (default: the whole log)."""
        for eid, before in reversed(self.undo[mark:]):
            self.verifier.kept[eid].cand = before
        del self.undo[mark:]

    def checkpoint(self) -> Any:
        """The whole kept state, for a trial that adds and removes notes (a re-proposed voice, a
        pushing reflow, a relaxed section); the undo log starts afresh."""
        self.undo.clear()
        return self.verifier.snapshot()

    def restore(self, state: Any) -> None:
        """Return to a checkpoint (the trial failed)."""
        self.verifier.restore(state)
        self.undo.clear()

    def settle(self, fixed: Candidate | None, mark: int = 0, crossing_ok: bool = True) -> bool:
        """Keep ``fixed`` if it is clean (the changes it needed stay, the log is cleared); otherwise
        roll back to ``mark``. True when kept."""
        if fixed is not None and not self.verifier.problems(fixed, crossing_ok=crossing_ok):
            self.undo.clear()
            self.verifier.add(fixed)
            return True
        self.rollback(mark)
        return False


def trim_tail(cand: Candidate, problems: Problems, ctx: RepairContext) -> Candidate | None:
    """Trim tails: the note's own before the first later conflict or its window's end, and the tail
    of its own voice's previous note when that runs into it."""
    if not set(problems) <= TIME_CODES:
        return None
    ver = ctx.verifier
    lo, hi = ver.free(cand)
    changed = False
    if cand.onset < lo:
        prev_id = ver.neighbours(cand.slot)[0]
        if prev_id is None:
            return None
        prev = ver.kept[prev_id].cand
        if cand.onset - prev.onset < ctx.grid:
            return None
        ctx.undo.append((prev_id, prev))
        ver.shorten(prev_id, cand.onset, "trim")
        changed = True
    conflicts = problems.get("COLL", []) + problems.get("CROSS", [])
    end = min([hi, cand.end] + [o.onset for o in conflicts if o.onset > cand.onset])
    if end - cand.onset < ctx.grid:
        return None
    if end == cand.end and not changed:
        return None
    return cand.changed("trim", duration=end - cand.onset)


def _stretch(cand: Candidate, ctx: RepairContext) -> tuple[Fraction, Fraction, Candidate | None, Candidate | None]:
    """The widest window a note can have if its voice's neighbours give up time down to one grid
    step each (the previous note's tail, the next note's head): (lo, hi, previous, next)."""
    ver = ctx.verifier
    grid = ctx.grid
    lo, hi = ver.free(cand)
    before, after = ver.neighbours(cand.slot)
    prev = ver.kept[before].cand if before else None
    nxt = ver.kept[after].cand if after else None
    wide_lo = prev.onset + grid if prev is not None and prev.end == lo else lo
    wide_hi = nxt.end - grid if nxt is not None and nxt.onset == hi and cand.until is None else hi
    sec = ver.task.section(cand.slot.section)
    return max(wide_lo, sec.start), min(wide_hi, sec.end), prev, nxt


def _claim(onset: Fraction, end: Fraction, prev: Candidate | None, nxt: Candidate | None,
           ctx: RepairContext) -> None:
    """Shorten the neighbours so that [onset, end) is free in the voice (undoable)."""
    ver = ctx.verifier
    if prev is not None and onset < prev.end:
        ctx.undo.append((prev.id, prev))
        ver.shorten(prev.id, onset, "trim")
    if nxt is not None and end > nxt.onset:
        ctx.undo.append((nxt.id, nxt))
        ver.kept[nxt.id].cand = nxt.changed("retime", onset=end, duration=nxt.end - end)


def yield_(cand: Candidate, problems: Problems, ctx: RepairContext) -> Candidate | None:
    """Cut the tails of conflicting notes in other voices that started earlier; when one started
    together with this note, it keeps one grid step and this note enters just after it (taking
    time from its own next note if it must)."""
    if not set(problems) <= TIME_CODES or "WINDOW" in problems:
        return None
    conflicts = problems.get("COLL", []) + problems.get("CROSS", [])
    earlier = [o for o in conflicts if o.onset <= cand.onset]
    if not earlier:
        return _make_way(cand, conflicts, ctx)
    grid = ctx.grid
    lo, hi = ctx.verifier.free(cand)
    onset = max([cand.onset] + [o.onset + grid for o in earlier if cand.onset - o.onset < grid])
    if any(o.end - o.onset < 2 * grid and cand.onset - o.onset < grid for o in earlier):
        return _make_way(cand, conflicts, ctx)
    end = max(onset + grid, min(cand.end, hi))
    if end > hi:
        _, wide_hi, prev, nxt = _stretch(cand, ctx)
        if end > wide_hi:
            return _make_way(cand, conflicts, ctx)
        _claim(onset, end, None, nxt, ctx)
    for other in earlier:
        ctx.undo.append((other.id, ctx.verifier.kept[other.id].cand))
        ctx.verifier.shorten(other.id, onset, "yield")
    if onset == cand.onset and end == cand.end:
        return cand.changed("yield")
    return cand.changed("yield", onset=onset, duration=end - onset)


def _make_way(cand: Candidate, conflicts: list[Candidate], ctx: RepairContext) -> Candidate | None:
    """Yield by moving: each conflicting note in another voice moves within its own free window
    to a span where it no longer meets this note nor anything else (changes are undoable)."""
    ver = ctx.verifier
    moved = []
    for other in {o.id: o for o in conflicts}.values():
        lo, hi = ver.window(other.slot)
        spot = _best_spot(other, lo, hi, ctx, extra=((cand.onset, cand.end),))
        if spot is None:  # let the other note's own neighbours give up time too
            wide_lo, wide_hi, prev, nxt = _stretch(other, ctx)
            spot = _best_spot(other, wide_lo, wide_hi, ctx, extra=((cand.onset, cand.end),))
            if spot is not None:
                for neighbour in (prev, nxt):
                    if neighbour is not None:
                        moved.append((neighbour.id, neighbour))
                _claim(spot[0], spot[0] + spot[1], prev, nxt, RepairContext(ver))
        if spot is None:
            for eid, before in reversed(moved):
                ver.kept[eid].cand = before
            return None
        moved.append((other.id, other))
        ver.kept[other.id].cand = other.changed("yield", onset=spot[0], duration=spot[1])
    if not moved:
        return None
    ctx.undo.extend(moved)
    return cand.changed("yield")


def _blocked(cand: Candidate, ctx: RepairContext, ignore: str | None = None) -> list[tuple[Fraction, Fraction]]:
    ver = ctx.verifier
    order = {v: i for i, v in enumerate(ver.task.voice_ids)}
    mine = order[cand.voice]
    spans = []
    for kept in ver.kept.values():
        o = kept.cand
        if o.voice == cand.voice or o.id == ignore:
            continue
        crossing = (order[o.voice] < mine and o.midi < cand.midi) or (order[o.voice] > mine and o.midi > cand.midi)
        if o.midi % 12 == cand.midi % 12 or crossing:
            spans.append((o.onset, o.end))
    return sorted(spans)


def free_spans(lo: Fraction, hi: Fraction, blocked: list[tuple[Fraction, Fraction]]) -> list[tuple[Fraction, Fraction]]:
    """The parts of [lo, hi) not covered by the blocked spans."""
    out = []
    cursor = lo
    for start, end in sorted(blocked):
        if end <= cursor or start >= hi:
            continue
        if start > cursor:
            out.append((cursor, start))
        cursor = max(cursor, end)
    if cursor < hi:
        out.append((cursor, hi))
    return out


def _best_spot(cand: Candidate, lo: Fraction, hi: Fraction, ctx: RepairContext,
               extra: tuple[tuple[Fraction, Fraction], ...] = ()) -> tuple[Fraction, Fraction] | None:
    grid = ctx.grid
    best: tuple[Fraction, Fraction, Fraction] | None = None
    for start, end in free_spans(lo, hi, _blocked(cand, ctx) + list(extra)):
        start = _ceil(start, grid)
        if end - start < grid:
            continue
        onset = min(max(start, cand.onset), end - grid)
        if _ceil(onset, grid) + grid <= end:
            onset = _ceil(onset, grid)
        duration = min(cand.duration, end - onset)
        cost = abs(onset - cand.onset) + abs(duration - cand.duration)
        if best is None or cost < best[0]:
            best = (cost, onset, duration)
    return None if best is None else (best[1], best[2])


def retime(cand: Candidate, problems: Problems, ctx: RepairContext) -> Candidate | None:
    """Move the note to a conflict-free span of its free window; if there is none, let its own
    voice's neighbours give up time (the previous note's tail, the next note's head) down to one
    grid step each."""
    if not set(problems) <= TIME_CODES:
        return None
    ver = ctx.verifier
    lo, hi = ver.free(cand)
    spot = _best_spot(cand, lo, hi, ctx)
    if spot is not None:
        if spot == (cand.onset, cand.duration):
            return None
        return cand.changed("retime", onset=spot[0], duration=spot[1])
    wide_lo, wide_hi, prev, nxt = _stretch(cand, ctx)
    if (wide_lo, wide_hi) == (lo, hi):
        return None
    spot = _best_spot(cand, wide_lo, wide_hi, ctx)
    if spot is None:
        return None
    onset, duration = spot
    _claim(onset, onset + duration, prev, nxt, ctx)
    return cand.changed("retime", onset=onset, duration=duration)


def _ceil(value: Fraction, grid: Fraction) -> Fraction:
    steps = -(-value // grid)
    return steps * grid


def rewrite_segment(cand: Candidate, problems: Problems, ctx: RepairContext) -> Candidate | None:
    """Give the note its scheduled pitch class in the nearest octave that fits, then re-place it."""
    voice = ctx.verifier.task.voice(cand.voice)
    assert voice.low is not None and voice.high is not None
    options = sorted(
        (m for m in range(voice.low, voice.high + 1) if m % 12 == cand.slot.pc),
        key=lambda m: (abs(m - cand.midi), m),
    )
    lo, hi = ctx.verifier.free(cand)
    base = cand
    if cand.onset < lo or cand.end > hi:
        onset = max(cand.onset, lo)
        end = min(cand.end, hi)
        if end - onset <= 0:
            onset, end = lo, hi
        if end <= onset:
            return None
        base = cand.changed("rewrite", onset=onset, duration=end - onset)
    for crossing_ok in (False, True):
        for midi in options:
            trial = base.changed("rewrite", midi=midi, claimed_pc=cand.slot.pc)
            found = ctx.verifier.problems(trial, crossing_ok=crossing_ok)
            if not found:
                return trial
            fixed = apply_time_rungs(trial, found, ctx, crossing_ok=crossing_ok)
            if fixed is not None:
                return fixed
    return None


def shift_run(ver: Verifier, slot: Slot, step: Fraction) -> bool:
    """Widen a slot's window by one grid step: move the run of kept notes after it (``step`` > 0) or
    before it (``step`` < 0) one step into the nearest rest of the voice, if no moved note meets a
    conflict. Returns True when the run moved."""
    order = [k for k in ver.voice_order(slot.voice) if ver.kept[k].cand.slot.section == slot.section]
    sec = ver.task.section(slot.section)
    key = slot.index
    run: list[Candidate] = []
    seq = [ver.kept[k].cand for k in order]
    if step > 0:
        seq = [c for c in seq if c.slot.index > key]
        limit = sec.end
    else:
        seq = [c for c in reversed(seq) if c.slot.index < key]
        limit = sec.start
    absorb: Candidate | None = None
    for i, cand in enumerate(seq):
        if cand.duration >= 2 * abs(step):
            absorb = cand  # a long note absorbs the shift by giving up its head (or tail)
            break
        run.append(cand)
        edge = (seq[i + 1].onset if step > 0 else seq[i + 1].end) if i + 1 < len(seq) else limit
        room = edge - cand.end if step > 0 else cand.onset - edge
        if room >= abs(step):
            break
    else:
        return False
    saved = [(c.id, c) for c in run]
    if absorb is not None:
        saved.append((absorb.id, absorb))
        if step > 0:
            ver.kept[absorb.id].cand = absorb.changed("retime", onset=absorb.onset + step,
                                                      duration=absorb.duration - step)
        else:
            ver.kept[absorb.id].cand = absorb.changed("trim", duration=absorb.duration + step)
    for cand in reversed(run):
        moved = cand.changed("retime", onset=cand.onset + step)
        ver.kept[cand.id].cand = moved
        if ver.collisions(moved) or ver.crossing(moved):
            for eid, before in saved:
                ver.kept[eid].cand = before
            return False
    return True


def apply_time_rungs(cand: Candidate, problems: Problems, ctx: RepairContext,
                     crossing_ok: bool = False) -> Candidate | None:
    """Try the ladder's deterministic timing rungs in registry order; the first clean result wins."""
    for _name, rung in ctx.timing:
        mark = ctx.mark()
        fixed = rung(cand, problems, ctx)
        if fixed is None:
            continue
        if not ctx.verifier.problems(fixed, crossing_ok=crossing_ok):
            return fixed
        ctx.rollback(mark)
    return None


LADDERS = ("serialkit", "paper")


@dataclass(frozen=True)
class RungSpec:
    """A registered rung: name, rank (ladder order), whether it runs once per section (batch: a
    model call for every pending note of the section) and the ladders it belongs to. A rung is
    called ``fn(candidate, problems, ctx)`` and returns the fixed candidate or None; a batched rung
    ``fn(pending, batch)`` (``serialkit.harness.patch.Batch``) returns the notes still pending."""

    name: str
    rank: int
    fn: Any
    batch: bool = False
    ladders: frozenset[str] = frozenset({"serialkit"})


def ladder(name: str = "serialkit") -> list[RungSpec]:
    """The repair rungs of a ladder from the plugin registry, in their explicit rank order. A rung
    registered without ``ladders`` belongs to serialkit's ladder only (the paper's is fixed)."""
    from serialkit.core.errors import TaskError
    from serialkit.plugins import ordered

    if name not in LADDERS:
        raise TaskError(f"unknown ladder {name!r} (known: {', '.join(LADDERS)})")
    specs = [
        RungSpec(e.name, int(e.meta["rank"]), e.load(), bool(e.meta.get("batch", False)),
                 frozenset(str(e.meta.get("ladders", "serialkit")).split()))
        for e in ordered("repair_rungs")
    ]
    return [r for r in specs if name in r.ladders]
