"""Print (or with --write, write docs/reference/cli.md) the CLI reference generated from the click commands.

Usage: python scripts/cli_reference.py [--write]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from serialkit.cli import cli
from serialkit.cli._doc import cli_reference

PAGE = Path(__file__).resolve().parent.parent / "docs" / "reference" / "cli.md"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help="write docs/reference/cli.md")
    args = parser.parse_args()
    if args.write:
        PAGE.parent.mkdir(parents=True, exist_ok=True)
        PAGE.write_text(cli_reference(cli), encoding="utf-8")
    else:
        print(cli_reference(cli), end="")


if __name__ == "__main__":
    main()
