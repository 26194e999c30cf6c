"""Two wrong notes side by side in one statement (the outside tester's ``Bb B`` written ``B C``):
neither correction alone explains more, so the pair is one suggestion and one repair."""

from __future__ import annotations

import random

from serialkit.core.analysis import analyze
from serialkit.core.piece import Piece
from serialkit.core.rows import Row
from serialkit.core.suggest import plan_repairs, suggest
from tests.planted import exercise


def _two_wrong(seed: int) -> tuple[Piece, Row, dict[str, int]] | None:
    """An exercise with two neighbouring notes of one statement wrong: the first written as the
    second's pitch, the second a semitone off (not the pitch class of a neighbour). None when the
    seed's pair is a statement's last and next first note, or a leap of more than a third."""
    piece, row = exercise(seed)
    events = list(piece.events)
    rng = random.Random(seed)
    k = rng.randrange(1, len(events) - 2)
    a, b = events[k], events[k + 1]
    shift = rng.choice((-1, 1))
    wrong_b = b.midi + shift
    if k % 12 == 11 or not 1 <= abs(b.midi - a.midi) <= 4 or wrong_b % 12 in (a.pc, events[k + 2].pc):
        return None
    written = piece.with_events(
        e.copy(midi=b.midi) if e.id == a.id else e.copy(midi=wrong_b) if e.id == b.id else e for e in events)
    return written, row, {a.id: a.midi, b.id: b.midi}


CASES = [seed for seed in range(40) if _two_wrong(seed) is not None]


def test_the_drawn_cases_are_many() -> None:
    assert len(CASES) >= 10


def test_two_wrong_notes_side_by_side_are_suggested_together() -> None:
    case = _two_wrong(CASES[0])
    assert case is not None
    piece, row, original = case
    found = suggest(piece, analyze(piece, row))
    best = [n.best for n in found if n.best is not None and {e.event_id for e in n.best.edits} == set(original)]
    assert best, [n.to_dict() for n in found]
    assert {e.event_id: e.after for e in best[0].edits} == original
    assert "two wrong notes side by side" in best[0].reason


def test_two_wrong_notes_side_by_side_are_repaired_exactly() -> None:
    missed = []
    for seed in CASES:
        case = _two_wrong(seed)
        assert case is not None
        piece, row, original = case
        fixed, _applied = plan_repairs(piece, row)
        changed = {e.id: e.midi for e, o in zip(fixed.events, piece.events, strict=True) if e.midi != o.midi}
        if changed != original:
            missed.append((seed, changed, original))
    assert not missed
