"""The legend band added above each page: what each colour, box and label drawn on it means."""

from __future__ import annotations

import re
from html import escape

from serialkit.render.cues import cue_svg
from serialkit.render.marks import (
    AMBIGUOUS_COLOR,
    OTHER_RUNG_COLOR,
    RUNG_COLORS,
    UNEXPLAINED_COLOR,
    VIOLATION_COLOR,
    Marks,
)
from serialkit.render.shapes import label_width

FONT = 260.0
ROW = 420.0
GAP = 420.0


def legend_items(marks: Marks) -> list[tuple[str, str, str]]:
    """(kind, colour, text) for each legend entry the render needs, in reading order; ``kind`` is
    ``label``, ``box`` or the cue kind whose outline shape the entry shows."""
    items: list[tuple[str, str, str]] = []
    if any(m.label for m in marks.notes.values()):
        items.append(("label", "#000000", "P0:3 = row form : order position"))
    cues = {m.cue for m in marks.notes.values()}
    codes = marks.codes_present()
    if codes:
        items.append(("violation", VIOLATION_COLOR, "violation (" + ", ".join(codes) + ")"))
    if any(f.code == "COLL" for f in marks.findings):
        items.append(("box", VIOLATION_COLOR, "collision"))
    if "unexplained" in cues:
        items.append(("unexplained", UNEXPLAINED_COLOR, "unexplained (?)"))
    if "ambiguous" in cues:
        items.append(("ambiguous", AMBIGUOUS_COLOR, "ambiguity (more than one reading)"))
    for rung in marks.rungs_present():
        kind = rung if rung in RUNG_COLORS else "other"
        if kind in cues:
            items.append((kind, RUNG_COLORS.get(rung, OTHER_RUNG_COLOR), f"repaired: {rung}"))
    return items


_VIEWBOX = re.compile(r'(<svg class="definition-scale"[^>]*?viewBox=")([-\d.]+) ([-\d.]+) ([-\d.]+) ([-\d.]+)"')
_HEIGHT = re.compile(r'^(<svg [^>]*?height=")([\d.]+)(px)?"')


def legend_svg(page: str, marks: Marks) -> tuple[str, str]:
    """The page grown upward by a band, and the legend group to draw in that band."""
    items = legend_items(marks)
    box = _VIEWBOX.search(page)
    if not items or box is None:
        return page, ""
    vx, vy, vw, vh = (float(box.group(i)) for i in range(2, 6))
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
    page = (
        page[: box.start()]
        + f'{box.group(1)}{vx:g} {vy - band:g} {vw:g} {vh + band:g}"'
        + page[box.end():]
    )
    height = _HEIGHT.search(page)
    if height is not None:
        px = float(height.group(2))
        page = (
            page[: height.start()]
            + f'{height.group(1)}{round(px * (vh + band) / vh)}px"'
            + page[height.end():]
        )
    parts = ['<g class="sk-legend">']
    for r, row in enumerate(rows):
        y = vy - band + 200.0 + r * ROW + FONT
        for kind, colour, text, x0 in row:
            parts.append(_entry(kind, colour, text, x0, y))
    parts.append("</g>")
    return page, "".join(parts)


def _entry(kind: str, colour: str, text: str, x: float, y: float) -> str:
    top = y - FONT * 0.8
    font = f'font-size="{FONT:g}px" font-family="Times, serif" style="fill:#000000"'
    if kind == "label":
        sample, _, rest = text.partition(" = ")
        return (
            f'<g class="sk-legend-label"><text x="{x:g}" y="{y:g}" {font}>'
            f'<tspan font-weight="bold">{escape(sample)}</tspan>'
            f"<tspan>  {escape(rest)}</tspan></text></g>"
        )
    if kind != "box":
        mark = (
            f'<rect x="{x + 70:g}" y="{top + 70:g}" width="120" height="120" rx="30" '
            f'style="fill:{colour};stroke:none"/>' + cue_svg(kind, colour, x + 130, top + 130, 115)
        )
        kind = f"swatch sk-legend-{kind}"
    else:
        mark = (
            f'<rect x="{x:g}" y="{top - 20:g}" width="300" height="300" rx="40" '
            f'style="fill:none;stroke:{colour};stroke-width:22;stroke-dasharray:60 30"/>'
        )
    return (
        f'<g class="sk-legend-{kind}">{mark}'
        f'<text x="{x + 360:g}" y="{y:g}" {font}>{escape(text)}</text></g>'
    )
