"""Structural tests of the decorated SVG: classes, colours, labels, boxes, legend."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from serialkit.render import RUNG_COLORS, UNEXPLAINED_COLOR, VIOLATION_COLOR, build_marks, render
from serialkit.render.shapes import label_width
from tests.render.conftest import SVG, labels, notes_by_id, parse_svg, text_of

_TRANSLATE = re.compile(r"translate\((-?[\d.]+),\s*(-?[\d.]+)\)")


def _render(tmp_path: Path, duet: Path, **kw: Any) -> Any:
    out = tmp_path / "duet.svg"
    result = render(duet, out, **kw)
    assert result.files == (out,)
    return parse_svg(out), result


def test_every_violating_note_carries_class_and_colour(
    tmp_path: Path, duet: Path, duet_report: dict[str, Any], duet_certificate: dict[str, Any]
) -> None:
    root, _ = _render(tmp_path, duet, report=duet_report, certificate=duet_certificate)
    notes = notes_by_id(root)
    assert duet_report["violations"], "the fixture must hold a violation"
    for violation in duet_report["violations"]:
        for eid in violation["event_ids"]:
            el = notes[eid]
            assert f"sk-viol-{violation['code']}" in el.get("class").split()
            assert el.get("fill") == VIOLATION_COLOR
            assert violation["code"] in el.get("data-codes").split()
    violating = {e for v in duet_report["violations"] for e in v["event_ids"]}
    for eid, el in notes.items():
        if eid not in violating:
            assert el.get("fill") != VIOLATION_COLOR, eid
            assert "sk-viol" not in el.get("class", "").split()


def test_label_count_equals_labelled_notes(
    tmp_path: Path, duet: Path, duet_report: dict[str, Any]
) -> None:
    root, result = _render(tmp_path, duet, report=duet_report)
    marks = build_marks(duet_report)
    printed = labels(root)
    expected = {eid: m.text for eid, m in marks.notes.items() if m.text}
    assert len(printed) == len(expected) == result.labels
    assert {g.get("data-for"): text_of(g) for g in printed} == expected
    labelled = [g for g in notes_by_id(root).values() if g.get("data-label")]
    assert len(labelled) == sum(1 for v in duet_report["labels"].values() if v)


def test_unexplained_and_rungs_have_their_colours(
    tmp_path: Path, duet: Path, duet_report: dict[str, Any], duet_certificate: dict[str, Any]
) -> None:
    root, _ = _render(tmp_path, duet, report=duet_report, certificate=duet_certificate)
    notes = notes_by_id(root)
    violating = {e for v in duet_report["violations"] for e in v["event_ids"]}
    assert duet_report["unexplained"]
    for eid in duet_report["unexplained"]:
        assert "sk-unexplained" in notes[eid].get("class").split()
        expected = VIOLATION_COLOR if eid in violating else UNEXPLAINED_COLOR
        assert notes[eid].get("fill") == expected
    seen = set()
    for entry in duet_certificate["events"]:
        rung = entry.get("rung")
        if not rung:
            continue
        seen.add(rung)
        el = notes[entry["id"]]
        assert f"sk-rung-{rung}" in el.get("class").split()
        assert el.get("data-rung") == rung
        if entry["id"] not in violating:
            assert el.get("fill") == RUNG_COLORS[rung]
    assert len(seen) >= 4, "the fixture shows several rungs"
    assert len({RUNG_COLORS[r] for r in seen}) == len(seen)


def test_collision_is_boxed_across_both_notes(
    tmp_path: Path, duet: Path, duet_report: dict[str, Any]
) -> None:
    root, _ = _render(tmp_path, duet, report=duet_report)
    notes = notes_by_id(root)
    boxes = [r for r in root.iter(f"{SVG}rect") if "sk-box-COLL" in r.get("class", "")]
    colls = [v for v in duet_report["violations"] if v["code"] == "COLL"]
    assert len(boxes) == len(colls) == 1
    box = boxes[0]
    x0, y0 = float(box.get("x")), float(box.get("y"))
    x1, y1 = x0 + float(box.get("width")), y0 + float(box.get("height"))
    for eid in colls[0]["event_ids"]:
        use = next(notes[eid].iter(f"{SVG}use"))
        m = _TRANSLATE.search(use.get("transform"))
        assert m is not None
        x, y = float(m.group(1)), float(m.group(2))
        assert x0 < x < x1 and y0 < y < y1, (eid, x, y, box.attrib)


def label_boxes(root: Any) -> list[tuple[float, float, float, float, str]]:
    """(x0, x1, top, bottom, note id) of every printed label."""
    boxes = []
    for el in labels(root):
        size = float(el.get("font-size")[:-2])
        x, y = float(el.get("x")), float(el.get("y"))
        half = label_width(text_of(el), size) / 2
        boxes.append((x - half, x + half, y - size * 0.7, y + size * 0.15, el.get("data-for")))
    return boxes


def assert_no_overlap(boxes: list[tuple[float, float, float, float, str]]) -> None:
    """No two label boxes intersect."""
    boxes = sorted(boxes)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if b[0] >= a[1]:
                break
            assert not (a[2] < b[3] and b[2] < a[3]), (a, b)


def test_labels_do_not_overlap_and_sit_above_their_notes(
    tmp_path: Path, duet: Path, duet_report: dict[str, Any]
) -> None:
    root, _ = _render(tmp_path, duet, report=duet_report)
    boxes = label_boxes(root)
    assert_no_overlap(boxes)
    notes = notes_by_id(root)
    for x0, x1, _top, bottom, eid in boxes:
        use = next(notes[eid].iter(f"{SVG}use"))
        m = _TRANSLATE.search(use.get("transform"))
        assert m is not None
        x, y = float(m.group(1)), float(m.group(2))
        assert bottom < y, f"label of {eid} is not above its notehead"
        assert x0 < x + 100 < x1, f"label of {eid} is not centred on its notehead"


def test_legend_names_what_is_shown(
    tmp_path: Path, duet: Path, duet_report: dict[str, Any], duet_certificate: dict[str, Any]
) -> None:
    root, _ = _render(tmp_path, duet, report=duet_report, certificate=duet_certificate)
    legend = [g for g in root.iter(f"{SVG}g") if g.get("class") == "sk-legend"]
    assert len(legend) == 1
    text = text_of(legend[0])
    assert "COLL" in text and "collision" in text
    violating = {e for v in duet_report["violations"] for e in v["event_ids"]}
    purple = [e for e in duet_report["unexplained"] if e not in violating]
    assert ("unexplained" in text) == bool(purple)
    for rung in ("trim", "yield", "retime", "patch", "rewrite"):
        assert f"repaired: {rung}" in text


def test_render_is_deterministic(tmp_path: Path, duet: Path, duet_report: dict[str, Any]) -> None:
    a, b = tmp_path / "a.svg", tmp_path / "b.svg"
    render(duet, a, report=duet_report)
    render(duet, b, report=duet_report)
    assert a.read_bytes() == b.read_bytes()


def test_certificate_alone_labels_and_colours(
    tmp_path: Path, duet: Path, duet_certificate: dict[str, Any]
) -> None:
    root, result = _render(tmp_path, duet, certificate=duet_certificate)
    assert result.labels == len(duet_certificate["events"])
    notes = notes_by_id(root)
    for entry in duet_certificate["events"]:
        assert notes[entry["id"]].get("data-label") == f"{entry['form']}:{entry['position']}"


def test_build_marks_makes_the_note_marks_the_dataclass_makes(
    duet_report: dict[str, Any], duet_certificate: dict[str, Any]
) -> None:
    """build_marks makes its NoteMarks without their __init__ (marks._note_mark): field for field
    the same as the dataclass makes them."""
    import dataclasses

    from serialkit.render.marks import NoteMark

    assert NoteMark.__slots__ == tuple(f.name for f in dataclasses.fields(NoteMark))
    marks = build_marks(duet_report, duet_certificate)
    assert marks.notes
    for mark in marks.notes.values():
        again = NoteMark(*(getattr(mark, f.name) for f in dataclasses.fields(NoteMark)))
        assert mark == again and repr(mark) == repr(again) and type(mark) is NoteMark
