"""MEI → MusicXML keeps what engravers see: counts of marks equal the source's, pitches written."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from serialkit.io import read_score
from serialkit.io.mei.convert import mei_musicxml_bytes, mei_to_musicxml
from serialkit.io.musicxml.instruments import declares_instruments
from serialkit.io.musicxml.validate import musicxml_schema

MEI = "{http://www.music-encoding.org/ns/mei}"
SCORES = ("webern-op21-i-mm1-25.mei", "webern-op27-ii-mm1-11.mei")


def mei_counts(path: Path) -> dict[str, int]:
    """What the MEI source's music holds (not the header's incipits), counted from its elements."""
    root = etree.parse(str(path)).getroot()
    music = [el for el in root.iter() if not any(a.tag == MEI + "meiHead" for a in el.iterancestors())]

    def named(*tags: str) -> list[etree._Element]:
        return [el for el in music if el.tag in {MEI + t for t in tags}]

    staff_defs = named("staffDef")
    slur_attrs = sum(
        1 for el in named("note", "chord") for tok in (el.get("slur") or "").split() if tok.startswith("i")
    )
    return {
        "dynamics": len(named("dynam")),
        "slurs": len(named("slur", "phrase")) + slur_attrs,
        "words": len([d for d in named("dir", "tempo") if "".join(d.itertext()).strip()]),
        "clefs": len([d for d in staff_defs if d.get("clef.shape") or d.find(MEI + "clef") is not None])
        + len([c for c in named("clef") if c.getparent().tag != MEI + "staffDef"]),
        "transpositions": len([d for d in staff_defs if d.get("trans.semi")]),
        "articulations": sum(len((a.get("artic") or "").split()) for a in named("artic"))
        + sum(len((n.get("artic") or "").split()) for n in named("note", "chord")),
    }


def musicxml_counts(root: etree._Element) -> dict[str, int]:
    return {
        "dynamics": len(root.findall(".//direction-type/dynamics")),
        "slurs": len(root.findall(".//notations/slur[@type='start']")),
        "words": len(root.findall(".//direction-type/words")),
        "clefs": len(root.findall(".//attributes/clef")),
        "transpositions": len(root.findall(".//attributes/transpose")),
        "articulations": len(root.findall(".//articulations/*")) + len(root.findall(".//technical/*")),
    }


@pytest.mark.parametrize("name", SCORES)
def test_every_mark_of_the_source_is_kept(corpus: Path, name: str) -> None:
    tree, unplaced = mei_to_musicxml(corpus / name)
    want, got = mei_counts(corpus / name), musicxml_counts(tree.getroot())
    assert got == want
    assert unplaced == 0
    assert len(tree.getroot().findall(".//notations/slur[@type='stop']")) == want["slurs"]


def test_op21_counts_are_the_ones_the_issue_names(corpus: Path) -> None:
    tree, _ = mei_to_musicxml(corpus / SCORES[0])
    counts = musicxml_counts(tree.getroot())
    assert (counts["dynamics"], counts["slurs"], counts["words"], counts["transpositions"]) == (44, 19, 24, 4)
    viola = tree.getroot().find(".//part[@id='P8']/measure/attributes/clef")
    assert viola is not None and (viola.findtext("sign"), viola.findtext("line")) == ("C", "3")


@pytest.mark.parametrize("name", SCORES)
def test_output_is_valid_musicxml_with_instruments(corpus: Path, name: str) -> None:
    data = mei_musicxml_bytes(corpus / name)
    root = etree.fromstring(data)
    assert musicxml_schema().validate(root.getroottree()), musicxml_schema().error_log
    assert declares_instruments(root)
    names = [sp.findtext("part-name") for sp in root.iterfind("part-list/score-part")]
    assert all(names)


@pytest.mark.parametrize("name", SCORES)
def test_notes_keep_their_ids_and_sounding_pitch(corpus: Path, tmp_path: Path, name: str) -> None:
    out = tmp_path / "x.musicxml"
    out.write_bytes(mei_musicxml_bytes(corpus / name))
    mei, xml = read_score(corpus / name), read_score(out)
    assert sorted((e.id, e.midi, e.duration, e.grace) for e in mei.events) == sorted(
        (e.id, e.midi, e.duration, e.grace) for e in xml.events
    )
    # onsets agree wherever the source's bars are regular (Op. 21 bar 23 overfills a layer)
    bar23 = next((m.onset for m in mei.measures if m.number == "23"), None)
    onsets = {e.id: e.onset for e in xml.events}
    for e in mei.events:
        if bar23 is None or e.onset < bar23:
            assert onsets[e.id] == e.onset, e.id


def test_horns_are_written_at_written_pitch(corpus: Path) -> None:
    tree, _ = mei_to_musicxml(corpus / SCORES[0])
    root = tree.getroot()
    sounding = {e.id: e.midi for e in read_score(corpus / SCORES[0]).events}
    steps = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}
    for pid in ("P3", "P4"):  # Horn 1 and 2 in F: written a fifth above sounding
        part = root.find(f"part[@id='{pid}']")
        assert part is not None
        transpose = part.find("measure/attributes/transpose")
        assert transpose is not None and transpose.findtext("chromatic") == "-7"
        for note in part.iter("note"):
            pitch = note.find("pitch")
            if pitch is None:
                continue
            written = 12 * (int(pitch.findtext("octave") or 0) + 1) + steps[pitch.findtext("step") or "C"]
            written += int(pitch.findtext("alter") or 0)
            assert written == sounding[note.get("id") or ""] + 7


def test_the_fixture_round_trips(fixtures: Path, tmp_path: Path) -> None:
    src = fixtures / "scores" / "features.mei"
    out = tmp_path / "f.musicxml"
    out.write_bytes(mei_musicxml_bytes(src))
    a, b = read_score(src), read_score(out)
    assert [(e.id, e.onset, e.duration, e.midi, e.grace, e.tied_ids) for e in a.events] == [
        (e.id, e.onset, e.duration, e.midi, e.grace, e.tied_ids) for e in b.events
    ]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_mei_serialkit_writes_converts_to_the_same_notes(data: st.DataObject, tmp_path: Path) -> None:
    from serialkit.io.mei.write import write_mei
    from tests.strategies import notated_pieces

    piece = data.draw(notated_pieces())
    mei = tmp_path / "p.mei"
    write_mei(piece, mei)
    out = tmp_path / "p.musicxml"
    out.write_bytes(mei_musicxml_bytes(mei))
    a, b = read_score(mei), read_score(out)

    def key(p):  # type: ignore[no-untyped-def]
        return sorted((e.onset, e.duration, e.midi, e.grace) for e in p.events)

    assert key(b) == key(a)
    assert {e.id for e in b.events} == {e.id for e in a.events}
    assert [m.duration for m in b.measures] == [m.duration for m in a.measures]


def test_convert_score_keeps_the_marks_and_write_score_rebuilds(corpus: Path, tmp_path: Path) -> None:
    from serialkit.io import convert_score, write_score

    src = corpus / SCORES[0]
    piece = convert_score(src, tmp_path / "kept.musicxml")
    kept = musicxml_counts(etree.parse(str(tmp_path / "kept.musicxml")).getroot())
    assert kept == mei_counts(src)
    write_score(piece, tmp_path / "rebuilt.musicxml")  # the piece model: notes, rhythm, meter only
    rebuilt = etree.parse(str(tmp_path / "rebuilt.musicxml")).getroot()
    assert musicxml_counts(rebuilt)["dynamics"] == 0 and declares_instruments(rebuilt)
    convert_score(src, tmp_path / "again.mei")  # other targets are written from the piece
    assert len(read_score(tmp_path / "again.mei").events) == len(piece.events)


@pytest.mark.parametrize("name", ["features.musicxml", "features.mxl"])
def test_verovios_mei_converts_to_the_same_notes(fixtures: Path, tmp_path: Path, name: str) -> None:
    """An MEI written by another program (verovio's MusicXML import), not tuned against."""
    import verovio

    tk = verovio.toolkit()
    assert tk.loadFile(str(fixtures / "scores" / name))
    mei = tmp_path / "verovio.mei"
    mei.write_text(tk.getMEI())
    out = tmp_path / "back.musicxml"
    out.write_bytes(mei_musicxml_bytes(mei))
    a, b = read_score(mei), read_score(out)
    assert sorted((e.onset, e.duration, e.midi, e.grace) for e in b.events) == sorted(
        (e.onset, e.duration, e.midi, e.grace) for e in a.events
    )
    assert musicxml_schema().validate(etree.parse(str(out)))


def test_bracketed_groups_of_parts_are_kept(corpus: Path) -> None:
    root = mei_to_musicxml(corpus / SCORES[0])[0].getroot()
    groups = root.findall("part-list/part-group[@type='start']")
    assert [g.findtext("group-symbol") for g in groups] == ["bracket", "bracket", "bracket"]
    assert len(root.findall("part-list/part-group[@type='stop']")) == 3
    members = []
    inside = False
    for child in root.find("part-list"):
        if child.tag == "part-group":
            inside = child.get("type") == "start" and child.get("number") == "2"
        elif inside:
            members.append(child.findtext("part-name"))
    assert members == ["Horn 1 in F", "Horn 2 in F"]


def test_an_octave_line_shifts_the_display_not_the_pitch(tmp_path: Path) -> None:
    src = tmp_path / "octave.mei"
    src.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<mei xmlns="http://www.music-encoding.org/ns/mei" '
        'meiversion="5.0"><music><body><mdiv><score><scoreDef meter.count="4" meter.unit="4"><staffGrp>'
        '<staffDef n="1" lines="5" clef.shape="G" clef.line="2" label="Flute"/></staffGrp></scoreDef>'
        '<section><measure n="1"><staff n="1"><layer n="1">'
        '<note xml:id="a" pname="c" oct="6" oct.ges="7" dur="2"/><note xml:id="b" pname="d" oct="6" '
        'oct.ges="7" dur="2"/></layer></staff><octave staff="1" dis="8" dis.place="above" startid="#a" '
        'endid="#b"/></measure></section></score></mdiv></body></music></mei>\n'
    )
    out = tmp_path / "octave.musicxml"
    out.write_bytes(mei_musicxml_bytes(src))
    root = etree.parse(str(out)).getroot()
    shifts = [(s.get("type"), s.get("size")) for s in root.iter("octave-shift")]
    assert shifts == [("down", "8"), ("stop", "8")]
    assert [n.findtext("pitch/octave") for n in root.iter("note")] == ["7", "7"]
    assert [e.midi for e in read_score(out).events] == [e.midi for e in read_score(src).events] == [96, 98]
    assert musicxml_schema().validate(root.getroottree())
