"""Statements that share a note (elided) with repeats and tremolos beside the shared note
(``tests.synth.elided_repeats``): a texture no bench had, where every correct piece failed —
a repeat before a shared note read as a wrong note ("stops without position 11"), a tremolo's
last return left unexplained, a tremolo after the shared note read as the next statement's
positions out of order."""

from __future__ import annotations

import pytest

from serialkit.check import check_piece
from serialkit.check.profiles import profile_for
from serialkit.core.analysis import analyze
from tests.synth import FAMILIES, whole, wrong_notes

ANALYSIS = profile_for("analysis")


@pytest.mark.parametrize("seed", range(24))
def test_a_correct_piece_passes(seed: int) -> None:
    synth = FAMILIES["elided_repeats"](seed)
    report = check_piece(synth.piece, row=synth.row, profile=ANALYSIS)
    assert report.verdict.strict, [v.message for v in report.verdict.violations]
    assert report.unexplained == ()
    assert not [o for o in report.observations if o.code == "COMPLETE"]


def test_a_tremolo_before_a_shared_note_ends_the_first_statement() -> None:
    """v1: P10 ends E G# with a tremolo on its last pair (n73 … n79) whose last G# (n80) is also
    R10's first note, R10 going on with E (n81): the tremolo is P10's (no note of it unexplained,
    none read as R10's), R10 begins on n80."""
    synth = FAMILIES["elided_repeats"](1)
    analysis = analyze(synth.piece, synth.row)
    labels = analysis.labels()
    assert [labels[f"n{i}"] for i in range(73, 82)] == [
        "P10:10", "P10:11", "P10:10", "P10:11", "P10:10", "P10:11", "P10:10", "R10:0", "R10:1"]
    (r10,) = [s for s in analysis.statements if s.form.label == "R10" and "n81" in s.event_ids]
    assert r10.event_ids[:2] == ("n80", "n81")


@pytest.mark.parametrize("seed", range(0, 40, 4))
def test_a_wrong_note_is_still_found(seed: int) -> None:
    """The habits that make a repeat beside a shared note correct do not hide a planted wrong
    note: each piece with wrong notes fails, and a finding or the unexplained list names one."""
    synth = wrong_notes(seed, base=FAMILIES["elided_repeats"])
    assert synth.wrong
    report = check_piece(synth.piece, row=synth.row, profile=ANALYSIS)
    named = {e for v in report.verdict.violations for e in v.event_ids} | set(report.unexplained)
    assert not report.verdict.strict
    assert synth.wrong & named


@pytest.mark.slow
@pytest.mark.parametrize("seed", (1, 2, 3))
def test_a_correct_whole_work_passes_and_repair_changes_nothing(seed: int) -> None:
    """About 2,000 notes (seed 0 passes at 1,500, 5,000 and 20,000 notes in ``bench_scale``)."""
    from serialkit.core.suggest import plan_repairs

    synth = whole("elided_repeats", seed, 2000)
    assert len(synth.piece.events) >= 1800
    report = check_piece(synth.piece, row=synth.row, profile=ANALYSIS)
    assert report.verdict.strict, [v.message for v in report.verdict.violations][:3]
    assert report.unexplained == ()
    assert not plan_repairs(synth.piece, synth.row, "relative").applied
