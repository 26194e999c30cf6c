"""The ``serialkit render`` command: outputs, --json, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from serialkit.cli import cli
from tests.render.conftest import CERTIFICATE, REPORT


def test_render_command_writes_and_reports(tmp_path: Path, duet: Path) -> None:
    out = tmp_path / "duet.svg"
    res = CliRunner().invoke(
        cli, ["render", str(duet), "--check-report", str(REPORT), "--certificate", str(CERTIFICATE),
              "-o", str(out), "--json"],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["files"] == [str(out)] and data["pages"] == 1
    report = json.loads(REPORT.read_text())
    assert data["labels"] == len(report["labels"]) == 24
    named = {e for v in report["violations"] if v["code"] == "ROW" for e in v["event_ids"]}
    assert [f["code"] for f in data["findings"]] == [  # one finding per unexplained note
        *(v["code"] for v in report["violations"]), *("UNEXPLAINED" for e in report["unexplained"] if e not in named)
    ]
    assert [f["event_ids"] for f in data["findings"]][: len(report["violations"])] == [
        v["event_ids"] for v in report["violations"]
    ]
    assert out.read_text().startswith("<svg")


def test_render_command_bad_input_exits_2_without_output(tmp_path: Path, duet: Path) -> None:
    out = tmp_path / "x.svg"
    res = CliRunner().invoke(cli, ["render", str(tmp_path / "missing.xml"), "-o", str(out)])
    assert res.exit_code == 2
    assert "missing.xml" in res.output
    bad = tmp_path / "r.json"
    bad.write_text("[1, 2")
    res = CliRunner().invoke(cli, ["render", str(duet), "--check-report", str(bad), "-o", str(out)])
    assert res.exit_code == 2 and "r.json" in res.output
    res = CliRunner().invoke(cli, ["render", str(duet), "-o", str(tmp_path / "x.bmp")])
    assert res.exit_code == 2 and "unknown output format" in res.output
    assert not out.exists()


def test_render_command_blind_html(tmp_path: Path, duet: Path) -> None:
    out = tmp_path / "panel.html"
    res = CliRunner().invoke(
        cli, ["render", str(duet), "--check-report", str(REPORT), "--blind", "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    text = out.read_text()
    assert "P0:" not in text and "Duet" not in text and "<script" not in text


def test_report_of_another_score(tmp_path: Path, duet: Path) -> None:
    report = json.loads(REPORT.read_text())
    other = {"labels": {f"x{k}": v for k, v in report["labels"].items()}, "violations": []}
    bad = tmp_path / "other.json"
    bad.write_text(json.dumps(other))
    out = tmp_path / "x.svg"
    res = CliRunner().invoke(cli, ["render", str(duet), "--check-report", str(bad), "-o", str(out)])
    assert res.exit_code == 2 and "none of the 24 notes" in res.output and not out.exists()
    partial = dict(report, labels={**report["labels"], "ghost": "P0:0"})
    bad.write_text(json.dumps(partial))
    res = CliRunner().invoke(cli, ["render", str(duet), "--check-report", str(bad), "-o", str(out),
                                   "--json"])
    assert res.exit_code == 0
    assert "warning: 1 noted ids are not in the score: ghost" in res.output


def test_a_json_that_is_no_check_report_is_refused_naming_its_file(tmp_path: Path, duet: Path) -> None:
    """A certificate, a run report or any other JSON given as --check-report made a review page
    with no findings (a score that fails looked clean); it is one line naming the file, exit 2,
    nothing written — for a score and for a JSON piece, beside a valid certificate too."""
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"format": "serialkit-run-report", "runs": []}))
    piece = Path(__file__).resolve().parents[2] / "fixtures" / "pieces" / "demo-piece.json"
    for score, extra in ((duet, []), (duet, ["--certificate", str(CERTIFICATE)]), (piece, [])):
        out = tmp_path / "review.html"
        res = CliRunner().invoke(cli, ["render", str(score), "--check-report", str(other), *extra, "-o", str(out)])
        assert res.exit_code == 2
        assert res.stderr.strip() == (f"error: {other}: not a check report: it has no labels, violations or "
                                      "unexplained notes (write one with serialkit check SCORE --report FILE)")
        assert not out.exists()
