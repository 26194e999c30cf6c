"""The legend band added above the first page: what each colour, box and label means."""

from __future__ import annotations

import re
from typing import Any

from lxml import etree

from serialkit.render.labels import label_width
from serialkit.render.marks import (
    AMBIGUOUS_COLOR,
    OTHER_RUNG_COLOR,
    RUNG_COLORS,
    UNEXPLAINED_COLOR,
    VIOLATION_COLOR,
    Marks,
)

SVG = "{http://www.w3.org/2000/svg}"
FONT = 260.0
ROW = 420.0
GAP = 420.0


def legend_items(marks: Marks) -> list[tuple[str, str, str]]:
    """(kind, colour, text) for each legend entry the render needs, in reading order."""
    items: list[tuple[str, str, str]] = []
    if any(m.label for m in marks.notes.values()):
        items.append(("label", "#000000", "P0:3 = row form : order position"))
    codes = marks.codes_present()
    if codes:
        items.append(("swatch", VIOLATION_COLOR, "violation (" + ", ".join(codes) + ")"))
    if "COLL" in codes:
        items.append(("box", VIOLATION_COLOR, "collision"))
    notes = marks.notes.values()
    if any(m.unexplained for m in notes):
        items.append(("swatch", UNEXPLAINED_COLOR, "unexplained (?)"))
    if any(m.ambiguous and not m.codes and not m.unexplained and not m.rung for m in notes):
        items.append(("swatch", AMBIGUOUS_COLOR, "ambiguous label"))
    for rung in marks.rungs_present():
        items.append(("swatch", RUNG_COLORS.get(rung, OTHER_RUNG_COLOR), f"repaired: {rung}"))
    return items


def add_legend(root: Any, marks: Marks) -> None:
    """Grow the page upward by a band and draw the legend in it."""
    items = legend_items(marks)
    if not items:
        return
    inner = next((s for s in root.iter(f"{SVG}svg") if s.get("viewBox")), None)
    if inner is None:
        return
    vx, vy, vw, vh = (float(v) for v in inner.get("viewBox", "").split())
    left, right = 500.0, vw - 500.0
    rows: list[list[tuple[str, str, str, float]]] = [[]]
    x = left
    for kind, colour, text in items:
        width = 360.0 + label_width(text, FONT)
        if x + width > right and rows[-1]:
            rows.append([])
            x = left
        rows[-1].append((kind, colour, text, x))
        x += width + GAP
    band = ROW * len(rows) + 260.0
    inner.set("viewBox", f"{vx:g} {vy - band:g} {vw:g} {vh + band:g}")
    height = root.get("height", "")
    m = re.fullmatch(r"([\d.]+)(px)?", height)
    if m:
        px = float(m.group(1))
        root.set("height", f"{round(px * (vh + band) / vh)}px")
    group = etree.SubElement(inner, f"{SVG}g", {"class": "sk-legend"})
    for r, row in enumerate(rows):
        y = vy - band + 200.0 + r * ROW + FONT
        for kind, colour, text, x0 in row:
            _entry(group, kind, colour, text, x0, y)


def _entry(group: Any, kind: str, colour: str, text: str, x: float, y: float) -> None:
    item = etree.SubElement(group, f"{SVG}g", {"class": f"sk-legend-{kind}"})
    top = y - FONT * 0.8
    if kind == "swatch":
        etree.SubElement(
            item, f"{SVG}rect",
            {"x": f"{x:g}", "y": f"{top:g}", "width": "260", "height": "260", "rx": "40",
             "style": f"fill:{colour};stroke:none"},
        )
    elif kind == "box":
        etree.SubElement(
            item, f"{SVG}rect",
            {"x": f"{x:g}", "y": f"{top - 20:g}", "width": "300", "height": "300", "rx": "40",
             "style": f"fill:none;stroke:{colour};stroke-width:22;stroke-dasharray:60 30"},
        )
    else:
        text = text.replace(" = ", "   ")
    label = etree.SubElement(
        item, f"{SVG}text",
        {"x": f"{x + 360:g}" if kind != "label" else f"{x:g}", "y": f"{y:g}",
         "font-size": f"{FONT:g}px", "font-family": "Times, serif", "fill": "#000000"},
    )
    if kind == "label":
        bold = etree.SubElement(label, f"{SVG}tspan", {"font-weight": "bold", "fill": "#000000"})
        bold.text = text.split(" = ")[0] if " = " in text else "P0:3"
        rest = etree.SubElement(label, f"{SVG}tspan")
        rest.text = "  row form : order position"
    else:
        label.text = text
