"""``-o -`` where a command writes a directory (a run, a packet, a folder of reports) is a usage
error in one line, exit 2, and nothing is made: standard output cannot hold a directory, and a
folder literally named ``-`` is never what was meant (outside tester 0405, defect 5)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from serialkit.cli import cli
from tests.conftest import FIXTURES

CASES = {  # command line before "-o -" → what standard output cannot hold
    "generate": (["generate", "duo-berg"], "a run directory"),
    "eval run": (["eval", "run", "builtin", "--tasks", "canon-01", "--variant", "raw", "--runs", "1"],
                 "a run directory"),
    "panel build": (["panel", "build", "."], "a packet directory"),
    "check": (["check", str(FIXTURES / "classroom" / "ben.musicxml")], "a directory of reports"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_dash_as_a_directory_is_refused_in_one_line(case: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    args, holds = CASES[case]
    result = CliRunner().invoke(cli, [*args, "-o", "-"])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: -o -: standard output cannot hold {holds}")
    assert list(tmp_path.iterdir()) == []  # no folder named "-", nothing else either
