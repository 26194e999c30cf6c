"""A multi-movement MEI (several ``<mdiv>``) is engraved whole, as ``check`` reads it (outside
tester 0405, #3: only movement I was engraved while the labels and findings named notes of II)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from serialkit.io import read_score
from serialkit.render import render
from tests.render.conftest import SVG, labels, notes_by_id, parse_svg

ROW = "C C# D Eb E F F# G Ab A Bb B"
_NAMES = ["c", "c", "d", "e", "e", "f", "f", "g", "a", "a", "b", "b"]
_ACCID = ["n", "s", "n", "f", "n", "n", "s", "n", "f", "n", "f", "n"]  # each written out


def _movement(n: int, label: str, wrong: int | None, ids: bool) -> str:
    """One ``<mdiv>``: the row's twelve notes in three 4/4 bars (note ``wrong`` a semitone up)."""
    bars = []
    for bar in range(3):
        notes = []
        for k in range(bar * 4, bar * 4 + 4):
            pname, accid = _NAMES[k], _ACCID[k]
            if k == wrong:  # C# → D#: a note no row form explains here
                pname, accid = "d", "s"
            ident = f' xml:id="m{n}n{k}"' if ids else ""
            notes.append(f'<note{ident} pname="{pname}" oct="4" dur="4" accid="{accid}"/>')
        bars.append(f'<measure n="{bar + 1}"><staff n="1"><layer n="1">{"".join(notes)}</layer></staff></measure>')
    return (f'<mdiv label="{label}"><score><scoreDef meter.count="4" meter.unit="4"><staffGrp>'
            '<staffDef n="1" lines="5" clef.shape="G" clef.line="2" label="Oboe"/></staffGrp></scoreDef>'
            f'<section>{"".join(bars)}</section></score></mdiv>')


def _two_movements(path: Path, ids: bool) -> Path:
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<mei xmlns="http://www.music-encoding.org/ns/mei" '
        'meiversion="5.0"><meiHead><fileDesc><titleStmt><title>Two movements</title></titleStmt><pubStmt/>'
        "</fileDesc></meiHead><music><body>"
        + _movement(1, "I", None, ids) + _movement(2, "II", 1, ids)
        + "</body></music></mei>\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("ids", [True, False], ids=["xml-ids", "reader-ids"])
def test_every_movement_is_engraved_with_its_labels_and_findings(tmp_path: Path, ids: bool) -> None:
    score = _two_movements(tmp_path / "two.mei", ids)
    events = read_score(score).events
    assert len(events) == 24  # the check reads both movements
    out = tmp_path / "two.svg"
    result = render(score, out, row=ROW)
    roots = [parse_svg(f) for f in result.files]
    drawn = {nid: g for root in roots for nid, g in notes_by_id(root).items()}
    assert len(drawn) == 24, "every note of both movements is on the page"
    printed = {el.get("data-for"): "".join(el.itertext()) for root in roots for el in labels(root)}
    assert result.labels == len(printed) == 24
    assert sum(1 for text in printed.values() if re.fullmatch(r"P0:\d+", text)) == 23
    assert sorted(text for text in printed.values() if text.startswith("?")) == ["? ROW"]  # II's wrong note
    assert result.findings, "movement II's wrong note is a finding"
    named = {e for f in result.findings for e in f.event_ids}
    assert named and named <= set(drawn), "every finding points at notes on the page"
    wrong = [g for g in drawn.values() if "sk-unexplained" in (g.get("class") or "").split()]
    assert len(wrong) == 1
    # the wrong note is the second of movement II: after every note of movement I in the drawing
    order = [g.get("id") for root in roots for g in root.iter(f"{SVG}g")
             if (g.get("class") or "").split()[:1] == ["note"]]
    assert order.index(wrong[0].get("id")) == 13


def test_the_review_page_shows_both_movements(tmp_path: Path) -> None:
    score = _two_movements(tmp_path / "two.mei", ids=False)
    out = tmp_path / "two.html"
    result = render(score, out, row=ROW)
    html = out.read_text(encoding="utf-8")
    assert len(re.findall(r'<g id="[^"]+" class="note sk-note', html)) == 24
    assert result.marked_notes == 24
