"""Reading MEI: the feature fixture note by note, and the two real Webern scores against music21."""

from __future__ import annotations

import re
from collections import Counter
from fractions import Fraction as F
from pathlib import Path

import pytest
from lxml import etree

from serialkit.core.piece import TimeSignature
from serialkit.io import read_score
from serialkit.io.build import midi_of

MEI = "{http://www.music-encoding.org/ns/mei}"
XML_ID = "{http://www.w3.org/XML/1998/namespace}id"

# (voice, onset, duration, sounding MIDI, grace, tied member count), worked out by hand from
# fixtures/scores/features.mei: clarinet -2, horn -7, piano key signature of one sharp.
EXPECTED = [
    ("P1/1/1", F(0), F(1), 72, False, 0),
    ("P1/1/1", F(1), F(2), 74, False, 0),
    ("P1/1/1", F(3), F(3), 70, False, 2),
    ("P1/1/1", F(6), F(1, 3), 72, False, 0),
    ("P1/1/1", F(19, 3), F(1, 3), 74, False, 0),
    ("P1/1/1", F(20, 3), F(1, 3), 76, False, 0),
    ("P1/1/1", F(8), F(1), 76, False, 0),
    ("P1/1/1", F(9), F(1), 76, False, 0),  # sharp carried through the bar
    ("P1/1/1", F(10), F(1), 63, False, 0),  # other octave: natural
    ("P2/2/1", F(1), F(2), 72, False, 0),
    ("P2/2/1", F(1), F(2), 76, False, 0),
    ("P2/2/1", F(1), F(2), 79, False, 0),
    ("P2/2/1", F(3), F(0), 74, True, 0),
    ("P2/2/1", F(3), F(1), 73, False, 0),
    ("P2/2/1", F(4), F(1, 2), 78, False, 0),  # F from the key signature
    ("P2/2/2", F(3), F(2), 69, False, 0),
    ("P2/2/1", F(5), F(4), 64, False, 2),
    ("P2/3/1", F(0), F(1), 48, False, 0),
    ("P2/3/1", F(1), F(2, 3), 59, False, 0),
    ("P2/3/1", F(5, 3), F(2, 9), 55, False, 0),
    ("P2/3/1", F(17, 9), F(2, 9), 57, False, 0),
    ("P2/3/1", F(19, 9), F(2, 9), 58, False, 0),
    ("P2/3/1", F(7, 3), F(2, 3), 53, False, 0),
    ("P2/3/1", F(3), F(2), 50, False, 0),
    ("P2/3/1", F(8), F(3), 43, False, 0),
    ("P2/3/1", F(8), F(3), 50, False, 0),
    ("P3/4/1", F(1), F(4), 57, False, 0),
    ("P3/4/1", F(8), F(3), 60, False, 0),
]


def test_mei_feature_fixture(fixtures: Path) -> None:
    piece = read_score(fixtures / "scores" / "features.mei")
    got = sorted((e.voice, e.onset, e.duration, e.midi, e.grace, len(e.tied_ids)) for e in piece.events)
    assert got == sorted(EXPECTED)
    assert piece.event("mc3").tied_ids == ("mc3", "mc4")  # @tie="i" / "t"
    assert piece.event("pe1").tied_ids == ("pe1", "pe2")  # <tie startid endid>
    assert piece.event("gr1").grace
    assert {piece.event(i).onset for i in ("ch1a", "ch1b", "ch1c")} == {F(1)}
    assert piece.pickup == 1
    assert piece.time_signatures == (TimeSignature(4, 4, 0), TimeSignature(3, 4, 2))
    assert [v.name for v in piece.voices] == ["Clarinet in Bb", "Piano", "Piano", "Piano", "Horn in F"]
    assert piece.metadata["format"] == "mei"


def _music21_copy(src: Path, tmp_path: Path) -> Path:
    """A copy music21 can read: trans.diat / trans.semi like "-1.000000" rewritten as integers."""
    text = src.read_text(encoding="utf-8-sig")
    text = re.sub(r'trans\.(diat|semi)="(-?\d+)\.0+"', r'trans.\1="\2"', text)
    out = tmp_path / src.name
    out.write_text(text, encoding="utf-8")
    return out


def _music21_sounding(path: Path) -> Counter[int]:
    music21 = pytest.importorskip("music21")
    score = music21.converter.parse(str(path), format="mei").toSoundingPitch()
    return Counter(p.midi for n in score.recurse().notes for p in n.pitches)


def _ours(path: Path) -> Counter[int]:
    out: Counter[int] = Counter()
    for e in read_score(path).events:
        out[e.midi] += max(1, len(e.tied_ids))
    return out


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["webern-op27-ii-mm1-11.mei", "webern-op21-i-mm1-25.mei"])
def test_webern_counts_and_pitches_match_music21(corpus: Path, tmp_path: Path, name: str) -> None:
    src = corpus / name
    theirs = _music21_sounding(_music21_copy(src, tmp_path))
    ours = _ours(src)  # the original file, trans.diat="-1.000000" and all
    assert sum(ours.values()) == sum(theirs.values())
    assert ours == theirs


@pytest.mark.corpus
def test_op27_structure(corpus: Path) -> None:
    piece = read_score(corpus / "webern-op27-ii-mm1-11.mei")
    assert sum(max(1, len(e.tied_ids)) for e in piece.events) == 46  # the README's count
    assert piece.pickup == F(1)  # an upbeat of two eighths
    assert piece.time_signatures[0] == TimeSignature(2, 4, 0)
    assert piece.voice_ids == ("P1/1/1", "P1/2/1")  # one piano part, two staves
    assert sum(e.grace for e in piece.events) == 6
    assert piece.event("m1_s1_e1").midi == 69 and piece.event("m1_s1_e1").onset == 2


