"""The docs site: the CLI reference page is generated from the click commands (a stale page fails),
and every page the navigation names exists."""

from __future__ import annotations

import re
from pathlib import Path

from serialkit.cli import cli
from serialkit.cli._doc import cli_reference

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def test_cli_reference_page_is_current() -> None:
    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    assert page == cli_reference(cli), "docs/reference/cli.md is stale: run python scripts/cli_reference.py --write"


def test_cli_reference_names_every_command() -> None:
    page = cli_reference(cli)
    for name in cli.commands:
        assert f"## `serialkit {name}`" in page


def test_navigation_pages_exist() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = re.findall(r":\s+(\S+\.md)\s*$", nav, flags=re.M)
    assert len(pages) >= 15
    missing = [p for p in pages if not (DOCS / p).is_file()]
    assert not missing, missing


def test_readme_stays_a_front_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    assert "import serialkit" in readme and "docs/" in readme
