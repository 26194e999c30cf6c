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
import re
from collections.abc import Iterator
from html import escape
from itertools import chain
from typing import Any, NamedTuple

from serialkit.render.shapes import (
    FONT_SIZE,
    _primitives,
    label_width,
    staves_of,
)

SVG = "{http://www.w3.org/2000/svg}"
ROW = FONT_SIZE * 1.05
GAP = 70.0
BUCKET = 100.0
FONT_FAMILY = "'DejaVu Sans Condensed', 'Liberation Sans', Arial, sans-serif"  # a 1 unlike an I
_NUM = re.compile(r"-?\d+(?:\.\d+)?")


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


_UNSAFE = re.compile(r"[&<>\"']")


def esc(text: str) -> str:
    """``html.escape`` of a text, quick for the texts that need none (ids, most labels)."""
    return escape(text) if _UNSAFE.search(text) else text


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
        if not len(self.above) or b1 < b0:
            return top
        base = staff * self.width
        # the few buckets asked for as a list (a page's whole profile is thousands: most never read)
        rises: list[float] = self.above[base + b0 : base + b1 + 1].tolist()
        return min(top, min(rises))

    def hang(self, staff: int, lo: float, hi: float) -> float:
        """The lowest point of the notation below ``staff`` between ``lo`` and ``hi``."""
        bottom = float(self.bottoms[staff])
        b0, b1 = int(lo // BUCKET), int(hi // BUCKET)
        b0, b1 = b0 if b0 > 0 else 0, b1 if b1 < self.width else self.width - 1
        if not len(self.below) or b1 < b0:
            return bottom
        base = staff * self.width
        hangs: list[float] = self.below[base + b0 : base + b1 + 1].tolist()
        return max(bottom, max(hangs))


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


def _by_centre(x0: Any, x1: Any, ys: Any) -> Any:
    """The order labels are placed in: by their note's centre (40 units to a step), lower notes
    first within a step; as ``sorted`` with the key ``(round(centre / 40), -y)`` orders them
    (numpy's rounding is Python's, half to even; its lexsort is stable). The notes' left and
    right ends and heights are arrays, in the requests' order."""
    import numpy as np

    return np.lexsort((-ys, np.rint((x0 + x1) / 2 / 40)))


def _first_spots(sky: Skyline, x0: Any, x1: Any, ys: Any, k: Any,
                 halves: list[float]) -> tuple[list[float], ...]:
    """For every label, at once (its note's ends ``x0``, ``x1``, its height ``ys`` and its
    staff ``k``, as arrays in the order labels are placed): its centre, left and right ends,
    and for ``_above``'s first try (above its staff) the ceiling (what hangs below the staff
    above, and the gap) and the first baseline (under what rises above its staff and its
    notehead), as ``_above`` works them out one label at a time (the same float operations,
    element by element)."""
    import numpy as np

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
    if len(sky.above) and spans.any():
        last = len(sky.above)  # a sentinel past the end, so that every bound is an index
        for staff_of, profile, fill, reduce, out, pick in (
            (k, sky.above, np.inf, np.minimum, rise, spans),
            (k - 1, sky.below, -np.inf, np.maximum, hang, spans & (k > 0)),
        ):
            if not pick.any():
                continue
            row = staff_of[pick] * width
            bounds = np.empty(2 * int(pick.sum()), dtype=np.int64)
            bounds[0::2] = row + b0[pick]
            bounds[1::2] = row + b1[pick] + 1
            values = np.append(profile, fill)  # the profile as ``rise``/``hang`` read it
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
    import numpy as np

    sky = sky if sky is not None else Skyline(svg_text)
    if not sky.staves:
        return "", [], lowest
    # the notes' ends and heights as arrays, made once and put in placing order
    x0 = np.array([r.x0 for r in requests])
    x1 = np.array([r.x1 for r in requests])
    ys = np.array([r.y for r in requests])
    order = _by_centre(x0, x1, ys)
    x0, x1, ys = x0[order], x1[order], ys[order]
    wanted = [requests[i] for i in order.tolist()]
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
    bottoms = sky.bottoms
    staff = np.searchsorted(sky.bounds, ys)  # sky.staff_of of every label (bisect_left)
    ks: list[int] = staff.tolist()
    ledger = np.array([(t - sky.space(k) * 0.75, b + sky.space(k) * 0.75) for k, (t, b) in enumerate(sky.staves)])
    # notes on ledger lines, more than 3/4 of a space off the staff
    off = (ys < ledger[staff, 0]) | (ys > ledger[staff, 1])
    for i in np.flatnonzero(off).tolist():
        if i not in where:
            near = _near_head(sky, wanted[i], placed)
            if near is not None:
                keep(i, near)
    pad = FONT_SIZE * 0.12
    halves = [label_width(r.text) / 2 for r in wanted]
    widest = max(halves)
    centres, los, his, ceilings, starts = _first_spots(sky, x0, x1, ys, staff, halves)
    spots_of = zip(wanted, ks, centres, los, his, ceilings, starts, strict=True)
    for i, (req, k, centre, lo, hi, ceiling, at) in enumerate(spots_of):
        if i in where:
            continue
        y = req.y
        # Labels come by centre: none after this one reaches further left than the widest
        # label's half from its centre (a narrow label may come first), so a box ending left of
        # that can touch no later label. Such boxes are dropped once a gap holds a few: dropping
        # them sooner or later places every label alike, and the checks stay short.
        for g in (k, k + 1):
            boxes = gaps.get(g)
            if boxes is not None and len(boxes) > _PRUNE_AT:
                reach = centre - 40 - widest - FONT_SIZE
                gaps[g] = [b for b in boxes if b[1] > reach]
        base: float | None = None
        if y <= bottoms[k]:  # _spot's first choice, above the staff (_above), worked out inline
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
    # (x centre, baseline) of every label, in placing order, as an n x 2 array
    spots = np.fromiter(chain.from_iterable([where[i] for i in range(len(wanted))]), float,
                        2 * len(wanted)).reshape(-1, 2)
    ids = [req.note_id for req in wanted]
    texts = [req.text for req in wanted]
    lowest = float(spots[:, 1].max()) + FONT_SIZE * 0.25  # the bottom of the lowest label
    if _UNSAFE.search("".join(ids)) or _UNSAFE.search("".join(texts)):  # else escaping changes none
        ids, texts = [esc(t) for t in ids], [esc(t) for t in texts]
    xs, bases = _whole(spots[:, 0]), _whole(spots[:, 1])
    out = [
        f'<text class="sk-label" data-for="{nid}" x="{x}" y="{base}{head}{colour or "#000000"}">{text}</text>'
        for nid, text, x, base, colour in zip(ids, texts, xs, bases, [req.colour for req in wanted], strict=True)
    ]
    return "".join(out), [req.note_id for req in wanted], lowest


def _whole(values: Any) -> list[str]:
    """An array of coordinates as ``f"{v:.0f}"`` writes each: rounded half to even (``np.rint``
    rounds as the float formatting does), written as integers; a negative value or a negative
    zero (written ``-0``), or one too large or not a number, sends the array to the formatting
    itself."""
    import numpy as np

    if np.signbit(values).any() or not (values < 1e15).all():
        return [f"{v:.0f}" for v in values.tolist()]
    return [str(v) for v in np.rint(values).astype(np.int64).tolist()]
