"""Annotated MEI in place: labels and colours added, every other byte of the source kept."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from serialkit.core.errors import ScoreWriteError
from serialkit.io import Annotation, read_score
from serialkit.io.annotate import write_annotated_score
from serialkit.io.mei.annotate import Edits, splice, write_annotated_mei

MEI = "{http://www.music-encoding.org/ns/mei}"
XML_ID = "{http://www.w3.org/XML/1998/namespace}id"
OP21 = "webern-op21-i-mm1-25.mei"


def _labels(piece, colour: str | None = "#D00000") -> dict[str, Annotation]:  # type: ignore[no-untyped-def]
    return {e.id: Annotation(f"P{i % 12}:{i % 12}", colour) for i, e in enumerate(piece.events)}


def _added(root: etree._Element) -> list[etree._Element]:
    return [el for el in root.iter() if el.get("type") == "serialkit"]


@pytest.mark.parametrize("labels", ["words", "fingering"])
def test_only_label_lines_are_added(corpus: Path, tmp_path: Path, labels: str) -> None:
    src = corpus / OP21
    piece = read_score(src)
    out = write_annotated_mei(src, _labels(piece, None), tmp_path / "a.mei", labels)
    added = [ln for ln in out.read_bytes().splitlines(keepends=True) if b'type="serialkit"' in ln]
    kept = [ln for ln in out.read_bytes().splitlines(keepends=True) if b'type="serialkit"' not in ln]
    assert b"".join(kept) == src.read_bytes()  # byte for byte, BOM and processing instructions too
    assert len(added) == len(piece.events)


def test_colours_change_only_the_colour_attribute(corpus: Path, tmp_path: Path) -> None:
    src = corpus / OP21
    piece = read_score(src)
    out = write_annotated_mei(src, _labels(piece), tmp_path / "a.mei", "words")
    text = out.read_bytes()
    kept = b"".join(ln for ln in text.splitlines(keepends=True) if b'type="serialkit"' not in ln)
    assert re.sub(rb'color="#[0-9A-F]{6}"', b'color="?"', kept) == re.sub(
        rb'color="#[0-9A-Fa-f]{6}"', b'color="?"', src.read_bytes()
    )
    root = etree.fromstring(text)
    notes = {n.get(XML_ID): n for n in root.iter(MEI + "note")}
    for e in piece.events:
        for nid in e.tied_ids or (e.id,):
            assert notes[nid].get("color") == "#D00000"


@pytest.mark.parametrize("labels", ["words", "fingering", "lyric"])
def test_every_label_points_at_its_note(corpus: Path, tmp_path: Path, labels: str) -> None:
    src = corpus / OP21
    piece = read_score(src)
    marks = _labels(piece)
    out = write_annotated_mei(src, marks, tmp_path / "a.mei", labels)
    root = etree.parse(str(out)).getroot()
    got: dict[str, str] = {}
    for el in _added(root):
        if el.tag == MEI + "verse":
            note = el.getparent()
            got[note.get(XML_ID)] = "".join(el.itertext())
        else:
            assert el.tag == MEI + ("fing" if labels == "fingering" else "dir")
            got[(el.get("startid") or "").lstrip("#")] = el.text or ""
    assert got == {k: v.label for k, v in marks.items()}
    again = read_score(out)
    assert [(e.id, e.onset, e.midi) for e in again.events] == [(e.id, e.onset, e.midi) for e in piece.events]


def test_a_chords_notes_each_keep_their_own_verse(corpus: Path, tmp_path: Path) -> None:
    src = corpus / OP21
    piece = read_score(src)
    out = write_annotated_mei(src, _labels(piece), tmp_path / "a.mei", "lyric")
    root = etree.parse(str(out)).getroot()
    chords = list(root.iter(MEI + "chord"))
    assert chords
    for chord in chords:
        numbers = [v.get("n") for n in chord.iter(MEI + "note") for v in n.iter(MEI + "verse")]
        assert len(numbers) == len(set(numbers)) == len(list(chord.iter(MEI + "note")))


def test_notes_without_ids_get_the_readers_ids(tmp_path: Path) -> None:
    src = tmp_path / "bare.mei"
    src.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<mei xmlns="http://www.music-encoding.org/ns/mei">'
        '<music><body><mdiv><score><scoreDef meter.count="4" meter.unit="4"><staffGrp>'
        '<staffDef n="1" lines="5" clef.shape="G" clef.line="2"/></staffGrp></scoreDef><section>'
        '<measure n="1"><staff n="1"><layer n="1"><note pname="c" oct="4" dur="2"/>'
        '<note pname="d" oct="4" dur="2"/></layer></staff></measure></section></score></mdiv>'
        "</body></music></mei>\n"
    )
    piece = read_score(src)
    out = write_annotated_mei(src, _labels(piece), tmp_path / "out.mei", "words")
    root = etree.parse(str(out)).getroot()
    ids = [n.get(XML_ID) for n in root.iter(MEI + "note")]
    assert ids == [e.id for e in piece.events]
    assert sorted((d.get("startid") or "")[1:] for d in _added(root)) == sorted(ids)
    assert [e.id for e in read_score(out).events] == ids


def test_self_closing_notes_open_for_a_verse(tmp_path: Path) -> None:
    data = b'<a>\n  <note x="1" />\n  <b>\n  </b>\n</a>\n'
    edits = Edits()
    edits.add(1, b"<verse/>")
    edits.add(2, b"<dir/>")
    edits.set(1, "color", "#FF0000")
    edits.set(1, "x", "2")
    assert splice(data, edits) == (
        b'<a>\n  <note x="2" color="#FF0000">\n      <verse/>\n  </note>\n  <b>\n      <dir/>\n  </b>\n</a>\n'
    )
    assert splice(data, Edits()) == data


def test_unknown_notes_and_carriers_are_refused(corpus: Path, tmp_path: Path) -> None:
    src = corpus / OP21
    with pytest.raises(ScoreWriteError, match="not in the score: nope"):
        write_annotated_mei(src, {"nope": Annotation("P0:0")}, tmp_path / "x.mei")
    with pytest.raises(ScoreWriteError, match="label carrier 'stickers'"):
        write_annotated_score(src, {}, tmp_path / "x.mei", "stickers")
    assert not (tmp_path / "x.mei").exists()


def test_verovio_shows_every_label(corpus: Path, tmp_path: Path) -> None:
    import verovio

    src = corpus / OP21
    piece = read_score(src)
    marks = {e.id: Annotation(f"L{i}x", None) for i, e in enumerate(piece.events)}
    for labels in ("words", "lyric", "fingering"):
        out = write_annotated_mei(src, marks, tmp_path / f"{labels}.mei", labels)
        tk = verovio.toolkit()
        tk.setOptions({"breaks": "none", "adjustPageHeight": True})
        assert tk.loadFile(str(out))
        svg = "".join(tk.renderToSVG(i + 1) for i in range(tk.getPageCount()))
        assert sorted(re.findall(r"L\d+x", svg)) == sorted(a.label for a in marks.values()), labels


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_annotating_any_mei_keeps_its_notes(data: st.DataObject, tmp_path: Path) -> None:
    from serialkit.io.mei.write import write_mei
    from tests.strategies import notated_pieces

    piece = data.draw(notated_pieces())
    src = tmp_path / "p.mei"
    write_mei(piece, src)
    read = read_score(src)
    labels = data.draw(st.sampled_from(["words", "lyric", "fingering"]))
    marks = {e.id: Annotation(f"P{i % 12}:{i % 12}", "#0072B2") for i, e in enumerate(read.events)}
    out = write_annotated_mei(src, marks, tmp_path / "a.mei", labels)
    again = read_score(out)
    assert [(e.id, e.onset, e.duration, e.midi) for e in again.events] == [
        (e.id, e.onset, e.duration, e.midi) for e in read.events
    ]
    assert len(_added(etree.parse(str(out)).getroot())) == len(marks)


def test_prefixed_mei_with_comments_keeps_its_prefix_and_bytes(tmp_path: Path) -> None:
    src = tmp_path / "prefixed.mei"
    text = (
        "<?xml version='1.0' encoding='utf-8'?>\r\n<!-- made by hand -->\r\n"
        '<mei:mei xmlns:mei="http://www.music-encoding.org/ns/mei"><mei:music><mei:body><mei:mdiv>'
        '<mei:score><mei:scoreDef meter.count="3" meter.unit="4"><mei:staffGrp>'
        '<mei:staffDef n="1" lines="5" clef.shape="F" clef.line="4"/></mei:staffGrp></mei:scoreDef>'
        "<mei:section><mei:measure n='1'><mei:staff n='1'><mei:layer n='1'>"
        "<!-- a chord --><mei:chord dur='2' dots='1'><mei:note pname='c' oct='3'/>"
        "<mei:note pname='e' oct='3' accid='f'/></mei:chord></mei:layer></mei:staff></mei:measure>"
        "</mei:section></mei:score></mei:mdiv></mei:body></mei:music></mei:mei>\r\n"
    )
    src.write_bytes(text.encode())
    piece = read_score(src)
    for labels in ("words", "lyric", "fingering"):
        out = write_annotated_mei(src, _labels(piece), tmp_path / f"{labels}.mei", labels)
        data = out.read_bytes()
        assert data.startswith(b"<?xml version='1.0' encoding='utf-8'?>\r\n<!-- made by hand -->")
        assert b"<dir" not in data.replace(b"<mei:dir", b"") and b"<verse" not in data.replace(b"<mei:verse", b"")
        root = etree.fromstring(data)
        assert len(_added(root)) == 2
        again = read_score(out)
        assert [(e.id, e.midi, e.duration) for e in again.events] == [(e.id, e.midi, e.duration) for e in piece.events]
