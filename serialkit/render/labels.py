"""Place one label per notehead, by its notehead, clear of the notation and of each other.

Verovio's own ``<fing>`` layout costs about half a render again and lets neighbours overlap,
so labels are laid out here on the engraved SVG, in three passes:

- the labels of a chord stand in a column beside the chord (right of it, else left of its
  accidentals), each at its own notehead's height, in the notes' vertical order;
- a note on ledger lines gets its label next to its notehead (on the side away from the staff,
  else beside it), within one staff space;
- every other note's label sits just above the skyline of its staff (everything that rises
  above it: stems, beams, accidentals, ledger lines, slurs, hairpins, tuplet brackets, text),
  or below the staff for a note that hangs below it, moving a row away while it would touch a
  label already placed.

The first two check a candidate box against the box of every drawn primitive of the page
(staff lines excepted; slurs as a chain of small boxes along the curve), so labels keep
clear of hairpins, tuplet brackets, dynamics and slurs.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterator
from html import escape
from pathlib import Path
from typing import Any, NamedTuple

SVG = "{http://www.w3.org/2000/svg}"
FONT_SIZE = 185.0
ROW = FONT_SIZE * 1.05
GAP = 70.0
BUCKET = 100.0
FONT_FAMILY = "'DejaVu Sans Condensed', 'Liberation Sans', Arial, sans-serif"  # a 1 unlike an I
_NUM = re.compile(r"-?\d+(?:\.\d+)?")
#: (x0, x1, bottom, top) of a glyph verovio's font has no box for, in font units (y up from the
#: origin; 250 = one staff space).
_UNKNOWN_GLYPH = (0.0, 330.0, -500.0, 500.0)
_GLYPH_BOX = re.compile(r'<g c="([0-9A-F]{4})" x="(-?[\d.]+)" y="(-?[\d.]+)" w="([\d.]+)" h="([\d.]+)"')
_GLYPHS: dict[str, tuple[float, float, float, float]] = {}
#: Advance widths in em, the widest of the fonts in FONT_FAMILY (so estimates never fall short).
_CHAR_EM = {":": 0.32, " ": 0.3, "I": 0.4, "P": 0.66, "R": 0.72, "?": 0.5}


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


@functools.lru_cache(maxsize=4096)
def label_width(text: str, size: float = FONT_SIZE) -> float:
    """Estimated advance width of a label (an upper bound over the fonts named)."""
    return sum(_CHAR_EM.get(ch, 0.58 if ch.isdigit() else 0.75) for ch in text) * size


class LabelRequest(NamedTuple):
    """A label to place: for a note whose head spans [x0, x1] at vertical centre y (a tuple:
    one is made per label)."""

    note_id: str
    text: str
    x0: float
    x1: float
    y: float
    colour: str | None
    chord: str | None = None  # the id of the chord the note belongs to


_STAFF = re.compile(r'class="staff"[^>]*>((?:<path d="M-?\d+ -?\d+ L-?\d+ -?\d+"[^>]*/>\s*)+)')
_LINE_Y = re.compile(r'd="M-?\d+ (-?\d+) L')
_USE = re.compile(
    r'<use [^>]*?href="#(E[0-9A-F]{3})[^"]*" transform="translate\((-?\d+)[ ,]+(-?\d+)\)'
    r'(?: scale\(([\d.]+))?'
)
_LINE = re.compile(r'<path d="M(-?\d+ -?\d+ L-?\d+ -?\d+)"(?![^>]*transform)')
_PATH = re.compile(r'<(?:path|polygon) (?:d|points)="(?!M-?\d+ -?\d+ L-?\d+ -?\d+")([^"]*)"(?![^>]*transform)')
_POLYLINE = re.compile(r'<polyline [^>]*?points="([^"]*)"')
_SHAPES = re.compile("|".join(r.pattern for r in (_USE, _LINE, _PATH, _POLYLINE)))
_TEXT = re.compile(r'<text x="(-?\d+)" y="(-?\d+)"([^>]*)>(.*?)</text>', re.S)
_FONT_PX = re.compile(r'font-size="([\d.]+)px"')
_TAGS = re.compile(r"<[^>]+>")
_UNSAFE = re.compile(r"[&<>\"']")
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


def esc(text: str) -> str:
    """``html.escape`` of a text, quick for the texts that need none (ids, most labels)."""
    return escape(text) if _UNSAFE.search(text) else text


def staves_of(svg_text: str) -> list[tuple[float, float]]:
    """(top line, bottom line) of every staff on the page, top to bottom, without repeats."""
    spans: dict[int, int] = {}
    for lines in _STAFF.findall(svg_text):
        ys = list(map(int, _LINE_Y.findall(lines)))
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
        prim, staff_line = _primitives(svg_text)
        #: Every drawn primitive but the staff lines, (x0, x1, top, bottom) columns, by x0.
        solid = prim[~staff_line]
        self.solid = solid[np.argsort(solid[:, 0], kind="stable")] if len(solid) else solid
        self._solid_x0: list[float] = self.solid[:, 0].tolist()
        self._solid_reach = float((self.solid[:, 1] - self.solid[:, 0]).max()) if len(solid) else 0.0
        self._rows: list[list[float]] | None = None  # ``solid`` as lists, made when first needed
        #: The lowest point of anything drawn (page-margin coordinates), for cropping.
        self.lowest = float(prim[:, 3].max()) if len(prim) else max(bottoms, default=0.0)
        n = len(self.staves)
        self.width = 1
        self.above = np.full(0, np.inf)
        self.below = np.full(0, -np.inf)
        self._bounds: list[float] = self.bounds.tolist()
        #: ``above`` and ``below`` as lists (what ``rise`` and ``hang`` read, quick to slice).
        self.rises: list[float] = []
        self.hangs: list[float] = []
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
        self.rises = self.above.tolist()
        self.hangs = self.below.tolist()

    def blocked(self, x0: float, x1: float, top: float, bottom: float) -> bool:
        """Whether a box touches any drawn primitive but the staff lines."""
        if not self._solid_x0:
            return False
        lo = bisect.bisect_left(self._solid_x0, x0 - self._solid_reach)
        hi = bisect.bisect_left(self._solid_x0, x1)
        if hi <= lo:
            return False
        if self._rows is None:  # a few dozen rows a call: a loop beats numpy's set-up
            self._rows = self.solid.tolist()
        for row in self._rows[lo:hi]:
            if row[1] > x0 and row[2] < bottom and row[3] > top:
                return True
        return False

    def space(self, staff: int) -> float:
        """The staff space of a staff (a quarter of its height)."""
        top, bottom = self.staves[staff]
        return (bottom - top) / 4 if bottom > top else 250.0

    def staff_of(self, y: float) -> int:
        """The index of the staff whose band holds a height."""
        return bisect.bisect_left(self._bounds, y)

    def rise(self, staff: int, lo: float, hi: float) -> float:
        """The highest point of the notation above ``staff`` between ``lo`` and ``hi``."""
        top = float(self.tops[staff])
        b0, b1 = int(lo // BUCKET), int(hi // BUCKET)  # the buckets lo..hi spans
        b0, b1 = b0 if b0 > 0 else 0, b1 if b1 < self.width else self.width - 1
        if not self.rises or b1 < b0:
            return top
        base = staff * self.width
        return min(top, min(self.rises[base + b0 : base + b1 + 1]))

    def hang(self, staff: int, lo: float, hi: float) -> float:
        """The lowest point of the notation below ``staff`` between ``lo`` and ``hi``."""
        bottom = float(self.bottoms[staff])
        b0, b1 = int(lo // BUCKET), int(hi // BUCKET)
        b0, b1 = b0 if b0 > 0 else 0, b1 if b1 < self.width else self.width - 1
        if not self.hangs or b1 < b0:
            return bottom
        base = staff * self.width
        return max(bottom, max(self.hangs[base + b0 : base + b1 + 1]))


Box = tuple[float, float, float, float]


def _free(boxes: list[Box], lo: float, hi: float, top: float, bottom: float) -> bool:
    for b in boxes:  # a loop, not any(): called for every candidate row of every label
        if b[0] < hi and lo < b[1] and b[2] < bottom and top < b[3]:
            return False
    return True


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


#: Room between a notehead (or a chord's outermost notehead) and a label beside it.
PAD = 40.0
_ASC, _DESC = FONT_SIZE * 0.75, FONT_SIZE * 0.2
#: Baseline below a label's vertical centre, so that a label beside a notehead is level with it.
_MIDLINE = (_ASC - _DESC) / 2
#: Vertical distance between the centres of two labels beside one chord.
_STEP = FONT_SIZE * 1.0


def _spread(ys: list[float], step: float) -> list[float]:
    """Centres for labels wanted at heights ``ys`` (top to bottom), at least ``step`` apart, in
    the same order, each run of crowded labels centred on the heights it stands for."""
    clusters: list[list[float]] = []  # each: the wanted heights of a run of labels spaced ``step``

    def top(run: list[float]) -> float:
        return sum(y - i * step for i, y in enumerate(run)) / len(run)

    for y in ys:
        clusters.append([y])
        while len(clusters) > 1 and top(clusters[-2]) + len(clusters[-2]) * step > top(clusters[-1]):
            last = clusters.pop()
            clusters[-1].extend(last)
    out: list[float] = []
    for run in clusters:
        first = top(run)
        out.extend(first + i * step for i in range(len(run)))
    return out


def _clear(sky: Skyline, placed: list[Box], boxes: list[Box]) -> bool:
    return all(not sky.blocked(*b) and _free(placed, b[0], b[1], b[2], b[3]) for b in boxes)


def _beside_chord(sky: Skyline, chord: list[LabelRequest], placed: list[Box]) -> list[Box] | None:
    """Boxes for a chord's labels in a column beside it, each level with its own notehead (order
    kept, crowded ones spread evenly): right of the chord, else left of it and its accidentals."""
    chord = sorted(chord, key=lambda r: r.y)
    space = sky.space(sky.staff_of(chord[0].y))
    centres = _spread([r.y for r in chord], _STEP)
    widths = [label_width(r.text) for r in chord]
    right, left = max(r.x1 for r in chord) + PAD, min(r.x0 for r in chord) - PAD
    tries = [(1, 0.0), (-1, 0.0)] + [(-1, space * k / 2) for k in range(1, 6)] + [(1, space / 4), (1, space / 2)]
    for side, dx in tries:
        boxes = []
        for c, w in zip(centres, widths, strict=True):
            x0 = right + dx if side > 0 else left - dx - w
            boxes.append((x0, x0 + w, c + _MIDLINE - _ASC, c + _MIDLINE + _DESC))
        if _clear(sky, placed, boxes):
            return boxes
    return None


def _near_head(sky: Skyline, req: LabelRequest, placed: list[Box]) -> Box | None:
    """A box by a ledger-line note's head, within one staff space of it: on the side away from
    the staff (over the head, or shifted off its stem), else level with it to the right or left."""
    for box in _near_tries(sky, req):
        if not sky.blocked(*box) and _free(placed, box[0], box[1], box[2], box[3]):
            return box
    return None


def _near_tries(sky: Skyline, req: LabelRequest) -> Iterator[Box]:
    """``_near_head``'s candidate boxes, best first (made as they are tried)."""
    k = sky.staff_of(req.y)
    space = sky.space(k)
    w = label_width(req.text)
    centre = (req.x0 + req.x1) / 2
    up = req.y < sky.tops[k]
    for lift in (0.15, 0.4, 0.7):
        for shift in (0.0, -w / 2, w / 2):
            if up:
                bottom = req.y - space / 2 - lift * space
                yield (centre - w / 2 + shift, centre + w / 2 + shift, bottom - _ASC - _DESC, bottom)
            else:
                top = req.y + space / 2 + lift * space
                yield (centre - w / 2 + shift, centre + w / 2 + shift, top, top + _ASC + _DESC)
    level = (req.y + _MIDLINE - _ASC, req.y + _MIDLINE + _DESC)
    for step in range(3):  # past the ledger lines' ends or a dot, within a staff space
        right = req.x1 + PAD + step * space / 3
        yield (right, right + w, *level)
    for step in range(6):  # past the accidental
        left = req.x0 - PAD - step * space / 2
        yield (left - w, left, *level)


