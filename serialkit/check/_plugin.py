"""The built-in predicates, registered through the same hook as outside plugins."""

from __future__ import annotations

from collections.abc import Callable

from serialkit.core.piece import Piece
from serialkit.core.predicates import (
    PREDICATE_STRICT_ONLY,
    UNTAGGED_CODES,
    Rules,
    Violation,
    check_collisions,
    check_crossings,
    check_order,
    check_pc,
    check_range,
    check_row,
    check_schedule,
)
from serialkit.plugins.hookspecs import Register, hookimpl

__all__ = ["BUILTIN_PREDICATES", "register_predicates"]

Predicate = Callable[[Piece, Rules], list[Violation]]

BUILTIN_PREDICATES: dict[str, Predicate] = {
    "ROW": lambda piece, rules: check_row(piece),
    "ORDER": lambda piece, rules: check_order(piece, rules),
    "COLL": lambda piece, rules: check_collisions(piece, rules.tolerance),
    "PC": lambda piece, rules: check_pc(piece),
    "RANGE": lambda piece, rules: check_range(piece),
    "CROSS": lambda piece, rules: check_crossings(piece, rules.max_crossing_share),
    "SCHED": lambda piece, rules: check_schedule(piece),
}
"""The seven hard predicates as ``fn(piece, rules) -> list[Violation]`` (what the hook registers)."""


@hookimpl
def register_predicates(register: Register) -> None:
    """Register the built-in predicates (plugins register theirs through the same hook)."""
    for code, fn in BUILTIN_PREDICATES.items():
        register(code, fn, strict_only=code in PREDICATE_STRICT_ONLY, needs_tags=code not in UNTAGGED_CODES)
