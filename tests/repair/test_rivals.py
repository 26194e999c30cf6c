"""Hocket pieces from an outside test (one stream of statements handed between oboe, clarinet and
bassoon, some notes re-struck): two notes' corrections that fill the same position of a statement
(the confident one is not applied when the other leaves as little trouble and changes the note
nothing explains, ``plan._outdone``), and a re-struck note that goes with its note when two
statements trade it (``order._carry_repeats``)."""

from __future__ import annotations

from pathlib import Path

from serialkit.core.rows import Row
from serialkit.core.suggest.plan import plan_repairs
from serialkit.io import read_score

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "repair" / "hocket-planted.json"
ROW = Row([9, 6, 7, 8, 4, 5, 11, 10, 2, 1, 0, 3])
PLANTED = "P2-m310-s1-v1-n2"  # the Clarinet's C#4 written D4: I4:0 of the statement after it


def test_a_re_struck_correct_note_is_not_rewritten_to_fill_the_wrong_note_s_hole() -> None:
    """Bars 300-320 of a hocket between oboe, clarinet and bassoon (one stream of statements, some
    notes re-struck), one note planted a semitone up. Either of two changes makes the piece read
    whole: the planted D4 back to C#4 (its own candidates split between pitches: 21 %), or the
    Oboe's re-struck D6, a correct note, to Db6 (its one candidate: 99 %); the D4 then reads as a
    doubling of the statement before. Repair rewrote the Oboe's D6. Now the correct note is left
    alone (and the planted note, not confident enough, stays reported)."""
    piece = read_score(FIXTURE)
    assert any(e.id == PLANTED and e.midi == 62 for e in piece.events)
    plan = plan_repairs(piece, ROW)
    changed = {e.event_id for a in plan.applied for e in a.suggestion.edits}
    assert changed <= {PLANTED}, changed


def test_a_re_struck_note_goes_with_its_note_when_two_statements_trade_it() -> None:
    """Seven statements of a hocket (an outside test's correct piece, cut down): the Oboe strikes
    F5 twice, the second a re-strike, and the next statement's F5 comes four beats later. The
    first reading gave that statement the first F5 and its re-strike; putting the statements in
    time order traded the F5s but left the re-strike behind, a repeat of position 1 before
    position 0 sounds: a false ORDER finding. The re-strike now goes with its note
    (``order._carry_repeats``), and the correct piece passes."""
    from serialkit.check.profiles import profile_for
    from serialkit.check.report import check_piece
    from serialkit.core.catalog import get

    piece = read_score(FIXTURE.with_name("hocket-restrike.json"))
    report = check_piece(piece, row=get("webern-op21").row, profile=profile_for("analysis"), suggest=False)
    assert report.verdict.strict, [v.message for v in report.verdict.violations]