def _by_centre(requests: list[LabelRequest]) -> list[int]:
    """The order labels are placed in: by their note's centre (40 units to a step), lower notes
    first within a step; as ``sorted`` with the key ``(round(centre / 40), -y)`` orders them
    (numpy's rounding is Python's, half to even; its lexsort is stable)."""
    import numpy as np

    x0 = np.array([r.x0 for r in requests])
    x1 = np.array([r.x1 for r in requests])
    ys = np.array([r.y for r in requests])
    order: list[int] = np.lexsort((-ys, np.rint((x0 + x1) / 2 / 40))).tolist()
    return order


def _first_spots(sky: Skyline, wanted: list[LabelRequest], ks: list[int],
                 halves: list[float]) -> tuple[list[float], ...]:
    """For every label, at once: its centre, left and right ends, and for ``_above``'s first
    try (above its staff) the ceiling (what hangs below the staff above, and the gap) and the
    first baseline (under what rises above its staff and its notehead), as ``_above`` works
    them out one label at a time (the same float operations, element by element)."""
    import numpy as np

    x0 = np.array([r.x0 for r in wanted])
    x1 = np.array([r.x1 for r in wanted])
    ys = np.array([r.y for r in wanted])
    k = np.array(ks, dtype=np.int64)
    centre = (x0 + x1) / 2
    half = np.array(halves)
    lo, hi = centre - half, centre + half
    width = sky.width
    b0 = np.maximum(np.floor_divide(lo, BUCKET).astype(np.int64), 0)  # int(lo // BUCKET), at least 0
    b1 = np.minimum(np.floor_divide(hi, BUCKET).astype(np.int64), width - 1)
    spans = b1 >= b0
    tops = np.array(sky.tops, dtype=float)
    bottoms = np.array(sky.bottoms, dtype=float)
    rise = tops[k]
    above_staff = bottoms[np.maximum(k - 1, 0)]
    hang = above_staff.copy()
    if sky.rises and spans.any():
        last = len(sky.rises)  # a sentinel past the end, so that every bound is an index
        for staff_of, profile, fill, reduce, out, pick in (
            (k, sky.rises, np.inf, np.minimum, rise, spans),
            (k - 1, sky.hangs, -np.inf, np.maximum, hang, spans & (k > 0)),
        ):
            if not pick.any():
                continue
            row = staff_of[pick] * width
            bounds = np.empty(2 * int(pick.sum()), dtype=np.int64)
            bounds[0::2] = row + b0[pick]
            bounds[1::2] = row + b1[pick] + 1
            values = np.append(np.array(profile, dtype=float), fill)
            segment = reduce.reduceat(values, np.minimum(bounds, last))[0::2]
            out[pick] = reduce(out[pick], segment)
    ceiling = np.where(k > 0, hang + GAP / 2, -np.inf)
    start = np.minimum(rise, ys - 130.0) - GAP
    return centre.tolist(), lo.tolist(), hi.tolist(), ceiling.tolist(), start.tolist()


