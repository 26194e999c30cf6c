"""The ladder's deterministic timing rungs (trim, yield, retime) on an existing score.

``serialkit repair --rules generation`` puts a collision (COLL: two voices sounding one pitch class
at once) or a voice crossing right the way the harness does in its own candidates: the score's
notes are kept in a ``Verifier`` over a task that frames the score (:func:`score_task`: one section as long as the
score, each voice's notes as its slots in time order, the score's own grid — the finest step its
onsets and durations use), and one note of each collision climbs the timing rungs of the ladder
(``Ladder.first``, in rank order) through ``Ladder.settle``, the ladder's one
keep-or-roll-back. A rung's result is kept only when the verifier finds the note clean and the
whole gate, run on the score as changed (``judge``), no longer reports the finding and reports
nothing it did not report before (a crossing counts per notehead). Voice crossings (CROSS, one
finding for the whole score's share of crossed noteheads) are moved note by note with no crossing
allowed, and kept only if the gate then reports no CROSS: all the moves, or none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import gcd
from typing import Any

from serialkit.core.piece import Blueprint, Event, Piece, Section, TimeSignature, Voice
from serialkit.core.rows import Row, RowForm
from serialkit.harness.ladder import Ladder, RungSpec
from serialkit.harness.tasks import Slot, Task, Texture
from serialkit.harness.verify import TIME_CODES, ProposedNote, Verifier

__all__ = ["TIMING_CODES", "TimingEdit", "TimingPlan", "finding_keys", "retime_findings", "score_task"]

SECTION = "score"
TIMING_CODES = ("COLL", "CROSS")
"""The findings the timing rungs put right in a score."""

Judge = Callable[[Piece], Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class TimingEdit:
    """One note whose time a timing rung changed: onset and duration before and after, the rung
    that changed it last, the finding put right and why."""

    event_id: str
    rung: str
    onset: tuple[Fraction, Fraction]
    duration: tuple[Fraction, Fraction]
    code: str
    reason: str


@dataclass(frozen=True)
class TimingPlan:
    """What :func:`retime_findings` did: the piece as changed, each changed note, the gate's report
    on the changed piece, and the findings tried and left (their messages)."""

    piece: Piece
    edits: tuple[TimingEdit, ...]
    report: Mapping[str, Any]
    left: tuple[str, ...] = ()


def _grid(values: Sequence[Fraction]) -> Fraction:
    """The finest step the values use: their greatest common divisor (1 when all are 0)."""
    num, den = 0, 1
    for v in values:
        if v:
            den = den * v.denominator // gcd(den, v.denominator)
    for v in values:
        num = gcd(num, v.numerator * (den // v.denominator))
    return Fraction(num, den) if num else Fraction(1)


def score_task(piece: Piece, row: Row, tolerance: Fraction = Fraction(0)) -> tuple[Task, dict[str, ProposedNote]]:
    """A task framing an existing score, and its sounding notes as candidates in their slots.

    One section spans the score (to the end of its last bar); each voice's notes, in time order,
    are its slots (a slot's pitch class is the note's own, so the row is never the verifier's
    business: the gate judges it); the grid and shortest note are the finest step the score's
    onsets and durations use, the longest note its longest; each voice's register is its declared
    one widened to the notes it holds. Grace notes take no part."""
    events = [e for e in piece.events if not e.grace and e.duration > 0]
    bars = piece.bar_list()
    length = max([piece.end, *(b.onset + b.duration for b in bars)]) or Fraction(1)
    grid = _grid([e.onset for e in events] + [e.duration for e in events])
    by_voice: dict[str, list[Event]] = {v: [] for v in piece.voice_ids}
    for e in sorted(events, key=lambda e: (e.onset, e.midi, e.id)):
        by_voice[e.voice].append(e)
    voices = []
    for v in piece.voices:
        pitches = [e.midi for e in by_voice[v.id]] or [60]
        low = min([*pitches, *([v.low] if v.low is not None else [])])
        high = max([*pitches, *([v.high] if v.high is not None else []), low + 11])
        voices.append(Voice(v.id, v.name, low, high))
    task = Task(
        name=piece.title or "score", row=row, voices=tuple(voices),
        meter=TimeSignature(length.numerator, 4 * length.denominator), bars=1,
        sections=(Section(SECTION, Fraction(0), length),), blueprint=Blueprint(),
        convention=piece.convention,
        texture=Texture(grid, max([grid, *(e.duration for e in events)]), grid),
        tolerance=tolerance, max_crossing_share=Fraction(1),
    )
    form = RowForm.parse("P0")
    cands = {}
    for vid, notes in by_voice.items():
        for k, e in enumerate(notes):
            slot = Slot(vid, SECTION, k, form, k % 12, e.midi % 12, f"{vid}.{SECTION}")
            cands[e.id] = ProposedNote(e.id, slot, e.onset, e.duration, e.midi)
    return task, cands


def finding_keys(report: Mapping[str, Any]) -> set[tuple[str, ...]]:
    """The findings of a check report as comparable keys: (code, its notes) per violation; a
    crossing per crossed notehead (CROSS is one finding naming all of them); an unexplained note."""
    out: set[tuple[str, ...]] = set()
    for v in report.get("violations") or ():
        ids = [str(e) for e in v.get("event_ids") or ()]
        if v["code"] == "CROSS":
            out |= {("CROSS", e) for e in ids}
        else:
            out.add((str(v["code"]), *sorted(ids)))
    out |= {("UNEXPLAINED", str(e)) for e in report.get("unexplained") or ()}
    return out


def retime_findings(
    piece: Piece,
    row: Row,
    report: Mapping[str, Any],
    judge: Judge,
    codes: Sequence[str] = TIMING_CODES,
    tolerance: Fraction = Fraction(0),
) -> TimingPlan:
    """Put right the findings of ``codes`` in ``report`` (the gate's report on ``piece``) with the
    timing rungs. ``judge`` runs the whole gate on a changed piece; a change is kept only when its
    finding is gone and the gate reports nothing new (:func:`finding_keys`).

    COLL, one collision at a time: the later note first, then the earlier. CROSS, one finding for
    the share of crossed noteheads in the whole score: each crossed notehead in turn is moved off
    its crossing (the verifier then allows no crossing at all), and the moves are kept only if the
    gate reports no CROSS at the end — all of them, or none."""
    task, cands = score_task(piece, row, tolerance)
    ver = Verifier(task)
    for cand in cands.values():
        ver.add(cand)
    ver.crossing_budget = len(cands)  # crossings are the gate's (per notehead), not the verifier's
    ctx = Ladder(ver)
    ctx = Ladder(ver, rungs=ctx.first)  # trim, yield, retime: the deterministic timing rungs
    fix = _Fixing(ctx, piece, judge, report)
    if "COLL" in codes:
        for v in report.get("violations") or ():
            if v["code"] == "COLL":
                key = ("COLL", *sorted(str(e) for e in v["event_ids"]))
                reason = f"COLL at {v.get('location') or '?'}: {v.get('message', '')}"
                if key in fix.keys and not any(fix.one(t, "COLL", key, reason) for t in reversed(v["event_ids"])):
                    fix.left.append(f"COLL at {v.get('location') or '?'} left as it is: no timing rung puts it "
                                    "right without the gate finding something new")
    cross = next((v for v in fix.report.get("violations") or () if v["code"] == "CROSS"), None)
    if "CROSS" in codes and cross is not None:
        fix.crossings(cross)
    edits = []
    for eid, cand in cands.items():
        now = ver.kept[eid].cand
        if (now.onset, now.duration) != (cand.onset, cand.duration):
            code, reason = fix.why.get(eid, ("COLL", ""))
            edits.append(TimingEdit(eid, now.rungs[-1] if now.rungs else "retime", (cand.onset, now.onset),
                                    (cand.duration, now.duration), code, reason))
    return TimingPlan(_changed(piece, ver), tuple(edits), fix.report, tuple(fix.left))


class _Fixing:
    """The state of :func:`retime_findings`: the gate's current report and its findings, why each
    changed note changed, the findings left."""

    def __init__(self, ctx: Ladder, piece: Piece, judge: Judge, report: Mapping[str, Any]) -> None:
        self.ctx, self.piece, self.judge = ctx, piece, judge
        self.report, self.keys = report, finding_keys(report)
        self.why: dict[str, tuple[str, str]] = {}
        self.left: list[str] = []

    def one(self, target: str, code: str, key: tuple[str, ...], reason: str) -> bool:
        """One note of a finding up the timing rungs; True when a change was kept."""
        kept = self.ctx.verifier.kept
        state = {k: (c.cand.onset, c.cand.duration) for k, c in kept.items()}
        got = _attempt(self.ctx, self.piece, target, code, key, self.keys, self.judge)
        if got is None:
            return False
        self.report, self.keys = got, finding_keys(got)
        for k, c in kept.items():
            if state.get(k) != (c.cand.onset, c.cand.duration):
                said = reason if k == target else f"{reason}; this note makes room"
                earlier = self.why.get(k)
                self.why[k] = (code, said if earlier is None else f"{earlier[1]}; then {said}")
        return True

    def crossings(self, cross: Mapping[str, Any]) -> None:
        """Every crossed notehead moved off its crossing, kept only if the CROSS finding is gone."""
        ver = self.ctx.verifier
        saved = (self.report, self.keys, dict(self.why))
        locator = self.piece.locator()
        events = {e.id: e for e in self.piece.events}
        budget, ver.crossing_budget = ver.crossing_budget, 0
        moved = 0
        with ver.trial() as whole:
            progress = True
            while progress:  # a move can free another note's way: again until nothing moves
                progress = False
                for v in [v for v in self.report.get("violations") or () if v["code"] == "CROSS"]:
                    for target in map(str, v["event_ids"]):
                        key = ("CROSS", target)
                        where = locator.describe(events[target]) if target in events else "?"
                        if key in self.keys and self.one(target, "CROSS", key,
                                                          f"CROSS at {where}: the note sits in a voice crossing "
                                                          f"({cross.get('message', '')})"):
                            moved += 1
                            progress = True
            done = not any(v["code"] == "CROSS" for v in self.report.get("violations") or ())
            whole.keep(done)
        ver.crossing_budget = budget
        if not done:
            self.report, self.keys, self.why = saved
            self.left.append(f"CROSS left as it is: {cross.get('message', '')}; the timing rungs move "
                             f"{moved} of its {len(cross['event_ids'])} noteheads off their crossings, not "
                             "enough to bring the share under the limit, so none is moved")


def _changed(piece: Piece, ver: Verifier, extra: ProposedNote | None = None) -> Piece:
    """``piece`` with the onsets and durations the verifier holds (and ``extra``, not yet kept)."""
    now = {k: c.cand for k, c in ver.kept.items()}
    if extra is not None:
        now[extra.id] = extra
    out = []
    for e in piece.events:
        c = now.get(e.id)
        out.append(e if c is None or (c.onset, c.duration) == (e.onset, e.duration)
                   else e.copy(onset=c.onset, duration=c.duration, tied_ids=()))  # its old ties are gone
    return piece.with_events(out)


def _attempt(ctx: Ladder, piece: Piece, target: str, code: str, key: tuple[str, ...],
             keys: set[tuple[str, ...]], judge: Judge) -> Mapping[str, Any] | None:
    """One note of a finding up the timing rungs: the first rung whose result the verifier finds
    clean and the gate accepts is kept (the gate's report returned); otherwise nothing changes."""
    ver = ctx.verifier
    if target not in ver.kept:
        return None
    got: dict[str, Mapping[str, Any]] = {}
    with ver.trial() as outer:
        cand = ver.kept[target].cand
        ver.remove(target)
        crossing_ok = code != "CROSS"
        problems = ver.problems(cand, crossing_ok=crossing_ok)
        if code not in problems or not set(problems) <= TIME_CODES or "WINDOW" in problems:
            return None  # not a finding the verifier sees, or the voice is not one line here

        def judged(rung: RungSpec) -> Callable[[], ProposedNote | None]:
            def attempt() -> ProposedNote | None:
                fixed: ProposedNote | None = rung.fn(cand, problems, ctx)
                if fixed is None or ver.problems(fixed, crossing_ok=crossing_ok):
                    return None
                verdict = judge(_changed(piece, ver, fixed))
                found = finding_keys(verdict)
                if key in found or not found <= keys:
                    return None
                got["report"] = verdict
                return fixed
            return attempt

        kept = ctx.settle(*(judged(r) for r in ctx.rungs), crossing_ok=crossing_ok)
        outer.keep(kept is not None)
    return got.get("report") if kept is not None else None
