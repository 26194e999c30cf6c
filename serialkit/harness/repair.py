"""The repair ladder: its registered rungs in rank order, the context they work in (``RepairContext``,
with ``settle``, the one keep-or-roll-back), and the deterministic rungs trim, yield, retime and
rewrite. The model's batched rungs are in ``patch.py``; reflow and the completion of holes in
``reflow.py``; the verifier and its trials in ``verify.py``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import partial
from typing import Any

from serialkit.harness.tasks import Slot
from serialkit.harness.verify import TIME_CODES, ProposedNote, Verifier

Problems = dict[str, list[ProposedNote]]
Rung = Callable[[ProposedNote, Problems, "RepairContext"], "ProposedNote | None"]
Try = Callable[[], "ProposedNote | None"]
LADDERS = ("serialkit", "paper")
SCOPES = ("note", "batch", "holes")


@dataclass(frozen=True)
class RungSpec:
    """A registered rung: its name, rank (the ladder's order), scope and the ladders it belongs to.

    ``note`` rungs are called ``fn(candidate, problems, ctx)`` and return the repaired candidate (not
    yet kept; they may move other notes to make room) or None; ``batch`` rungs (the model's) run once
    per section call, ``fn(pending, ctx)``, and return the notes still pending; ``holes`` rungs run
    after the attempts, ``fn(slots, ctx)``, and return the slots still empty."""

    name: str
    rank: int
    fn: Any
    scope: str = "note"
    ladders: frozenset[str] = frozenset({"serialkit"})


def ladder(name: str = "serialkit") -> list[RungSpec]:
    """The repair rungs of a ladder from the plugin registry, in their explicit rank order. A rung
    registered without ``ladders`` belongs to serialkit's ladder only (the paper's is fixed)."""
    from serialkit.core.errors import PluginError, TaskError
    from serialkit.plugins import ordered

    if name not in LADDERS:
        raise TaskError(f"unknown ladder {name!r} (known: {', '.join(LADDERS)})")
    specs = []
    for e in ordered("repair_rungs"):
        scope = str(e.meta.get("scope", "batch" if e.meta.get("batch") else "note"))
        if scope not in SCOPES:
            raise PluginError(f"repair rung {e.name!r} of {e.plugin}: unknown scope {scope!r} "
                              f"(known: {', '.join(SCOPES)})")
        specs.append(RungSpec(e.name, int(e.meta["rank"]), e.load(), scope,
                              frozenset(str(e.meta.get("ladders", "serialkit")).split())))
    return [r for r in specs if name in r.ladders]


@dataclass
class RepairContext:
    """The ladder at work: its rungs in registry order over the run's verifier, and what the model's
    rungs need (the session, the section and attempt being written, where reply errors go).

    A note climbs the ladder in three places, each in rank order: as it arrives (``place``: the note
    rungs before the first batched rung, chained on the note), after its section call (``repair``:
    the rungs from the first batched one on, over the call's pending notes) and, for a slot still
    empty after the attempts, the ``holes`` rungs (``complete``). Every placement goes through
    ``settle``, the ladder's one keep-or-roll-back on a ``Verifier.trial``."""

    verifier: Verifier
    rungs: list[RungSpec] = field(default_factory=lambda: ladder("serialkit"))
    session: Any = None  # serialkit.harness.session.Session, for the model's rungs
    section: str = ""
    attempt: int = 1
    errors: list[str] = field(default_factory=list)

    @property
    def grid(self) -> Fraction:
        """The task's onset grid."""
        return self.verifier.task.texture.grid

    @property
    def first(self) -> list[RungSpec]:
        """The note rungs before the first batched rung (trim, yield, retime): deterministic timing."""
        out = []
        for rung in self.rungs:
            if rung.scope == "batch":
                break
            if rung.scope == "note":
                out.append(rung)
        return out

    def at(self, section: str, attempt: int) -> RepairContext:
        """The ladder for one section call."""
        return replace(self, section=section, attempt=attempt)

    def settle(self, *tries: Try, crossing_ok: bool = True, add: bool = True) -> ProposedNote | None:
        """The ladder's one keep-or-roll-back. Each try proposes the note (moving other notes if it
        must; pushing and relaxing keep it themselves, in place before the notes in its way move)
        inside a verifier trial; the first whose note is clean is kept — added to the kept notes, or
        with ``add=False`` handed back to a caller that judges it again (a rung made of tries) — and
        every other try is rolled back. Returns the kept note or None."""
        ver = self.verifier
        for make in tries:
            with ver.trial() as trial:
                fixed = make()
                if fixed is not None and trial.keep(not ver.problems(fixed, crossing_ok=crossing_ok)):
                    if add and fixed.id not in ver.kept:
                        ver.add(fixed)
                    return fixed
        return None

    def retimed(self, cand: ProposedNote, problems: Problems, crossing_ok: bool = False) -> ProposedNote | None:
        """The first clean result of the timing rungs (``first``) on one note, each tried alone;
        changes to other notes stay for the caller to keep."""
        return self.settle(*(partial(r.fn, cand, problems, self) for r in self.first),
                           crossing_ok=crossing_ok, add=False)

    def place(self, cand: ProposedNote) -> bool:
        """A note as it arrives: the timing rungs chained on it (each works on what the one before
        left), kept if it then has no problem and crosses nothing."""
        def chain() -> ProposedNote | None:
            current, problems = cand, self.verifier.problems(cand)
            for rung in self.first:
                if not problems:
                    break
                fixed = rung.fn(current, problems, self)
                if fixed is not None:
                    current, problems = fixed, self.verifier.problems(fixed)
            return None if problems else current

        return self.settle(chain, crossing_ok=False) is not None

    def repair(self, pending: list[ProposedNote]) -> list[ProposedNote]:
        """The rungs from the first batched one on (model patch, rewrite, reflow, plugins), in rank
        order, over a section call's pending notes; returns the notes no rung could keep."""
        first = self.first
        for rung in self.rungs:
            if not pending:
                break
            if rung.scope == "batch":
                pending = rung.fn(pending, self)
            elif rung.scope == "note" and rung not in first:
                pending = [c for c in pending
                           if self.settle(partial(rung.fn, c, self.verifier.problems(c), self)) is None]
        return pending

    def complete(self, holes: list[Slot]) -> list[Slot]:
        """The ``holes`` rungs, in rank order, on the slots still empty after the attempts; returns
        the slots still empty."""
        for rung in self.rungs:
            if rung.scope == "holes" and holes:
                holes = rung.fn(holes, self)
        return holes


def trim_tail(cand: ProposedNote, problems: Problems, ctx: RepairContext) -> ProposedNote | None:
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


def _stretch(cand: ProposedNote, ctx: RepairContext) -> tuple[Fraction, Fraction, ProposedNote | None, ProposedNote | None]:
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


def yield_(cand: ProposedNote, problems: Problems, ctx: RepairContext) -> ProposedNote | None:
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


def _make_way(cand: ProposedNote, conflicts: list[ProposedNote], ctx: RepairContext) -> ProposedNote | None:
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


def _blocked(cand: ProposedNote, ctx: RepairContext, ignore: str | None = None) -> list[tuple[Fraction, Fraction]]:
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


def _best_spot(cand: ProposedNote, lo: Fraction, hi: Fraction, ctx: RepairContext,
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


def retime(cand: ProposedNote, problems: Problems, ctx: RepairContext) -> ProposedNote | None:
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


def rewrite_segment(cand: ProposedNote, problems: Problems, ctx: RepairContext) -> ProposedNote | None:
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
            option = base.changed("rewrite", midi=midi, claimed_pc=cand.slot.pc)
            found = ctx.verifier.problems(option, crossing_ok=crossing_ok)
            if not found:
                return option
            fixed = ctx.retimed(option, found, crossing_ok=crossing_ok)
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
    run: list[ProposedNote] = []
    seq = [ver.kept[k].cand for k in order]
    if step > 0:
        seq = [c for c in seq if c.slot.index > key]
        limit = sec.end
    else:
        seq = [c for c in reversed(seq) if c.slot.index < key]
        limit = sec.start
    absorb: ProposedNote | None = None
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
    with ver.trial() as trial:
        if absorb is not None and step > 0:
            ver.kept[absorb.id].cand = absorb.changed("retime", onset=absorb.onset + step,
                                                      duration=absorb.duration - step)
        elif absorb is not None:
            ver.kept[absorb.id].cand = absorb.changed("trim", duration=absorb.duration + step)
        for cand in reversed(run):
            moved = cand.changed("retime", onset=cand.onset + step)
            ver.kept[cand.id].cand = moved
            if ver.collisions(moved) or ver.crossing(moved):
                return False
        trial.keep()
    return True


def make_room(ver: Verifier, missing: list[Slot], need_steps: Fraction | None = None) -> bool:
    """Shorten kept neighbours (by whole grid steps, or shift their runs into a rest) until each run
    of missing slots has room: two grid steps a note (room to dodge a note of another voice), or a
    window ``need_steps`` long. With ``need_steps``, True when a window grew."""
    grid = ver.task.texture.grid
    runs: dict[tuple[Fraction, Fraction], list[Slot]] = {}
    for slot in missing:
        runs.setdefault(ver.window(slot), []).append(slot)
    grown = False
    for (lo, hi), slots in runs.items():
        need = 2 * len(slots) * grid - (hi - lo) if need_steps is None else need_steps - (hi - lo)
        before, after = ver.neighbours(slots[0])[0], ver.neighbours(slots[-1])[1]
        while need > 0:
            prev = ver.kept[before].cand if before else None
            nxt = ver.kept[after].cand if after else None
            if prev is not None and prev.end == lo and prev.duration >= 2 * grid:
                ver.shorten(prev.id, prev.end - grid, "trim")
                lo -= grid
            elif nxt is not None and nxt.onset == hi and nxt.duration >= 2 * grid:
                ver.kept[nxt.id].cand = nxt.changed("retime", onset=nxt.onset + grid, duration=nxt.duration - grid)
                hi += grid
            elif shift_run(ver, slots[-1], grid):
                hi += grid
            elif shift_run(ver, slots[0], -grid):
                lo -= grid
            else:
                break
            need -= grid
            grown = True
    return grown if need_steps is not None else True
