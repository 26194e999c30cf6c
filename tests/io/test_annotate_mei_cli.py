"""``serialkit annotate … -o OUT.mei``: every label on the right note, whatever the note ids."""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from serialkit.cli import cli
from serialkit.core.piece import Event, Piece, Voice
from serialkit.core.rows import Row
from serialkit.io import read_score
from serialkit.io.build import decode_id, midi_of
from serialkit.io.jsonio import save_piece
from tests.plugins.musescore_fixture import FIXTURE, ROW
from tests.strategies import row_statement_pieces

MEI = "{http://www.music-encoding.org/ns/mei}"
XML_ID = "{http://www.w3.org/XML/1998/namespace}id"
ACCID = {"ff": -2, "f": -1, "n": 0, "s": 1, "x": 2}


def _annotate(source: Path, out: Path, row: str, *extra: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["annotate", str(source), "--row", row, "-o", str(out), "--json", *extra])
    assert result.exit_code in (0, 1), result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def _note_midi(note: etree._Element) -> int:
    accid = note.get("accid") or note.get("accid.ges") or "n"
    return midi_of(note.get("pname", "c"), ACCID[accid], int(note.get("oct", "4")), "test")


def _labels_on_notes(path: Path, style: str) -> dict[str, tuple[str, int, str | None]]:
    """Event id → (label, MIDI of the labelled note, its colour), from <fing>/<dir> or <verse>."""
    root = etree.parse(str(path)).getroot()
    notes = {n.get(XML_ID): n for n in root.iter(f"{MEI}note") if n.get(XML_ID)}
    found: dict[str, tuple[str, int, str | None]] = {}
    if style in ("fingering", "words"):
        pairs = [
            (notes[(f.get("startid") or "").lstrip("#")], f.text or "")
            for f in root.iter(f"{MEI}fing", f"{MEI}dir")
            if f.get("startid")
        ]
    else:
        pairs = [(v.getparent(), v.findtext(f"{MEI}syl") or "") for v in root.iter(f"{MEI}verse")]
    for note, label in pairs:
        event_id = decode_id(note.get(XML_ID) or "")
        assert event_id not in found, f"two labels on {event_id}"
        found[event_id] = (label, _note_midi(note), note.get("color"))
    return found


def _without_note_ids(source: Path, out: Path, part_ids: dict[str, str] | None = None) -> Path:
    """The fixture with its note ids removed (and part ids renamed), so the reader assigns ids."""
    tree = etree.parse(str(source))
    for note in tree.getroot().iter("note"):
        note.attrib.pop("id", None)
    for el in tree.getroot().iter("score-part", "part"):
        el.set("id", (part_ids or {}).get(el.get("id", ""), el.get("id", "")))
    tree.write(str(out), xml_declaration=True, encoding="UTF-8")
    return out


def _verovio_loads(path: Path) -> str:
    import verovio

    tk = verovio.toolkit()
    assert tk.loadData(path.read_text(encoding="utf-8")), f"verovio could not load {path}"
    return "".join(tk.renderToSVG(page) for page in range(1, tk.getPageCount() + 1))


@pytest.mark.parametrize("style", ["fingering", "lyric"])
@pytest.mark.parametrize("part_ids", [None, {"P1": "1", "P2": "2 piano"}], ids=["P-ids", "digit-ids"])
def test_musicxml_without_note_ids_to_mei_labels_every_note(
    tmp_path: Path, part_ids: dict[str, str] | None, style: str
) -> None:
    source = _without_note_ids(FIXTURE, tmp_path / "score.musicxml", part_ids)
    piece = read_score(source)
    if part_ids:  # ids like "1-m1-…" and "2_piano-m1-…" are not all XML ids: the writer escapes them
        assert any(e.id[0].isdigit() for e in piece.events)
    out = tmp_path / "labelled.mei"
    report = _annotate(source, out, ROW, "--labels", style)
    labels = {k: v for k, v in report["labels"].items() if v}
    assert len(labels) == len(piece.events) == 36
    found = _labels_on_notes(out, style)
    midi = {e.id: e.midi for e in piece.events}
    heads = {n["event_id"]: n for n in report["noteheads"] if not n["tied"]}
    assert set(found) == set(labels)
    for event_id, (label, note_midi, colour) in found.items():
        assert label == labels[event_id] == heads[event_id]["label"]
        assert note_midi == midi[event_id]
        assert colour == heads[event_id]["color"]
    svg = _verovio_loads(out)
    for label in labels.values():
        assert f">{label}<" in svg
    # the MEI reads back with the original event ids
    assert {e.id for e in read_score(out).events} == set(midi)


