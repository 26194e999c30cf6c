"""Engraving people can read: label size, left margin, labels by their notes, a safe palette."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from serialkit.render import render
from serialkit.render.marks import (
    AMBIGUOUS_COLOR,
    CUE_SHAPES,
    RUNG_COLORS,
    UNEXPLAINED_COLOR,
    VIOLATION_COLOR,
)
from tests.render.conftest import CERTIFICATE, REPORT, SVG, notes_by_id, parse_svg
from tests.render.scoregen import row_score

XLINK = "{http://www.w3.org/1999/xlink}href"
HEAD_WIDTH = {"E0A0": 500.0, "E0A2": 422.0, "E0A3": 295.0, "E0A4": 295.0}


def _png_pixels(path: Path) -> tuple[Any, int, int]:
    """A PNG as a grey-level array (0 black .. 255 white), read with cairo."""
    import cairocffi
    import numpy as np

    surface = cairocffi.ImageSurface.create_from_png(str(path))
    w, h, stride = surface.get_width(), surface.get_height(), surface.get_stride()
    data = np.frombuffer(bytes(surface.get_data()), dtype=np.uint8).reshape(h, stride // 4, 4)[:, :w, :]
    alpha = data[:, :, 3].astype(float) / 255.0
    grey = data[:, :, :3].mean(axis=2) * alpha + 255.0 * (1 - alpha)  # cairo premultiplies
    return grey, w, h


def _staff_space(root: Any) -> float:
    spaces = []
    for g in root.iter(f"{SVG}g"):
        if g.get("class") == "staff":
            ys = sorted(float(m) for p in g.findall(f"{SVG}path")
                        for m in re.findall(r"^M-?\d+ (-?\d+) L", p.get("d") or ""))
            if len(ys) >= 5:
                spaces.append((ys[4] - ys[0]) / 4)
    return min(spaces)


def _head_centre(note: Any) -> tuple[float, float]:
    head = next(g for g in note.iter(f"{SVG}g") if g.get("class") == "notehead")
    use = head.find(f"{SVG}use")
    glyph = (use.get(XLINK) or use.get("href") or "#E0A4")[1:5]
    m = re.search(r"translate\((-?[\d.]+)[ ,]+(-?[\d.]+)\)(?: scale\(([\d.]+))?", use.get("transform"))
    assert m is not None
    scale = float(m.group(3) or 1)
    return float(m.group(1)) + HEAD_WIDTH.get(glyph, 295.0) * scale / 2, float(m.group(2))


def _note_span(note: Any) -> tuple[float, float]:
    """The horizontal extent of a note as drawn: its notehead and its accidental."""
    x, _ = _head_centre(note)
    head = next(g for g in note.iter(f"{SVG}g") if g.get("class") == "notehead")
    use = head.find(f"{SVG}use")
    glyph = (use.get(XLINK) or use.get("href") or "#E0A4")[1:5]
    m = re.search(r"scale\(([\d.]+)", use.get("transform"))
    half = HEAD_WIDTH.get(glyph, 295.0) * float(m.group(1) if m else 1) / 2
    lo, hi = x - half, x + half
    for g in note.iter(f"{SVG}g"):
        accid = g.find(f"{SVG}use") if g.get("class") == "accid" else None
        if accid is not None:  # an accidental written but not drawn has no glyph
            at = re.search(r"translate\((-?[\d.]+)", accid.get("transform"))
            assert at is not None
            lo = min(lo, float(at.group(1)))
    return lo, hi


def far_labels(svg: Path) -> tuple[int, list[tuple[str, str, float]]]:
    """How many labels the page has, and those whose box stands farther than one staff space
    horizontally from their own note (its notehead and accidental; for a chord's note, the whole
    chord)."""
    from serialkit.render.shapes import label_width

    root = parse_svg(svg)
    notes = notes_by_id(root)
    space = _staff_space(root)
    chords = {}  # a chord's labels stand beside the whole chord, left of all its accidentals
    for g in root.iter(f"{SVG}g"):
        if g.get("class") == "chord":
            members = [n for n in g.iter(f"{SVG}g") if (n.get("class") or "").split()[:1] == ["note"]]
            chords.update({n.get("id"): members for n in members})
    far = []
    count = 0
    for text in root.iter(f"{SVG}text"):
        if text.get("class") != "sk-label":
            continue
        count += 1
        chord = chords.get(text.get("data-for"))
        spans = [_note_span(n) for n in chord] if chord else [_note_span(notes[text.get("data-for")])]
        lo, hi = min(a for a, _ in spans), max(b for _, b in spans)
        half = label_width("".join(text.itertext())) / 2
        x = float(text.get("x"))
        distance = max(0.0, x - half - hi, lo - x - half)
        if distance > space:
            far.append((text.get("data-for"), "".join(text.itertext()), distance))
    return count, far


# --- label size ---------------------------------------------------------------------------------

def test_default_png_labels_are_at_least_10_px_tall(duet: Path, tmp_path: Path) -> None:
    """Measured on pixels: one label drawn alone at the default page size, its ink height."""
    import cairosvg

    svg = tmp_path / "duet.svg"
    png = tmp_path / "duet.png"
    render(duet, svg, report=REPORT, certificate=CERTIFICATE)
    render(duet, png, report=REPORT, certificate=CERTIFICATE)
    page = svg.read_text()
    grey, width, _ = _png_pixels(png)
    assert f'width="{width}px"' in page[:400]  # the PNG is the page at its default size
    label = re.search(r'<text class="sk-label"[^>]*>P0:1</text>', page)
    assert label is not None
    head = page[: page.index(">", page.index('class="definition-scale"')) + 1]
    alone = tmp_path / "label.png"
    alone.write_bytes(cairosvg.svg2png(bytestring=(
        head.replace('class="definition-scale"', 'class="definition-scale"', 1)
        + '<g class="page-margin" transform="' + re.search(r'class="page-margin" transform="([^"]+)"', page).group(1)
        + '">' + label.group(0) + "</g></svg></svg>").encode(), background_color="white"))
    ink, _, _ = _png_pixels(alone)
    rows = [y for y in range(ink.shape[0]) if (ink[y] < 128).any()]
    assert rows, "the label drew nothing"
    height = rows[-1] - rows[0] + 1
    assert height >= 10, f"label ink is {height} px tall"


# --- left margin ----------------------------------------------------------------------------------

LONG = "Contrabass Clarinet in B flat, sounding two octaves lower"


@pytest.mark.parametrize("name", ["Flute", LONG])
def test_the_longest_instrument_name_fits_the_left_margin(duet: Path, tmp_path: Path, name: str) -> None:
    score = tmp_path / "long.musicxml"
    score.write_text(duet.read_text().replace("<part-name>Flute</part-name>", f"<part-name>{name}</part-name>"))
    png = tmp_path / "long.png"
    render(score, png)
    grey, _, _ = _png_pixels(png)
    edge = grey[:, :6]
    assert edge.min() > 200, "ink touches the left edge: an instrument name is clipped"
    svg = tmp_path / "long.svg"
    render(score, svg)
    assert name in svg.read_text()


@pytest.mark.slow
def test_real_score_names_fit(corpus: Path, tmp_path: Path) -> None:
    png = tmp_path / "op21.png"
    result = render(corpus / "webern-op21-i-mm1-25.mei", png)
    for page in result.files:
        grey, _, _ = _png_pixels(page)
        assert grey[:, :6].min() > 200, page


# --- labels next to their notes ---------------------------------------------------------------------

def test_fixture_labels_sit_by_their_noteheads(duet: Path, tmp_path: Path) -> None:
    out = tmp_path / "duet.svg"
    render(duet, out, report=REPORT, certificate=CERTIFICATE)
    count, far = far_labels(out)
    assert count == 24 and far == []


@pytest.mark.xdist_group("op21-render")  # render_once(op21, row=...) is shared with other tests
@pytest.mark.parametrize("name,row", [("webern-op21-i-mm1-25.mei", "webern-op21"),
                                      ("webern-op27-ii-mm1-11.mei", "webern-op27")])
def test_real_score_labels_sit_by_their_noteheads(corpus: Path, render_once: Callable[..., Any], name: str,
                                                  row: str) -> None:
    result = render_once(corpus / name, row=row)
    total = 0
    for page in result.files:
        count, far = far_labels(page)
        total += count
        assert far == [], (page.name, far[:5])
    assert total == result.labels > 40


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(40, 160), parts=st.integers(1, 4), seed=st.integers(0, 1000))
def test_generated_scores_labels_sit_by_their_noteheads(tmp_path_factory: pytest.TempPathFactory, n: int,
                                                         parts: int, seed: int) -> None:
    import json

    tmp = tmp_path_factory.mktemp("gen")
    xml, report, certificate = row_score(n, parts=parts, seed=seed)
    (tmp / "s.musicxml").write_text(xml)
    (tmp / "r.json").write_text(json.dumps(report))
    (tmp / "c.json").write_text(json.dumps(certificate))
    result = render(tmp / "s.musicxml", tmp / "s.svg", report=tmp / "r.json", certificate=tmp / "c.json")
    for page in result.files:
        _, far = far_labels(page)
        assert far == [], far[:5]


def test_a_note_below_the_staff_gets_its_label_below(duet: Path, tmp_path: Path) -> None:
    """The cello's lowest notes hang under the staff: where there is room, labels go under them."""
    score = tmp_path / "low.musicxml"
    text = duet.read_text()
    # move the flute's first note two octaves down (ledger lines below its staff)
    first = text.index("<octave>", text.index('<part id="P1"'))
    end = text.index("</octave>", first)
    octave = int(text[first + len("<octave>"): end])
    score.write_text(text[:first] + f"<octave>{octave - 2}" + text[end:])
    out = tmp_path / "low.svg"
    render(score, out, report=REPORT, certificate=CERTIFICATE)
    root = parse_svg(out)
    notes = notes_by_id(root)
    staves = []
    for g in root.iter(f"{SVG}g"):
        if g.get("class") == "staff":
            ys = sorted(float(m) for p in g.findall(f"{SVG}path")
                        for m in re.findall(r"^M-?\d+ (-?\d+) L", p.get("d") or ""))
            staves.append((ys[0], ys[4]))
    below = 0
    for label in root.iter(f"{SVG}text"):
        if label.get("class") != "sk-label":
            continue
        _, y = _head_centre(notes[label.get("data-for")])
        top, bottom = next(s for s in staves if s[0] - 900 < y < s[1] + 900)
        if y > bottom + 100:
            assert float(label.get("y")) > y, "".join(label.itertext())
            below += 1
    assert below >= 1


