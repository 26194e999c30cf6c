"""Cue notes (MusicXML ``<cue/>``, MEI ``@cue="true"``, on a note or a chord) show another
instrument's part and are not played: the readers skip them (they still take their time in the
voice), so check judges only what sounds; annotating and repairing leave them in the file as
they were, and the MEI → MusicXML conversion writes them as cue notes."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from serialkit.cli import cli
from serialkit.io import read_score
from serialkit.io.mei.convert import mei_musicxml_bytes

ROW = "C B G Ab Eb Db D Bb F# F E A"
STEPS = [("C", 0), ("B", 0), ("G", 0), ("A", -1), ("E", -1), ("D", -1), ("D", 0), ("B", -1),
         ("F", 1), ("F", 0), ("E", 0), ("A", 0)]


def _xml_note(step: str, alter: int, octave: int = 4, cue: bool = False, chord: bool = False,
              ident: str | None = None) -> str:
    pitch = f"<step>{step}</step>" + (f"<alter>{alter}</alter>" if alter else "") + f"<octave>{octave}</octave>"
    return (f"<note{f' id={chr(34)}{ident}{chr(34)}' if ident else ''}>" + ("<cue/>" if cue else "")
            + ("<chord/>" if chord else "") + f"<pitch>{pitch}</pitch><duration>1</duration>"
            "<voice>1</voice><type>quarter</type></note>")


def _musicxml(notes: list[str]) -> str:
    """One part, one bar as long as its notes (chord members and cue notes take time as written)."""
    beats = sum(1 for n in notes if "<chord/>" not in n)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<score-partwise version="4.0"><part-list>'
            '<score-part id="P1"><part-name>Cello</part-name></score-part></part-list><part id="P1">'
            '<measure number="1"><attributes><divisions>1</divisions><time>'
            f'<beats>{beats}</beats><beat-type>4</beat-type></time><clef><sign>G</sign><line>2</line></clef>'
            '</attributes>' + "".join(notes) + "</measure></part></score-partwise>\n")


def _with_cues(cue_at: list[int], chord: bool = False) -> str:
    """The row as quarter notes, with a cue note (an A4, foreign to the row's order there)
    before the note of each index of ``cue_at`` — or, with ``chord``, a cue chord (A4, C5)."""
    notes: list[str] = []
    for k, (step, alter) in enumerate(STEPS):
        if k in cue_at:
            notes.append(_xml_note("A", 0, cue=True, ident=f"cue{k}"))
            if chord:
                notes.append(_xml_note("C", 0, 5, cue=True, chord=True, ident=f"cue{k}c"))
        notes.append(_xml_note(step, alter, ident=f"n{k}"))
    return _musicxml(notes)


@settings(max_examples=15, deadline=None)
@given(cue_at=st.lists(st.integers(0, 11), unique=True, max_size=3), chord=st.booleans())
def test_musicxml_cue_notes_are_not_played_but_take_their_time(cue_at: list[int], chord: bool) -> None:
    """Invariant: whatever cue notes stand among the row, the events are the row's twelve notes,
    each starting one quarter later for every cue note before it."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cue.musicxml"
        path.write_text(_with_cues(cue_at, chord))
        events = sorted(read_score(path).events, key=lambda e: e.onset)
    assert [e.id for e in events] == [f"n{k}" for k in range(12)]
    assert [e.onset for e in events] == [k + sum(1 for c in cue_at if c <= k) for k in range(12)]


def test_check_passes_and_annotate_and_repair_leave_cue_notes_as_they_were(tmp_path: Path) -> None:
    src = tmp_path / "cue.musicxml"
    src.write_text(_with_cues([3, 8], chord=True))
    runner = CliRunner()
    result = runner.invoke(cli, ["check", str(src), "--row", ROW])
    assert result.exit_code == 0, result.output
    out = tmp_path / "labelled.musicxml"
    result = runner.invoke(cli, ["annotate", str(src), "--row", ROW, "-o", str(out)])
    assert result.exit_code == 0, result.output

    def cues(path: Path) -> list[bytes]:
        root = etree.parse(str(path)).getroot()
        return [etree.tostring(n) for n in root.iter("note") if n.find("cue") is not None]

    assert len(cues(src)) == 4 and cues(out) == cues(src)
    wrong = tmp_path / "wrong.musicxml"  # the F# (index 8) written as F: one note to mend
    wrong.write_text(src.read_text().replace(
        '<note id="n8"><pitch><step>F</step><alter>1</alter>', '<note id="n8"><pitch><step>F</step>'))
    fixed = tmp_path / "fixed.musicxml"
    result = runner.invoke(cli, ["repair", str(wrong), "--row", ROW, "-o", str(fixed), "--no-review"])
    assert result.exit_code == 0 and "1 note changed" in result.output, result.output
    assert cues(fixed) == cues(src)


def _mei(notes: str) -> str:
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<mei xmlns="http://www.music-encoding.org/ns/mei" '
            'meiversion="4.0.1"><meiHead><fileDesc><titleStmt><title>c</title></titleStmt><pubStmt/>'
            '</fileDesc></meiHead><music><body><mdiv><score><scoreDef meter.count="4" meter.unit="4">'
            '<staffGrp><staffDef n="1" lines="5" clef.shape="G" clef.line="2" label="Oboe"/></staffGrp>'
            '</scoreDef><section><measure n="1"><staff n="1"><layer n="1">' + notes
            + "</layer></staff></measure></section></score></mdiv></body></music></mei>\n")


@pytest.mark.parametrize("cue", [
    '<note xml:id="q" pname="a" oct="4" dur="4" cue="true"/>',
    '<chord xml:id="q" dur="4" cue="true"><note pname="a" oct="4"/><note pname="c" oct="5"/></chord>',
])
def test_mei_cue_notes_are_not_played_and_convert_as_cue_notes(cue: str, tmp_path: Path) -> None:
    src = tmp_path / "cue.mei"
    src.write_text(_mei('<note xml:id="a" pname="c" oct="4" dur="4"/>' + cue
                        + '<note xml:id="b" pname="b" oct="3" dur="4"/><rest dur="4"/>'))
    events = read_score(src).events
    assert [(e.id, e.onset, e.midi) for e in events] == [("a", 0, 60), ("b", 2, 59)]
    root = etree.fromstring(mei_musicxml_bytes(src))
    written = [n for n in root.iter("note") if n.find("cue") is not None]
    assert len(written) == cue.count("<note") and all(n.find("duration") is not None for n in written)
    converted = tmp_path / "cue.musicxml"
    converted.write_bytes(etree.tostring(root))
    assert [(e.onset, e.midi) for e in read_score(converted).events] == [(0, 60), (2, 59)]


def test_a_cue_false_note_is_played(tmp_path: Path) -> None:
    src = tmp_path / "cue.mei"
    src.write_text(_mei('<note pname="c" oct="4" dur="1" cue="false"/>'))
    assert [e.midi for e in read_score(src).events] == [60]
