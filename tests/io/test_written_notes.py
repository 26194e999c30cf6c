"""Conversion keeps every note as its score writes it: the part's transposition (MusicXML
``<transpose>``, MEI ``trans.semi``) and each note's spelling (a written G#4 stays G#4, a Db3
stays Db3), in every direction between MusicXML, .mxl and MEI, and in an annotated MEI copy.

``fixtures/scores/horn-piano.musicxml``: a Horn in F (written a fifth above its sound) spelt with
Gb, D#, A#, G#, E#, Db and Cb, and a piano whose first staff holds two voices."""

from __future__ import annotations

import os
import subprocess
import tempfile
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from serialkit.core.notenames import written_spelling
from serialkit.io import Annotation, convert_score, read_score
from serialkit.io.annotate import write_annotated_score
from serialkit.io.musicxml.validate import musicxml_errors
from serialkit.io.musicxml.write import musicxml_bytes
from tests.conftest import require_program

HORN = Path(__file__).resolve().parents[2] / "fixtures" / "scores" / "horn-piano.musicxml"
MEI = "{http://www.music-encoding.org/ns/mei}"


def _notes(path: Path) -> list[tuple[str, Fraction, int, tuple[str, int, int] | None, int]]:
    """(part name, onset, sounding MIDI, written (step, alter, octave), transposition) of every
    note, as the file's reader reads it."""
    piece = read_score(path)
    names = {v.id: v.name or "" for v in piece.voices}
    out = []
    for e in piece.events:
        assert e.source is not None
        out.append((names[e.voice], e.onset, e.midi, written_spelling(e), e.source.transposition))
    return sorted(out, key=lambda n: (n[0], n[1], n[2]))


def _transposes(path: Path) -> list[tuple[str | None, str | None, str | None]]:
    if path.suffix == ".mxl":
        data = musicxml_bytes(read_score(path))  # (the .mxl is the same document, compressed)
        root = etree.fromstring(data)
    else:
        root = etree.parse(str(path)).getroot()
    return sorted((t.findtext("diatonic"), t.findtext("chromatic"), t.findtext("octave-change"))
                  for t in root.iter("transpose"))


CHAINS = [(".musicxml",), (".mxl",), (".mei",), (".mei", ".musicxml"), (".mei", ".mei"),
          (".mxl", ".mei", ".mxl"), (".musicxml", ".musicxml")]


@pytest.mark.parametrize("chain", CHAINS, ids=["-".join(c).replace(".", "") for c in CHAINS])
def test_conversion_keeps_transposition_and_spelling(tmp_path: Path, chain: tuple[str, ...]) -> None:
    src = HORN
    for k, suffix in enumerate(chain):
        out = tmp_path / f"step{k}{suffix}"
        convert_score(src, out)
        src = out
    before, after = _notes(HORN), _notes(src)
    assert any(n[4] for n in before) and any(n[3] and n[3][1] for n in before)  # the fixture's point
    assert after == before
    if src.suffix in (".musicxml", ".mxl"):
        assert _transposes(src) == _transposes(HORN)
        if src.suffix == ".musicxml":
            assert musicxml_errors(src) == []
    else:
        semis = sorted(d.get("trans.semi") for d in etree.parse(str(src)).getroot().iter(f"{MEI}staffDef")
                       if d.get("trans.semi"))
        assert semis == ["-7"]


def test_annotated_mei_copy_keeps_the_spelling(tmp_path: Path) -> None:
    piece = read_score(HORN)
    marks = {e.id: Annotation(f"P0:{i % 12}") for i, e in enumerate(piece.events)}
    out = write_annotated_score(HORN, marks, tmp_path / "ann.mei", "lyric")
    assert _notes(out) == _notes(HORN)


_PITCH = st.tuples(st.sampled_from("CDEFGAB"), st.integers(-2, 2), st.integers(3, 5))


