"""The deterministic timing rungs: trim, yield and retime, each on one note with the problems the
verifier finds for it; they may move other notes to make room, and ``Ladder.settle`` keeps or rolls
back the result."""

from __future__ import annotations

from fractions import Fraction

from serialkit.harness.ladder.context import Ladder, Problems
from serialkit.harness.verify import TIME_CODES, ProposedNote, Verifier


def trim_tail(cand: ProposedNote, problems: Problems, ctx: Ladder) -> ProposedNote | None:
    """Trim tails: the note's own before the first later conflict or its window's end, and the tail
    of its own voice's previous note when that runs into it."""
    if not set(problems) <= TIME_CODES:
        return None
    ver = ctx.verifier
    lo, hi = ver.free(cand)
    prev_id = ver.neighbours(cand.slot)[0] if cand.onset < lo else None
    if cand.onset < lo and (prev_id is None or cand.onset - ver.kept[prev_id].cand.onset < ctx.grid):
        return None
    conflicts = problems.get("COLL", []) + problems.get("CROSS", [])
    end = min([hi, cand.end] + [o.onset for o in conflicts if o.onset > cand.onset])
    if end - cand.onset < ctx.grid or (end == cand.end and prev_id is None):
        return None  # given up before changing anything
    if prev_id is not None:
        ver.shorten(prev_id, cand.onset, "trim")
    return cand.changed("trim", duration=end - cand.onset)


def _stretch(cand: ProposedNote, ctx: Ladder) -> tuple[Fraction, Fraction, ProposedNote | None, ProposedNote | None]:
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


def _claim(onset: Fraction, end: Fraction, prev: ProposedNote | None, nxt: ProposedNote | None, ver: Verifier) -> None:
    """Shorten the neighbours so that [onset, end) is free in the voice."""
    if prev is not None and onset < prev.end:
        ver.shorten(prev.id, onset, "trim")
    if nxt is not None and end > nxt.onset:
        ver.kept[nxt.id].cand = nxt.changed("retime", onset=end, duration=nxt.end - end)


def yield_(cand: ProposedNote, problems: Problems, ctx: Ladder) -> ProposedNote | None:
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
        _claim(onset, end, None, nxt, ctx.verifier)
    for other in earlier:
        ctx.verifier.shorten(other.id, onset, "yield")
    if onset == cand.onset and end == cand.end:
        return cand.changed("yield")
    return cand.changed("yield", onset=onset, duration=end - onset)


def _make_way(cand: ProposedNote, conflicts: list[ProposedNote], ctx: Ladder) -> ProposedNote | None:
    """Yield by moving: each conflicting note in another voice moves within its own free window
    to a span where it no longer meets this note nor anything else (all of them, or none)."""
    ver = ctx.verifier
    with ver.trial() as trial:
        for other in {o.id: o for o in conflicts}.values():
            lo, hi = ver.window(other.slot)
            spot = _best_spot(other, lo, hi, ctx, extra=((cand.onset, cand.end),))
            if spot is None:  # let the other note's own neighbours give up time too
                wide_lo, wide_hi, prev, nxt = _stretch(other, ctx)
                spot = _best_spot(other, wide_lo, wide_hi, ctx, extra=((cand.onset, cand.end),))
                if spot is not None:
                    _claim(spot[0], spot[0] + spot[1], prev, nxt, ver)
            if spot is None:
                return None
            ver.kept[other.id].cand = other.changed("yield", onset=spot[0], duration=spot[1])
        if not trial.keep(bool(conflicts)):
            return None
    return cand.changed("yield")


def _blocked(cand: ProposedNote, ctx: Ladder, ignore: str | None = None) -> list[tuple[Fraction, Fraction]]:
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


def _best_spot(cand: ProposedNote, lo: Fraction, hi: Fraction, ctx: Ladder,
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


def retime(cand: ProposedNote, problems: Problems, ctx: Ladder) -> ProposedNote | None:
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
    _claim(onset, onset + duration, prev, nxt, ver)
    return cand.changed("retime", onset=onset, duration=duration)


def _ceil(value: Fraction, grid: Fraction) -> Fraction:
    steps = -(-value // grid)
    return steps * grid
