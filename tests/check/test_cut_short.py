"""Statements cut short at an end: a wrong note read as a repeat, and a missing first or last note.

A wrong note that happens to repeat its neighbour (the last note of an exercise written as the
one before it) is read as an immediate repeat, which the analysis profile allows; the statement
then stops one position short. The check names the pair as a ROW finding and the suggestion puts
the missing pitch class back. A statement that stops short at the piece's edge (an excerpt's edge)
is an observation (COMPLETE) under the analysis profile and a violation under generation; one that
stops short mid-piece — its voice goes on at once with the next statement, with time for the
missing position — lacks a note, like a hole: a ROW finding (tester 0405 #8).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from serialkit.check import check_piece
from serialkit.check.profiles import profile_for
from serialkit.cli import cli
from serialkit.core.suggest import plan_repairs
from tests.planted import exercise
from tests.swept import piece as swept_piece
from tests.synth import one_voice

ROOT = Path(__file__).resolve().parents[2]
ANNA = ROOT / "fixtures" / "classroom" / "anna.musicxml"  # a correct exercise: P, R, RI, I statements
ANNA_ROW = "D C# A A# F D# E C G# G F# B"  # its row (Schoenberg's Op. 37, which --identify finds)


def _last_note(text: str, pitch: str) -> str:
    """anna.musicxml with its last note (n47, F4) replaced by ``pitch`` (MusicXML <pitch> body)."""
    start = text.index('<note id="n47">')
    body = text.index("<pitch>", start)
    end = text.index("</pitch>", start)
    return text[:body] + f"<pitch>{pitch}" + text[end:]


def _rest(text: str, note: str) -> str:
    """anna.musicxml with note ``note`` (an eighth's place in the file) made a rest: a dropped note."""
    start = text.index(f'<note id="{note}">')
    end = text.index("</note>", start)
    return (text[:start] + f'<note id="{note}"><rest/><duration>1</duration><voice>1</voice>'
            "<type>eighth</type>" + text[end:])


def _json(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, [*args, "--json"], catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout)


def test_last_note_written_as_the_one_before_fails_and_is_repaired(tmp_path: Path) -> None:
    # the last note F4 written A#4, as the note before it: read as a repeat, the statement one short
    text = ANNA.read_text("utf-8")
    wrong = tmp_path / "wrong.musicxml"
    wrong.write_text(_last_note(text, "<step>B</step><alter>-1</alter><octave>4</octave>"), "utf-8")
    code, data = _json("check", str(wrong))
    assert code == 1 and data["strict"] is False
    rows = [v for v in data["violations"] if v["code"] == "ROW"]
    assert len(rows) == 1 and "n47" in rows[0]["event_ids"], rows
    assert re.search(r"sounds position 10 \(A#\) twice and stops without position 11 \(F\)", rows[0]["message"])
    # the end it reports is not observed twice
    assert not [o for o in data.get("observations") or () if o["code"] == "COMPLETE"]
    suggested = {s["event_id"]: s for s in data["suggestions"]}
    best = suggested["n47"]["candidates"][0]
    assert best["label"] == "I0:11" and best["midi"] == 65  # F4 restores the statement


def test_accidental_slip_onto_the_note_before_is_repaired() -> None:
    """The tester's case: a last note one semitone from the note before, its accidental dropped so
    that it repeats it (C#5 written C5 after C5). plan_repairs (what ``serialkit repair`` applies)
    restores exactly that note."""
    for seed in range(200):  # the first generated piece whose last two notes are a semitone apart
        synth = one_voice(seed, statements=3)
        ids = synth.statements[-1][1]
        midi = {e.id: e.midi for e in synth.piece.events}
        if abs(midi[ids[11]] - midi[ids[10]]) == 1:
            break
    else:
        raise AssertionError("no generated piece ends with a semitone")
    piece = synth.piece.with_events(
        e.copy(midi=midi[ids[10]]) if e.id == ids[11] else e for e in synth.piece.events)
    fixed, applied = plan_repairs(piece, synth.row)
    changed = {e.id: e.midi for e, o in zip(fixed.events, piece.events, strict=True) if e.midi != o.midi}
    assert changed == {ids[11]: midi[ids[11]]}, (seed, changed, applied)


def test_missing_last_note_is_observed_under_analysis_and_a_violation_under_generation(tmp_path: Path) -> None:
    text = ANNA.read_text("utf-8")
    cut = tmp_path / "cut.musicxml"
    cut.write_text(_rest(text, "n47"), "utf-8")  # the piece's last note: the excerpt's edge
    code, data = _json("check", str(cut))
    assert code == 0 and data["strict"] is True
    short = [o for o in data["observations"] if o["code"] == "COMPLETE"]
    assert len(short) == 1 and "position 11 (F) never sounds" in short[0]["message"]
    code, data = _json("check", str(cut), "--rules", "generation")
    assert code == 1 and data["strict"] is False and data["relaxed"] is True  # relaxed ignores COMPLETE
    assert [v["code"] for v in data["violations"]] == ["COMPLETE"]
    code, data = _json("check", str(cut), "--rules", "ROW,ORDER")  # not asked for: not reported
    assert code == 0 and "COMPLETE" not in json.dumps(data["violations"])


def test_correct_exercise_has_no_cut_statement() -> None:
    code, data = _json("check", str(ANNA))
    assert code == 0 and not data.get("observations")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), which=st.integers(0, 3), last=st.just(True))
