"""Repairs planned from suggestions: the confident corrections applied one after another, each
judged again on the changed piece (``plan_repairs``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from serialkit.core.piece import Piece
from serialkit.core.rows import Row, _check_convention
from serialkit.core.suggest.engine import suggest
from serialkit.core.suggest.model import DEFAULT_THRESHOLD, Suggestion
from serialkit.core.suggest.readings import Readings


def _pcs_confidence(best: Suggestion, candidates: Sequence[Suggestion]) -> float:
    """The confidence that ``best``'s notes are meant at its pitch classes: its own, plus that of
    the other model of the same swap (the same notes exchanged, in another octave). A swap is
    certain in its pitch classes when the register habit alone splits the two models."""
    if best.model != "swap":
        return best.confidence
    pcs = {e.event_id: e.after % 12 for e in best.edits}
    return best.confidence + sum(
        c.confidence for c in candidates
        if c is not best and c.model == "swap" and {e.event_id: e.after % 12 for e in c.edits} == pcs
    )


def _outdone(best: Suggestion, badness: int, tops: Sequence[Suggestion], piece: Piece, row: Any,
             convention: Any, readings: Readings, unexplained: set[str]) -> bool:
    """Does another note's best correction fill the position ``best`` fills (the same statement,
    form and position) and leave less trouble in the piece than ``best`` does (``badness``), or as
    little while it changes a note nothing explains (``unexplained``) and ``best`` changes only
    notes the analysis explains? Then ``best`` is not applied, however confident: each note's
    confidence weighs its own candidates only, and a correct note (a re-struck one, say) standing
    in the hole a wrong note beside it left may have a single candidate, near certain, while the
    wrong note's own is split between pitches; an explained note is presumed right. The rival is
    not applied either unless it is confident itself."""
    mine = {e.event_id for e in best.edits}
    explained = not mine & unexplained
    for rival in tops:
        if rival is best or (rival.statement, rival.form, rival.position) != (best.statement, best.form, best.position):
            continue
        if mine & {e.event_id for e in rival.edits}:
            continue
        changes = {e.event_id: e.after for e in rival.edits}
        other = piece.with_events(e.copy(midi=changes[e.id]) if e.id in changes else e for e in piece.events)
        theirs = readings.read(other, row, convention).badness
        if theirs < badness or theirs == badness and explained and changes.keys() & unexplained:
            return True
    return False


@dataclass(frozen=True, slots=True)
class Applied:
    """One correction a repair made: the suggestion and the notes unexplained before and after."""

    suggestion: Suggestion
    unexplained_before: int
    unexplained_after: int


@dataclass(frozen=True, slots=True)
class RepairPlan:
    """What ``plan_repairs`` did: the corrected piece, the corrections applied in order, and the
    suggestions it held back (each still-reported note's best, below the threshold). Unpacks as
    ``piece, applied``."""

    piece: Piece
    applied: tuple[Applied, ...]
    held: tuple[Suggestion, ...] = ()

    def __iter__(self) -> Iterator[Any]:
        return iter((self.piece, self.applied))


def plan_repairs(
    piece: Piece,
    row: Any,
    convention: Any = "relative",
    threshold: float = DEFAULT_THRESHOLD,
    max_edits: int = 64,
    only: Iterable[str] | None = None,
    readings: Readings | None = None,
    progress: Callable[[int, int], None] | None = None,
    accept: Callable[[Suggestion], bool] | None = None,
    budget: tuple[int | None, int | None, int | None] | None = None,
) -> RepairPlan:
    """Apply the most confident suggestion, analyse again, and repeat while one reaches
    ``threshold`` and each change leaves fewer notes unexplained or missing.

    One correction at a time: a wrong note can leave correct notes around it unexplained, and
    those must not be "corrected" once the wrong note is put right. ``only``: the notes (event
    ids) that may change. Returns the corrected piece (tags not written), what was applied, and
    the suggestions below ``threshold`` that were left. ``readings``: see :class:`Readings`.
    ``progress``: told each round's number and the corrections applied so far, before the round.
    ``accept``: asked of each correction before it is applied (a repair's gate); one it refuses is
    not applied, and no later correction may change its notes.
    ``budget``: (``max_notes``, ``budget``, ``wide``) for each round's ``suggest`` (None: every
    candidate of every reported note verified, each round); a note some of whose candidates the
    budget left unverified (``NoteSuggestions.complete`` False) is not corrected that round: its
    confidence was measured against the candidates tried alone.
    """
    from serialkit.core.analysis import analyze

    allowed = None if only is None else set(only)
    if allowed is not None and not allowed:
        return RepairPlan(piece, ())
    readings = readings if readings is not None else Readings()
    current = piece
    if row is None:  # the piece's row, or the row the analysis identifies
        row = analyze(current, row, convention).row
    row, convention = Row.parse(row), _check_convention(convention)
    analysis = readings.read(current, row, convention).analysis
    applied: list[Applied] = []
    tried: set[tuple[tuple[str, int], ...]] = set()
    held: list[Suggestion] = []
    refused: set[str] = set()
    rounds = 0
    max_notes, most, wide = budget if budget is not None else (None, None, None)
    while len(applied) < max_edits:
        best: Suggestion | None = None
        held = []
        tops: list[Suggestion] = []  # every complete note's best, however confident
        rounds += 1
        if progress is not None:
            progress(rounds, len(applied))
        for note in suggest(current, analysis, suspects=False, readings=readings, max_notes=max_notes,
                            budget=most, wide=wide):
            if not note.complete:
                continue
            tops += note.candidates[:1]
            for cand in note.candidates[:1]:
                key = tuple((e.event_id, e.after) for e in cand.edits)
                if key in tried or any(e.event_id in refused or allowed is not None and e.event_id not in allowed
                                       for e in cand.edits):
                    continue
                sure = _pcs_confidence(cand, note.candidates)
                if sure < threshold:
                    held.append(cand)
                    continue
                if sure > cand.confidence:  # a swap whose octave the register habit chose
                    cand = replace(cand, confidence=sure, reason=f"{cand.reason}; the pitch classes {sure:.0%}, "
                                   f"this octave over the other exchange {cand.confidence / sure:.0%}")
                if best is None or cand.confidence > best.confidence:
                    best = cand
        if best is None:
            break
        tried.add(tuple((e.event_id, e.after) for e in best.edits))
        changes = {e.event_id: e.after for e in best.edits}
        changed = current.with_events(
            e.copy(midi=changes[e.id]) if e.id in changes else e for e in current.events
        )
        after = readings.read(changed, row, convention)
        if after.badness >= readings.read(current, row, convention).badness:
            continue
        if _outdone(best, after.badness, tops, current, row, convention, readings, set(analysis.unexplained)):
            continue
        if accept is not None and not accept(best):
            refused |= changes.keys()
            continue
        applied.append(Applied(best, len(analysis.unexplained), len(after.analysis.unexplained)))
        current, analysis = changed, after.analysis
    return RepairPlan(current, tuple(applied), tuple(held))
