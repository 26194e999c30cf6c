"""Rendering a `serialkit generate` run directory: released score or unreleased candidate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from serialkit.cli import cli
from serialkit.render import RUNG_COLORS, VIOLATION_COLOR, render
from tests.render.conftest import labels, notes_by_id, parse_svg


def _generate(out: Path, *args: str) -> None:
    res = CliRunner().invoke(cli, ["generate", "quartet-webern", "-o", str(out), *args])
    if res.exception and not isinstance(res.exception, SystemExit):
        pytest.skip(f"serialkit generate is not usable here: {res.exception!r}")


@pytest.mark.slow
def test_released_run_shows_labels_and_repairs(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _generate(run, "--seed", "1")
    if not (run / "score.musicxml").exists():
        pytest.skip("this seed was not released")
    cert = json.loads((run / "certificate.json").read_text())
    result = render(run, tmp_path / "run.svg")
    assert result.labels == len(cert["events"])
    notes: dict = {}
    for page in result.files:
        notes.update(notes_by_id(parse_svg(page)))
    for entry in cert["events"]:
        if entry.get("rung") and entry["rung"] in RUNG_COLORS:
            assert notes[entry["id"]].get("data-rung") == entry["rung"]


@pytest.mark.slow
def test_unreleased_run_shows_its_failures(tmp_path: Path) -> None:
    run = tmp_path / "raw"
    _generate(run, "--seed", "3", "--variant", "raw")
    report = json.loads((run / "report.json").read_text())
    if report["released"]:
        pytest.skip("this seed was released")
    assert not (run / "score.musicxml").exists()
    result = render(run, tmp_path / "raw.svg")
    assert [f.code for f in result.findings] == [v["code"] for v in report["failures"]]
    red = set()
    printed = 0
    for page in result.files:
        root = parse_svg(page)
        printed += len(labels(root))
        red |= {
            i for i, el in notes_by_id(root).items()
            if el.get("fill") == VIOLATION_COLOR and "sk-tied" not in el.get("class").split()
        }
    assert printed == result.labels > 0
    assert red == {e for v in report["failures"] for e in v["event_ids"]}


def test_json_piece_is_checked_and_rendered(tmp_path: Path, fixtures: Path) -> None:
    from serialkit.check import check_piece
    from serialkit.io import load_piece

    piece_path = fixtures / "pieces" / "demo-piece.json"
    report = check_piece(load_piece(piece_path)).to_dict()
    result = render(piece_path, tmp_path / "piece.svg")
    assert result.labels == len(report["labels"])
    assert [f.code for f in result.findings if f.kind == "violation"] == [
        v["code"] for v in report["violations"]
    ]
    # a symmetric row's aliases are not findings and do not colour notes
    assert report["ambiguities"] and not [f for f in result.findings if f.kind == "ambiguity"]
    notes = notes_by_id(parse_svg(tmp_path / "piece.svg"))
    coloured = {i for i, el in notes.items()
                if el.get("fill") and "sk-tied" not in el.get("class").split()}
    flagged = {e for v in report["violations"] for e in v["event_ids"]} | set(report["unexplained"])
    assert coloured == flagged
