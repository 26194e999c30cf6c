"""Labels people can read: a chord's labels beside their noteheads, ledger-line labels by their
notes, no label over a hairpin, a tuplet bracket, a dynamic or a slur."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from serialkit.render import render
from serialkit.render.labels import _spread
from tests.render.layout import chord_layout, collisions, ledger_distances
from tests.render.scoregen import chord_score


def _render_chords(tmp_path: Path, room: bool, size: int = 3) -> tuple[list[Path], dict[str, object]]:
    xml, report = chord_score(4, size=size, room=room)
    (tmp_path / "c.musicxml").write_text(xml)
    (tmp_path / "c.json").write_text(json.dumps(report))
    result = render(tmp_path / "c.musicxml", tmp_path / "c.svg", report=tmp_path / "c.json")
    assert result.labels == len(report["labels"])  # type: ignore[arg-type]
    return list(result.files), report


@pytest.mark.parametrize("size", [2, 3, 4])
def test_chord_labels_stand_beside_their_noteheads_in_order(tmp_path: Path, size: int) -> None:
    files, _ = _render_chords(tmp_path, room=True, size=size)
    total = 0
    for page in files:
        count, wrong = chord_layout(page)
        total += count
        assert wrong == []
    assert total == 4 * size  # two chords a staff, two staves


@pytest.mark.parametrize("room", [True, False])
def test_labels_keep_clear_of_hairpins_tuplets_dynamics_and_slurs(tmp_path: Path, room: bool) -> None:
    files, _ = _render_chords(tmp_path, room=room)
    for page in files:
        assert collisions(page) == []


def test_ledger_line_labels_stay_within_one_staff_space(tmp_path: Path) -> None:
    files, _ = _render_chords(tmp_path, room=True)
    measured = [d for page in files for d in ledger_distances(page)]
    assert len(measured) >= 4  # a ledger-line note a bar on each staff, and chord notes
    assert [(nid, gap) for nid, gap, space in measured if gap > space] == []


@pytest.mark.slow
@pytest.mark.xdist_group("op21-render")  # render_once(op21, row=...) is shared with other tests
def test_op21_harp_chords_and_ledger_notes(corpus: Path, render_once: Callable[..., Any]) -> None:
    result = render_once(corpus / "webern-op21-i-mm1-25.mei", row="webern-op21")
    chord_labels = 0
    ledger = []
    for page in result.files:
        count, wrong = chord_layout(page)
        chord_labels += count
        assert wrong == [], (page.name, wrong)
        assert collisions(page) == [], page.name
        ledger.extend(ledger_distances(page))
    assert chord_labels == 10  # the harp's five two-note chords
    assert len(ledger) > 30
    assert [(nid, gap) for nid, gap, space in ledger if gap > space] == []


def test_crowded_labels_spread_evenly_in_order() -> None:
    ys = [0.0, 50.0, 100.0, 1000.0]
    out = _spread(ys, 185.0)
    assert out == sorted(out)
    assert all(b - a >= 185.0 - 1e-9 for a, b in zip(out, out[1:], strict=False))
    assert out[1] == pytest.approx(50.0)  # the crowded run is centred on the heights it stands for
    assert out[3] == 1000.0  # a label with room stays level with its note
