"""Hard predicates → Violation records, and the release gate (strict / relaxed).

Codes: ROW, ORDER, COLL, PC, RANGE, CROSS, SCHED (DESIGN §4); and, for a candidate bound to a
task's time limits, SPAN, GRID, DUR and MONO (:func:`check_time`). Every ``check_*`` takes a
:class:`~serialkit.core.piece.Piece` (or a prepared :class:`Columns` view) and returns a list of
:class:`Violation`; :func:`gate` runs them all over one shared view and returns a :class:`Verdict`
with ``strict`` and ``relaxed`` answers.
"""

from __future__ import annotations

from serialkit.core.predicates.collisions import (
    check_collisions,
    collision_pairs,
    naive_collision_pairs,
)
from serialkit.core.predicates.columns import Columns
from serialkit.core.predicates.gate import gate, run_predicates
from serialkit.core.predicates.model import (
    CODES,
    STRICT_ONLY,
    UNTAGGED_CODES,
    Rules,
    Verdict,
    Violation,
)
from serialkit.core.predicates.tags import (
    StatementScan,
    TaggedStatement,
    check_order,
    check_pc,
    check_row,
    check_schedule,
    order_and_row,
    scan_statements,
    tagged_statements,
)
from serialkit.core.predicates.time import TIME_CODES, Limits, check_time, note_faults
from serialkit.core.predicates.voices import (
    check_crossings,
    check_range,
    crossed_noteheads,
    crossing_share,
)
from serialkit.core.timeline import Locator

__all__ = [
    "CODES",
    "STRICT_ONLY",
    "TIME_CODES",
    "UNTAGGED_CODES",
    "Columns",
    "Limits",
    "Locator",
    "Rules",
    "StatementScan",
    "TaggedStatement",
    "Verdict",
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
    "crossed_noteheads",
    "crossing_share",
    "gate",
    "naive_collision_pairs",
    "note_faults",
    "order_and_row",
    "run_predicates",
    "scan_statements",
    "tagged_statements",
]