@example(seed=1678, which=2, last=False)  # read as a 3-note "statement", 2 notes borrowed: a scrap
@example(seed=0, which=1, last=False)  # the first note borrowed from the statement before
@example(seed=1122, which=1, last=False)  # read as a repeat of the previous statement's last note
def test_an_edge_note_written_as_its_neighbour_is_never_passed(seed: int, which: int, last: bool) -> None:
    """Any statement's last note written as its eleventh (and, in the examples, a first note written
    as its second): the check never passes it, and a ROW finding (or the unexplained list) names a
    note of that statement (the changed note itself, unless the analysis reads the region another
    way). A first note written as its second can read as a repeat of the previous statement's
    last note when that note has the same pitch (one_voice 1122, statement 1): the pair is then
    named with the statement that starts late beside it."""
    synth = one_voice(seed, statements=4)
    form, ids = synth.statements[which]
    victim, neighbour = (ids[11], ids[10]) if last else (ids[0], ids[1])
    midi = {e.id: e.midi for e in synth.piece.events}
    piece = synth.piece.with_events(
        e.copy(midi=midi[neighbour]) if e.id == victim else e for e in synth.piece.events)
    report = check_piece(piece, row=synth.row, profile=profile_for("analysis"))
    named = {e for v in report.verdict.violations if v.code == "ROW" for e in v.event_ids}
    assert report.verdict.strict is False
    assert set(ids) & (named | set(report.unexplained)), (form, victim, [v.message for v in report.verdict.violations])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000))
def test_clean_pieces_have_no_cut_statement_findings(seed: int) -> None:
    synth = one_voice(seed, statements=4)
    report = check_piece(synth.piece, row=synth.row, profile=profile_for("analysis"))
    assert report.verdict.strict and not report.observations


def test_a_first_note_read_as_the_previous_statements_repeat_is_named() -> None:
    """one_voice 1122: statement 2's first note (C#) written as its second (A#), which is also
    statement 1's last pitch: ``A# A# A#`` reads as statement 1's last note repeated and statement
    2 starting at position 1. The check fails it with one ROW finding naming the doubled pair, the
    suggestion restores C#, and plan_repairs changes exactly one note to C#."""
    synth = one_voice(1122, statements=4)
    first, second = synth.statements[1][1][:2]
    midi = {e.id: e.midi for e in synth.piece.events}
    piece = synth.piece.with_events(e.copy(midi=midi[second]) if e.id == first else e for e in synth.piece.events)
    report = check_piece(piece, row=synth.row, profile=profile_for("analysis"), suggest=True)
    (finding,) = report.verdict.violations
    assert finding.code == "ROW" and first in finding.event_ids
    assert re.search(r"starts at position 1, right after statement S1 \(\w+\) sounds its position 11", finding.message)
    assert not report.observations  # the end it reports is not observed as cut short as well
    best = {s["event_id"]: s["candidates"][0] for s in report.suggestions or () if s["candidates"]}
    assert best[first]["midi"] == midi[first]
    fixed, _ = plan_repairs(piece, synth.row)
    changed = {e.id: e.midi for e, o in zip(fixed.events, piece.events, strict=True) if e.midi != o.midi}
    assert list(changed.values()) == [midi[first]], changed
    assert check_piece(fixed, row=synth.row, profile=profile_for("analysis")).verdict.strict


