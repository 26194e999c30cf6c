"""What a repair may change and what it keeps: the codes it fixes (``--only``), the notes a
correction may touch, and the one-at-a-time judgement that keeps a correction only when the whole
gate is better with it (``Keeper``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from serialkit.core.errors import SerialkitError
from serialkit.core.notenames import NoteNames
from serialkit.core.piece import Piece
from serialkit.core.suggest import Suggestion

__all__ = ["FIXABLE", "TIMING_FIXABLE", "Keeper", "allowed_notes", "validate_only", "with_pitches"]

FIXABLE = ("ROW", "ORDER")
"""The finding codes a pitch correction can fix (``--only``)."""
TIMING_FIXABLE = ("COLL", "CROSS")
"""The finding codes the timing rungs can fix (``--only``), where the rule profile judges them
(``repair.timing.TIMING_CODES``)."""


def validate_only(only: Sequence[str] | None, profile: Any) -> None:
    """Refuse ``--only`` codes repair cannot fix, and timing codes the rule profile does not judge
    (one error before any score is read)."""
    if only is None:
        return
    bad = [c for c in only if c not in FIXABLE + TIMING_FIXABLE]
    if bad:
        raise SerialkitError(f"--only {bad[0]}: repair fixes only {', '.join(FIXABLE + TIMING_FIXABLE)}")
    unjudged = [c for c in only if c in TIMING_FIXABLE and not profile.judges(c)]
    if unjudged:
        raise SerialkitError(f"--only {unjudged[0]}: the {profile.name} profile does not judge {unjudged[0]}, "
                             "so no timing is changed for it; give --rules generation")


def allowed_notes(report: Mapping[str, Any], only: Sequence[str] | None, piece: Piece) -> set[str] | None:
    """The notes a repair may change under ``--only`` (None: any note)."""
    if only is None or "ROW" in only:
        return None  # ROW covers unexplained notes and notes standing in a statement's hole
    return {e for v in report.get("violations") or () if v["code"] in only for e in v["event_ids"]}


def with_pitches(piece: Piece, midi: Mapping[str, int]) -> Piece:
    """``piece`` (with its own tags and sources) with the notes of ``midi`` at those pitches."""
    return piece.with_events(
        e.copy(midi=midi[e.id], claimed_pc=None if e.claimed_pc is None else midi[e.id] % 12)
        if e.id in midi and midi[e.id] != e.midi else e
        for e in piece.events
    )


_HOLE = "lacks position"
"""How a hole finding reads (``check.report._holes``): it names the two statement members around
the hole, which the row explains, not a suspect note."""


def _named(report: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """The notes the check names as suspect — unexplained notes, the notes of a ROW or ORDER
    finding, notes standing in a statement's hole that it suggests a correction for — and the
    explained neighbours a hole finding is located by (one of them may be the wrong note, in a
    chord, but the row explains them: the statement with the hole holds them)."""
    named = set(report.get("unexplained") or ())
    around: set[str] = set()
    for v in report.get("violations") or ():
        if v["code"] in FIXABLE:
            (around if _HOLE in v.get("message", "") else named).update(v["event_ids"])
    named |= {s["event_id"] for s in report.get("suggestions") or () if s.get("finding") == "hole"} - around
    return named, around - named


def _findings(report: Mapping[str, Any]) -> set[tuple[str, tuple[str, ...], str]]:
    return {(v["code"], tuple(v["event_ids"]), v.get("message", "")) for v in report.get("violations") or ()}


def _new_findings(before: Mapping[str, Any], after: Mapping[str, Any]) -> int:
    """How many of ``after``'s findings are new: not among ``before``'s, and about notes no finding
    of ``before`` named (a hole that moves along its statement as a wrong note beside it is put
    right is the same trouble, not a new one)."""
    old = _findings(before)
    seen = {e for _, ids, _ in old for e in ids} | set(before.get("unexplained") or ())
    return sum(1 for f in _findings(after) - old if not f[1] or not set(f[1]) & seen)


def _better(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """True when ``after`` improves on ``before``: no new finding (:func:`_new_findings`), and
    strictly fewer findings or fewer unexplained notes (neither more)."""
    if _new_findings(before, after):
        return False
    old, new = len(_findings(before)), len(_findings(after))
    unexplained = (len(before.get("unexplained") or ()), len(after.get("unexplained") or ()))
    return unexplained[1] <= unexplained[0] and new <= old and (new < old or unexplained[1] < unexplained[0])


_ABSORBED = 2
"""A correction of a note the check does not name (the row reads a wrong note as another position,
and correct notes round it go unexplained) is kept when it leaves at least this many fewer notes
unexplained and the gate no worse: one note it explains could be the music's own."""


class Keeper:
    """The one-at-a-time judgement of a repair's corrections, each by the whole gate against the
    score as the corrections kept before it left it (``accept``, asked by ``plan_repairs`` as it
    plans). A correction is kept only when its note is one the check names (a swap's other note
    comes with it) — or a hole's neighbour, when changing it leaves fewer notes unexplained, or any
    note, when changing it leaves ``_ABSORBED`` fewer unexplained (a wrong note the row absorbs) —
    and the gate afterwards is better (:func:`_better`). ``current``, ``report``: the score with the
    corrections kept and the gate's report on it; ``refused``: each refused correction's notes and
    why."""

    def __init__(self, piece: Piece, before: Mapping[str, Any],
                 judge: Callable[[Piece, bool], dict[str, Any]]) -> None:
        self.current, self.report, self.judge = piece, dict(before), judge
        self.names = NoteNames(piece)
        self.refused: list[tuple[set[str], str]] = []

    def accept(self, s: Suggestion) -> bool:
        """Keep ``s`` (True: ``current`` and ``report`` are then the score with it), or refuse it
        (False: the reason is added to ``refused``)."""
        why = self._refusal(s)
        if why:
            self.refused.append(({e.event_id for e in s.edits}, why))
        return not why

    def _refusal(self, s: Suggestion) -> str:
        """Why ``s`` is not kept ("" when it is: ``current`` and ``report`` then include it)."""
        current, report = self.current, self.report
        what = f"{self.names.place(s.event_id)} (→ {self.names.name(s.event_id, s.midi, s.model)}) not changed: "
        named, around = _named(report)
        if s.event_id not in named | around:  # a note in a statement's hole, the check's suggestions say
            named, around = _named(self.judge(current, True))
        changed = with_pitches(current, {e.event_id: e.after for e in s.edits})
        result = self.judge(changed, False)
        if s.event_id not in named | around:  # a wrong note the row absorbs: it must explain the notes it left
            gained = len(report.get("unexplained") or ()) - len(result.get("unexplained") or ())  # unexplained,
            if gained < _ABSORBED or not _better(report, result):  # several of them, and nothing new
                return what + "the check does not name it (the row explains it)"
        elif s.event_id in around and not len(result.get("unexplained") or ()) < len(report.get("unexplained") or ()):
            return what + ("the row explains it, and changing it explains no other note "
                           "(it only moves a statement's hole)")
        elif not _better(report, result):
            new = _new_findings(report, result)
            return what + (f"the gate finds {new} new finding{'s' if new != 1 else ''} with it" if new
                           else "the gate is no better with it")
        self.current, self.report = changed, result
        return ""
