"""Print (or with --write, put into docs/cli.md) the tables of every command's options.

Usage: python scripts/cli_table.py [--write]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from serialkit.cli import cli
from serialkit.cli._doc import readme_block, update_readme

README = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help="replace the block in docs/cli.md")
    args = parser.parse_args()
    if args.write:
        README.write_text(update_readme(README.read_text(encoding="utf-8"), cli), encoding="utf-8")
    else:
        print(readme_block(cli))


if __name__ == "__main__":
    main()