def test_a_dropped_note_at_a_statement_edge_mid_piece_fails(tmp_path: Path) -> None:
    """anna.musicxml's S1 (R2, n0–n11) without its last note n11 (E), and S4 (I0, n36–n47)
    without its first note n36 (D): the line goes on at once with the next (previous) statement,
    so the missing position is a ROW finding naming it, not an observation."""
    text = ANNA.read_text("utf-8")
    for note, said in (("n11", r"statement S1 \(R2\) ends after position 10 though its voice goes on with "
                                r"statement S2: position 11 \(E, R2:11\) never sounds"),
                       ("n36", r"statement S4 \(I0\) starts at position 1 though its voice sounds statement "
                               r"S3 right before: position 0 \(D, I0:0\) never sounds")):
        cut = tmp_path / f"{note}.musicxml"
        cut.write_text(_rest(text, note), "utf-8")
        code, data = _json("check", str(cut), "--row", ANNA_ROW)
        assert code == 1 and data["strict"] is False, note
        (finding,) = data["violations"]
        assert finding["code"] == "ROW" and re.search(said, finding["message"]), finding
        assert not [o for o in data.get("observations") or () if o["code"] == "COMPLETE"]
        code, data = _json("check", str(cut), "--row", ANNA_ROW, "--rules", "generation")  # ROW, not also COMPLETE
        assert code == 1 and [v["code"] for v in data["violations"]] == ["ROW"], data["violations"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), which=st.integers(0, 2), last=st.booleans())
def test_a_statement_missing_an_edge_note_mid_piece_is_never_passed(seed: int, which: int, last: bool) -> None:
    """A correct exercise (four statements, one voice) with one statement edge dropped where the
    line goes on (the last note of statement 0–2, or the first of statement 1–3), its pitch class
    not sounding among the three notes either side: the check never passes it, and a ROW finding
    (or the unexplained list) names a note of that statement. (Where the analysis reads the
    statement as it is, the finding names the missing position: the tests above.)"""
    piece, row = exercise(seed)
    order = sorted(piece.events, key=lambda e: e.onset)
    k = 12 * which + 11 if last else 12 * (which + 1)
    victim = order[k]
    near = order[max(0, k - 3):k] + order[k + 1:k + 4]
    assume(victim.pc not in {e.pc for e in near})
    cut = piece.with_events(e for e in piece.events if e.id != victim.id)
    report = check_piece(cut, row=row, profile=profile_for("analysis"))
    own = {e.id for e in order[12 * which:12 * which + 12]} if last else {e.id for e in order[k:k + 12]}
    named = {e for v in report.verdict.violations if v.code == "ROW" for e in v.event_ids}
    assert report.verdict.strict is False
    assert own & (named | set(report.unexplained)), [v.message for v in report.verdict.violations]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000))
def test_correct_exercises_have_no_statement_stopping_short(seed: int) -> None:
    """Correct exercises (``planted.exercise``, ``swept.piece``) still pass with nothing observed
    cut short: a statement that is whole never stops short mid-piece."""
    for piece, row in (exercise(seed), swept_piece(seed)[:2]):
        report = check_piece(piece, row=row, profile=profile_for("analysis"))
        assert report.verdict.strict, [v.message for v in report.verdict.violations]
        assert not [o for o in report.observations if o.code == "COMPLETE"]
