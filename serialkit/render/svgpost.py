"""Post-process verovio's SVG: colour and class notes, stagger labels, box collisions, blind."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from lxml import etree

from serialkit.render.legend import add_legend
from serialkit.render.marks import VIOLATION_COLOR, Marks, NoteMark

SVG = "{http://www.w3.org/2000/svg}"
XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
_TRANSLATE = re.compile(r"translate\(\s*(-?[\d.]+)[ ,]+(-?[\d.]+)\s*\)(?:\s*scale\(\s*([\d.]+))?")
#: Notehead widths in font units (SMuFL, Leipzig), by glyph code; 250 units = 1 staff space.
_HEAD_WIDTH = {"E0A0": 500.0, "E0A2": 422.0, "E0A3": 295.0, "E0A4": 295.0}
_BOXED_CODES = ("COLL",)


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
    fings: list[tuple[Any, NoteMark]] = []
    margin = None
    for g in root.iter(f"{SVG}g"):
        cls = g.get("class", "")
        if cls == "note" or cls.startswith("note "):
            nid = g.get("id")
            mark = notes.get(nid) if nid else None
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
            if head is not None:
                heads[mark.id] = head
        elif cls == "fing":
            start = (g.get("data-startid") or "").lstrip("#")
            mark = notes.get(start)
            if mark is not None and mark.text and "".join(g.itertext()).strip() == mark.text:
                fings.append((g, mark))
        elif cls == "page-margin" and margin is None:
            margin = g
    label_for = []
    for g, mark in fings:
        _add_class(g, ("sk-label",))
        g.set("data-for", mark.id)
        colour = mark.color
        if colour:
            g.set("fill", colour)
        label_for.append(mark.id)
    _stagger(fings, heads)
    if margin is not None:
        _box_findings(margin, marks, heads)
        if first_page and notes:
            add_legend(root, marks)
    text = etree.tostring(root, encoding="unicode")
    return text, PageInfo(tuple(marked), tuple(label_for))


def _stagger(fings: list[tuple[Any, NoteMark]], heads: dict[str, Head]) -> None:
    """Move labels that overlap a neighbour one row further from the staff (greedy, by x)."""
    items = []
    for g, mark in fings:
        text = g.find(f"{SVG}text")
        if text is None:
            continue
        try:
            x, y = float(text.get("x", "0")), float(text.get("y", "0"))
        except ValueError:
            continue
        size = 240.0
        for span in text.iter(f"{SVG}tspan"):
            fs = span.get("font-size", "")
            if fs.endswith("px") and fs[:-2].replace(".", "", 1).isdigit() and float(fs[:-2]) > 0:
                size = float(fs[:-2])
        head = heads.get(mark.id)
        direction = 1 if head is not None and y > head.y1 else -1
        half = len(mark.text or "") * size * 0.3
        items.append((x - half, x + half, y, size, direction, text))
    items.sort(key=lambda t: t[0])
    placed: list[tuple[float, float, float, float]] = []
    for x0, x1, y, size, direction, text in items:
        placed = [b for b in placed if b[1] > x0 - size]
        shift = 0.0
        for _ in range(4):
            top, bottom = y + shift - size * 0.8, y + shift + size * 0.2
            if not any(b[0] < x1 and x0 < b[1] and b[2] < bottom and top < b[3] for b in placed):
                break
            shift += direction * size
        if shift:
            text.set("y", str(round(y + shift)))
        placed.append((x0 - size * 0.15, x1 + size * 0.15, y + shift - size * 0.8, y + shift + size * 0.2))


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


def blind_svg(svg_text: str) -> str:
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
            rename[old] = new = f"e{len(rename)}"
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
