"""The repair ladder's deterministic timing rungs (trim, yield, retime) on an existing score.

``serialkit repair --rules generation`` puts a collision (COLL: two voices sounding one pitch class
at once) right the way the harness does in its own candidates: the score's notes are kept in a
``Verifier`` over a task that frames the score (:func:`score_task`: one section as long as the
score, each voice's notes as its slots in time order, the score's own grid — the finest step its
onsets and durations use), and one note of each collision climbs the timing rungs of the ladder
(``RepairContext.first``, in rank order) through ``RepairContext.settle``, the ladder's one
keep-or-roll-back. A rung's result is kept only when the verifier finds the note clean and the
whole gate, run on the score as changed (``judge``), no longer reports the finding and reports
nothing it did not report before. Crossings are left to the gate (counted per notehead), since a
real score's voices cross far more often than a generated candidate's may.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import gcd
from typing import Any

from serialkit.core.piece import Blueprint, Event, Piece, Section, TimeSignature, Voice
from serialkit.core.rows import Row, RowForm
from serialkit.harness.repair import RepairContext, RungSpec
from serialkit.harness.tasks import Slot, Task, Texture
from serialkit.harness.verify import TIME_CODES, Candidate, Verifier

__all__ = ["TimingEdit", "TimingPlan", "finding_keys", "retime_findings", "score_task"]

SECTION = "score"

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


def score_task(piece: Piece, row: Row, tolerance: Fraction = Fraction(0)) -> tuple[Task, dict[str, Candidate]]:
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
            cands[e.id] = Candidate(e.id, slot, e.onset, e.duration, e.midi)
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
    codes: Sequence[str] = ("COLL",),
    tolerance: Fraction = Fraction(0),
) -> TimingPlan:
    """Put right the findings of ``codes`` in ``report`` (the gate's report on ``piece``) with the
    timing rungs, one finding at a time: the later note of a collision first, then the earlier.
    ``judge`` runs the whole gate on a changed piece; a change is kept only when the finding is
    gone and the gate reports nothing new (:func:`finding_keys`)."""
    task, cands = score_task(piece, row, tolerance)
    ver = Verifier(task)
    for cand in cands.values():
        ver.add(cand)
    ver.crossing_budget = len(cands)  # crossings are the gate's (per notehead), not the verifier's
    ctx = RepairContext(ver)
    ctx = RepairContext(ver, rungs=ctx.first)  # trim, yield, retime: the deterministic timing rungs
    current: Mapping[str, Any] = report
    keys = finding_keys(report)
    why: dict[str, tuple[str, str]] = {}
    left: list[str] = []
    for v in report.get("violations") or ():
        if v["code"] not in codes:
            continue
        key = (str(v["code"]), *sorted(str(e) for e in v["event_ids"]))
        if key not in keys:
            continue  # put right already, by the repair of another finding
        for target in reversed([str(e) for e in v["event_ids"]]):
            state = {k: (c.cand.onset, c.cand.duration) for k, c in ver.kept.items()}
            got = _attempt(ctx, piece, target, key, keys, judge)
            if got is None:
                continue
            current, keys = got, finding_keys(got)
            reason = f"{v['code']} at {v.get('location') or '?'}: {v.get('message', '')}"
            for k, c in ver.kept.items():
                if state.get(k) != (c.cand.onset, c.cand.duration):
                    why[k] = (str(v["code"]), reason if k == target else f"{reason}; this note makes room")
            break
        else:
            left.append(f"{v['code']} at {v.get('location') or '?'} left as it is: no timing rung puts it "
                        "right without the gate finding something new")
    edits = []
    for eid, cand in cands.items():
        now = ver.kept[eid].cand
        if (now.onset, now.duration) != (cand.onset, cand.duration):
            code, reason = why.get(eid, ("COLL", ""))
            edits.append(TimingEdit(eid, now.rungs[-1] if now.rungs else "retime", (cand.onset, now.onset),
                                    (cand.duration, now.duration), code, reason))
    return TimingPlan(_changed(piece, ver), tuple(edits), current, tuple(left))


def _changed(piece: Piece, ver: Verifier, extra: Candidate | None = None) -> Piece:
    """``piece`` with the onsets and durations the verifier holds (and ``extra``, not yet kept)."""
    now = {k: c.cand for k, c in ver.kept.items()}
    if extra is not None:
        now[extra.id] = extra
    out = []
    for e in piece.events:
        c = now.get(e.id)
        out.append(e if c is None or (c.onset, c.duration) == (e.onset, e.duration)
                   else e.copy(onset=c.onset, duration=c.duration))
    return piece.with_events(out)


def _attempt(ctx: RepairContext, piece: Piece, target: str, key: tuple[str, ...], keys: set[tuple[str, ...]],
             judge: Judge) -> Mapping[str, Any] | None:
    """One note of a finding up the timing rungs: the first rung whose result the verifier finds
    clean and the gate accepts is kept (the gate's report returned); otherwise nothing changes."""
    ver = ctx.verifier
    if target not in ver.kept:
        return None
    got: dict[str, Mapping[str, Any]] = {}
    with ver.trial() as outer:
        cand = ver.kept[target].cand
        ver.remove(target)
        problems = ver.problems(cand, crossing_ok=True)
        if "COLL" not in problems or not set(problems) <= TIME_CODES or "WINDOW" in problems:
            return None  # not a collision the verifier sees, or the voice is not one line here

        def judged(rung: RungSpec) -> Callable[[], Candidate | None]:
            def attempt() -> Candidate | None:
                fixed: Candidate | None = rung.fn(cand, problems, ctx)
                if fixed is None or ver.problems(fixed, crossing_ok=True):
                    return None
                verdict = judge(_changed(piece, ver, fixed))
                found = finding_keys(verdict)
                if key in found or not found <= keys:
                    return None
                got["report"] = verdict
                return fixed
            return attempt

        kept = ctx.settle(*(judged(r) for r in ctx.rungs), crossing_ok=True)
        outer.keep(kept is not None)
    return got.get("report") if kept is not None else None
