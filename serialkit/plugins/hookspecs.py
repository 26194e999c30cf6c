"""Hook specifications: every extension point takes a ``register`` callback.

A plugin module implements any subset of these with ``@hookimpl``; each call of
``register(name, obj, **meta)`` adds one entry to the registry of that kind. Built-in
features are registered through exactly the same hooks (see ``BUILTIN_MODULES``).
``obj`` may also be a ``"module:attribute"`` string, imported only when first used, so a
plugin module stays cheap to import (``serialkit --help`` imports every plugin module).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("serialkit")
hookimpl = pluggy.HookimplMarker("serialkit")

Register = Callable[..., None]


@hookspec
def register_proposers(register: Register) -> None:
    """Register proposers: ``register(name, factory, description=...)``.

    ``factory(**options)`` returns a proposer (see the harness's ``Proposer`` protocol);
    ``serialkit generate --proposer NAME`` picks it by name.
    """


@hookspec
def register_readers(register: Register) -> None:
    """Register score readers: ``register(name, read_fn, extensions=(".xml", ...))``.

    ``read_fn(path) -> Piece``; ``extensions`` are lower-case suffixes with the dot.
    An optional ``sniff=fn(head: bytes) -> bool`` recognises files by content.
    """


@hookspec
def register_writers(register: Register) -> None:
    """Register score writers: ``register(name, write_fn, extensions=(".mei", ...))``.

    ``write_fn(piece_or_source, out_path)`` writes through ``serialkit.io.files.atomic``.
    """


@hookspec
def register_predicates(register: Register) -> None:
    """Register predicates: ``register(code, check_fn, strict_only=False)``.

    ``check_fn(piece, rules) -> list[Violation]``; ``code`` is upper case (``ROW``, ``COLL``);
    ``strict_only=True`` marks a predicate the relaxed gate skips (``SCHED``).
    """


@hookspec
def register_repair_rungs(register: Register) -> None:
    """Register repair rungs: ``register(name, rung_fn, rank=int, scope="note", ladders="serialkit")``.

    The ladder runs rungs by ascending ``rank`` (``serialkit.plugins.ordered``), never in
    hook order; a missing or duplicate rank is an error naming both plugins. ``scope`` is
    ``note`` (``rung_fn(candidate, problems, ctx)``), ``batch`` (``rung_fn(pending, ctx)``, once
    per section call) or ``holes`` (``rung_fn(slots, ctx)``, after the attempts); see
    ``serialkit.harness.ladder.RungSpec``.
    """


@hookspec
def register_commands(cli: Any, register: Register) -> None:
    """Add CLI commands: ``register(name, click_command)`` or ``cli.add_command(command)``.

    An implementation may take either argument (or both); a name already taken is an error.
    """