def _score(notes: list[tuple[str, int, int]], semis: int) -> bytes:
    octaves = int(semis / 12)
    steps = {-14: -8, -12: -7, -9: -5, -7: -4, -3: -2, -2: -1, 0: 0, 3: 2, 7: 4}[semis]
    transpose = (f"<transpose><diatonic>{steps - 7 * octaves}</diatonic><chromatic>{semis - 12 * octaves}"
                 f"</chromatic>{f'<octave-change>{octaves}</octave-change>' if octaves else ''}</transpose>")
    out = ['<score-partwise version="4.0"><part-list><score-part id="P1"><part-name>Instrument</part-name>'
           '</score-part></part-list><part id="P1">']
    for b in range(0, len(notes), 4):
        out.append(f'<measure number="{b // 4 + 1}">')
        if b == 0:
            out.append("<attributes><divisions>1</divisions><time><beats>4</beats><beat-type>4</beat-type>"
                       f"</time><clef><sign>G</sign><line>2</line></clef>{transpose}</attributes>")
        for s, a, o in notes[b:b + 4]:
            out.append(f"<note><pitch><step>{s}</step>{f'<alter>{a}</alter>' if a else ''}<octave>{o}</octave>"
                       "</pitch><duration>1</duration><voice>1</voice><type>quarter</type></note>")
        out.append("</measure>")
    out.append("</part></score-partwise>")
    return "".join(out).encode()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PITCH, min_size=4, max_size=12).map(lambda n: n[: len(n) // 4 * 4]),
       st.sampled_from([-14, -12, -9, -7, -3, -2, 0, 3, 7]), st.sampled_from([".musicxml", ".mei"]))
def test_any_spelling_and_transposition_survive_conversion(
    notes: list[tuple[str, int, int]], semis: int, suffix: str
) -> None:
    with tempfile.TemporaryDirectory(prefix="serialkit-test-") as tmp:
        src = Path(tmp) / "in.musicxml"
        src.write_bytes(_score(notes, semis))
        out = Path(tmp) / f"out{suffix}"
        convert_score(src, out)
        back = _notes(out)
        assert back == _notes(src)
        assert [n[3] for n in back] == notes  # one note a beat: in time order
        assert {n[4] for n in back} == {semis}
        if suffix == ".musicxml":
            assert musicxml_errors(out) == []


def _written_in(path: Path) -> dict[str, list[tuple[str, int, int]]]:
    """Part name → the written (step, alter, octave) of its notes, as the file spells them."""
    root = etree.parse(str(path)).getroot()
    names = {sp.get("id"): sp.findtext("part-name") for sp in root.iter("score-part")}
    out: dict[str, list[tuple[str, int, int]]] = {}
    for part in root.iter("part"):
        out[names[part.get("id")] or ""] = sorted(
            (n.findtext("pitch/step") or "", int(n.findtext("pitch/alter") or 0), int(n.findtext("pitch/octave") or 0))
            for n in part.iter("note") if n.find("pitch") is not None
        )
    return out


@pytest.mark.musescore
@pytest.mark.slow
@pytest.mark.timeout(400)
@pytest.mark.parametrize("suffix", [".mxl", ".musicxml"])
def test_musescore_reads_the_converted_horn_at_written_pitch(tmp_path: Path, suffix: str) -> None:
    exe = require_program("mscore3")
    converted = tmp_path / f"converted{suffix}"
    convert_score(HORN, converted)
    exported = tmp_path / "exported.musicxml"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([exe, "-o", str(exported), str(converted)], env=env, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0 and exported.is_file(), proc.stderr[-2000:]
    # MuseScore shows the horn as written (a fifth above its sound), every note spelt as the source
    assert _written_in(exported) == _written_in(HORN)
    assert _transposes(exported) == _transposes(HORN)
    assert sorted(e.midi for e in read_score(exported).events) == sorted(e.midi for e in read_score(HORN).events)
