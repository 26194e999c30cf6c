"""Measure where labels stand on a rendered SVG page: chords, ledger-line notes, obstacles."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from serialkit.render.shapes import label_width
from tests.render.conftest import SVG, parse_svg

XLINK = "{http://www.w3.org/1999/xlink}href"
_TRANSLATE = re.compile(r"translate\((-?[\d.]+)[ ,]+(-?[\d.]+)\)(?: scale\(([\d.]+))?")
_NUM = re.compile(r"-?\d+(?:\.\d+)?")
Box = tuple[float, float, float, float]  # x0, x1, top, bottom


def label_box(text: Any) -> Box:
    """A printed label's box: its estimated width (an upper bound), ascent and descent."""
    size = float(text.get("font-size")[:-2])
    x, y = float(text.get("x")), float(text.get("y"))
    half = label_width("".join(text.itertext()), size) / 2
    return x - half, x + half, y - size * 0.72, y + size * 0.18


def _use_at(g: Any) -> tuple[float, float, float]:
    use = g.find(f".//{SVG}use")
    m = _TRANSLATE.search(use.get("transform"))
    assert m is not None
    return float(m.group(1)), float(m.group(2)), float(m.group(3) or 1)


def head_box(note: Any, accidental: bool = False) -> Box:
    """A notehead's box (a black head's width; heads are a staff space tall), widened to the left
    to its accidental's origin when ``accidental``."""
    head = next(g for g in note.iter(f"{SVG}g") if g.get("class") == "notehead")
    x, y, scale = _use_at(head)
    left = x
    for g in note.iter(f"{SVG}g"):
        if accidental and g.get("class") == "accid" and g.find(f".//{SVG}use") is not None:
            left = min(left, _use_at(g)[0])
    return left, x + 295 * scale, y - 125 * scale, y + 125 * scale


def staff_space(root: Any) -> float:
    """The staff space of the page's staves."""
    for g in root.iter(f"{SVG}g"):
        if g.get("class") == "staff":
            ys = sorted(float(m.group(1)) for p in g.findall(f"{SVG}path")
                        if (m := re.match(r"M-?\d+ (-?\d+) L", p.get("d") or "")))
            if len(ys) >= 5:
                return (ys[4] - ys[0]) / 4
    raise AssertionError("no staff on the page")


def staves(root: Any) -> list[tuple[float, float]]:
    """(top line, bottom line) of every staff."""
    out = []
    for g in root.iter(f"{SVG}g"):
        if g.get("class") == "staff":
            ys = sorted(float(m.group(1)) for p in g.findall(f"{SVG}path")
                        if (m := re.match(r"M-?\d+ (-?\d+) L", p.get("d") or "")))
            if len(ys) >= 5:
                out.append((ys[0], ys[-1]))
    return out


def _bezier_points(d: str) -> list[tuple[float, float]]:
    nums = [float(v) for v in _NUM.findall(d)]
    x, y = nums[0], nums[1]
    points = [(x, y)]
    for i in range(2, len(nums) - 5, 6):
        c = nums[i:i + 6]
        for k in range(1, 21):
            t = k / 20
            u = 1 - t
            points.append((u ** 3 * x + 3 * u * u * t * c[0] + 3 * u * t * t * c[2] + t ** 3 * c[4],
                           u ** 3 * y + 3 * u * u * t * c[1] + 3 * u * t * t * c[3] + t ** 3 * c[5]))
        x, y = c[4], c[5]
    return points


def _segment_points(points: list[tuple[float, float]], step: float = 20.0) -> list[tuple[float, float]]:
    out = []
    for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
        n = max(1, int(max(abs(x1 - x0), abs(y1 - y0)) / step))
        out.extend((x0 + (x1 - x0) * i / n, y0 + (y1 - y0) * i / n) for i in range(n + 1))
    return out


def marks_drawn(root: Any) -> dict[str, list[Any]]:
    """What labels must keep clear of, by kind: points along hairpins, tuplet brackets and slurs,
    and the boxes of dynamics and tuplet numbers (a SMuFL glyph: its origin, a staff space up)."""
    out: dict[str, list[Any]] = {"hairpin": [], "tupletBracket": [], "slur": [], "dynam": [], "tupletNum": []}
    for g in root.iter(f"{SVG}g"):
        kind = g.get("class")
        if kind in ("hairpin", "tupletBracket"):
            for line in g.iter(f"{SVG}polyline"):
                nums = [float(v) for v in _NUM.findall(line.get("points"))]
                out[kind].extend(_segment_points(list(zip(nums[0::2], nums[1::2], strict=True))))
        elif kind == "slur":
            for path in g.iter(f"{SVG}path"):
                out[kind].extend(_bezier_points(path.get("d")))
        elif kind in ("dynam", "tupletNum"):
            for use in g.iter(f"{SVG}use"):
                m = _TRANSLATE.search(use.get("transform"))
                assert m is not None
                x, y, scale = float(m.group(1)), float(m.group(2)), float(m.group(3) or 1)
                out[kind].append((x, x + 250 * scale, y - 250 * scale, y + 20 * scale))
    return out


