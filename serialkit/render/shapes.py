"""What a page of verovio's SVG draws, as boxes: the staves, every glyph (by the engraving
font's own glyph boxes), line, path, polyline and text of the page, read in one scan — what the
label placement (``labels``) keeps clear of."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

FONT_SIZE = 185.0
_NUM = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
#: Advance widths in em, the widest of the fonts in labels.FONT_FAMILY (so estimates never fall short).
_CHAR_EM = {":": 0.32, " ": 0.3, "I": 0.4, "P": 0.66, "R": 0.72, "?": 0.5}
#: (x0, x1, bottom, top) of a glyph verovio's font has no box for, in font units (y up from the
#: origin; 250 = one staff space).
_UNKNOWN_GLYPH = (0.0, 330.0, -500.0, 500.0)
_GLYPH_BOX = re.compile(r'<g c="([0-9A-F]{4})" x="(-?[\d.]+)" y="(-?[\d.]+)" w="([\d.]+)" h="([\d.]+)"')
_GLYPHS: dict[str, tuple[float, float, float, float]] = {}

_STAFF = re.compile(r'class="staff"[^>]*>((?:<path d="M-?[0-9]+ -?[0-9]+ L-?[0-9]+ -?[0-9]+"[^>]*/>\s*)+)')
_LINE_Y = re.compile(r'd="M-?[0-9]+ (-?[0-9]+) L')
_USE = re.compile(
    r'<use [^>]*?href="#(E[0-9A-F]{3})[^"]*" transform="translate\((-?[0-9]+)[ ,]+(-?[0-9]+)\)'
    r'(?: scale\(([0-9.]+))?'
)
_LINE = re.compile(r'<path d="M(-?[0-9]+ -?[0-9]+ L-?[0-9]+ -?[0-9]+)"(?![^>]*transform)')
_PATH = re.compile(r'<(?:path|polygon) (?:d|points)="(?!M-?[0-9]+ -?[0-9]+ L-?[0-9]+ -?[0-9]+")([^"]*)"(?![^>]*transform)')
_POLYLINE = re.compile(r'<polyline [^>]*?points="([^"]*)"')
#: ``_USE``, ``_LINE``, ``_PATH`` and ``_POLYLINE`` as one pattern, their common ``<`` taken out in
#: front (the engine then finds each candidate by that literal, not by trying four branches).
_SHAPES = re.compile("<(?:" + "|".join(r.pattern[1:] for r in (_USE, _LINE, _PATH, _POLYLINE)) + ")")
_TEXT = re.compile(r'<text x="(-?[0-9]+)" y="(-?[0-9]+)"([^>]*)>(.*?)</text>', re.S)
_FONT_PX = re.compile(r'font-size="([\d.]+)px"')
_TAGS = re.compile(r"<[^>]+>")
#: Half the thickest stroke verovio draws (beams aside): lines are this much thicker than their path.
_STROKE = 12.0
#: A horizontal line at least this long is a staff line (ledger lines are a notehead and a bit).
_STAFF_LINE = 1200.0


def find_all(pattern: re.Pattern[str], text: str, literal: str, pos: int = 0) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text, pos)`` for a pattern whose every match starts with ``literal``:
    tried only where ``literal`` is (``str.find`` passes over a page several times faster than
    the regular-expression engine, for the few texts and names a page has)."""
    find, match = text.find, pattern.match
    at = find(literal, pos)
    while at >= 0:
        m = match(text, at)
        if m is None:
            at = find(literal, at + 1)
        else:
            yield m
            at = find(literal, m.end())


def glyph_boxes() -> dict[str, tuple[float, float, float, float]]:
    """(x0, x1, bottom, top) of every glyph of verovio's engraving font (Leipzig), in font units,
    read once from the bounding boxes verovio ships; empty when they are not there."""
    if not _GLYPHS:
        try:
            import verovio

            text = (Path(verovio.__file__).parent / "data" / "Leipzig.xml").read_text(encoding="utf-8")
        except (ImportError, OSError):
            return _GLYPHS
        for code, x, y, w, h in _GLYPH_BOX.findall(text):
            x0, y0 = float(x), float(y)
            _GLYPHS[code] = (x0, x0 + float(w), y0, y0 + float(h))
    return _GLYPHS


def staves_of(svg_text: str) -> list[tuple[float, float]]:
    """(top line, bottom line) of every staff on the page, top to bottom, without repeats."""
    spans: dict[int, int] = {}
    for m in find_all(_STAFF, svg_text, 'class="staff"'):  # a few dozen staves in a page: found by str.find
        ys = list(map(int, _LINE_Y.findall(svg_text, m.start(1), m.end(1))))  # (no copy of the lines)
        if ys:
            top = min(ys)
            spans[top] = max(spans.get(top, top), max(ys))
    return [(float(t), float(spans[t])) for t in sorted(spans)]


def _text_boxes(svg_text: str, start: int = 0) -> list[tuple[float, float, float, float]]:
    rows = []
    for m in find_all(_TEXT, svg_text, '<text x="', start):
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


