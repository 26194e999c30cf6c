"""The README's worked examples and figures are what the program prints (outside tester, round 1900,
#16: the README gave the Op. 21 runner-up as 76.6 % where the program says 78.1 %, and catalogued
Webern's Symphony, Op. 21 as a "Chamber Symphony")."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from serialkit.cli import cli
from serialkit.core import catalog

ROOT = Path(__file__).resolve().parents[1]
README = "\n".join(p.read_text(encoding="utf-8")
                   for p in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))])
"""The README and the docs pages, where the worked examples live."""


def _readme_block_after(command: str) -> list[str]:
    """The README's lines printed under ``$ serialkit COMMAND`` (up to the next ``$`` or fence)."""
    lines = README.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"$ serialkit {command}"))
    out = []
    for line in lines[start + 1:]:
        if line.startswith(("$", "```")):
            break
        out.append(line)
    return out


def test_op21_is_webern_s_symphony() -> None:
    entry = catalog.get("webern-op21")
    assert (entry.composer, entry.work, entry.opus) == ("Webern", "Symphony", "Op. 21")
    assert "Chamber Symphony" not in README


@pytest.mark.parametrize("command", ["row show webern-op21", 'row identify "F G# G F# A# A D# E C C# D B"'])
def test_readme_row_examples_are_the_program_s_output(command: str) -> None:
    args = [a.strip('"') for a in re.findall(r'"[^"]*"|\S+', command)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.stderr
    printed = result.stdout.splitlines()
    shown = [line for line in _readme_block_after(command) if line.strip() and line.strip() != "..."]
    assert shown and all(line in printed for line in shown), (shown, printed)


@pytest.mark.corpus
@pytest.mark.xdist_group("op21-identify")  # cli_once: check <score> --identify --json, shared
def test_readme_identification_figures_are_the_program_s(corpus: Path, cli_once: Callable[..., Any]) -> None:
    text = " ".join(README.split())
    op21 = re.search(r"Op\. 21/I → `webern-op21` \(([\d.]+) % of notes explained; runner-up `([\w-]+)`, ([\d.]+) %\)",
                     text)
    op27 = re.search(r"Op\. 27/II → `webern-op27` \(([\d.]+) %; runner-up ([\d.]+) %\)", text)
    assert op21 and op27, "the README's identification figures moved: update this test"
    figures = {}
    for name in ("webern-op21-i-mm1-25", "webern-op27-ii-mm1-11"):
        result = cli_once("check", str(corpus / f"{name}.mei"), "--identify", "--json")
        figures[name] = json.loads(result.stdout)["identification"]
    ident = figures["webern-op21-i-mm1-25"]
    assert (f"{100 * ident['coverage']:.1f}", ident["runner_up"]["name"],
            f"{100 * ident['runner_up']['coverage']:.1f}") == op21.groups()
    ident = figures["webern-op27-ii-mm1-11"]
    assert (f"{100 * ident['coverage']:.0f}", f"{100 * ident['runner_up']['coverage']:.1f}") == op27.groups()
