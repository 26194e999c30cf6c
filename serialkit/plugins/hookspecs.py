"""Hook specifications: every extension point takes a ``register`` callback."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("serialkit")
hookimpl = pluggy.HookimplMarker("serialkit")

Register = Callable[..., None]


@hookspec
def register_proposers(register: Register) -> None:
    """Register proposers: ``register(name, factory, **meta)``; factory(**options) -> Proposer."""


@hookspec
def register_readers(register: Register) -> None:
    """Register score readers: ``register(name, read_fn, extensions=(...), sniff=fn)``."""


@hookspec
def register_writers(register: Register) -> None:
    """Register score writers: ``register(name, write_fn, extensions=(...))``."""


@hookspec
def register_predicates(register: Register) -> None:
    """Register predicates: ``register(code, check_fn, strict_only=False)``."""


@hookspec
def register_repair_rungs(register: Register) -> None:
    """Register repair rungs: ``register(name, rung_fn, rank=int)``; the ladder sorts by rank."""


@hookspec
def register_commands(cli: Any) -> None:
    """Add click commands or groups to the ``serialkit`` CLI group."""
