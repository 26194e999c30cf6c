"""The native MuseScore writer: a MuseScore source's own XML with labels and colours added."""

from __future__ import annotations

import collections
import difflib
import os
import subprocess
import zipfile
from pathlib import Path

import pytest
from lxml import etree

from serialkit.core.errors import ScoreWriteError
from serialkit.io import Annotation, read_score
from serialkit.io.annotate import write_annotated_score
from serialkit.io.annotation import LABEL_STYLES
from serialkit.io.mscore.read import mscx_bytes
from serialkit.io.musicxml.annotate import read_annotations
from tests.conftest import require_program

ROOT = Path(__file__).resolve().parents[2] / "fixtures"
SOURCES = {
    "three-voices-ms3.mscx": ROOT / "musescore" / "three-voices-ms3.mscx",
    "clarinet-ms4.mscx": ROOT / "musescore" / "clarinet-ms4.mscx",
    "features.mscz": ROOT / "scores" / "features.mscz",
}


def _marks(piece) -> dict[str, Annotation]:  # type: ignore[no-untyped-def]
    return {e.id: Annotation(f"P{i % 12}:{i}", "#D00000") for i, e in enumerate(piece.events)}


def _events(piece):  # type: ignore[no-untyped-def]
    return [(e.id, e.onset, e.duration, e.midi, e.grace, e.tied_ids, e.source) for e in piece.events]


def _root(path: Path) -> etree._Element:
    return etree.fromstring(mscx_bytes(path))


def _texts(root: etree._Element, tag: str) -> list[str]:
    """The text of every ``tag`` (MuseScore's own markup in it, such as ``<font size="7"/>``, left out)."""
    return ["".join(text.itertext()) if (text := el.find("text")) is not None else "" for el in root.iter(tag)]


@pytest.mark.parametrize("suffix", [".mscz", ".mscx"])
@pytest.mark.parametrize("name", sorted(SOURCES))
def test_the_written_file_reads_as_the_same_events(tmp_path: Path, name: str, suffix: str) -> None:
    src = SOURCES[name]
    piece = read_score(src)
    out = write_annotated_score(src, _marks(piece), tmp_path / f"labelled{suffix}")
    again = read_score(out)
    assert again.metadata["format"] == "musescore"
    assert _events(again) == _events(piece)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_format_version_and_every_source_line_are_kept(tmp_path: Path, name: str) -> None:
    src = SOURCES[name]
    out = write_annotated_score(src, _marks(read_score(src)), tmp_path / "labelled.mscz")
    before, after = _root(src), _root(out)
    assert after.get("version") == before.get("version") and after.get("version")
    # the edit only adds lines: the source's lines are all there, in order
    old, new = mscx_bytes(src).splitlines(), mscx_bytes(out).splitlines()
    it = iter(new)
    assert all(any(line == candidate for candidate in it) for line in old)
    assert len(new) > len(old)


CARRIER = {"words": "StaffText", "fingering": "Fingering", "lyric": "Lyrics"}


def _repeated(name: str, event_id: str) -> bool:
    """A note that only a measure repeat plays (bar 3 of the clarinet repeats bar 2)."""
    return name == "clarinet-ms4.mscx" and "_m3_" in event_id


@pytest.mark.parametrize("labels", LABEL_STYLES)
@pytest.mark.parametrize("name", sorted(SOURCES))
def test_every_label_and_colour_is_in_the_written_xml(tmp_path: Path, name: str, labels: str) -> None:
    src = SOURCES[name]
    piece = read_score(src)
    marks = _marks(piece)
    root, own = _root(write_annotated_score(src, marks, tmp_path / "labelled.mscx", labels)), _root(src)
    # each label in its style's carrier; a grace note's lyric, and a repeated note's label, as staff text
    want: dict[str, collections.Counter[str]] = {tag: collections.Counter() for tag in CARRIER.values()}
    for e in piece.events:
        staff_text = _repeated(name, e.id) or (labels == "lyric" and e.grace)
        want["StaffText" if staff_text else CARRIER[labels]][marks[e.id].label or ""] += 1
    for tag, counted in want.items():
        assert collections.Counter(_texts(root, tag)) - collections.Counter(_texts(own, tag)) == counted, tag
    coloured = [c.attrib for c in root.iter("color") if c.getparent().tag == "Note"]
    heads = sum(max(1, len(e.tied_ids)) for e in piece.events if not _repeated(name, e.id))
    assert len(coloured) == heads == len(list(root.iter("Note")))
    assert all(dict(c) == {"r": "208", "g": "0", "b": "0", "a": "255"} for c in coloured)


