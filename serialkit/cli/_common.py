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


def parse_options(items: tuple[str, ...] | list[str], flag: str = "--option") -> dict[str, Any]:
    """``KEY=VALUE`` proposer options (the value read as JSON when it is JSON, else a string)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint=flag)
        try:
            out[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            out[key.strip()] = raw
    return out
