"""Reading MusicXML: exact events of the feature fixture, timewise and .mxl forms, stable ids."""

from __future__ import annotations

import zipfile
from collections import Counter
from fractions import Fraction as F
from pathlib import Path

import pytest
from lxml import etree

from serialkit.core.piece import Measure, TimeSignature
from serialkit.io import read_score

# (id or None for an assigned id, voice, onset, duration, sounding MIDI, grace, tied member count)
# worked out by hand from fixtures/scores/features.musicxml (divisions 36; clarinet sounds a
# major second lower, horn a fifth lower).
EXPECTED = [
    ("cl-1", "P1/1/1", F(0), F(1), 72, False, 0),
    (None, "P1/1/1", F(1), F(2), 74, False, 0),
    ("cl-3", "P1/1/1", F(3), F(3), 70, False, 2),
    (None, "P1/1/1", F(6), F(1, 3), 72, False, 0),
    (None, "P1/1/1", F(19, 3), F(1, 3), 74, False, 0),
    (None, "P1/1/1", F(20, 3), F(1, 3), 76, False, 0),
    (None, "P2/2/5", F(0), F(1), 48, False, 0),
    ("pf-c1", "P2/1/1", F(1), F(2), 72, False, 0),
    ("pf-c2", "P2/1/1", F(1), F(2), 76, False, 0),
    ("pf-c3", "P2/1/1", F(1), F(2), 79, False, 0),
    ("pf-grace", "P2/1/1", F(3), F(0), 74, True, 0),
    (None, "P2/1/1", F(3), F(1), 73, False, 0),
    (None, "P2/1/1", F(4), F(1, 2), 77, False, 0),
    (None, "P2/1/2", F(3), F(2), 69, False, 0),
    (None, "P2/2/5", F(1), F(2, 3), 59, False, 0),
    (None, "P2/2/5", F(5, 3), F(2, 9), 55, False, 0),
    (None, "P2/2/5", F(17, 9), F(2, 9), 57, False, 0),
    (None, "P2/2/5", F(19, 9), F(2, 9), 58, False, 0),
    (None, "P2/2/5", F(7, 3), F(2, 3), 53, False, 0),
    (None, "P2/2/5", F(3), F(2), 50, False, 0),
    ("pf-e1", "P2/1/1", F(5), F(4), 64, False, 2),
    (None, "P2/2/5", F(8), F(3), 43, False, 0),
    (None, "P2/2/5", F(8), F(3), 50, False, 0),
    ("hn-1", "P3/1/1", F(1), F(4), 57, False, 0),
    ("hn-2", "P3/1/1", F(8), F(3), 60, False, 0),
]


def _key(e):  # noqa: ANN001, ANN202
    return (e.voice, e.onset, e.duration, e.midi, e.grace, len(e.tied_ids))


def _check_events(piece) -> None:  # noqa: ANN001
    got = sorted(_key(e) for e in piece.events)
    want = sorted(x[1:] for x in EXPECTED)
    assert got == want
    by_id = {e.id: e for e in piece.events}
    for ident, *_rest in EXPECTED:
        if ident is not None:
            assert ident in by_id, ident


def test_feature_fixture_events(fixtures: Path) -> None:
    piece = read_score(fixtures / "scores" / "features.musicxml")
    _check_events(piece)
    assert piece.metadata["format"] == "musicxml"
    assert piece.event("cl-3").tied_ids == ("cl-3", "cl-4")
    assert piece.event("pf-e1").tied_ids == ("pf-e1", "pf-e2")


def test_bars_meter_pickup_and_voices(fixtures: Path) -> None:
    piece = read_score(fixtures / "scores" / "features.musicxml")
    assert piece.pickup == 1
    assert piece.measures == (
        Measure("0", F(0), F(1)),
        Measure("1", F(1), F(4)),
        Measure("2", F(5), F(3)),
        Measure("3", F(8), F(3)),
    )
    assert piece.time_signatures == (TimeSignature(4, 4, 0), TimeSignature(3, 4, 2))
    assert piece.voice_ids == ("P1/1/1", "P2/1/1", "P2/1/2", "P2/2/5", "P3/1/1")
    assert [v.name for v in piece.voices] == [
        "Clarinet in B-flat", "Piano", "Piano", "Piano", "Horn in F",
    ]
    assert piece.locate(F(20, 3)) == ("2", F(8, 3))


def test_sources_name_part_measure_staff_voice_beat_line(fixtures: Path) -> None:
    piece = read_score(fixtures / "scores" / "features.musicxml")
    src = piece.event("pf-e1").source
    assert src is not None
    assert (src.part, src.measure, src.staff, src.voice, src.beat) == ("P2", "2", 1, "1", F(1))
    text = (fixtures / "scores" / "features.musicxml").read_text().splitlines()
    assert 'id="pf-e1"' in text[src.line - 1]


def test_assigned_ids_are_deterministic(fixtures: Path) -> None:
    a = read_score(fixtures / "scores" / "features.musicxml")
    b = read_score(fixtures / "scores" / "features.musicxml")
    assert [e.id for e in a.events] == [e.id for e in b.events]
    ids = {e.id for e in a.events}
    assert "P2-m1-s2-v5-n2" in ids  # second pitched note of staff 2, voice 5, bar 1
    assert len(ids) == len(a.events)


def _timewise(partwise: etree._Element) -> etree._Element:
    root = etree.Element("score-timewise", version="4.0")
    for child in partwise:
        if child.tag != "part":
            root.append(child)
    parts = partwise.findall("part")
    for i, first in enumerate(parts[0].findall("measure")):
        measure = etree.SubElement(root, "measure", number=first.get("number"))
        if first.get("implicit"):
            measure.set("implicit", first.get("implicit"))
        for part in parts:
            p = etree.SubElement(measure, "part", id=part.get("id"))
            p.extend(list(part.findall("measure")[i]))
    return root


