"""Short staff names two instruments share are numbered on the page (``Hn. 1``, ``Hn. 2``), from
their full names when these number them, else in score order; a keyboard's staves stay one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lxml import etree

from serialkit.render import render
from serialkit.render.engrave import MEI_NS, number_abbreviations

ABBR = re.compile(r'class="labelAbbr"><text[^>]*>(?:<tspan[^>]*>)*([^<]+)<')


def _musicxml(names: list[tuple[str, str]], bars: int = 1) -> str:
    parts = "".join(
        f'<score-part id="P{i}"><part-name>{name}</part-name><part-abbreviation>{short}</part-abbreviation></score-part>'
        for i, (name, short) in enumerate(names, 1)
    )
    measure = '<note><pitch><step>C</step><octave>5</octave></pitch><duration>4</duration><type>whole</type></note>'
    body = "".join(
        f'<part id="P{i}">' + "".join(
            f'<measure number="{m}">' + ('<attributes><divisions>1</divisions><time><beats>4</beats>'
                                         '<beat-type>4</beat-type></time><clef><sign>G</sign><line>2</line></clef>'
                                         '</attributes>' if m == 1 else "")
            + measure + "</measure>" for m in range(1, bars + 1))
        + "</part>"
        for i in range(1, len(names) + 1)
    )
    return (f'<?xml version="1.0" encoding="UTF-8"?><score-partwise version="4.0"><part-list>{parts}</part-list>'
            f"{body}</score-partwise>")


def _shorts_musicxml(names: list[tuple[str, str]]) -> list[str]:
    root = etree.fromstring(_musicxml(names).encode())
    number_abbreviations(root, "musicxml")
    return [el.text for el in root.iter("part-abbreviation")]


def test_two_horns_are_numbered_from_their_names() -> None:
    assert _shorts_musicxml([("Horn 1 in F", "Hn."), ("Horn 2 in F", "Hn."), ("Trumpet", "Tpt.")]) == [
        "Hn. 1", "Hn. 2", "Tpt."]
    assert _shorts_musicxml([("Horn in F", "Hn."), ("Horn in F", "Hn.")]) == ["Hn. 1", "Hn. 2"]  # in score order
    assert _shorts_musicxml([("Horn 3", "Hn."), ("Horn 4", "Hn.")]) == ["Hn. 3", "Hn. 4"]
    assert _shorts_musicxml([("Violin I", "Vln. I"), ("Violin II", "Vln. II")]) == ["Vln. I", "Vln. II"]


def test_mei_staves_are_numbered_but_a_keyboard_is_one_instrument() -> None:
    mei = (
        f'<mei xmlns="{MEI_NS}"><music><body><mdiv><score><scoreDef><staffGrp>'
        '<staffDef n="1" label="Horn 1 in F" label.abbr="Hn."/>'
        '<staffDef n="2" label="Horn 2 in F"><labelAbbr>Hn.</labelAbbr></staffDef>'
        '<staffGrp symbol="brace"><staffDef n="3" label="Piano" label.abbr="Pno."/>'
        '<staffDef n="4" label="Piano" label.abbr="Pno."/></staffGrp>'
        '</staffGrp></scoreDef><section><scoreDef><staffGrp><staffDef n="1" label="Horn 1 in F" label.abbr="Hn."/>'
        "</staffGrp></scoreDef></section></score></mdiv></body></music></mei>"
    )
    root = etree.fromstring(mei.encode())
    assert number_abbreviations(root, "mei")
    ns = f"{{{MEI_NS}}}"
    shorts = [el.get("label.abbr") or el.findtext(f"{ns}labelAbbr") for el in root.iter(f"{ns}staffDef")]
    assert shorts == ["Hn. 1", "Hn. 2", "Pno.", "Pno.", "Hn. 1"]  # the staff defined again: the same name


def test_the_rendered_page_shows_numbered_horns(tmp_path: Path) -> None:
    score = tmp_path / "horns.musicxml"
    score.write_text(_musicxml([("Horn 1 in F", "Hn."), ("Horn 2 in F", "Hn.")], bars=40))
    out = tmp_path / "horns.svg"
    render(score, out, blind=False)
    pages = sorted(tmp_path.glob("horns*.svg"))
    shown = [s.strip() for p in pages for s in ABBR.findall(p.read_text())]
    assert shown and set(shown) == {"Hn. 1", "Hn. 2"}, shown


@pytest.mark.corpus
def test_op21_horns_are_numbered(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "op21.svg"
    render(corpus / "webern-op21-i-mm1-25.mei", out)
    shown = {s.strip() for p in tmp_path.glob("op21*.svg") for s in ABBR.findall(p.read_text())}
    assert {"Hn. 1", "Hn. 2"} <= shown and "Hn." not in shown
