"""Place one label per notehead above its staff, clear of the notation and of each other.

Verovio's own ``<fing>`` layout costs about half a render again and lets neighbours overlap,
so labels are laid out here on the engraved SVG: each staff gets a skyline of everything
that rises above it (stems, beams, accidentals, ledger lines, slurs, text); a label sits just
above the skyline over its width, and moves up a row while it would touch a label already
placed (chords stack, dense passages alternate rows).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from lxml import etree

SVG = "{http://www.w3.org/2000/svg}"
FONT_SIZE = 185.0
ROW = FONT_SIZE * 1.05
GAP = 70.0
BUCKET = 100.0
FONT_FAMILY = "'DejaVu Serif Condensed', 'Liberation Serif', Times, serif"
_NUM = re.compile(r"-?\d+(?:\.\d+)?")
#: How far a glyph rises above its origin, in font units (250 = one staff space).
_GLYPH_TOP = {"E0A0": 130.0, "E0A2": 130.0, "E0A3": 130.0, "E0A4": 130.0, "E260": 440.0,
              "E261": 340.0, "E262": 350.0, "E263": 130.0, "E264": 440.0}
#: Advance widths in em, the widest of the fonts in FONT_FAMILY (so estimates never fall short).
_CHAR_EM = {":": 0.32, " ": 0.3, "I": 0.4, "P": 0.66, "R": 0.72, "?": 0.5}


def label_width(text: str, size: float = FONT_SIZE) -> float:
    """Estimated advance width of a label (an upper bound over the fonts named)."""
    return sum(_CHAR_EM.get(ch, 0.58 if ch.isdigit() else 0.75) for ch in text) * size


@dataclass(frozen=True, slots=True)
class LabelRequest:
    """A label to place: for a note whose head spans [x0, x1] at vertical centre y."""

    note_id: str
    text: str
    x0: float
    x1: float
    y: float
    colour: str | None


_STAFF = re.compile(r'class="staff"[^>]*>((?:<path d="M-?\d+ -?\d+ L-?\d+ -?\d+"[^>]*/>\s*)+)')
_LINE_Y = re.compile(r'd="M-?\d+ (-?\d+) L')
_USE = re.compile(
    r'<use [^>]*?href="#(E[0-9A-F]{3})[^"]*" transform="translate\((-?\d+)[ ,]+(-?\d+)\)'
    r'(?: scale\(([\d.]+))?'
)
_PATH = re.compile(r'<(?:path|polygon) (?:d|points)="([^"]*)"(?![^>]*transform)')
_TEXT = re.compile(r'<text x="(-?\d+)" y="(-?\d+)"')


def staves_of(svg_text: str) -> list[tuple[float, float]]:
    """(top line, bottom line) of every staff on the page, top to bottom, without repeats."""
    spans: dict[int, int] = {}
    for m in _STAFF.finditer(svg_text):
        ys = [int(y) for y in _LINE_Y.findall(m.group(1))]
        if ys:
            top = min(ys)
            spans[top] = max(spans.get(top, top), max(ys))
    return [(float(t), float(spans[t])) for t in sorted(spans)]


def _primitives(svg_text: str) -> Any:
    """Rough (x0, x1, top, bottom) of every drawn primitive below the first system."""
    import numpy as np

    start = svg_text.find('class="system"')
    body = svg_text[start:] if start >= 0 else svg_text
    rows: list[tuple[float, float, float, float]] = []
    for code, xs, ys, sc in _USE.findall(body):
        x, y, scale = float(xs), float(ys), float(sc or 1.0)
        rise = _GLYPH_TOP.get(code, 500.0) * scale
        rows.append((x, x + 330.0 * scale, y - rise, y + rise))
    for d in _PATH.findall(body):
        nums = _NUM.findall(d)
        if len(nums) >= 4:
            px = [float(v) for v in nums[0::2]]
            py = [float(v) for v in nums[1::2]]
            rows.append((min(px), max(px), min(py), max(py)))
    for xs, ys in _TEXT.findall(body):
        x, y = float(xs), float(ys)
        rows.append((x - 700.0, x + 700.0, y - 330.0, y + 80.0))
    if not rows:
        return np.zeros((0, 4))
    return np.array(rows, dtype=float)


class Skyline:
    """Per staff, the highest point of the notation above it, in buckets of ``BUCKET`` units."""

    def __init__(self, svg_text: str) -> None:
        import numpy as np

        self.staves = staves_of(svg_text)
        tops = [t for t, _ in self.staves]
        bottoms = [b for _, b in self.staves]
        # a primitive belongs to the staff whose band (between the midpoints to its
        # neighbours) holds its vertical centre
        self.bounds = np.array(
            [(bottoms[i] + tops[i + 1]) / 2 for i in range(len(tops) - 1)], dtype=float
        )
        self.tops = np.array(tops, dtype=float)
        prim = _primitives(svg_text)
        self.width = 1
        self.sky = np.full(0, np.inf)
        if not len(self.staves) or not len(prim):
            return
        staff = np.searchsorted(self.bounds, (prim[:, 2] + prim[:, 3]) / 2)
        keep = prim[:, 2] < self.tops[staff]
        prim, staff = prim[keep], staff[keep]
        b0 = np.maximum(prim[:, 0] // BUCKET, 0).astype(np.int64)
        b1 = np.maximum(prim[:, 1] // BUCKET, 0).astype(np.int64)
        self.width = int(b1.max()) + 2 if len(b1) else 1
        self.sky = np.full(len(self.staves) * self.width, np.inf)
        if not len(prim):
            return
        lengths = b1 - b0 + 1
        offsets = np.repeat(np.cumsum(lengths) - lengths, lengths)
        buckets = np.repeat(b0, lengths) + (np.arange(int(lengths.sum())) - offsets)
        keys = np.repeat(staff, lengths) * self.width + buckets
        np.minimum.at(self.sky, keys, np.repeat(prim[:, 2], lengths))

    def staff_of(self, y: float) -> int:
        """The index of the staff whose band holds a height."""
        import numpy as np

        return int(np.searchsorted(self.bounds, y))

    def floor(self, staff: int, lo: float, hi: float) -> float:
        """The highest point of the notation above ``staff`` between ``lo`` and ``hi``."""
        top = float(self.tops[staff])
        if not len(self.sky):
            return top
        b0 = max(int(lo // BUCKET), 0)
        b1 = min(int(hi // BUCKET), self.width - 1)
        if b1 < b0:
            return top
        base = staff * self.width
        return min(top, float(self.sky[base + b0 : base + b1 + 1].min()))


def place_labels(svg_text: str, layer: Any, requests: Iterable[LabelRequest]) -> list[Any]:
    """Add a ``<text class="sk-label">`` per request to ``layer``; return the elements added."""
    wanted = sorted(requests, key=lambda r: (round((r.x0 + r.x1) / 2 / 40), -r.y))
    if not wanted:
        return []
    sky = Skyline(svg_text)
    if not sky.staves:
        return []
    placed: dict[int, list[tuple[float, float, float, float]]] = {}
    added = []
    for req in wanted:
        k = sky.staff_of(req.y)
        centre = (req.x0 + req.x1) / 2
        half = label_width(req.text) / 2
        lo, hi = centre - half, centre + half
        base = min(sky.floor(k, lo, hi), req.y - 130.0) - GAP
        active = [p for p in placed.get(k, ()) if p[1] > lo - FONT_SIZE]
        placed[k] = active
        for _ in range(8):
            top, bottom = base - FONT_SIZE * 0.75, base + FONT_SIZE * 0.2
            if not any(p[0] < hi and lo < p[1] and p[2] < bottom and top < p[3] for p in active):
                break
            base -= ROW
        pad = FONT_SIZE * 0.12
        active.append((lo - pad, hi + pad, base - FONT_SIZE * 0.75, base + FONT_SIZE * 0.2))
        text = etree.SubElement(
            layer,
            f"{SVG}text",
            {
                "class": "sk-label",
                "data-for": req.note_id,
                "x": f"{centre:.0f}",
                "y": f"{base:.0f}",
                "text-anchor": "middle",
                "font-size": f"{FONT_SIZE:g}px",
                "font-family": FONT_FAMILY,
                "style": f"fill:{req.colour or '#000000'}",
            },
        )
        text.text = req.text
        added.append(text)
    return added
