"""``--to`` means one thing in every command: the output format when the -o name does not say it.
An -o name whose extension names another format than --to is refused (exit 2, one line, nothing
written) — it once wrote MEI into a .musicxml file (convert), a PNG into a .svg (render), and was
ignored by annotate (outside tester)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from serialkit.cli import cli

ANNA = Path(__file__).resolve().parents[2] / "fixtures" / "classroom" / "anna.musicxml"


@pytest.mark.parametrize(("command", "name", "to"), [
    ("convert", "out.musicxml", "mei"), ("convert", "out.mid", "json"),
    ("render", "out.svg", "png"), ("annotate", "out.musicxml", "mei"), ("annotate", "out.mei", "mxl"),
])
def test_to_naming_another_format_than_the_output_name_is_refused(tmp_path: Path, command: str, name: str,
                                                                  to: str) -> None:
    result = CliRunner().invoke(cli, [command, str(ANNA), "-o", str(tmp_path / name), "--to", to])
    assert result.exit_code == 2, result.output
    (line,) = [x for x in result.stderr.splitlines() if x.strip()]
    assert f"names {Path(name).suffix.lstrip('.').replace('mid', 'midi')}" in line and f"--to says {to}" in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("command", "name", "to"), [("convert", "out.mei", "mei"), ("annotate", "out.mxl", "mxl")])
def test_to_agreeing_with_the_output_name_writes_it(tmp_path: Path, command: str, name: str, to: str) -> None:
    result = CliRunner().invoke(cli, [command, str(ANNA), "-o", str(tmp_path / name), "--to", to])
    assert result.exit_code == 0, result.output
    assert (tmp_path / name).stat().st_size > 0