def test_labels_stand_where_musescore_reads_them(tmp_path: Path) -> None:
    src = SOURCES["three-voices-ms3.mscx"]
    marks = _marks(read_score(src))
    for labels, tag, parent in (("words", "StaffText", "voice"), ("fingering", "Fingering", "Note"),
                                ("lyric", "Lyrics", "Chord")):
        root = _root(write_annotated_score(src, marks, tmp_path / f"{labels}.mscx", labels))
        for el in root.iter(tag):
            assert el.getparent().tag == parent, (labels, el.getparent().tag)
            if tag == "StaffText":  # before its chord, or before the other texts of the chord
                nxt = el.getnext()
                while nxt is not None and nxt.tag == "StaffText":
                    nxt = nxt.getnext()
                assert nxt is not None and nxt.tag == "Chord"


def test_lyrics_of_two_voices_or_a_chord_take_lines_of_their_own(tmp_path: Path) -> None:
    src = SOURCES["three-voices-ms3.mscx"]
    root = _root(write_annotated_score(src, _marks(read_score(src)), tmp_path / "l.mscx", "lyric"))
    for chord in root.iter("Chord"):
        numbers = [ly.findtext("no") or "0" for ly in chord.iterfind("Lyrics")]
        assert len(set(numbers)) == len(numbers)
    voices = collections.defaultdict(set)
    for staff in root.find("Score").iterfind("Staff"):  # type: ignore[union-attr]
        for measure in staff.iterfind("Measure"):
            for vi, voice in enumerate(measure.iterfind("voice")):
                for ly in voice.iterfind("Chord/Lyrics"):
                    voices[(staff.get("id"), ly.findtext("no") or "0")].add(vi)
    assert voices and all(len(v) == 1 for v in voices.values())


def test_the_mscz_keeps_every_other_member(tmp_path: Path) -> None:
    src = SOURCES["features.mscz"]
    out = write_annotated_score(src, _marks(read_score(src)), tmp_path / "labelled.mscz")
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(out) as b:
        assert a.namelist() == b.namelist()
        for name in a.namelist():
            if name != "features.mscx":
                assert a.read(name) == b.read(name), name
        assert a.read("features.mscx") != b.read("features.mscx")


def test_a_mscx_source_written_as_mscz_gets_a_container(tmp_path: Path) -> None:
    src = SOURCES["clarinet-ms4.mscx"]
    out = write_annotated_score(src, {}, tmp_path / "c.mscz")
    with zipfile.ZipFile(out) as zf:
        assert sorted(zf.namelist()) == ["META-INF/container.xml", "clarinet-ms4.mscx"]
        assert b'full-path="clarinet-ms4.mscx"' in zf.read("META-INF/container.xml")
        assert zf.read("clarinet-ms4.mscx") == src.read_bytes()


def test_a_transposing_instrument_keeps_its_written_notes(tmp_path: Path) -> None:
    src = SOURCES["clarinet-ms4.mscx"]
    root = _root(write_annotated_score(src, _marks(read_score(src)), tmp_path / "c.mscx", "fingering"))
    pitches = [(n.findtext("pitch"), n.findtext("tpc"), n.findtext("tpc2")) for n in root.iter("Note")]
    assert pitches == [(n.findtext("pitch"), n.findtext("tpc"), n.findtext("tpc2")) for n in _root(src).iter("Note")]
    assert root.findtext("Score/Part/Instrument/transposeChromatic") == "-2"


def test_unknown_ids_and_bad_colours_write_nothing(tmp_path: Path) -> None:
    src = SOURCES["three-voices-ms3.mscx"]
    out = tmp_path / "x.mscz"
    with pytest.raises(ScoreWriteError, match=r"x\.mscz.*not in .*nope"):
        write_annotated_score(src, {"nope": Annotation("P0:0")}, out)
    first = read_score(src).events[0].id
    with pytest.raises(ScoreWriteError, match="colour"):
        write_annotated_score(src, {first: Annotation("P0:0", "not-a-colour")}, out)
    assert not out.exists() and list(tmp_path.iterdir()) == []


