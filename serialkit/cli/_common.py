"""Helpers shared by CLI commands: JSON output and exit codes."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_BAD_INPUT = 2


def echo_json(data: Any) -> None:
    """Print JSON to stdout (sorted keys off, 2-space indent, UTF-8)."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def is_tty() -> bool:
    """True when stderr is a terminal (progress bars only then)."""
    return sys.stderr.isatty()
