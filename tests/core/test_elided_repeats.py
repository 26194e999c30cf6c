"""Statements that share a note (elided) with repeats and tremolos beside the shared note
(``tests.synth.elided_repeats``): a texture no bench had, where every correct piece failed —
a repeat before a shared note read as a wrong note ("stops without position 11"), a tremolo's
last return left unexplained, a tremolo after the shared note read as the next statement's
positions out of order."""

from __future__ import annotations

from fractions import Fraction

import pytest

from serialkit.check import check_piece
from serialkit.check.profiles import profile_for
from serialkit.core.analysis import analyze
from serialkit.core.piece import Event, Piece
from serialkit.core.rows import Row
from tests.planted import assert_wrong_notes_named
from tests.synth import FAMILIES, whole

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
    assert_wrong_notes_named("elided_repeats", seed)


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


def _line(pcs: list[int]) -> Piece:
    return Piece(tuple(Event(f"e{i}", "v1", Fraction(i, 2), Fraction(1, 2), 60 + pc) for i, pc in enumerate(pcs)))


ROW = Row.parse("C B G Ab Eb Db D Bb F# F E A")
P0, P9 = list(ROW.form("P0")), list(ROW.form("P9"))  # P9 begins on the A that ends P0


@pytest.mark.parametrize("returns", (1, 2))
def test_a_tremolo_on_the_shared_note_and_the_next_position_passes(returns: int) -> None:
    """``… F E A | G# A G# E …``: P9 begins on the A ending P0 and trills it with its G# — the G#
    is P9's position 1 (once left unexplained), and P9's return to the shared A is no position
    out of order (the ORDER walk starts from the shared note, tagged P0:11) nor a missing one."""
    piece = _line(P0 + [P9[1], P9[0]] * returns + P9[1:])
    report = check_piece(piece, row=ROW, profile=ANALYSIS)
    assert report.verdict.strict, [v.message for v in report.verdict.violations]
    assert report.unexplained == ()
    assert analyze(piece, ROW).labels()["e12"] == "P9:1"


def test_a_repeat_before_a_shared_note_with_no_habit_elsewhere_is_still_a_finding() -> None:
    """``… F E E | A …`` in a piece of two statements: a wrong note written for P0's last note
    (the A) reads exactly alike, and nothing else in the piece shares notes or repeats them: the
    finding stays (the same shape in a piece that shares and repeats elsewhere passes)."""
    piece = _line(P0[:11] + [P0[10]] + P9)
    report = check_piece(piece, row=ROW, profile=ANALYSIS)
    assert [v.code for v in report.verdict.violations] == ["ROW"]
    assert "stops without position 11" in report.verdict.violations[0].message


@pytest.mark.parametrize(("shape", "pcs"), [
    ("A | G# G# G# ...", P0 + [P9[1]] * 3 + P9[2:]),
    ("A | G# C G# C ...", P0 + [P9[1], P9[2]] * 2 + P9[3:]),
    ("F E E E | A ...", P0[:11] + [P0[10]] * 2 + P9),
    ("F E F E | A ...", P0[:11] + [P0[9], P0[10]] + P9),
])
def test_a_run_or_a_tremolo_beside_a_lone_shared_note_passes(shape: str, pcs: list[int]) -> None:
    """A piece of two statements sharing one note, nothing else shared: the edge position struck
    three times in a row, or returned to in a tremolo with the next position, is no wrong note (a
    wrong note written as its neighbour makes one pair beside the shared note)."""
    piece = _line(pcs)
    report = check_piece(piece, row=ROW, profile=ANALYSIS)
    assert report.verdict.strict, (shape, [v.message for v in report.verdict.violations])
    assert report.unexplained == ()


@pytest.mark.parametrize(("shape", "pcs", "missing"), [
    ("A | G# G# C ...", P0 + [P9[1]] * 2 + P9[2:], "stops without position 0"),
    ("F E E | A ...", P0[:11] + [P0[10]] + P9, "stops without position 11"),
])
def test_a_pair_beside_a_lone_shared_note_is_still_a_finding(shape: str, pcs: list[int], missing: str) -> None:
    """The same pieces with the edge position struck twice: the shape a wrong note written as its
    neighbour leaves (``A | A G#`` written ``A | G# G#``) — reported, naming both notes."""
    report = check_piece(_line(pcs), row=ROW, profile=ANALYSIS)
    assert [v.code for v in report.verdict.violations] == ["ROW"], shape
    assert missing in report.verdict.violations[0].message
    assert len(report.verdict.violations[0].event_ids) == 2
