"""Every hard predicate over one columnar view, and the predicate verdict (strict and relaxed together)."""

from __future__ import annotations

from collections.abc import Iterable

from serialkit.core.errors import PieceError
from serialkit.core.piece import Piece
from serialkit.core.predicates.collisions import check_collisions
from serialkit.core.predicates.columns import Columns
from serialkit.core.predicates.records import PREDICATE_CODES, PredicateVerdict, Rules, Violation
from serialkit.core.predicates.schedule import check_schedule
from serialkit.core.predicates.statements import scan_statements
from serialkit.core.predicates.tags import check_order, check_pc, check_row, order_and_row
from serialkit.core.predicates.voices import check_crossings, check_range
from serialkit.core.quiet import quiet_gc
from serialkit.core.rows import Row


def run_predicates(
    piece: Piece | Columns,
    rules: Rules = Rules(),
    codes: Iterable[str] = PREDICATE_CODES,
    row: Row | None = None,
) -> list[Violation]:
    """The violations of the chosen predicates, in PREDICATE_CODES order, over one shared columnar view."""
    wanted = list(codes)
    unknown = sorted(set(wanted) - set(PREDICATE_CODES))
    if unknown:
        raise PieceError(f"unknown predicate code(s) {', '.join(unknown)} (known: {', '.join(PREDICATE_CODES)})")
    cols = piece if isinstance(piece, Columns) else Columns(piece)
    the_row = row if row is not None else cols.piece.row
    # one pass groups the statements for ORDER and SCHED, judging them for both on the way
    statements = clean = homes = None
    if "ORDER" in wanted or "SCHED" in wanted:
        statements, clean, homes = scan_statements(cols, the_row if "ORDER" in wanted else None)
    fused: list[Violation] | None = None  # ROW checked inside the ORDER pass
    out: list[Violation] = []
    for code in PREDICATE_CODES:
        if code not in wanted:
            continue
        if code == "ROW":
            if "ORDER" in wanted and the_row is not None:
                fused, row_found = order_and_row(cols, rules, statements, the_row, clean)
                out += row_found
            else:
                out += check_row(cols, row)
        elif code == "ORDER":
            if fused is None and the_row is not None:
                fused = order_and_row(cols, rules, statements, the_row, clean)[0]
            out += fused if fused is not None else check_order(cols, rules, statements)
        elif code == "COLL":
            out += check_collisions(cols, rules.tolerance)
        elif code == "PC":
            out += check_pc(cols, row)
        elif code == "RANGE":
            out += check_range(cols)
        elif code == "CROSS":
            out += check_crossings(cols, rules.max_crossing_share)
        else:
            out += check_schedule(cols, statements, row, homes)
    return out


def judge_predicates(
    piece: Piece,
    rules: Rules = Rules(),
    codes: Iterable[str] = PREDICATE_CODES,
    row: Row | None = None,
) -> PredicateVerdict:
    """Run the predicates and return the strict and relaxed verdicts together."""
    asked = set(codes)
    unknown = sorted(asked - set(PREDICATE_CODES))
    if unknown:
        raise PieceError(f"unknown predicate code(s) {', '.join(unknown)} (known: {', '.join(PREDICATE_CODES)})")
    wanted = tuple(c for c in PREDICATE_CODES if c in asked)
    with quiet_gc():
        cols = Columns(piece)
    notes: list[str] = []
    the_row = row if row is not None else piece.row
    tagged = cols.untagged < cols.n
    if tagged and the_row is None and "ROW" in wanted:
        notes.append("ROW not checked: the piece has tags but no row")
    if not tagged and any(c in wanted for c in ("ROW", "ORDER", "SCHED")):
        notes.append("no event carries a row-form tag: ROW, ORDER and SCHED had nothing to check")
    if "SCHED" in wanted and piece.blueprint is None and tagged:
        notes.append("SCHED had nothing to check: the piece has no blueprint")
    with quiet_gc():
        found = run_predicates(cols, rules, wanted, row)
    return PredicateVerdict(tuple(found), wanted, tuple(notes))
