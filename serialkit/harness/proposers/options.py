"""Proposer options as ``KEY=VALUE`` strings: the one way ``generate`` and ``eval`` take them.

``VALUE`` is read as JSON when it is JSON (``0.2``, ``true``, ``{"wrong_pc": 0.01}``) and as a
string otherwise; a dotted key sets one entry of a mapping (``rates.wrong_pc=0.01``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from serialkit.core.errors import ProposerError


def parse_option(item: str) -> tuple[list[str], Any]:
    """One ``KEY=VALUE`` (``KEY`` may be dotted) as (key path, value)."""
    key, sep, raw = item.partition("=")
    path = [part.strip() for part in key.split(".")]
    if not sep or not all(path):
        raise ProposerError(f"--option {item!r}: expected KEY=VALUE, e.g. temperature=0.2 or rates.wrong_pc=0.01")
    try:
        value: Any = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return path, value


def parse_options(items: Iterable[str]) -> dict[str, Any]:
    """Repeated ``--option KEY=VALUE`` items as one (nested, for dotted keys) mapping."""
    options: dict[str, Any] = {}
    for item in items:
        path, value = parse_option(item)
        here = options
        for part in path[:-1]:
            nxt = here.setdefault(part, {})
            if not isinstance(nxt, dict):
                raise ProposerError(f"--option {item!r}: {part!r} was already given a value, not a mapping")
            here = nxt
        here[path[-1]] = value
    return options


def proposer_options(options: dict[str, Any], *, model: str | None = None,
                     base_url: str | None = None) -> dict[str, Any]:
    """The options a proposer factory receives: ``options`` plus ``--model`` / ``--base-url``."""
    merged = dict(options)
    if model:
        merged.setdefault("model", model)
    if base_url:
        merged.setdefault("base_url", base_url)
    return merged