def test_timewise_reads_like_partwise(fixtures: Path, tmp_path: Path) -> None:
    tree = etree.parse(str(fixtures / "scores" / "features.musicxml"))
    out = tmp_path / "timewise.xml"
    out.write_bytes(etree.tostring(_timewise(tree.getroot()), xml_declaration=True, encoding="UTF-8"))
    _check_events(read_score(out))


def test_compressed_fixture_honours_container(fixtures: Path) -> None:
    path = fixtures / "scores" / "features.mxl"
    with zipfile.ZipFile(path) as zf:
        assert "META-INF/container.xml" in zf.namelist()
        assert not any(n.endswith(".musicxml") and "/" not in n for n in zf.namelist())
    piece = read_score(path)
    _check_events(piece)
    assert piece.metadata["format"] == "mxl"


def test_counts_match_music21(fixtures: Path) -> None:
    music21 = pytest.importorskip("music21")
    path = fixtures / "scores" / "features.musicxml"
    score = music21.converter.parse(str(path)).toSoundingPitch()
    theirs = Counter(p.midi for n in score.recurse().notes for p in n.pitches)
    piece = read_score(path)
    ours: Counter[int] = Counter()
    for e in piece.events:
        ours[e.midi] += max(1, len(e.tied_ids))
    assert ours == theirs


def test_rounded_tuplet_durations_are_read_exactly(tmp_path: Path) -> None:
    """Files that round tuplets to whole divisions (33 + 33 + 34) still give exact thirds."""
    def note(step: str, dur: int, tm: bool = True) -> str:
        mod = "<time-modification><actual-notes>3</actual-notes><normal-notes>2</normal-notes></time-modification>"
        return (
            f"<note><pitch><step>{step}</step><octave>4</octave></pitch><duration>{dur}</duration>"
            f"<voice>1</voice><type>eighth</type>{mod if tm else ''}</note>"
        )
    body = note("C", 33) + note("D", 33) + note("E", 34) + (
        "<note><pitch><step>F</step><octave>4</octave></pitch><duration>100</duration>"
        "<voice>1</voice><type>quarter</type></note>"
        "<backup><duration>200</duration></backup>"
        "<note><pitch><step>G</step><octave>3</octave></pitch><duration>200</duration>"
        "<voice>2</voice><type>half</type></note>"
    )
    xml = (
        '<?xml version="1.0"?><score-partwise version="4.0"><part-list><score-part id="P1">'
        "<part-name>x</part-name></score-part></part-list><part id=\"P1\"><measure number=\"1\">"
        "<attributes><divisions>100</divisions><time><beats>2</beats><beat-type>4</beat-type></time>"
        f"</attributes>{body}</measure></part></score-partwise>"
    )
    path = tmp_path / "rounded.musicxml"
    path.write_text(xml)
    piece = read_score(path)
    got = [(e.onset, e.duration, e.midi) for e in sorted(piece.events, key=lambda e: (e.onset, e.midi))]
    assert got == [
        (F(0), F(2), 55), (F(0), F(1, 3), 60), (F(1, 3), F(1, 3), 62), (F(2, 3), F(1, 3), 64),
        (F(1), F(1), 65),
    ]
    assert piece.measures[0].duration == 2


def _two_staff_score(body: str) -> str:
    return (
        '<?xml version="1.0"?><score-partwise version="4.0"><part-list><score-part id="P1">'
        '<part-name>Piano</part-name></score-part></part-list><part id="P1"><measure number="1">'
        "<attributes><divisions>1</divisions><time><beats>2</beats><beat-type>4</beat-type></time>"
        f"<staves>2</staves></attributes>{body}</measure></part></score-partwise>"
    )


def _n(step: str, octave: int, voice: int, staff: int, ident: str) -> str:
    return (
        f'<note id="{ident}"><pitch><step>{step}</step><octave>{octave}</octave></pitch>'
        f"<duration>1</duration><voice>{voice}</voice><type>quarter</type><staff>{staff}</staff></note>"
    )


def test_cross_staff_notes_stay_in_their_voice(tmp_path: Path) -> None:
    """A voice that dips onto the other staff (Op. 27's hands crossing) keeps one voice key;
    the same voice number reused on the other staff after <backup> (Finale) is another voice."""
    crossing = _n("C", 5, 1, 1, "a") + _n("C", 3, 1, 2, "b") + "<backup><duration>2</duration></backup>" + (
        _n("G", 2, 5, 2, "c") + _n("A", 2, 5, 2, "d")
    )
    path = tmp_path / "cross.musicxml"
    path.write_text(_two_staff_score(crossing))
    piece = read_score(path)
    assert {e.id: e.voice for e in piece.events} == {"a": "P1/1/1", "b": "P1/1/1", "c": "P1/2/5", "d": "P1/2/5"}
    assert piece.event("b").source is not None and piece.event("b").source.staff == 2
    reused = _n("C", 5, 1, 1, "a") + _n("D", 5, 1, 1, "b") + "<backup><duration>2</duration></backup>" + (
        _n("G", 2, 1, 2, "c") + _n("A", 2, 1, 2, "d")
    )
    path.write_text(_two_staff_score(reused))
    piece = read_score(path)
    assert {e.id: e.voice for e in piece.events} == {"a": "P1/1/1", "b": "P1/1/1", "c": "P1/2/1", "d": "P1/2/1"}