def _mscore(args: list[str]) -> subprocess.CompletedProcess[str]:
    exe = require_program("mscore3")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([exe, *args], env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


@pytest.mark.musescore
@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("labels", LABEL_STYLES)
def test_musescore3_opens_the_written_file_with_every_label_and_colour(tmp_path: Path, labels: str) -> None:
    src = SOURCES["three-voices-ms3.mscx"]
    marks = _marks(read_score(src))
    out = write_annotated_score(src, marks, tmp_path / "labelled.mscz", labels)
    exported = tmp_path / "exported.musicxml"
    _mscore(["-o", str(exported), str(out)])
    back = read_annotations(exported).values()
    # a chord's lyrics all come out on its first note: the labels are counted one by one
    assert collections.Counter(t for a in back if a.label for t in a.label.split()) == collections.Counter(
        a.label for a in marks.values())
    assert sorted((a.color or "").upper() for a in back) == ["#D00000"] * len(marks)


def _repitched(tmp_path: Path, name: str, shift: int, pick: int = 0) -> tuple[Path, str, Path]:
    from serialkit.io.mscore.repitch import repitch_mscore

    src = SOURCES[name]
    piece = read_score(src)
    event = [e for e in piece.events if not e.grace and not e.tied_ids][pick]

    def spell(eid: str, written: int, step: str, model: str) -> tuple[str, int, int]:
        assert eid == event.id
        names = ["C", "C", "D", "E", "E", "F", "F", "G", "G", "A", "B", "B"]
        alters = [0, 1, 0, -1, 0, 0, 1, 0, 1, 0, -1, 0]
        return names[written % 12], alters[written % 12], written // 12 - 1

    out = tmp_path / f"repaired{src.suffix}"
    change = {event.id: (event.midi, event.midi + shift, "accidental")}
    repitch_mscore(src, piece, change, {event.id: Annotation("rewrite P0:1", "#332288")}, spell, out)
    return src, event.id, out


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_a_repair_repitches_only_its_note_in_the_sources_xml(tmp_path: Path, name: str) -> None:
    src, eid, out = _repitched(tmp_path, name, -1)
    piece, again = read_score(src), read_score(out)
    want = {e.id: e.midi - (1 if e.id == eid else 0) for e in piece.events}
    assert {e.id: e.midi for e in again.events} == want
    assert [(e.id, e.onset, e.duration) for e in again.events] == [(e.id, e.onset, e.duration) for e in piece.events]
    old, new = mscx_bytes(src).decode().splitlines(), mscx_bytes(out).decode().splitlines()
    assert _root(out).get("version") == _root(src).get("version")
    gone = [line for line in difflib.ndiff(old, new) if line.startswith("- ")]
    assert len(gone) <= 5 and any("<pitch>" in line for line in gone)  # the note's pitch, tpc, accidental
    root = _root(out)
    assert _texts(root, "Fingering") == ["rewrite P0:1"]
    assert [dict(c.attrib) for c in root.iter("color")] == [{"r": "51", "g": "34", "b": "136", "a": "255"}]


def test_a_repaired_transposing_note_keeps_its_written_and_sounding_relation(tmp_path: Path) -> None:
    src, eid, out = _repitched(tmp_path, "clarinet-ms4.mscx", 1)  # concert Bb4 → B4: written C5 → C#5
    before = next(n for n in _root(src).iter("Note"))
    after = next(n for n in _root(out).iter("Note"))
    assert (before.findtext("pitch"), before.findtext("tpc"), before.findtext("tpc2")) == ("70", "12", "14")
    assert (after.findtext("pitch"), after.findtext("tpc"), after.findtext("tpc2")) == ("71", "19", "21")
    event = next(e for e in read_score(out).events if e.id == eid)
    assert event.midi == 71 and event.source is not None and event.source.alter == 1
    assert event.source.transposition == -2


def test_a_repaired_note_loses_the_accidental_it_showed(tmp_path: Path) -> None:
    src = SOURCES["features.mscz"]
    piece = read_score(src)
    with_sign = [i for i, e in enumerate(e for e in piece.events if not e.grace and not e.tied_ids)
                 if e.source is not None and e.source.alter]
    assert with_sign
    _, eid, out = _repitched(tmp_path, "features.mscz", 0, with_sign[0])
    assert sum(1 for _ in _root(out).iter("Accidental")) == sum(1 for _ in _root(src).iter("Accidental")) - 1


@pytest.mark.musescore
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_musicxml_source_written_as_mscz_is_saved_by_musescore(tmp_path: Path) -> None:
    require_program("mscore3")
    src = ROOT / "scores" / "features.musicxml"
    marks = _marks(read_score(src))
    out = write_annotated_score(src, marks, tmp_path / "from-musicxml.mscz")
    root = _root(out)
    assert root.get("version", "").startswith("3.")
    assert collections.Counter(_texts(root, "StaffText")) == collections.Counter(a.label for a in marks.values())
