"""Reports name events; the render finds their notes: assigned ids, ties, compressed MusicXML."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from serialkit.render import VIOLATION_COLOR, render
from tests.render.conftest import labels, notes_by_id, parse_svg, text_of

ROW = "C B G Ab Eb Db D Bb F# F E A"


def _check(path: Path) -> dict:
    from serialkit.check import check_piece
    from serialkit.io import read_score

    return dict(check_piece(read_score(path), row=ROW).to_dict())


def test_notes_without_ids_get_the_readers_ids(tmp_path: Path, duet: Path) -> None:
    bare = tmp_path / "no-ids.musicxml"
    bare.write_text(re.sub(r'<note id="[^"]+">', "<note>", duet.read_text()))
    report = _check(bare)
    labelled = {k: v for k, v in report["labels"].items() if v}
    assert len(labelled) == 23
    result = render(bare, tmp_path / "out.svg", report=report)
    root = parse_svg(tmp_path / "out.svg")
    printed = {el.get("data-for"): text_of(el) for el in labels(root)}
    assert result.labels == len(printed) == len(report["labels"])
    notes = notes_by_id(root)
    for eid, label in labelled.items():
        assert notes[eid].get("data-label") == label
    for v in report["violations"]:
        for eid in v["event_ids"]:
            assert notes[eid].get("fill") == VIOLATION_COLOR


def test_tied_continuations_take_their_notes_colour(tmp_path: Path, duet: Path) -> None:
    text = duet.read_text()
    # u12 (A, the row's last note) held into bar 4 by a tie instead of the bar's rest
    text = text.replace(
        '<note id="u12"><pitch><step>A</step><octave>4</octave></pitch><duration>1</duration>',
        '<note id="u12"><pitch><step>A</step><octave>4</octave></pitch><duration>1</duration>'
        '<tie type="start"/>',
    )
    text = text.replace(
        '<note><rest measure="yes"/><duration>4</duration><voice>1</voice></note>',
        '<note id="u12b"><pitch><step>A</step><octave>4</octave></pitch><duration>4</duration>'
        '<tie type="stop"/><voice>1</voice><type>whole</type></note>',
        1,
    )
    src = tmp_path / "tied.musicxml"
    src.write_text(text)
    report = _check(src)
    assert "u12b" not in report["labels"], "the reader merges the tie into one event"
    report["violations"].append(
        {"code": "RANGE", "event_ids": ["u12"], "message": "too low", "location": ""}
    )
    render(src, tmp_path / "tied.svg", report=report)
    root = parse_svg(tmp_path / "tied.svg")
    notes = notes_by_id(root)
    assert notes["u12"].get("fill") == notes["u12b"].get("fill") == VIOLATION_COLOR
    assert "sk-tied" in notes["u12b"].get("class").split()
    assert "u12b" not in {el.get("data-for") for el in labels(root)}


def test_compressed_musicxml(tmp_path: Path, duet: Path) -> None:
    mxl = tmp_path / "duet.mxl"
    with zipfile.ZipFile(mxl, "w") as zf:
        zf.writestr("META-INF/container.xml",
                    '<container><rootfiles><rootfile full-path="score/duet.musicxml"/>'
                    "</rootfiles></container>")
        zf.writestr("score/duet.musicxml", duet.read_text())
    report = _check(duet)
    result = render(mxl, tmp_path / "mxl.svg", report=report)
    assert result.labels == len(report["labels"])


def test_every_event_of_the_io_feature_scores_is_found(tmp_path: Path, fixtures: Path) -> None:
    """Ties, chords, grace notes, layers, tuplets, transposing staves, a prolog comment (MEI)."""
    from serialkit.io import read_score

    for name in ("features.musicxml", "features.mei", "features.mxl"):
        path = fixtures / "scores" / name
        if not path.exists():
            continue
        piece = read_score(path)
        report = {"labels": {e.id: f"P0:{i % 12}" for i, e in enumerate(piece.events)}}
        result = render(path, tmp_path / f"{name}.svg", report=report)
        assert result.missing == (), (name, result.missing)
        assert result.labels == len(piece.events), name
        tied = sum(len(set(e.tied_ids) - {e.id}) for e in piece.events)
        assert result.marked_notes == len(piece.events) + tied, name
