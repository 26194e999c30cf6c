"""CLI: placeholder, replaced by the real command module."""

from __future__ import annotations

from typing import Any


def register(cli: Any) -> None:
    """Add the commands of this module to the CLI."""
