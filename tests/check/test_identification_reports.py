"""Reports say which catalogued row ``--identify`` found (check and annotate, library and CLI)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from serialkit.check import check_piece
from serialkit.cli import cli
from serialkit.io import load_piece, save_piece

ROOT = Path(__file__).resolve().parents[2]


def _bare_clean_piece():
    piece = load_piece(ROOT / "fixtures/pieces/clean-piece.json")
    return piece.copy(row=None, events=tuple(e.copy(tag=None) for e in piece.events))


def test_check_report_names_the_identified_catalogue_row() -> None:
    report = check_piece(_bare_clean_piece(), identify=True).to_dict()
    found = report["identification"]
    assert found["name"] == "webern-op21"
    assert "webern-op21" in found["summary"]
    assert report["strict"] is True


def test_given_row_means_no_identification() -> None:
    report = check_piece(_bare_clean_piece(), row="webern-op21").to_dict()
    assert "identification" not in report


def test_check_cli_prints_and_reports_identification(tmp_path: Path) -> None:
    piece_path = tmp_path / "bare.json"
    save_piece(_bare_clean_piece(), piece_path)
    runner = CliRunner()
    text = runner.invoke(cli, ["check", str(piece_path), "--identify"])
    assert text.exit_code == 0, text.output
    assert "row identified: webern-op21" in text.output
    as_json = runner.invoke(cli, ["check", str(piece_path), "--identify", "--json"])
    assert json.loads(as_json.output)["identification"]["name"] == "webern-op21"


def test_annotate_report_names_the_identified_row_on_op27(corpus: Path, tmp_path: Path) -> None:
    report_path = tmp_path / "op27.json"
    result = CliRunner().invoke(
        cli,
        ["annotate", str(corpus / "webern-op27-ii-mm1-11.mei"), "--identify",
         "-o", str(tmp_path / "op27.musicxml"), "--report", str(report_path)],
    )
    assert result.exit_code == 0, result.output
    assert "row identified: webern-op27" in result.output
    found = json.loads(report_path.read_text())["identification"]
    assert found["name"] == "webern-op27"
    assert found["runner_up"]["coverage"] < found["coverage"]
