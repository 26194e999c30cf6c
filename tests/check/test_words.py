"""One word per thing in what the commands print: a *note* is a sounding note (its tied noteheads
merged), a *notehead* a written head; a location gives one bar number, and anything else in its
brackets says what it is; an *ambiguity* is counted the same by ``check`` and ``render``."""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction
from html import escape
from pathlib import Path

import pytest
from click.testing import CliRunner

from serialkit.check.report import ambiguity_kinds, is_ambiguity
from serialkit.cli import cli
from serialkit.cli.check import ambiguity_line
from serialkit.core.events import Event, Source, Voice
from serialkit.core.piece import Piece
from serialkit.core.predicates import check_crossings
from serialkit.io import read_score, write_score
from serialkit.render.marks import build_marks

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "fixtures" / "pieces" / "demo-piece.json"


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout


def test_check_counts_notes_and_convert_counts_notes_then_noteheads(tmp_path: Path) -> None:
    _, out = _run("check", str(DEMO))
    assert "  72 notes, 2 voices (Violin, Cello)" in out.splitlines()
    assert " events" not in out
    tied = ROOT / "fixtures" / "repair" / "tied-wrong.musicxml"
    piece = read_score(tied)
    notes = len(piece.events)
    heads = sum(max(1, len(e.tied_ids)) for e in piece.events)
    assert heads > notes  # the fixture ties a note over the bar
    code, out = _run("convert", str(tied), "-o", str(tmp_path / "out.mei"))
    assert code == 0
    assert f": {notes} notes ({heads} noteheads, tied continuations included), " in out
    assert " events" not in out
    _, out = _run("convert", str(DEMO), "-o", str(tmp_path / "demo.musicxml"))
    assert ": 72 notes, 2 voices, " in out  # no ties: nothing more to say


def _crossing(grace: bool) -> Piece:
    """Two voices, the lower one above the upper on every note; a grace note in the upper one."""
    events = [Event(f"a{i}", "v1", Fraction(i), 1, 60) for i in range(4)]
    events += [Event(f"b{i}", "v2", Fraction(i), 1, 67) for i in range(4)]
    if grace:
        events.append(Event("g", "v1", Fraction(2), 0, 62, grace=True))
    return Piece(tuple(events), voices=(Voice("v1"), Voice("v2")))


@pytest.mark.parametrize("grace", [False, True])
def test_the_crossing_share_names_its_denominator_in_notes(grace: bool) -> None:
    (found,) = check_crossings(_crossing(grace))
    assert found.message.startswith("8 of 8 notes sit in a voice crossing (100.0% > 10.0% allowed")
    assert "notehead" not in found.message
    assert found.message.endswith("; the grace note is not judged)" if grace else "allowed)")


def test_a_note_written_in_one_bar_and_sounding_in_the_next_says_so(tmp_path: Path) -> None:
    """An MEI layer that runs past its bar: the note is located where it sounds, and the bar it
    is written in is named as such (not as a second bar number). MusicXML's bar grows instead."""
    mei = tmp_path / "overfull.mei"
    mei.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<mei xmlns="http://www.music-encoding.org/ns/mei" meiversion="5.1">\n'
        "<meiHead><fileDesc><titleStmt><title>overfull</title></titleStmt><pubStmt/></fileDesc></meiHead>\n"
        '<music><body><mdiv><score><scoreDef meter.count="2" meter.unit="4"><staffGrp>'
        '<staffDef n="1" lines="5" clef.shape="G" clef.line="2" label="Flute"/></staffGrp></scoreDef>\n'
        '<section><measure n="7"><staff n="1"><layer n="1">'
        '<note pname="c" oct="5" dur="4"/><note pname="d" oct="5" dur="4"/>\n'
        '<note pname="e" oct="5" dur="4"/></layer></staff></measure>\n'
        '<measure n="8"><staff n="1"><layer n="1"><rest dur="4"/><note pname="f" oct="5" dur="4"/>'
        "</layer></staff></measure></section></score></mdiv></body></music></mei>\n"
    )
    piece = read_score(mei)
    where = {e.midi: piece.describe(e) for e in piece.events}
    assert where[72] == "Flute, bar 7, beat 1 (line 5)"
    assert where[76] == "Flute, bar 8, beat 1 (written in bar 7, line 6)"
    assert where[77] == "Flute, bar 8, beat 2 (line 7)"
    # the same bars in MusicXML: a bar lasts as long as its longest voice, so nothing is past it
    xml = tmp_path / "overfull.musicxml"
    xml.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<score-partwise version="4.0"><part-list><score-part id="P1">'
        '<part-name>Flute</part-name></score-part></part-list><part id="P1"><measure number="7"><attributes>'
        "<divisions>1</divisions><time><beats>2</beats><beat-type>4</beat-type></time></attributes>\n"
        + "".join(f"<note><pitch><step>{s}</step><octave>5</octave></pitch><duration>1</duration></note>\n"
                  for s in "CDE")
        + '</measure><measure number="8"><note><rest/><duration>1</duration></note><note><pitch><step>F</step>'
        "<octave>5</octave></pitch><duration>1</duration></note></measure></part></score-partwise>\n"
    )
    piece = read_score(xml)
    assert [piece.describe(e) for e in piece.events] == [
        "Flute, bar 7, beat 1 (line 3)", "Flute, bar 7, beat 2 (line 4)", "Flute, bar 7, beat 3 (line 5)",
        "Flute, bar 8, beat 2 (line 6)"]


