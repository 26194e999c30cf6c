"""Repairing a whole movement: each planning round verifies every likely correction but at most
the check's share of the wide pass (``repair.run.round_budget``), and a note some of whose
candidates were left unverified is never corrected (its confidence was measured against the
candidates tried alone)."""

from __future__ import annotations

from pathlib import Path

from serialkit.core.suggest import plan_repairs
from serialkit.io import write_score
from serialkit.repair import repair_score
from serialkit.repair.run import LONG, round_budget
from tests import synth
from tests.planted import plant_errors


def test_a_long_piece_gets_a_bounded_wide_pass_and_a_short_one_everything() -> None:
    from serialkit.check.report import SUGGEST_WIDE

    short = synth.whole("distributed", 0, 150)
    long = synth.whole("distributed", 0, 1500)
    assert len(short.piece.events) <= LONG < len(long.piece.events)
    assert round_budget(short.piece) is None
    assert round_budget(long.piece) == (None, None, SUGGEST_WIDE)


def test_a_note_whose_candidates_the_budget_left_unverified_is_not_corrected() -> None:
    s = synth.whole("distributed", 1, 150)
    plant = next(p for p in plant_errors(s.piece, s.row, "distributed", 3, 1) if p.kind == "accidental")
    fixed, applied = plan_repairs(plant.piece, plant.row)
    assert {e.id: e.midi for e in fixed.events if e.id in plant.original} == plant.original
    assert len(applied) == 1
    starved = plan_repairs(plant.piece, plant.row, budget=(None, 0, 0))  # nothing verified
    assert starved.applied == () and starved.piece == plant.piece


def test_a_wrong_note_in_a_long_piece_is_still_repaired(tmp_path: Path) -> None:
    s = synth.whole("distributed", 0, 1500)
    plant = next(p for p in plant_errors(s.piece, s.row, "distributed", 3, 0) if p.kind == "accidental")
    score = tmp_path / "long.musicxml"
    write_score(plant.piece, score)
    result = repair_score(score, s.row, dry_run=True)
    assert {c.event_id: c.after for c in result.changes} == plant.original
