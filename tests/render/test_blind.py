"""Blind renders: no colours, no labels, no titles, names or ids that could reveal the condition."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from serialkit.render import render
from serialkit.render.engrave import LABEL_RE
from tests.render.conftest import SVG, parse_svg

_NEUTRAL = {"none", "black", "#000", "#000000", "currentColor", "transparent", "white"}
_COLOUR_IN_CSS = re.compile(r"(?:fill|stroke|color)\s*:\s*([#\w]+)")


def _all_colours(root: Any) -> set[str]:
    found = set()
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        for attr in ("fill", "stroke", "color"):
            if el.get(attr) is not None:
                found.add(el.get(attr))
        found.update(_COLOUR_IN_CSS.findall(el.get("style", "")))
        if el.tag == f"{SVG}style" and el.text:
            found.update(_COLOUR_IN_CSS.findall(el.text))
    return found


def _annotated_source(tmp_path: Path, duet: Path) -> Path:
    """The duet with labels as fingerings, a coloured note and a revealing title."""
    text = duet.read_text()
    text = text.replace("<work-title>Duet on a row</work-title>",
                        "<work-title>harness run 7 (model: gpt)</work-title>")
    text = text.replace('<note id="u1">', '<note id="harness-u1" color="#FF0000">')
    text = text.replace(
        "<type>quarter</type></note>",
        "<type>quarter</type><notations><technical><fingering>P0:1</fingering></technical>"
        "</notations></note>",
        3,
    )
    path = tmp_path / "harness-run-7.musicxml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("ext", ["svg", "html"])
def test_blind_render_reveals_nothing(
    tmp_path: Path, duet: Path, duet_report: dict[str, Any], ext: str
) -> None:
    source = _annotated_source(tmp_path, duet)
    out = tmp_path / f"blind.{ext}"
    result = render(source, out, report=duet_report, blind=True)
    assert result.labels == 0 and result.findings == ()
    text = out.read_text()
    for word in ("harness", "gpt", "run 7", "Duet", "Verovio", "P0:", "I0:", "COLL", "sk-viol",
                 "<desc", "<!--", "data-"):
        assert word not in text, f"blind render contains {word!r}"
    assert not re.search(r"\b(?:P|I|R|RI)\d{1,2}:\d{1,2}\b", text)
    if ext == "svg":
        root = parse_svg(out)
        assert _all_colours(root) <= _NEUTRAL, _all_colours(root) - _NEUTRAL
        assert not [t for t in root.iter(f"{SVG}text") if LABEL_RE.match("".join(t.itertext()))]
        ids = [el.get("id") for el in root.iter() if isinstance(el.tag, str) and el.get("id")]
        assert ids and all(re.fullmatch(r"p1e\d+", i) for i in ids)


def test_unblinded_render_does_show_what_blind_hides(
    tmp_path: Path, duet: Path, duet_report: dict[str, Any]
) -> None:
    """The blind checks above can fail: the same source rendered normally shows all of it."""
    source = _annotated_source(tmp_path, duet)
    out = tmp_path / "open.svg"
    render(source, out, report=duet_report)
    text = out.read_text()
    assert "harness run 7" in text and "P0:1" in text and "sk-viol-COLL" in text
    assert _all_colours(parse_svg(out)) - _NEUTRAL


def test_blind_renders_of_two_conditions_are_identical(tmp_path: Path, duet: Path) -> None:
    """Two sources that differ only in metadata and labels give byte-identical blind renders."""
    a = _annotated_source(tmp_path, duet)
    b = tmp_path / "other.musicxml"
    b.write_text(duet.read_text().replace("Duet on a row", "Human composer"))
    render(a, tmp_path / "a.svg", blind=True)
    render(b, tmp_path / "b.svg", blind=True)
    # the ids differ (harness-u1 vs u1) and are renamed; titles and fingerings are dropped
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()
