"""Post-process verovio's SVG: colour and class notes, stagger labels, box collisions, blind."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from lxml import etree

from serialkit.render.labels import LabelRequest, place_labels
from serialkit.render.legend import add_legend
from serialkit.render.marks import VIOLATION_COLOR, Marks

SVG = "{http://www.w3.org/2000/svg}"
XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
_TRANSLATE = re.compile(r"translate\(\s*(-?[\d.]+)[ ,]+(-?[\d.]+)\s*\)(?:\s*scale\(\s*([\d.]+))?")
#: Notehead widths in font units (SMuFL, Leipzig), by glyph code; 250 units = 1 staff space.
_HEAD_WIDTH = {"E0A0": 500.0, "E0A2": 422.0, "E0A3": 295.0, "E0A4": 295.0}
_BOXED_CODES = ("COLL",)
_XNS = {"s": "http://www.w3.org/2000/svg"}
_NOTES = etree.XPath(".//s:g[@class='note' or starts-with(@class, 'note ')]", namespaces=_XNS)
_MARGIN = etree.XPath(".//s:g[@class='page-margin']", namespaces=_XNS)


@dataclass(frozen=True, slots=True)
class Head:
    """A notehead's box in the page's coordinates."""

    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True, slots=True)
class PageInfo:
    """What one decorated page holds: ids of marked notes and of printed labels."""

    note_ids: tuple[str, ...]
    label_for: tuple[str, ...]


def _parse(svg_text: str) -> Any:
    parser = etree.XMLParser(huge_tree=True, resolve_entities=False, no_network=True)
    return etree.fromstring(svg_text.encode("utf-8"), parser)


def _head_of(note_el: Any) -> Head | None:
    for use in note_el.iter(f"{SVG}use"):
        parent = use.getparent()
        if parent is None or parent.get("class") != "notehead":
            continue
        m = _TRANSLATE.search(use.get("transform", ""))
        if not m:
            return None
        x, y = float(m.group(1)), float(m.group(2))
        s = float(m.group(3) or 1.0)
        href = use.get(XLINK_HREF) or use.get("href") or ""
        width = _HEAD_WIDTH.get(href[1:5], 295.0) * s
        return Head(x, y - 125 * s, x + width, y + 125 * s)
    return None


def _add_class(el: Any, classes: Iterable[str]) -> None:
    old = el.get("class", "")
    el.set("class", " ".join([old, *classes]).strip())


def _colour(el: Any, colour: str) -> None:
    el.set("fill", colour)
    el.set("color", colour)
    el.set("stroke", colour)


def decorate(svg_text: str, marks: Marks, first_page: bool) -> tuple[str, PageInfo]:
    """Colour, class and label the marked notes of one page; box collisions; add the legend."""
    root = _parse(svg_text)
    notes = marks.notes
    heads: dict[str, Head] = {}
    marked: list[str] = []
    requests: dict[str, LabelRequest] = {}
    for g in _NOTES(root):
        mark = notes.get(g.get("id"))
        if mark is None:
            continue
        marked.append(mark.id)
        _add_class(g, mark.classes)
        if mark.label:
            g.set("data-label", mark.label)
        if mark.codes:
            g.set("data-codes", " ".join(mark.codes))
        if mark.rung:
            g.set("data-rung", mark.rung)
        colour = mark.color
        if colour:
            _colour(g, colour)
        head = _head_of(g)
        if head is None:
            continue
        heads[mark.id] = head
        if mark.text:
            requests[mark.id] = LabelRequest(
                mark.id, mark.text, head.x0, head.x1, (head.y0 + head.y1) / 2, colour
            )
    margin = next(iter(_MARGIN(root)), None)
    label_for: list[str] = []
    if margin is not None:
        layer = etree.SubElement(margin, f"{SVG}g", {"class": "sk-labels"})
        label_for = [t.get("data-for") for t in place_labels(svg_text, layer, requests.values())]
        _box_findings(margin, marks, heads)
        if first_page and notes:
            add_legend(root, marks)
    text = etree.tostring(root, encoding="unicode")
    return text, PageInfo(tuple(marked), tuple(label_for))


def _box_findings(margin: Any, marks: Marks, heads: dict[str, Head]) -> None:
    pad = 70.0
    for finding in marks.findings:
        if finding.code not in _BOXED_CODES:
            continue
        boxes = [heads[e] for e in finding.event_ids if e in heads]
        if not boxes:
            continue
        x0 = min(b.x0 for b in boxes) - pad
        y0 = min(b.y0 for b in boxes) - pad
        x1 = max(b.x1 for b in boxes) + pad
        y1 = max(b.y1 for b in boxes) + pad
        etree.SubElement(
            margin,
            f"{SVG}rect",
            {
                "class": f"sk-box sk-box-{finding.code}",
                "data-finding": str(finding.index),
                "data-notes": " ".join(finding.event_ids),
                "x": str(round(x0)),
                "y": str(round(y0)),
                "width": str(round(x1 - x0)),
                "height": str(round(y1 - y0)),
                "rx": "40",
                "style": f"fill:none;stroke:{VIOLATION_COLOR};stroke-width:22;"
                "stroke-dasharray:60 30",
            },
        )


def blind_svg(svg_text: str, prefix: str = "") -> str:
    """Strip everything that could reveal a condition: ids, data, comments, desc, colours."""
    root = _parse(svg_text)
    for el in list(root.iter(etree.Comment, etree.ProcessingInstruction)):
        el.getparent().remove(el)
    for tag in ("desc", "title", "metadata"):
        for el in list(root.iter(f"{SVG}{tag}")):
            el.getparent().remove(el)
    rename: dict[str, str] = {}
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        old = el.get("id")
        if old is not None:
            rename[old] = new = f"{prefix}e{len(rename)}"
            el.set("id", new)
        for attr in list(el.attrib):
            if attr.startswith("data-"):
                del el.attrib[attr]
        for attr in ("fill", "stroke", "color"):
            value = el.get(attr)
            if value is not None and value not in _NEUTRAL:
                del el.attrib[attr]
    for el in root.iter(f"{SVG}use"):
        for attr in (XLINK_HREF, "href"):
            ref = el.get(attr)
            if ref and ref.startswith("#") and ref[1:] in rename:
                el.set(attr, "#" + rename[ref[1:]])
    for style in root.iter(f"{SVG}style"):
        if style.text:
            text = re.sub(r"[^{}]*\{[^}]*(?:fill|color)\s*:[^}]*\}", "", style.text)
            style.text = re.sub(
                r"#([\w-]+)", lambda m: "#" + rename.get(m.group(1), m.group(1)), text
            )
    return str(etree.tostring(root, encoding="unicode"))


_NEUTRAL = frozenset({"none", "black", "#000", "#000000", "currentColor", "transparent", "white"})