def test_json_piece_with_slashed_ids_to_mei(tmp_path: Path) -> None:
    """Ids like ``v1/0/3`` are not XML ids; their labels still land on their notes."""
    row = Row.parse(ROW)
    events = [
        Event(f"v{v + 1}/{s}/{pos}", f"v{v + 1}", Fraction(12 * s + pos + v, 2), Fraction(1, 2),
              60 - 12 * v + pc)
        for v in range(2)
        for s, form in enumerate(("P0", "RI5"))
        for pos, pc in enumerate(row.form(form))
    ]
    source = save_piece(Piece(tuple(events), voices=(Voice("v1"), Voice("v2"))), tmp_path / "piece.json")
    out = tmp_path / "out.mei"
    report = _annotate(source, out, ROW)
    found = _labels_on_notes(out, "fingering")
    assert len(found) == len(events) == 48
    assert {k: v[0] for k, v in found.items()} == report["labels"]
    assert all(found[e.id][1] == e.midi for e in events)
    _verovio_loads(out)


def test_wrong_note_is_red_without_a_label_in_mei(tmp_path: Path) -> None:
    source = _without_note_ids(FIXTURE, tmp_path / "score.musicxml")
    text = source.read_text(encoding="utf-8").replace("<step>C</step>", "<step>D</step>", 1)
    source.write_text(text, encoding="utf-8")
    out = tmp_path / "out.mei"
    report = _annotate(source, out, ROW)
    assert len(report["unexplained"]) >= 1
    found = _labels_on_notes(out, "fingering")
    assert not set(found) & set(report["unexplained"])
    root = etree.parse(str(out)).getroot()
    red = {decode_id(n.get(XML_ID) or "") for n in root.iter(f"{MEI}note") if n.get("color") == "#D00000"}
    assert red == set(report["unexplained"])


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(piece=row_statement_pieces(max_voices=2, max_statements=2), style=st.sampled_from(["fingering", "lyric"]))
def test_write_mei_puts_each_annotation_on_its_note(
    piece: Piece, style: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Whatever the ids (slashes, leading digits), each label sits on its own note once, and the
    colour on every notehead of the event (tied continuations too)."""
    from serialkit.io.annotation import Annotation
    from serialkit.io.mei.write import write_mei

    renamed = piece.with_events(e.copy(id=f"{k}/{e.id}") for k, e in enumerate(piece.events))
    annotations = {
        e.id: Annotation(label=f"P{k % 12}:{k % 12}", color=f"#0000{k % 256:02X}")
        for k, e in enumerate(renamed.events) if k % 5
    }
    out = write_mei(renamed, tmp_path_factory.mktemp("mei") / "out.mei", annotations, style)
    found = _labels_on_notes(out, style)
    assert {k: v[0] for k, v in found.items()} == {k: a.label for k, a in annotations.items()}
    assert all(found[e.id][1] == e.midi for e in renamed.events if e.id in annotations)
    back = read_score(out)
    assert sorted(e.id for e in back.events) == sorted(e.id for e in renamed.events)
    root = etree.parse(str(out)).getroot()
    coloured = Counter(n.get("color") for n in root.iter(f"{MEI}note") if n.get("color"))
    expected = Counter({a.color: 0 for a in annotations.values()})
    for event in back.events:
        if event.id in annotations:
            expected[annotations[event.id].color] += max(1, len(event.tied_ids))
    assert coloured == expected