@pytest.mark.corpus
def test_op21_horn_sounds_a_fifth_lower(corpus: Path) -> None:
    path = corpus / "webern-op21-i-mm1-25.mei"
    piece = read_score(path)
    root = etree.parse(str(path)).getroot()
    staff_of = {}
    for staff in root.iter(MEI + "staff"):
        for note in staff.iter(MEI + "note"):
            staff_of[note.get(XML_ID)] = (int(staff.get("n")), note)
    semis = {1: -2, 2: -2, 3: -7, 4: -7}
    checked = 0
    for e in piece.events:
        n, note = staff_of[e.id]
        alter = {"s": 1, "f": -1, "n": 0, None: 0}
        accid = note.get("accid.ges") or note.get("accid")
        child = note.find(MEI + "accid")
        if child is not None:
            accid = child.get("accid.ges") or child.get("accid")
        written = midi_of(note.get("pname").upper(), alter[accid], int(note.get("oct")), "test")
        assert e.midi == written + semis.get(n, 0), e.id
        checked += 1
    assert checked == len(piece.events)
    horn = [e for e in piece.events if e.voice.startswith(("P3/", "P4/"))]
    assert horn and all(e.source and e.source.part in ("P3", "P4") for e in horn)
    # Horn 2's first note is written E4 and sounds A3.
    first = min((e for e in piece.events if e.voice == "P4/4/1"), key=lambda e: e.onset)
    _, note = staff_of[first.id]
    assert (note.get("pname"), note.get("oct")) == ("e", "4")
    assert first.midi == 57
    assert [v.name for v in piece.voices][:4] == [
        "Clarinet in Bb", "Bass Clarinet in Bb", "Horn 1 in F", "Horn 2 in F",
    ]


def test_mei_accidental_held_over_a_tie_into_the_next_bar(tmp_path: Path) -> None:
    body = """
      <measure n="1"><staff n="1"><layer n="1">
        <note xml:id="a" pname="f" oct="4" dur="2" accid="s" tie="i"/>
        <note xml:id="b" pname="c" oct="5" dur="2" accid="f"/>
      </layer></staff><tie startid="#b" endid="#d"/></measure>
      <measure n="2"><staff n="1"><layer n="1">
        <note xml:id="c" pname="f" oct="4" dur="4" tie="t"/>
        <note xml:id="d" pname="c" oct="5" dur="4"/>
        <note xml:id="e" pname="f" oct="4" dur="4"/>
        <note xml:id="f" pname="c" oct="5" dur="4"/>
      </layer></staff></measure>"""
    xml = (
        '<mei xmlns="http://www.music-encoding.org/ns/mei" meiversion="4.0.1"><music><body><mdiv>'
        '<score><scoreDef meter.count="4" meter.unit="4"><staffGrp><staffDef n="1" lines="5"/>'
        f"</staffGrp></scoreDef><section>{body}</section></score></mdiv></body></music></mei>"
    )
    path = tmp_path / "ties.mei"
    path.write_text(xml)
    piece = read_score(path)
    assert piece.event("a").tied_ids == ("a", "c") and piece.event("a").midi == 66
    assert piece.event("b").tied_ids == ("b", "d") and piece.event("b").midi == 71
    assert piece.event("e").midi == 65 and piece.event("f").midi == 72  # new bar: naturals again


@pytest.mark.corpus
def test_op21_overfull_bar_is_reported_and_later_bars_keep_the_meter(corpus: Path) -> None:
    piece = read_score(corpus / "webern-op21-i-mm1-25.mei")
    warnings = piece.metadata.get("warnings", [])
    assert len(warnings) == 1 and "bar 23, <staff n=\"6\">, <layer n=\"2\">" in warnings[0]
    assert [m.onset for m in piece.measures] == [4 * i for i in range(25)]
    assert piece.end <= 100


def test_mei_tuplet_spans_fingered_tremolo_and_multirest(tmp_path: Path) -> None:
    body = """
      <measure n="1"><staff n="1"><layer n="1">
        <note xml:id="a" pname="c" oct="4" dur="8"/><note xml:id="b" pname="d" oct="4" dur="8"/>
        <note xml:id="c" pname="e" oct="4" dur="8"/>
        <fTrem><note xml:id="d" pname="f" oct="4" dur="2"/><note xml:id="e" pname="a" oct="4" dur="2"/></fTrem>
        <note xml:id="f" pname="g" oct="4" dur="4"/>
      </layer></staff>
      <tupletSpan staff="1" startid="#a" endid="#c" num="3" numbase="2"/></measure>
      <measure n="2"><staff n="1"><layer n="1"><multiRest num="3"/></layer></staff></measure>
      <measure n="6"><staff n="1"><layer n="1"><note xml:id="g" pname="b" oct="4" dur="1"/></layer></staff></measure>"""
    xml = (
        '<mei xmlns="http://www.music-encoding.org/ns/mei" meiversion="4.0.1"><music><body><mdiv>'
        '<score><scoreDef meter.count="4" meter.unit="4"><staffGrp><staffDef n="1" lines="5"/>'
        f"</staffGrp></scoreDef><section>{body}</section></score></mdiv></body></music></mei>"
    )
    path = tmp_path / "spans.mei"
    path.write_text(xml)
    piece = read_score(path)
    got = {e.id: (e.onset, e.duration) for e in piece.events}
    assert got == {
        "a": (F(0), F(1, 3)), "b": (F(1, 3), F(1, 3)), "c": (F(2, 3), F(1, 3)),
        "d": (F(1), F(1)), "e": (F(2), F(1)), "f": (F(3), F(1)), "g": (F(16), F(4)),
    }
