"""Properties: whatever the report says, every note shows exactly its marks, and labels never overlap."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from serialkit.render import RUNG_COLORS, UNEXPLAINED_COLOR, VIOLATION_COLOR, render
from tests.render.conftest import DUET, labels, notes_by_id, parse_svg, text_of
from tests.render.test_svg import assert_no_overlap, label_boxes

NOTE_IDS = [f"u{i}" for i in range(1, 13)] + [f"l{i}" for i in range(1, 13)]
CODES = ("ROW", "ORDER", "COLL", "RANGE")
FORMS = ("P", "I", "R", "RI")


@st.composite
def note_states(draw: Any) -> dict[str, Any]:
    """One note's state: a label or unexplained, violation codes, a repair rung."""
    unexplained = draw(st.booleans()) and draw(st.booleans())
    label = None
    if not unexplained and draw(st.integers(0, 4)):
        label = f"{draw(st.sampled_from(FORMS))}{draw(st.integers(0, 11))}:{draw(st.integers(0, 11))}"
    codes = draw(st.lists(st.sampled_from(CODES), max_size=2, unique=True))
    rung = draw(st.sampled_from((None, None, *RUNG_COLORS)))
    return {"label": label, "unexplained": unexplained, "codes": codes, "rung": rung}


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(NOTE_IDS), note_states(), min_size=1))
@example({  # the labels the review page moved clear of the bar numbers ran into each other
    "l8": {"label": "P0:0", "unexplained": False, "codes": [], "rung": None},
    "l9": {"label": "P0:0", "unexplained": False, "codes": ["ROW", "ORDER"], "rung": None},
    "l11": {"label": None, "unexplained": True, "codes": [], "rung": None},
    "l12": {"label": "P0:0", "unexplained": False, "codes": ["ROW", "ORDER"], "rung": None},
    **{f"u{i}": {"label": None, "unexplained": False, "codes": [], "rung": None} for i in range(1, 13)},
})
def test_every_note_shows_exactly_its_marks(states: dict[str, dict[str, Any]]) -> None:
    report = {
        "labels": {nid: s["label"] for nid, s in states.items()},
        "violations": [
            {"code": code, "event_ids": [nid], "message": "m", "location": ""}
            for nid, s in states.items() for code in s["codes"]
        ],
        "unexplained": [nid for nid, s in states.items() if s["unexplained"]],
        "ambiguities": [],
    }
    certificate = {"events": [{"id": nid, "rung": s["rung"]} for nid, s in states.items()]}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "p.svg"
        result = render(DUET, out, report=report, certificate=certificate)
        root = parse_svg(out)
    notes = notes_by_id(root)
    printed = {el.get("data-for"): text_of(el) for el in labels(root)}
    for nid in NOTE_IDS:
        s = states.get(nid)
        el = notes[nid]
        classes = el.get("class").split()
        if s is None:
            assert classes == ["note"] and el.get("fill") is None and nid not in printed
            continue
        expected_text = " ".join(
            [s["label"] or ("?" if s["unexplained"] else "")] + s["codes"]
        ).strip()
        assert printed.get(nid, "") == expected_text
        for code in s["codes"]:
            assert f"sk-viol-{code}" in classes
        if s["codes"]:
            assert el.get("fill") == VIOLATION_COLOR
        elif s["unexplained"]:
            assert el.get("fill") == UNEXPLAINED_COLOR
        elif s["rung"]:
            assert el.get("fill") == RUNG_COLORS[s["rung"]]
        else:
            assert el.get("fill") is None
    assert result.labels == len(printed) == sum(1 for t in printed.values() if t)
    assert_no_overlap(label_boxes(root))
