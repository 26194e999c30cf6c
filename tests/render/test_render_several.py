"""`serialkit render A B -o DIR --to FMT`: several scores, as check and convert take them (outside
tester, round 1900, #10: `render a b` was "Got unexpected extra argument")."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from serialkit.cli import cli
from tests.conftest import FIXTURES

MEI = FIXTURES / "scores" / "features.mei"


def test_several_scores_are_engraved_into_a_folder(tmp_path: Path, duet: Path) -> None:
    out = tmp_path / "pages"
    result = CliRunner().invoke(cli, ["render", str(duet), str(MEI), "--to", "svg", "-o", str(out), "--json"])
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line.get("source") for line in lines[:2]] == [str(duet), str(MEI)]
    assert lines[-1] == {"summary": {"scores": 2, "written": 2, "unreadable": 0}}
    assert [line.get("status") for line in lines[:2]] == ["written", "written"]
    written = sorted(p.name for p in out.iterdir())
    assert written[0] == "duet.svg" and all(name.startswith(("duet", "features")) for name in written)
    assert any(name.startswith("features") for name in written)
    assert (out / "duet.svg").read_text(encoding="utf-8").lstrip().startswith("<")


def test_standard_input_is_one_of_several(tmp_path: Path, duet: Path) -> None:
    result = CliRunner().invoke(cli, ["render", "-", str(duet), "--to", "pdf", "-o", str(tmp_path / "o")],
                                input=MEI.read_bytes())
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["duet.pdf", "stdin.pdf"]
    assert "2 scores: 2 written, 0 unreadable" in result.stdout


def test_one_unreadable_score_is_exit_2_and_the_rest_are_written(tmp_path: Path, duet: Path) -> None:
    result = CliRunner().invoke(cli, ["render", str(tmp_path / "nope.musicxml"), str(duet), "--to", "svg",
                                      "-o", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and "nope.musicxml" in result.stderr
    assert (tmp_path / "o" / "duet.svg").exists()


def test_several_scores_refuse_what_belongs_to_one(tmp_path: Path, duet: Path) -> None:
    copy = tmp_path / "b.musicxml"
    shutil.copy(duet, copy)
    cases = {
        "no --to": ["render", str(duet), str(copy), "-o", str(tmp_path / "o")],
        "-o -": ["render", str(duet), str(copy), "--to", "svg", "-o", "-"],
        "a report of one": ["render", str(duet), str(copy), "--to", "svg", "-o", str(tmp_path / "o"),
                            "--check-report", str(FIXTURES / "render" / "duet.check.json")],
        "same name": ["render", str(duet), str(FIXTURES / "render" / "duet.musicxml"), "--to", "svg",
                      "-o", str(tmp_path / "o")],
    }
    for case, args in cases.items():
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, (case, result.output)
        assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), (case, result.stderr)
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


def test_a_score_with_violations_is_written_not_passed(tmp_path: Path, duet: Path) -> None:
    """The summary says what happened to each score (written), never a verdict it did not give
    (outside tester: "2 passed" for scores whose pages show violations)."""
    copy = tmp_path / "b.musicxml"
    shutil.copy(duet, copy)
    result = CliRunner().invoke(cli, ["render", str(duet), str(copy), "--to", "svg", "-o", str(tmp_path / "o"),
                                      "--row", "0 1 2 3 4 5 6 7 8 9 10 11"])
    assert result.exit_code == 0, result.output
    assert "violation" in result.stdout  # the pages mark violations...
    summary = result.stdout.strip().splitlines()[-1]
    assert summary == "2 scores: 2 written, 0 unreadable"  # ...and the summary gives no verdict