def _curve_boxes(nums: list[float], rows: list[tuple[float, float, float, float]]) -> None:
    """Boxes along a path of cubic Béziers (``M p C c c p C c c p``: a slur or a tie, drawn as
    the lens between two curves), a few per curve, so the space under an arc stays free."""
    x, y = nums[0], nums[1]
    for i in range(2, len(nums) - 5, 6):
        c1x, c1y, c2x, c2y, px, py = nums[i:i + 6]
        prev = (x, y)
        for k in range(1, 7):
            t = k / 6
            u = 1 - t
            qx = u * u * u * x + 3 * u * u * t * c1x + 3 * u * t * t * c2x + t * t * t * px
            qy = u * u * u * y + 3 * u * u * t * c1y + 3 * u * t * t * c2y + t * t * t * py
            rows.append((min(prev[0], qx) - _STROKE, max(prev[0], qx) + _STROKE,
                         min(prev[1], qy) - _STROKE, max(prev[1], qy) + _STROKE))
            prev = (qx, qy)
        x, y = px, py


def _ints(text: str) -> Any:
    """The integers written in ``text`` (decimal, separated by white space), as floats, parsed
    in one call."""
    import numpy as np

    return np.fromstring(text, dtype=np.int64, sep=" ").astype(float)


def _use_boxes(uses: list[tuple[str, str, str, str]]) -> Any:
    """(x0, x1, top, bottom) of each ``<use>`` of a glyph (code, x, y, scale as ``_USE`` reads
    them), by the glyph's box in verovio's font: a page uses a few dozen glyphs at a few scales,
    each pair's box scaled once."""
    import numpy as np

    _, xs, ys, _ = zip(*uses, strict=True)
    x = _ints(" ".join(xs))  # integers as written: parsed in one call
    y = _ints(" ".join(ys))
    glyphs = glyph_boxes()
    index: dict[tuple[str, str], int] = {}
    rows_of = [index.setdefault((c, v), len(index)) for c, _, _, v in uses]
    scaled = []
    for code, v in index:
        x0, x1, bottom, top = glyphs.get(code, _UNKNOWN_GLYPH)
        scale = float(v) if v else 1.0
        scaled.append((x0 * scale, x1 * scale, top * scale, bottom * scale))
    known = np.array(scaled, dtype=float)[rows_of]
    return np.column_stack((x + known[:, 0], x + known[:, 1], y - known[:, 2], y - known[:, 3]))


def _primitives(svg_text: str) -> Any:
    """Rough (x0, x1, top, bottom) of every drawn primitive of the page (not the defs), and
    which of them are staff lines."""
    import numpy as np

    start = max(svg_text.find('class="page-margin"'), 0)  # the page's drawing, past the defs
    rows: list[tuple[float, float, float, float]] = []
    # one scan for the glyphs, lines, other paths and polylines (what _USE, _LINE, _PATH and
    # _POLYLINE find, each where it starts: no two of them match at one place)
    found = _SHAPES.findall(svg_text, start)
    uses = [(c, x, y, v) for c, x, y, v, _, _, _ in found if c]
    lines = [line for _, _, _, _, line, _, _ in found if line]  # stems, staff and ledger lines, bar lines
    blocks = []
    if uses:
        blocks.append(_use_boxes(uses))
    if lines:
        ends = _ints(" ".join(lines).replace("L", "")).reshape(-1, 4)
        blocks.append(np.column_stack((np.minimum(ends[:, 0], ends[:, 2]), np.maximum(ends[:, 0], ends[:, 2]),
                                       np.minimum(ends[:, 1], ends[:, 3]), np.maximum(ends[:, 1], ends[:, 3]))))
    others = len(uses) + len(lines) < len(found)  # a path, polygon or polyline
    for d in [d for _, _, _, _, _, d, _ in found if d] if others else ():
        nums = _NUM.findall(d)
        if len(nums) >= 4:
            if "C" in d and len(nums) >= 8:
                _curve_boxes([float(v) for v in nums], rows)
                continue
            px = [float(v) for v in nums[0::2]]
            py = [float(v) for v in nums[1::2]]
            rows.append((min(px), max(px), min(py), max(py)))
    for points in [p for _, _, _, _, _, _, p in found if p] if others else ():  # hairpins, tuplet brackets
        nums = [float(v) for v in _NUM.findall(points)]
        if len(nums) >= 4:
            px, py = nums[0::2], nums[1::2]
            for k in range(len(px) - 1):  # one box per segment: a hairpin's mouth stays open
                rows.append((min(px[k], px[k + 1]) - _STROKE, max(px[k], px[k + 1]) + _STROKE,
                             min(py[k], py[k + 1]) - _STROKE, max(py[k], py[k + 1]) + _STROKE))
    rows.extend(_text_boxes(svg_text, start))
    if rows:
        blocks.append(np.array(rows, dtype=float))
    prim = np.concatenate(blocks) if blocks else np.zeros((0, 4))
    staff_line = (prim[:, 3] - prim[:, 2] < 1.0) & (prim[:, 1] - prim[:, 0] >= _STAFF_LINE)
    return prim, staff_line




@functools.lru_cache(maxsize=4096)
def label_width(text: str, size: float = FONT_SIZE) -> float:
    """Estimated advance width of a label (an upper bound over the fonts named)."""
    return sum(_CHAR_EM.get(ch, 0.58 if ch.isdigit() else 0.75) for ch in text) * size
