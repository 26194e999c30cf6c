"""Label carriers (lyric, fingering, words) and the notation programs that keep them.

Measured on the annotated Webern Op. 21 (128 labelled notes, 5 chords, 8 grace notes):
words survive MuseScore 3, LilyPond (musicxml2ly + lilypond) and verovio; lyrics are misaligned
by LilyPond after grace notes; fingerings stop LilyPond from compiling.
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from serialkit.io import Annotation, read_score
from serialkit.io.annotate import write_annotated_score
from serialkit.io.annotation import DEFAULT_LABELS, LABEL_STYLES
from serialkit.io.musicxml.annotate import notehead_annotations, read_annotations
from serialkit.io.musicxml.instruments import declares_instruments
from serialkit.io.musicxml.write import musicxml_bytes
from tests.conftest import require_program

OP21 = "webern-op21-i-mm1-25.mei"


def _marks(piece) -> dict[str, Annotation]:  # type: ignore[no-untyped-def]
    return {e.id: Annotation(f"P{i % 12}:{i}", "#D00000") for i, e in enumerate(piece.events)}


def test_default_carrier_is_words() -> None:
    assert DEFAULT_LABELS == "words" and set(LABEL_STYLES) == {"words", "lyric", "fingering"}


@pytest.mark.parametrize("labels", LABEL_STYLES)
@pytest.mark.parametrize("source", ["features.musicxml", "features.mei"])
def test_every_carrier_reads_back_per_note(fixtures: Path, tmp_path: Path, labels: str, source: str) -> None:
    src = fixtures / "scores" / source
    piece = read_score(src)
    marks = _marks(piece)
    out = write_annotated_score(src, marks, tmp_path / "a.musicxml", labels)
    back = read_annotations(out)
    assert {k: v.label for k, v in back.items() if k in marks} == {k: v.label for k, v in marks.items()}
    again = read_score(out)  # the words of a chord do not split it
    assert sorted((e.onset, e.midi) for e in again.events) == sorted((e.onset, e.midi) for e in piece.events)


def test_words_stand_before_the_whole_chord(corpus: Path, tmp_path: Path) -> None:
    src = corpus / OP21
    out = write_annotated_score(src, _marks(read_score(src)), tmp_path / "a.musicxml", "words")
    root = etree.parse(str(out)).getroot()
    for note in root.iter("note"):
        if note.find("chord") is not None:
            assert note.getprevious().tag == "note"  # nothing between a chord's notes


def test_lyrics_of_a_chord_get_their_own_numbers(corpus: Path, tmp_path: Path) -> None:
    src = corpus / OP21
    out = write_annotated_score(src, _marks(read_score(src)), tmp_path / "a.musicxml", "lyric")
    root = etree.parse(str(out)).getroot()
    for first in root.iter("note"):
        if first.find("chord") is None and (nxt := first.getnext()) is not None and nxt.find("chord") is not None:
            chord = [first]
            while (nxt := chord[-1].getnext()) is not None and nxt.tag == "note" and nxt.find("chord") is not None:
                chord.append(nxt)
            numbers = [ly.get("number") for n in chord for ly in n.iterfind("lyric")]
            assert len(set(numbers)) == len(numbers) == len(chord)


def test_annotated_musicxml_declares_its_instruments(corpus: Path, fixtures: Path, tmp_path: Path) -> None:
    for src in (corpus / OP21, fixtures / "scores" / "features.musicxml", fixtures / "pieces" / "demo-piece.json"):
        out = write_annotated_score(src, {}, tmp_path / "a.musicxml")
        assert declares_instruments(etree.parse(str(out)).getroot()), src


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_musicxml_serialkit_writes_declares_instruments(data: st.DataObject) -> None:
    from tests.strategies import notated_pieces

    root = etree.fromstring(musicxml_bytes(data.draw(notated_pieces())))
    assert declares_instruments(root)
    for sp in root.iterfind("part-list/score-part"):
        inst = sp.find("score-instrument")
        assert inst is not None and sp.find(f"midi-instrument[@id='{inst.get('id')}']") is not None


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_words_labels_read_back_on_any_piece(data: st.DataObject, tmp_path: Path) -> None:
    from serialkit.io import write_musicxml
    from tests.strategies import notated_pieces

    piece = data.draw(notated_pieces())
    src = write_musicxml(piece, tmp_path / "p.musicxml")
    read = read_score(src)
    labels = data.draw(st.sampled_from(LABEL_STYLES))
    marks = {e.id: Annotation(f"P{i % 12}:{i}") for i, e in enumerate(read.events)}
    out = write_annotated_score(src, marks, tmp_path / "a.musicxml", labels)
    back = read_annotations(out)
    assert {k: back[k].label for k in marks} == {k: v.label for k, v in marks.items()}


# ---- real programs ------------------------------------------------------------------------------


def _printed(svgs: list[Path]) -> collections.Counter[str]:
    text = "".join(p.read_text() for p in svgs)
    return collections.Counter(re.findall(r"<tspan>(P\d+:\d+)</tspan>", text))


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_lilypond_compiles_and_prints_every_label(corpus: Path, tmp_path: Path) -> None:
    require_program("musicxml2ly")
    require_program("lilypond")
    src = corpus / OP21
    marks = _marks(read_score(src))
    out = write_annotated_score(src, marks, tmp_path / "op21.musicxml")  # the default carrier
    ly = tmp_path / "op21.ly"
    conv = subprocess.run(["musicxml2ly", "-o", str(ly), str(out)], capture_output=True, text=True, timeout=300)
    assert conv.returncode == 0, conv.stderr[-2000:]
    run = subprocess.run(
        ["lilypond", "-dbackend=svg", "-o", str(tmp_path / "op21"), str(ly)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    printed = _printed(sorted(tmp_path.glob("op21*.svg")))
    assert printed == collections.Counter(a.label for a in marks.values())


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_lilypond_refuses_fingering_labels(fixtures: Path, tmp_path: Path) -> None:
    """Why fingering is not the default: musicxml2ly writes ``-P0:4``, which LilyPond rejects
    ("not a duration" at every label). The small features score shows it as Op. 21 does (the same
    score with the default words carrier compiles), without typesetting all of Op. 21."""
    require_program("musicxml2ly")
    require_program("lilypond")
    src = fixtures / "scores" / "features.mei"
    out = write_annotated_score(src, _marks(read_score(src)), tmp_path / "f.musicxml", "fingering")
    ly = tmp_path / "f.ly"
    subprocess.run(["musicxml2ly", "-o", str(ly), str(out)], capture_output=True, timeout=300, check=True)
    run = subprocess.run(["lilypond", "-dbackend=svg", "-o", str(tmp_path / "f"), str(ly)],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode != 0


def _mscore(args: list[str]) -> subprocess.CompletedProcess[str]:
    exe = require_program("mscore3")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([exe, *args], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


@pytest.mark.musescore
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_musescore_opens_op21_with_instruments_labels_and_written_horns(corpus: Path, tmp_path: Path) -> None:
    src = corpus / OP21
    piece = read_score(src)
    marks = _marks(piece)
    out = write_annotated_score(src, marks, tmp_path / "op21.musicxml")  # the default carrier
    exported = tmp_path / "exported.musicxml"
    proc = _mscore(["-o", str(exported), str(out)])
    assert "no instrument found" not in proc.stderr + proc.stdout
    # every label kept, on its own note (matched by part, onset and pitch: MuseScore drops ids)
    ours = {(r.part, r.onset, r.midi, r.grace): a for r, a in notehead_annotations(out)}
    theirs = {(r.part, r.onset, r.midi, r.grace): a for r, a in notehead_annotations(exported)}
    assert set(theirs) == set(ours)
    for key, mine in ours.items():
        assert theirs[key].label == mine.label, key
        assert (theirs[key].color or "").upper() == (mine.color or "").upper(), key
    # the horns at written pitch: MuseScore writes the same written notes and transposition back
    root = etree.parse(str(exported)).getroot()
    names = {sp.get("id"): sp.findtext("part-name") for sp in root.iterfind("part-list/score-part")}
    for pid, name in names.items():
        if name and name.startswith("Horn"):
            part = root.find(f"part[@id='{pid}']")
            assert part is not None and part.findtext(".//transpose/chromatic") == "-7"
    written = sorted(
        (r.onset, r.midi - r.transposition) for r, _ in notehead_annotations(exported) if r.part in ("P3", "P4")
    )
    mine = sorted(
        (r.onset, r.midi - r.transposition) for r, _ in notehead_annotations(out) if r.part in ("P3", "P4")
    )
    assert written == mine and all(r.transposition == -7 for r, _ in notehead_annotations(exported)
                                   if r.part in ("P3", "P4"))


def test_an_annotated_score_keeps_the_note_musescores_export_drops(fixtures: Path, tmp_path: Path) -> None:
    """MuseScore 3.2.3's export of features.mscz drops a bass note (D3, bar 2) the native reading
    holds; the native writer edits the score itself, so that note keeps its label and colour."""
    src = fixtures / "scores" / "features.mscz"
    piece = read_score(src)
    marks = _marks(piece)
    out = write_annotated_score(src, marks, tmp_path / "labelled.mscz")
    d3 = [e for e in piece.events if e.midi == 50 and e.source is not None and e.source.measure == "2"]
    assert len(d3) == 1
    from serialkit.io.mscore.read import mscx_bytes

    root = etree.fromstring(mscx_bytes(out))
    texts = collections.Counter(el.findtext("text") for el in root.iter("StaffText"))
    assert texts == collections.Counter(a.label for a in marks.values())
    assert texts[marks[d3[0].id].label] == 1
    heads = [n for n in root.iter("Note") if n.findtext("pitch") == "50"]
    assert heads and all(n.find("color") is not None for n in heads)
    assert [(e.id, e.onset, e.midi) for e in read_score(out).events] == [(e.id, e.onset, e.midi) for e in piece.events]


@pytest.mark.musescore
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_annotated_mscz_is_saved_by_musescore(fixtures: Path, tmp_path: Path) -> None:
    require_program("mscore3")
    src = fixtures / "musescore" / "three-voices-ms3.mscx"
    piece = read_score(src)
    marks = _marks(piece)
    out = write_annotated_score(src, marks, tmp_path / "labelled.mscz")
    again = read_score(out)
    assert again.metadata["format"] == "musescore"
    assert sorted((e.onset, e.midi) for e in again.events) == sorted((e.onset, e.midi) for e in piece.events)
    from serialkit.io.external import via_musicxml

    exported = tmp_path / "exported.musicxml"
    exported.write_bytes(via_musicxml(out, "musescore"))
    labels = collections.Counter(a.label for a in read_annotations(exported).values() if a.label)
    assert labels == collections.Counter(a.label for a in marks.values())
