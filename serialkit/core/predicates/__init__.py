"""Hard predicates → Violation records, and the predicate verdict (strict / relaxed).

Codes: ROW, ORDER, COLL, PC, RANGE, CROSS, SCHED; and, for a candidate bound to a
task's time limits, SPAN, GRID, DUR and MONO (:func:`check_time`). Every ``check_*`` takes a
:class:`~serialkit.core.piece.Piece` (or a prepared :class:`Columns` view) and returns a list of
:class:`Violation`; :func:`judge_predicates` runs them all over one shared view and returns a
:class:`PredicateVerdict` with ``strict`` and ``relaxed`` answers. The gate a candidate passes
(``serialkit.check.gate``) builds on these.
"""

from __future__ import annotations

from serialkit.core.predicates.collisions import (
    check_collisions,
    collision_pairs,
    naive_collision_pairs,
)
from serialkit.core.predicates.columns import Columns
from serialkit.core.predicates.judge import judge_predicates, run_predicates
from serialkit.core.predicates.records import (
    PREDICATE_CODES,
    PREDICATE_STRICT_ONLY,
    UNTAGGED_CODES,
    PredicateVerdict,
    Rules,
    Violation,
)
from serialkit.core.predicates.schedule import check_schedule
from serialkit.core.predicates.statements import (
    StatementScan,
    TaggedStatement,
    scan_statements,
    tagged_statements,
)
from serialkit.core.predicates.tags import check_order, check_pc, check_row, order_and_row
from serialkit.core.predicates.time import TIME_CODES, Limits, check_time, note_faults
from serialkit.core.predicates.voices import (
    check_crossings,
    check_range,
    crossed_notes,
    crossing_share,
)
from serialkit.core.timeline import Locator

__all__ = [
    "PREDICATE_CODES",
    "PREDICATE_STRICT_ONLY",
    "TIME_CODES",
    "UNTAGGED_CODES",
    "Columns",
    "Limits",
    "Locator",
    "Rules",
    "StatementScan",
    "TaggedStatement",
    "PredicateVerdict",
    "Violation",
    "check_collisions",
    "check_crossings",
    "check_order",
    "check_pc",
    "check_range",
    "check_row",
    "check_schedule",
    "check_time",
    "collision_pairs",
    "crossed_notes",
    "crossing_share",
    "judge_predicates",
    "naive_collision_pairs",
    "note_faults",
    "order_and_row",
    "run_predicates",
    "scan_statements",
    "tagged_statements",
]
