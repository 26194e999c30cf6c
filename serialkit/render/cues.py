"""The second cue beside colour: an outline shape around a marked notehead, one shape per kind."""

from __future__ import annotations

import functools
import math
from html import escape

from serialkit.render.marks import CUE_SHAPES

#: Stroke width and dash patterns of the outlines (SVG page units; 180 = one staff space).
STROKE = 22.0
_DASH = {"circle-dashed": "70 45", "circle-dotted": "8 40"}


@functools.cache
def _corners(corners: int, start: float) -> tuple[tuple[float, float], ...]:
    """(cosine, sine) of each corner's angle of a regular polygon (a few kinds of polygon: each
    worked out once)."""
    angles = [math.radians(start + 360.0 * i / corners) for i in range(corners)]
    return tuple((math.cos(a), math.sin(a)) for a in angles)


def _polygon(cx: float, cy: float, r: float, corners: int, start: float) -> str:
    points = [f"{cx + r * cos:.0f},{cy + r * sin:.0f}" for cos, sin in _corners(corners, start)]
    return "M" + " L".join(points) + " Z"


def shape_path(shape: str, cx: float, cy: float, r: float) -> str:
    """SVG path data of ``shape`` centred on (cx, cy) with radius ``r``."""
    if shape.startswith("circle"):
        return (f"M{cx - r:.0f},{cy:.0f} a{r:.0f},{r:.0f} 0 1,0 {2 * r:.0f},0 "
                f"a{r:.0f},{r:.0f} 0 1,0 {-2 * r:.0f},0 Z")
    if shape == "square":
        return _polygon(cx, cy, r * 1.25, 4, 45.0)
    if shape == "diamond":
        return _polygon(cx, cy, r * 1.3, 4, 0.0)
    if shape == "triangle-up":
        return _polygon(cx, cy + r * 0.25, r * 1.5, 3, -90.0)
    if shape == "triangle-down":
        return _polygon(cx, cy - r * 0.25, r * 1.5, 3, 90.0)
    if shape == "triangle-right":
        return _polygon(cx - r * 0.25, cy, r * 1.5, 3, 0.0)
    if shape == "pentagon":
        return _polygon(cx, cy, r * 1.25, 5, -90.0)
    if shape == "hexagon":
        return _polygon(cx, cy, r * 1.2, 6, 0.0)
    d = r * 0.9  # cross
    return f"M{cx - d:.0f},{cy - d:.0f} L{cx + d:.0f},{cy + d:.0f} M{cx - d:.0f},{cy + d:.0f} L{cx + d:.0f},{cy - d:.0f}"


def cue_svg(kind: str, colour: str, cx: float, cy: float, r: float, note_id: str = "") -> str:
    """One outline: ``<path class="sk-cue sk-cue-KIND">`` in ``colour``."""
    shape = CUE_SHAPES.get(kind, CUE_SHAPES["other"])
    dash = _DASH.get(shape)
    style = f"fill:none;stroke:{colour};stroke-width:{STROKE:g}" + (f";stroke-dasharray:{dash}" if dash else "")
    data = f' data-for="{escape(note_id)}"' if note_id else ""
    return (f'<path class="sk-cue sk-cue-{kind}" data-shape="{shape}"{data} '
            f'd="{shape_path(shape, cx, cy, r)}" style="{style}"/>')