# --- palette and second cue ---------------------------------------------------------------------------

# Machado, Oliveira & Fernandes (2009), severity 1.0, on linear RGB.
CVD = {
    "normal": ((1, 0, 0), (0, 1, 0), (0, 0, 1)),
    "protan": ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216), (-0.003882, -0.048116, 1.051998)),
    "deutan": ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413), (-0.011820, 0.042940, 0.968881)),
    "tritan": ((1.255528, -0.076749, -0.178779), (-0.078411, 0.930809, 0.147602), (0.004733, 0.691367, 0.303900)),
}


def _lab(colour: str, vision: str) -> tuple[float, float, float]:
    def lin(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    rgb = [lin(int(colour[i: i + 2], 16)) for i in (1, 3, 5)]
    m = CVD[vision]
    r, g, b = (min(1.0, max(0.0, sum(m[i][j] * rgb[j] for j in range(3)))) for i in range(3))
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def worst_pair(palette: dict[str, str]) -> tuple[float, str, str, str]:
    """The closest two colours of a palette (CIE76 ΔE) under any of the four visions."""
    return min((math.dist(_lab(a, v), _lab(b, v)), v, na, nb)
               for v in CVD for (na, a), (nb, b) in itertools.combinations(palette.items(), 2))


PALETTE = {"violation": VIOLATION_COLOR, "unexplained": UNEXPLAINED_COLOR, "ambiguous": AMBIGUOUS_COLOR,
           **RUNG_COLORS, "plain note": "#000000"}


def test_palette_stays_apart_for_colour_blind_readers() -> None:
    distance, vision, a, b = worst_pair(PALETTE)
    assert distance >= 12, f"{a} and {b} are only ΔE {distance:.1f} apart for {vision} vision"


def test_the_old_palette_fails_the_same_test() -> None:
    """The check can fail: the earlier colours (trim dark blue vs rewrite light blue, violation red
    vs ambiguous brown) did."""
    old = {"violation": "#d01c1c", "unexplained": "#7b3fa0", "ambiguous": "#8a6d00", "trim": "#0072b2",
           "yield": "#009e73", "retime": "#e69f00", "patch": "#cc79a7", "rewrite": "#56b4e9", "plain": "#000000"}
    assert worst_pair(old)[0] < 12


def test_every_kind_has_its_own_shape() -> None:
    kinds = ["violation", "unexplained", "ambiguous", *RUNG_COLORS]
    shapes = [CUE_SHAPES[k] for k in kinds]
    assert len(set(shapes)) == len(shapes)


def test_every_coloured_note_carries_its_shape(duet: Path, tmp_path: Path) -> None:
    out = tmp_path / "duet.svg"
    render(duet, out, report=REPORT, certificate=CERTIFICATE)
    root = parse_svg(out)
    cues = {p.get("data-for"): p for p in root.iter(f"{SVG}path")
            if "sk-cue" in (p.get("class") or "") and p.get("data-for")}
    coloured = {nid: n for nid, n in notes_by_id(root).items() if n.get("fill")}
    assert coloured and set(coloured) == set(cues)
    for nid, note in coloured.items():
        cue = cues[nid]
        assert note.get("fill") in cue.get("style")
        if note.get("data-codes"):
            assert cue.get("data-shape") == CUE_SHAPES["violation"]
        elif note.get("data-rung"):
            assert cue.get("data-shape") == CUE_SHAPES[note.get("data-rung")]
    legend = [g for g in root.iter(f"{SVG}g") if "sk-legend-swatch" in (g.get("class") or "")]
    shapes = {p.get("data-shape") for g in legend for p in g.iter(f"{SVG}path")}
    rungs = {n.get("data-rung") for n in coloured.values() if n.get("data-rung")}
    assert len(rungs) >= 5
    assert {CUE_SHAPES["violation"], *(CUE_SHAPES[r] for r in rungs)} <= shapes


def test_blind_renders_have_no_cues(duet: Path, tmp_path: Path) -> None:
    out = tmp_path / "blind.svg"
    render(duet, out, report=REPORT, certificate=CERTIFICATE, blind=True)
    assert "sk-cue" not in out.read_text()