def collisions(svg: Path) -> list[tuple[str, str]]:
    """(label text, kind of mark) of every label whose box touches a hairpin, a tuplet bracket or
    number, a slur or a dynamic."""
    root = parse_svg(svg)
    drawn = marks_drawn(root)
    found = []
    for text in root.iter(f"{SVG}text"):
        if text.get("class") != "sk-label":
            continue
        x0, x1, top, bottom = label_box(text)
        for kind, items in drawn.items():
            for item in items:
                if len(item) == 2:
                    hit = x0 < item[0] < x1 and top < item[1] < bottom
                else:
                    hit = item[0] < x1 and x0 < item[1] and item[2] < bottom and top < item[3]
                if hit:
                    found.append(("".join(text.itertext()), kind))
                    break
    return found


def chord_layout(svg: Path) -> tuple[int, list[str]]:
    """How many chord labels the page has, and what is wrong with each chord's labels: each must
    stand beside the chord (wholly left or right of its noteheads, all on one side), level with its
    own notehead (within one staff space), in the notes' vertical order."""
    root = parse_svg(svg)
    space = staff_space(root)
    by_note = {t.get("data-for"): t for t in root.iter(f"{SVG}text") if t.get("class") == "sk-label"}
    count = 0
    wrong: list[str] = []
    for chord in root.iter(f"{SVG}g"):
        if chord.get("class") != "chord":
            continue
        notes = [g for g in chord.iter(f"{SVG}g") if (g.get("class") or "").split()[:1] == ["note"]]
        heads = {n.get("id"): head_box(n) for n in notes}
        labelled = [n for n in heads if n in by_note]
        if len(labelled) < 2:
            continue
        count += len(labelled)
        left = min(b[0] for b in heads.values())
        right = max(b[1] for b in heads.values())
        sides = set()
        for nid in labelled:
            x0, x1, top, bottom = label_box(by_note[nid])
            side = "right" if x0 >= right - 1 else "left" if x1 <= left + 1 else "over"
            sides.add(side)
            head = heads[nid]
            dy = abs((top + bottom) / 2 - (head[2] + head[3]) / 2)
            gap = x0 - right if side == "right" else left - x1
            if side == "over":
                wrong.append(f"{nid}: label over or under the chord, not beside it")
            elif dy > space:
                wrong.append(f"{nid}: label {dy:.0f} from its notehead's height (space {space:.0f})")
            elif gap > 4 * space:
                wrong.append(f"{nid}: label {gap:.0f} away from the chord (space {space:.0f})")
        if len(sides) > 1:
            wrong.append(f"{chord.get('id')}: labels on both sides")
        if any(heads[a][2] < heads[b][2] and float(by_note[a].get("y")) >= float(by_note[b].get("y"))
               for a in labelled for b in labelled):  # two heads level (a second): either order
            wrong.append(f"{chord.get('id')}: labels not in the notes' vertical order")
    return count, wrong


def ledger_distances(svg: Path) -> list[tuple[str, float, float]]:
    """(note id, gap between label box and the box of notehead and accidental, staff space) for
    every labelled note on ledger lines (its head centre more than three quarters of a space outside its staff)."""
    root = parse_svg(svg)
    space = staff_space(root)
    lines = staves(root)
    notes = {g.get("id"): g for g in root.iter(f"{SVG}g") if (g.get("class") or "").split()[:1] == ["note"]}
    out = []
    for text in root.iter(f"{SVG}text"):
        if text.get("class") != "sk-label":
            continue
        head = head_box(notes[text.get("data-for")], accidental=True)
        y = (head[2] + head[3]) / 2
        top, bottom = min(lines, key=lambda s: 0 if s[0] <= y <= s[1] else min(abs(y - s[0]), abs(y - s[1])))
        if top - 0.75 * space <= y <= bottom + 0.75 * space:
            continue
        x0, x1, ltop, lbottom = label_box(text)
        dx = max(0.0, x0 - head[1], head[0] - x1)
        dy = max(0.0, ltop - head[3], head[2] - lbottom)
        out.append((text.get("data-for"), max(dx, dy), space))
    return out