@pytest.mark.parametrize("suffix", [".musicxml", ".mei"])
def test_bars_are_the_score_s_own_numbers_in_musicxml_and_mei(suffix: str, tmp_path: Path) -> None:
    """An excerpt whose bars the file numbers from 4 up: the same bars from either format, with
    one bar number and nothing more about bars."""
    source = read_score(ROOT / "fixtures" / "scores" / "features.musicxml")
    renumbered = source.copy(measures=tuple(replace(m, number=str(int(m.number) + 4)) for m in source.measures))
    path = tmp_path / f"excerpt{suffix}"
    write_score(renumbered, path)
    piece = read_score(path)
    bars = {str(int(source.locate(e.onset)[0]) + 4) for e in source.events}
    for event in piece.events:
        said = piece.describe(event)
        assert said.count("bar") == 1 and said.split(", bar ")[1].split(",")[0] in bars, said
    assert {piece.locate(e.onset)[0] for e in piece.events} == bars


def test_a_bar_numbered_otherwise_in_the_file_is_labelled_as_the_file_s_number() -> None:
    piece = Piece((Event("a", "v1", Fraction(0), 1, 60, source=Source(measure="12a", line=3)),),
                  voices=(Voice("v1", "Oboe"),))
    assert piece.describe(piece.events[0]) == "Oboe, bar 1, beat 1 (numbered 12a in the file, line 3)"


def test_ambiguities_are_counted_alike_by_check_and_render() -> None:
    entries = [
        {"event_id": "a", "candidates": ["P0:0", "R6:0"], "reason": "symmetric row: P0 is also R6", "one_reading": True},
        {"event_id": "b", "candidates": ["P0:11", "I3:0"], "reason": "elision: the note ends S1 and begins S2",
         "one_reading": False},
        {"event_id": "c", "candidates": ["P0:5", "P0:5"], "reason": "pivot: the repeated note may end S1 or begin S2",
         "one_reading": False},
        {"event_id": "d", "candidates": ["P0:3", "I5:3"], "reason": "elision: the note ends S2 and begins S3"},
    ]
    assert [is_ambiguity(e) for e in entries] == [False, True, True, True]
    assert ambiguity_kinds(entries) == {"elision": 2, "pivot": 1}
    assert ambiguity_line(entries) == (
        "3 ambiguities (notes with more than one reading: elision 2, pivot 1), not violations; "
        "each with its place in --json")
    assert ambiguity_line(entries[:1]) is None
    marks = build_marks({"labels": {e["event_id"]: e["candidates"][0] for e in entries},
                               "violations": [], "unexplained": [], "ambiguities": entries})
    assert sorted(f.event_ids[0] for f in marks.findings if f.kind == "ambiguity") == ["b", "c", "d"]


@pytest.mark.corpus
def test_op21_says_notes_and_names_its_ambiguities(corpus: Path, tmp_path: Path) -> None:
    score = corpus / "webern-op21-i-mm1-25.mei"
    report = tmp_path / "check.json"
    _, out = _run("check", str(score), "--report", str(report))
    data = json.loads(report.read_text())
    found = [a for a in data["ambiguities"] if not a["one_reading"]]
    assert all(a["location"].count("bar ") >= 1 for a in data["ambiguities"])
    lines = out.splitlines()
    assert "  128 notes, 10 voices" in lines[1]
    assert f"  {len(found)} ambiguities (notes with more than one reading: " in out
    assert "50 of 120 notes sit in a voice crossing (41.7% > 10.0% allowed; the 8 grace notes are not judged)" in out
    assert "Harp, staff 2, bar 24, beat 1 (written in bar 23, line 1706)" in out
    assert "in the file" not in out
    _, rendered = _run("render", str(score), "--check-report", str(report), "-o", str(tmp_path / "review.html"))
    assert f"{len(found)} ambiguities" in rendered
    page = (tmp_path / "review.html").read_text()
    facts = page[page.index('<p id="sk-facts">'):].split("</p>")[0]
    assert f" · {len(found)} ambiguities · " in facts  # the review page's head counts them the same
    assert all(escape(a["location"]) in page for a in found)  # each ambiguity with its place


def test_a_share_of_notes_is_never_rounded_to_all_or_none() -> None:
    """A new user's 2,048-note file read "100.0 % of notes explained, 1 unexplained": one note of
    2,048 left is 99.9 %, and one counted of 2,048 is 0.1 %; only every note is 100.0 %."""
    from fractions import Fraction

    from serialkit.core.analysis.result import percent

    assert percent(Fraction(2047, 2048)) == "99.9%"
    assert percent(Fraction(1, 2048)) == "0.1%"
    assert percent(Fraction(1)) == "100.0%"
    assert percent(0.0) == "0.0%"
    assert percent(Fraction(127, 128)) == "99.2%"