#: How many label boxes a gap holds before those no later label can reach are dropped.
_PRUNE_AT = 8


def place_labels(
    svg_text: str, requests: list[LabelRequest], sky: Skyline | None = None
) -> tuple[str, list[str], float]:
    """SVG ``<text class="sk-label">`` per request, the ids labelled, and the lowest label bottom."""
    lowest = float("-inf")
    if not requests:
        return "", [], lowest
    wanted = [requests[i] for i in _by_centre(requests)]
    sky = sky if sky is not None else Skyline(svg_text)
    if not sky.staves:
        return "", [], lowest
    gaps: dict[int, list[Box]] = {}
    where: dict[int, tuple[float, float]] = {}  # request index -> (x centre, baseline)
    placed: list[Box] = []

    def keep(i: int, box: Box) -> None:
        placed.append(box)
        where[i] = ((box[0] + box[1]) / 2, box[3] - _DESC)
        k = sky.staff_of((box[2] + box[3]) / 2)
        padded = (box[0] - FONT_SIZE * 0.12, box[1] + FONT_SIZE * 0.12, box[2], box[3])
        for g in (k, k + 1):  # the labels placed above and below the staves keep clear of it
            gaps.setdefault(g, []).append(padded)

    chords: dict[str, list[int]] = {}
    for i, req in enumerate(wanted):
        if req.chord is not None:
            chords.setdefault(req.chord, []).append(i)
    for members in chords.values():
        if len(members) < 2:
            continue
        order = sorted(members, key=lambda i: wanted[i].y)
        boxes = _beside_chord(sky, [wanted[i] for i in order], placed)
        if boxes is not None:
            for i, box in zip(order, boxes, strict=True):
                keep(i, box)
    bottoms, bounds = sky.bottoms, sky._bounds
    ks = [bisect.bisect_left(bounds, r.y) for r in wanted]  # sky.staff_of
    ledger = [(t - sky.space(k) * 0.75, b + sky.space(k) * 0.75) for k, (t, b) in enumerate(sky.staves)]
    for i, req in enumerate(wanted):  # notes on ledger lines, more than 3/4 of a space off the staff
        if i not in where and (req.y < ledger[ks[i]][0] or req.y > ledger[ks[i]][1]):
            near = _near_head(sky, req, placed)
            if near is not None:
                keep(i, near)
    pad = FONT_SIZE * 0.12
    halves = [label_width(r.text) / 2 for r in wanted]
    widest = max(halves)
    centres, los, his, ceilings, starts = _first_spots(sky, wanted, ks, halves)
    for i, req in enumerate(wanted):
        if i in where:
            continue
        k, y = ks[i], req.y
        centre, lo, hi = centres[i], los[i], his[i]
        # Labels come by centre: none after this one reaches further left than the widest
        # label's half from its centre (a narrow label may come first), so a box ending left of
        # that can touch no later label. Such boxes are dropped once a gap holds a few: dropping
        # them sooner or later places every label alike, and the checks stay short.
        for g in (k, k + 1):
            boxes = gaps.get(g)
            if boxes is not None and len(boxes) > _PRUNE_AT:
                gaps[g] = [b for b in boxes if b[1] > centre - 40 - widest - FONT_SIZE]
        base: float | None = None
        if y <= bottoms[k]:  # _spot's first choice, above the staff (_above), worked out inline
            ceiling, at = ceilings[i], starts[i]
            boxes = gaps.setdefault(k, [])
            for _ in range(6):
                if at - _ASC < ceiling:
                    break
                if _free(boxes, lo, hi, at - _ASC, at + _DESC):
                    base = at
                    break
                at -= ROW
        if base is None:
            base, gap = _spot(sky, k, lo, hi, y, gaps)
        else:
            gap = k
        gaps.setdefault(gap, []).append((lo - pad, hi + pad, base - _ASC, base + _DESC))
        where[i] = (centre, base)
    head = (
        f'" text-anchor="middle" font-size="{FONT_SIZE:g}px" '
        f'font-family="{escape(FONT_FAMILY)}" style="fill:'
    )
    spots = [where[i] for i in range(len(wanted))]
    ids = [req.note_id for req in wanted]
    texts = [req.text for req in wanted]
    lowest = max(base for _, base in spots) + FONT_SIZE * 0.25  # the bottom of the lowest label
    if _UNSAFE.search("".join(ids)) or _UNSAFE.search("".join(texts)):  # else escaping changes none
        ids, texts = [esc(t) for t in ids], [esc(t) for t in texts]
    out = [
        f'<text class="sk-label" data-for="{nid}" x="{x:.0f}" y="{base:.0f}{head}{colour or "#000000"}">{text}</text>'
        for nid, text, (x, base), colour in zip(ids, texts, spots, [req.colour for req in wanted], strict=True)
    ]
    return "".join(out), [req.note_id for req in wanted], lowest
