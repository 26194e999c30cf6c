"""Post-process verovio's SVG: colour and class notes, place labels, box collisions, blind.

Decoration works on verovio's raw SVG text (``svgFormatRaw``) with a handful of anchored
regular expressions; a render of 2,000 notes must cost well under half of verovio's own time.
Blinding, which is not on that path, parses the SVG with lxml.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass
from html import escape, unescape
from typing import Any, NamedTuple

from lxml import etree

from serialkit.render.cues import cue_svg
from serialkit.render.labels import LabelRequest, Skyline, place_labels
from serialkit.render.legend import legend_svg
from serialkit.render.marks import VIOLATION_COLOR, Marks, NoteMark
from serialkit.render.shapes import find_all

SVG = "{http://www.w3.org/2000/svg}"
XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
#: Notehead widths in font units (SMuFL, Leipzig), by glyph code; 250 units = 1 staff space.
_HEAD_WIDTH = {"E0A0": 500.0, "E0A2": 422.0, "E0A3": 295.0, "E0A4": 295.0}
_BOXED_CODES = ("COLL",)
_NOTE_OPEN = re.compile(r'<g id="([^"]+)" class="note"([^>]*)>')
_PAINT = re.compile(r'\s(?:fill|color|stroke)="[^"]*"')
#: A notehead's glyph and place (its group may carry the score's own colour: ``color="#332288"``).
_HEAD = re.compile(
    r'class="notehead"[^>]*><use [^>]*?href="#(E[0-9A-F]{3})[^"]*" '
    r'transform="translate\((-?[0-9.]+)[ ,]+(-?[0-9.]+)\)(?: scale\(([0-9.]+))?'
)
#: A note's opening tag and, where its first child is its notehead's group (verovio's usual
#: order), that notehead's glyph and place as ``_HEAD`` reads them.
_NOTE_HEAD = re.compile(_NOTE_OPEN.pattern + "(?:<g " + _HEAD.pattern + ")?")
_END = "</g></svg></svg>"
#: What follows a note group's id in its opening tag (every ``_NOTE_HEAD`` match holds it once).
_NOTE_CLASS = '" class="note"'


_CHORD = re.compile(r'<g id="([^"]+)" class="chord"')
_G_TAG = re.compile(r"<g\b|</g>")


def chord_spans(svg_text: str) -> tuple[list[int], list[int], list[str]]:
    """Where each chord group of the page starts and ends, and its id (by start)."""
    starts: list[int] = []
    ends: list[int] = []
    names: list[str] = []
    for m in _CHORD.finditer(svg_text):
        depth = 0
        for tag in _G_TAG.finditer(svg_text, m.start()):
            depth += 1 if tag.group(0) == "<g" else -1
            if depth == 0:
                starts.append(m.start())
                ends.append(tag.end())
                names.append(m.group(1))
                break
    return starts, ends, names


class Head(NamedTuple):
    """A notehead's box in the page's coordinates (a tuple: one is made per marked note)."""

    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True, slots=True)
class PageInfo:
    """What one decorated page holds: ids of marked notes and of printed labels."""

    note_ids: tuple[str, ...]
    label_for: tuple[str, ...]


_UNSAFE = re.compile(r"[&<>\"']")


def esc(text: str) -> str:
    """``html.escape`` of a text, quick for the texts that need none (ids, most labels)."""
    return escape(text) if _UNSAFE.search(text) else text


def _parse(svg_text: str) -> Any:
    parser = etree.XMLParser(huge_tree=True, resolve_entities=False, no_network=True)
    return etree.fromstring(svg_text.encode("utf-8"), parser)


_KINDS: dict[tuple[object, ...], tuple[str | None, str | None, str | None, str]] = {}


def _kind(mark: NoteMark) -> tuple[str | None, str | None, str | None, str]:
    """A marked note's colour, cue, printed text, and ``class`` and data attributes: made once
    per kind of mark and label (what they depend on; a score has a few hundred)."""
    key = (mark.label, mark.continuation, mark.codes, mark.unexplained, mark.ambiguous, mark.rung)
    found = _KINDS.get(key)
    if found is None:
        if len(_KINDS) >= 4096:
            _KINDS.clear()
        colour = mark.color
        attrs = f'class="{" ".join(("note", *mark.classes))}"{_note_attrs(mark, colour)}'
        found = _KINDS[key] = (colour, mark.cue, mark.text, attrs)
    return found


def _note_attrs(mark: NoteMark, colour: str | None) -> str:
    bits = [f' data-label="{esc(mark.label)}"' if mark.label else ""]
    if mark.codes:
        bits.append(f' data-codes="{esc(" ".join(mark.codes))}"')
    if mark.rung:
        bits.append(f' data-rung="{esc(mark.rung)}"')
    if colour:
        bits.append(f' fill="{colour}" color="{colour}" stroke="{colour}"')
    return "".join(bits)


class _Notes(NamedTuple):
    """The marked notes of one page: the page cut at each one's opening tag, rewritten (one join
    makes the page again), and what they show."""

    pieces: list[str]
    marked: list[str]
    requests: list[LabelRequest]
    cues: list[str]
    heads: dict[str, Head]  # of the notes a box is drawn around


def _mark_notes(svg_text: str, marks: Marks) -> _Notes:
    """Colour, class and find the head of every marked note of one page."""
    notes = marks.notes
    found = _Notes([], [], [], [], {})
    pieces, marked, requests, cues, heads = found
    boxed = {e for f in marks.findings if f.code in _BOXED_CODES for e in f.event_ids}
    starts, ends, names = chord_spans(svg_text) if 'class="chord"' in svg_text else ([], [], [])
    last = 0
    new = tuple.__new__  # a Head, a LabelRequest made without their Python-level __new__
    add, unsafe = pieces.append, _UNSAFE.search
    # each note's ``" class="note"`` found by ``str.find``, then the ``<g id="`` before its id (an
    # id holds no quote) tried as ``_NOTE_HEAD`` matches there: the regular-expression engine
    # would try every group's opening on the page
    find, rfind, match = svg_text.find, svg_text.rfind, _NOTE_HEAD.match
    end = 0
    here = find(_NOTE_CLASS)
    while here >= 0:
        quote = rfind('"', end, here)  # the quote opening the id: a match starts 6 before it
        start = quote - 6
        m = match(svg_text, start) if quote >= 0 and start >= end else None
        if m is None:
            here = find(_NOTE_CLASS, here + 1)
            continue
        end = m.end()
        here = find(_NOTE_CLASS, end)
        nid, rest, code, hx, hy, hs = m.groups()
        mark = notes.get(nid)
        if mark is None:
            continue
        mid = mark.id
        marked.append(mid)
        colour, cue, text, attrs = _kind(mark)
        at = m.end(2) + 1
        if code is None or end > at + 400:  # not the note's first child: _HEAD's search
            head = _HEAD.search(svg_text, at, at + 400)
            code, hx, hy, hs = (None, None, None, None) if head is None else head.groups()
        if code is not None:
            x, y = float(hx), float(hy)
            scale = float(hs or 1.0)
            x1 = x + _HEAD_WIDTH.get(code, 295.0) * scale
            if mid in boxed:
                heads[mid] = new(Head, (x, y - 125 * scale, x1, y + 125 * scale))
            if colour is not None and cue is not None:
                cues.append(cue_svg(cue, colour, (x + x1) / 2, y, max((x1 - x) / 2, 125.0 * scale) + 70.0, mid))
            if text:
                chord = None
                if starts:
                    i = bisect.bisect_right(starts, start) - 1
                    chord = names[i] if i >= 0 and ends[i] > start else None
                requests.append(new(LabelRequest, (mid, text, x, x1, y, colour, chord)))
        if colour:
            rest = _PAINT.sub("", rest)
        add(svg_text[last:start])
        add(f'<g id="{escape(mid) if unsafe(mid) else mid}" {attrs}{rest}>')  # esc(mid)
        last = at
    pieces.append(svg_text[last:] if last else svg_text)
    return found


def _edit_head(pieces: list[str], edit: Callable[[str], str]) -> None:
    """Apply to the page cut in ``pieces`` an edit of its opening (the outer ``<svg>``'s height,
    the page's ``viewBox`` and margin, which come before any note): to the first piece alone
    when it holds them all, else to the page made whole again."""
    head = pieces[0]
    if len(pieces) > 1 and not (_VIEWBOX.search(head) and _HEIGHT.search(head) and _MARGIN_AT.search(head)):
        pieces[:] = ["".join(pieces)]
        head = pieces[0]
    pieces[0] = edit(head)


def decorate(
    svg_text: str, marks: Marks, last_page: bool = False
) -> tuple[str, PageInfo]:
    """Colour, class and label the marked notes of one page; box collisions; add the legend of
    what is marked on this page (each page of a render may be looked at alone: a PNG or SVG
    file per page)."""
    if not marks.notes:
        return (crop_page(svg_text) if last_page else svg_text), PageInfo((), ())
    pieces, marked, requests, cues, heads = _mark_notes(svg_text, marks)
    if _END not in pieces[-1]:  # the page's end is where it ends, in the last piece
        pieces[:] = ["".join(pieces)]
        if _END not in pieces[0]:
            return (crop_page(pieces[0]) if last_page else pieces[0]), PageInfo(tuple(marked), ())
    sky = Skyline(svg_text)
    label_svg, label_for, lowest = place_labels(svg_text, requests, sky)
    if last_page:
        _edit_head(pieces, lambda head: _crop(head, max(sky.lowest, lowest)))
    tail = pieces[-1]
    pieces[-1] = tail[: tail.rfind(_END)]
    pieces += ['<g class="sk-cues">', *cues, '</g><g class="sk-labels">', label_svg, "</g>",
               _boxes(marks, heads), "</g>"]
    legend: list[str] = []  # what this page's colours and shapes mean: every page read alone explains itself
    _edit_head(pieces, lambda head: _with_legend(head, _on_page(marks, marked), legend))
    pieces += legend
    pieces.append("</svg></svg>")
    return "".join(pieces), PageInfo(tuple(marked), tuple(label_for))


def _on_page(marks: Marks, marked: list[str]) -> Marks:
    """The marks of the notes drawn on one page, with the findings naming any of them."""
    here = set(marked)
    notes = {nid: mark for nid, mark in marks.notes.items() if nid in here}
    findings = tuple(f for f in marks.findings if here.intersection(f.event_ids))
    return Marks(notes, findings, marks.facts)


def _with_legend(page: str, marks: Marks, legend: list[str]) -> str:
    out, group = legend_svg(page, marks)
    legend.append(group)
    return out


_VIEWBOX = re.compile(r'(<svg class="definition-scale"[^>]*?viewBox=")([-\d.]+) ([-\d.]+) ([-\d.]+) ([-\d.]+)"')
_HEIGHT = re.compile(r'^(<svg [^>]*?height=")([\d.]+)(px)?"')
_MARGIN_AT = re.compile(r'class="page-margin" transform="translate\((-?[\d.]+)[ ,]+(-?[\d.]+)\)"')


_NAME = re.compile(
    r'class="label(?:Abbr)?"><text x="(-?[\d.]+)" y="-?[\d.]+" text-anchor="end"[^>]*>(.*?)</text>', re.S
)
_SIZE = re.compile(r'font-size="([\d.]+)px"')
_WIDTH = re.compile(r'^(<svg [^>]*?width=")([\d.]+)(px)?"')


def serif_width(text: str, size: float) -> float:
    """A generous estimate of a serif text's width (DejaVu Serif, the widest common fallback)."""
    em = 0.0
    for ch in text:
        if ch == " ":
            em += 0.32
        elif ch.isupper():
            em += 0.76
        elif ch.isdigit():
            em += 0.64
        elif ch.isalpha():
            em += 0.58
        else:
            em += 0.4
    return em * size


def fit_left(page: str) -> str:
    """Widen the page to the left so the longest instrument name fits whatever serif font draws it.

    Verovio indents the systems for the names by its own font metrics; a wider fallback font
    would otherwise be clipped at the page edge ("ass Clarinet in Bb").
    """
    box, margin = _VIEWBOX.search(page), _MARGIN_AT.search(page)
    if box is None or margin is None:
        return page
    left = float("inf")
    for m in find_all(_NAME, page, 'class="label'):
        sizes = [float(v) for v in _SIZE.findall(m.group(2)) if float(v) > 0]
        name = _TAGS.sub("", m.group(2)).strip()
        if name and sizes:
            left = min(left, float(m.group(1)) - serif_width(name, max(sizes)))
    vx, vy, vw, vh = (float(box.group(i)) for i in range(2, 6))
    need = float(margin.group(1)) + left - 150.0  # page coordinates, with a little air
    if need >= vx:
        return page
    grow = vx - need
    page = page[: box.start()] + f'{box.group(1)}{need:g} {vy:g} {vw + grow:g} {vh:g}"' + page[box.end():]
    width = _WIDTH.search(page)
    if width is not None:
        px = float(width.group(2))
        page = page[: width.start()] + f'{width.group(1)}{round(px * (vw + grow) / vw)}px"' + page[width.end():]
    return page


_TAGS = re.compile(r"<[^>]+>")
#: A text verovio places at a note (a fingering, a direction's words: where scores carry labels,
#: ``rewrite swap with the F4 at bar 6, beat 1``).
_WORDS = re.compile(r'(class="(?:fing|dir)"><text)([^>]*)>((?:(?!</text>).)*)</text>', re.S)
#: Texts the words must keep clear of: bar numbers and instrument names at the systems' starts.
_FIXED = re.compile(r'(class="(?:mNum[^"]*|label|labelAbbr)"><text)([^>]*)>((?:(?!</text>).)*)</text>', re.S)
_X = re.compile(r'\sx="(-?[\d.]+)"')
_Y = re.compile(r'\sy="(-?[\d.]+)"')
_AIR = 100.0


def _text_box(attrs: str, inner: str) -> tuple[float, float, float, float] | None:
    """(x0, x1, top, bottom) of a one-line verovio text (``x`` and ``y`` are 0 where not
    written), its width estimated generously; None for an empty text or one of several lines."""
    sizes = [float(v) for v in _SIZE.findall(attrs + inner) if float(v) > 0]
    text = unescape(_TAGS.sub("", inner)).strip()
    if not sizes or not text or _X.search(inner) or "dy=" in inner:
        return None
    x, y = (float(m.group(1)) if (m := r.search(attrs)) else 0.0 for r in (_X, _Y))
    size = max(sizes)
    width = serif_width(text, size) * 1.08  # verovio's fingerings and words may be bold
    x0 = x - width / 2 if 'text-anchor="middle"' in attrs else x - width if 'text-anchor="end"' in attrs else x
    return x0, x0 + width, y - size * 0.8, y + size * 0.25


def fit_words(page: str) -> str:
    """Move every fingering and direction text verovio drew sideways, as little as it takes to
    stay on the page and clear of the bar numbers and instrument names at a system's start.

    Verovio centres a long label over its note (``rewrite swap with the F4 at bar 6, beat 1``
    at a system's first note): it would run off the page's left edge, over the bar number.
    """
    if 'class="fing"' not in page and 'class="dir"' not in page:
        return page  # no text to move (a page without one is not scanned for the bars' texts)
    box, margin = _VIEWBOX.search(page), _MARGIN_AT.search(page)
    if box is None or margin is None:
        return page
    vx, vw = float(box.group(2)), float(box.group(4))
    left = vx - float(margin.group(1)) + _AIR  # the page's edges in the notation's coordinates
    right = left + vw - 2 * _AIR
    fixed = sorted(b for m in _FIXED.finditer(page) if (b := _text_box(m.group(2), m.group(3))) is not None)

    def move(m: re.Match[str]) -> str:
        found = _text_box(m.group(2), m.group(3))
        if found is None:
            return m.group(0)
        x0, x1, top, bottom = found
        dx = max(0.0, left - x0)
        for f0, f1, ftop, fbottom in fixed:  # left to right: past each one in the way
            if ftop < bottom and top < fbottom and x0 + dx < f1 + _AIR and f0 - _AIR < x1 + dx:
                dx = f1 + _AIR - x0
        dx = min(dx, right - x1) if x1 + dx > right else dx
        if dx == 0.0:
            return m.group(0)
        at = _X.search(m.group(2))
        x = (float(at.group(1)) if at else 0.0) + dx
        attrs = _X.sub(f' x="{x:.0f}"', m.group(2)) if at else f' x="{x:.0f}"{m.group(2)}'
        return f"{m.group(1)}{attrs}>{m.group(3)}</text>"

    return _WORDS.sub(move, page)


def crop_page(page: str) -> str:
    """Shorten a page to the notation it holds."""
    return _crop(page, Skyline(page).lowest)


def _crop(page: str, lowest: float) -> str:
    """Shorten a page to its content (the last page of a score rarely fills the paper)."""
    box, height, margin = _VIEWBOX.search(page), _HEIGHT.search(page), _MARGIN_AT.search(page)
    if box is None or height is None or margin is None or lowest == float("-inf"):
        return page
    vx, vy, vw, vh = (float(box.group(i)) for i in range(2, 6))
    top = float(margin.group(2))
    new_vh = min(vh, lowest + top * 2)
    if new_vh >= vh - 1:
        return page
    px = float(height.group(2))
    page = page[: box.start()] + f'{box.group(1)}{vx:g} {vy:g} {vw:g} {new_vh:g}"' + page[box.end():]
    height = _HEIGHT.search(page)
    assert height is not None
    return page[: height.start()] + f'{height.group(1)}{round(px * new_vh / vh)}px"' + page[height.end():]


def _boxes(marks: Marks, heads: dict[str, Head]) -> str:
    pad = 70.0
    out = []
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
        out.append(
            f'<rect class="sk-box sk-box-{escape(finding.code)}" data-finding="{finding.index}" '
            f'data-notes="{escape(" ".join(finding.event_ids))}" x="{x0:.0f}" y="{y0:.0f}" '
            f'width="{x1 - x0:.0f}" height="{y1 - y0:.0f}" rx="40" '
            f'style="fill:none;stroke:{VIOLATION_COLOR};stroke-width:22;stroke-dasharray:60 30"/>'
        )
    return "".join(out)


def blind_svg(svg_text: str, prefix: str = "") -> str:
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
            rename[old] = new = f"{prefix}e{len(rename)}"
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
