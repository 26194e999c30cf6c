"""Place one label per notehead above its staff, clear of the notation and of each other.

Verovio's own ``<fing>`` layout costs about half a render again and lets neighbours overlap,
so labels are laid out here on the engraved SVG: each staff gets a skyline of everything
that rises above it (stems, beams, accidentals, ledger lines, slurs, text); a label sits just
above the skyline over its width, and moves up a row while it would touch a label already
placed (chords stack, dense passages alternate rows).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from html import escape
from typing import Any

SVG = "{http://www.w3.org/2000/svg}"
FONT_SIZE = 185.0
ROW = FONT_SIZE * 1.05
GAP = 70.0
BUCKET = 100.0
FONT_FAMILY = "'DejaVu Sans Condensed', 'Liberation Sans', Arial, sans-serif"  # a 1 unlike an I
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
_TEXT = re.compile(r'<text x="(-?\d+)" y="(-?\d+)"([^>]*)>(.*?)</text>', re.S)
_FONT_PX = re.compile(r'font-size="([\d.]+)px"')
_TAGS = re.compile(r"<[^>]+>")


def staves_of(svg_text: str) -> list[tuple[float, float]]:
    """(top line, bottom line) of every staff on the page, top to bottom, without repeats."""
    spans: dict[int, int] = {}
    for m in _STAFF.finditer(svg_text):
        ys = [int(y) for y in _LINE_Y.findall(m.group(1))]
        if ys:
            top = min(ys)
            spans[top] = max(spans.get(top, top), max(ys))
    return [(float(t), float(spans[t])) for t in sorted(spans)]


def _text_boxes(body: str) -> list[tuple[float, float, float, float]]:
    rows = []
    for m in _TEXT.finditer(body):
        x, y, attrs, inner = float(m.group(1)), float(m.group(2)), m.group(3), m.group(4)
        sizes = [float(v) for v in _FONT_PX.findall(attrs + inner) if float(v) > 0]
        size = max(sizes) if sizes else 300.0
        width = label_width(_TAGS.sub("", inner).strip(), size)
        if 'text-anchor="middle"' in attrs:
            x0 = x - width / 2
        elif 'text-anchor="end"' in attrs:
            x0 = x - width
        else:
            x0 = x
        rows.append((x0, x0 + width, y - size * 0.8, y + size * 0.25))
    return rows


def _primitives(svg_text: str) -> Any:
    """Rough (x0, x1, top, bottom) of every drawn primitive of the page (not the defs)."""
    import numpy as np

    start = svg_text.find('class="page-margin"')
    body = svg_text[start:] if start >= 0 else svg_text
    rows: list[tuple[float, float, float, float]] = []
    uses = _USE.findall(body)
    blocks = []
    if uses:
        table = np.array(uses)
        x = table[:, 1].astype(float)
        y = table[:, 2].astype(float)
        scale = np.where(table[:, 3] == "", "1", table[:, 3]).astype(float)
        rise = np.array([_GLYPH_TOP.get(code, 500.0) for code in table[:, 0]]) * scale
        blocks.append(np.column_stack((x, x + 330.0 * scale, y - rise, y + rise)))
    for d in _PATH.findall(body):
        nums = _NUM.findall(d)
        if len(nums) >= 4:
            px = [float(v) for v in nums[0::2]]
            py = [float(v) for v in nums[1::2]]
            rows.append((min(px), max(px), min(py), max(py)))
    rows.extend(_text_boxes(body))
    if rows:
        blocks.append(np.array(rows, dtype=float))
    return np.concatenate(blocks) if blocks else np.zeros((0, 4))


class Skyline:
    """Per staff, how far the notation rises above it and hangs below it, in x buckets."""

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
        self.tops = tops
        self.bottoms = bottoms
        prim = _primitives(svg_text)
        #: The lowest point of anything drawn (page-margin coordinates), for cropping.
        self.lowest = float(prim[:, 3].max()) if len(prim) else max(bottoms, default=0.0)
        n = len(self.staves)
        self.width = 1
        self.above = np.full(0, np.inf)
        self.below = np.full(0, -np.inf)
        self._bounds: list[float] = self.bounds.tolist()
        self._above: list[float] = []
        self._below: list[float] = []
        if not n or not len(prim):
            return
        staff = np.searchsorted(self.bounds, (prim[:, 2] + prim[:, 3]) / 2)
        b0 = np.maximum(prim[:, 0] // BUCKET, 0).astype(np.int64)
        b1 = np.maximum(prim[:, 1] // BUCKET, 0).astype(np.int64)
        self.width = int(b1.max()) + 2
        self.above = np.full(n * self.width, np.inf)
        self.below = np.full(n * self.width, -np.inf)
        up = prim[:, 2] < np.array(tops)[staff]
        down = prim[:, 3] > np.array(bottoms)[staff]
        for mask, target, col, fn in (
            (up, self.above, 2, np.minimum),
            (down, self.below, 3, np.maximum),
        ):
            if not mask.any():
                continue
            lo, hi, st, val = b0[mask], b1[mask], staff[mask], prim[mask, col]
            lengths = hi - lo + 1
            offsets = np.repeat(np.cumsum(lengths) - lengths, lengths)
            buckets = np.repeat(lo, lengths) + (np.arange(int(lengths.sum())) - offsets)
            keys = np.repeat(st, lengths) * self.width + buckets
            fn.at(target, keys, np.repeat(val, lengths))
        self._above = [float(v) for v in self.above.tolist()]
        self._below = [float(v) for v in self.below.tolist()]

    def staff_of(self, y: float) -> int:
        """The index of the staff whose band holds a height."""
        return bisect.bisect_left(self._bounds, y)

    def _span(self, lo: float, hi: float) -> tuple[int, int]:
        return max(int(lo // BUCKET), 0), min(int(hi // BUCKET), self.width - 1)

    def rise(self, staff: int, lo: float, hi: float) -> float:
        """The highest point of the notation above ``staff`` between ``lo`` and ``hi``."""
        top = float(self.tops[staff])
        b0, b1 = self._span(lo, hi)
        if not self._above or b1 < b0:
            return top
        base = staff * self.width
        return min(top, min(self._above[base + b0 : base + b1 + 1]))

    def hang(self, staff: int, lo: float, hi: float) -> float:
        """The lowest point of the notation below ``staff`` between ``lo`` and ``hi``."""
        bottom = float(self.bottoms[staff])
        b0, b1 = self._span(lo, hi)
        if not self._below or b1 < b0:
            return bottom
        base = staff * self.width
        return max(bottom, max(self._below[base + b0 : base + b1 + 1]))


Box = tuple[float, float, float, float]


def _free(boxes: list[Box], lo: float, hi: float, top: float, bottom: float) -> bool:
    return not any(b[0] < hi and lo < b[1] and b[2] < bottom and top < b[3] for b in boxes)


def _above(sky: Skyline, k: int, lo: float, hi: float, head_top: float,
           gaps: dict[int, list[Box]]) -> float | None:
    """A baseline above staff ``k`` clear of the notation and the labels there, if one fits."""
    asc, desc = FONT_SIZE * 0.75, FONT_SIZE * 0.2
    # above staff k: between what hangs below staff k-1 and what rises above staff k
    ceiling = sky.hang(k - 1, lo, hi) + GAP / 2 if k > 0 else float("-inf")
    base = min(sky.rise(k, lo, hi), head_top) - GAP
    boxes = gaps.setdefault(k, [])
    for _ in range(6):
        if base - asc < ceiling:
            return None
        if _free(boxes, lo, hi, base - asc, base + desc):
            return base
        base -= ROW
    return None


def _below(sky: Skyline, k: int, lo: float, hi: float, head_bottom: float,
           gaps: dict[int, list[Box]]) -> float | None:
    """A baseline below staff ``k`` clear of the notation and the labels there, if one fits."""
    asc, desc = FONT_SIZE * 0.75, FONT_SIZE * 0.2
    # below staff k: between what hangs below it and what rises above staff k+1
    floor = sky.rise(k + 1, lo, hi) - GAP / 2 if k + 1 < len(sky.staves) else float("inf")
    base = max(sky.hang(k, lo, hi), head_bottom) + GAP + asc
    boxes = gaps.setdefault(k + 1, [])
    for _ in range(6):
        if base + desc > floor:
            return None
        if _free(boxes, lo, hi, base - asc, base + desc):
            return base
        base += ROW
    return None


def _spot(sky: Skyline, k: int, lo: float, hi: float, head_y: float,
          gaps: dict[int, list[Box]]) -> tuple[float, int]:
    """Baseline and gap index for a label: on the side of the staff its notehead is on (above,
    unless the notehead hangs below the staff), else the other side."""
    asc, desc = FONT_SIZE * 0.75, FONT_SIZE * 0.2
    head_top, head_bottom = head_y - 130.0, head_y + 130.0
    tries = [("above", k), ("below", k)]
    if head_y > sky.bottoms[k]:
        tries.reverse()
    for side, staff in tries:
        if side == "above":
            base = _above(sky, staff, lo, hi, head_top, gaps)
            if base is not None:
                return base, staff
        else:
            base = _below(sky, staff, lo, hi, head_bottom, gaps)
            if base is not None:
                return base, staff + 1
    # no clean spot: above, clear of the other labels at least
    base = min(sky.rise(k, lo, hi), head_top) - GAP
    boxes = gaps.setdefault(k, [])
    while not _free(boxes, lo, hi, base - asc, base + desc):  # the boxes are finite: it ends
        base -= ROW
    return base, k


def place_labels(
    svg_text: str, requests: list[LabelRequest], sky: Skyline | None = None
) -> tuple[str, list[str], float]:
    """SVG ``<text class="sk-label">`` per request, the ids labelled, and the lowest label bottom."""
    wanted = sorted(requests, key=lambda r: (round((r.x0 + r.x1) / 2 / 40), -r.y))
    lowest = float("-inf")
    if not wanted:
        return "", [], lowest
    sky = sky if sky is not None else Skyline(svg_text)
    if not sky.staves:
        return "", [], lowest
    gaps: dict[int, list[Box]] = {}
    out: list[str] = []
    ids: list[str] = []
    pad = FONT_SIZE * 0.12
    head = (
        f'" text-anchor="middle" font-size="{FONT_SIZE:g}px" '
        f'font-family="{escape(FONT_FAMILY)}" style="fill:'
    )
    widest = max(label_width(r.text) for r in wanted) / 2
    for req in wanted:
        k = sky.staff_of(req.y)
        centre = (req.x0 + req.x1) / 2
        half = label_width(req.text) / 2
        lo, hi = centre - half, centre + half
        for g in (k, k + 1):  # labels come by centre: none after this one reaches further left than
            if g in gaps:  # the widest label's half from its centre (a narrow label may come first)
                gaps[g] = [b for b in gaps[g] if b[1] > centre - 40 - widest - FONT_SIZE]
        base, gap = _spot(sky, k, lo, hi, req.y, gaps)
        gaps.setdefault(gap, []).append(
            (lo - pad, hi + pad, base - FONT_SIZE * 0.75, base + FONT_SIZE * 0.2)
        )
        lowest = max(lowest, base + FONT_SIZE * 0.25)
        out.append(
            f'<text class="sk-label" data-for="{escape(req.note_id)}" x="{centre:.0f}" '
            f'y="{base:.0f}{head}{req.colour or "#000000"}">{escape(req.text)}</text>'
        )
        ids.append(req.note_id)
    return "".join(out), ids, lowest
