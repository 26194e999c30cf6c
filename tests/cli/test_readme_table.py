"""The README's option tables are generated from the commands, so they cannot drift from them."""

from __future__ import annotations

from pathlib import Path

from serialkit.cli import cli
from serialkit.cli._doc import BEGIN, END, readme_block

README = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_readme_option_tables_match_the_commands() -> None:
    text = README.read_text(encoding="utf-8")
    current = text[text.index(BEGIN): text.index(END) + len(END)]
    assert current == readme_block(cli), "docs/cli.md option tables are stale: run python scripts/cli_table.py --write"


def test_every_shared_option_has_one_written_meaning() -> None:
    block = readme_block(cli)
    shared = block.split("one name, one meaning")[1]
    for line in shared.splitlines()[3:]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            assert cells[1], line  # a meaning is written for every shared option
