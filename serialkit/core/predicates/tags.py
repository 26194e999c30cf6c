"""Predicates on row-form tags: ROW, PC and ORDER."""

from __future__ import annotations

from serialkit.core.piece import Piece
from serialkit.core.predicates.columns import Columns, columns_of
from serialkit.core.predicates.records import Rules, Violation
from serialkit.core.predicates.statements import FormTable, TaggedStatement, scan_statements
from serialkit.core.rows import Row, pc_name


def _row_of(piece: Piece, row: Row | None) -> Row | None:
    return row if row is not None else piece.row


def check_row(piece: Piece | Columns, row: Row | None = None) -> list[Violation]:
    """ROW: each tagged event's pitch class is its form's pitch class at its order position."""
    cols = columns_of(piece)
    the_row = _row_of(cols.piece, row)
    if the_row is None:
        return []
    table = FormTable(the_row, cols.piece.convention)
    midi = cols.midi
    by_type = table.by_type
    bad = []
    for i, tag in enumerate(cols.tags):
        if tag is None:
            continue
        form = tag.form
        if by_type[form.type][form.n][tag.position] != midi[i] % 12:
            bad.append(i)
    return row_violations(cols, table, bad)


def row_violations(cols: Columns, table: FormTable, bad: list[int]) -> list[Violation]:
    """ROW violations for the events at these indices (in index order)."""
    out = []
    for i in sorted(bad):
        tag = cols.tags[i]
        assert tag is not None
        want = table.pcs(tag.form)[tag.position]
        out.append(
            Violation(
                "ROW",
                (cols.events[i].id,),
                f"{pc_name(cols.midi[i])} is tagged {tag.label}, where the row has {pc_name(want)}",
                cols.where(i),
            )
        )
    return out


def check_pc(piece: Piece | Columns, row: Row | None = None) -> list[Violation]:
    """PC: a claimed pitch class equals MIDI mod 12 and agrees with the event's own tag."""
    cols = columns_of(piece)
    if not cols.claims:
        return []
    the_row = _row_of(cols.piece, row)
    table = None if the_row is None else FormTable(the_row, cols.piece.convention)
    out: list[Violation] = []
    for i, event in enumerate(cols.events):
        claimed = event.claimed_pc
        if claimed is None:
            continue
        if claimed != event.midi % 12:
            out.append(
                Violation(
                    "PC",
                    (event.id,),
                    f"claims pitch class {claimed} but MIDI {event.midi} is {event.midi % 12}",
                    cols.where(i),
                )
            )
        elif table is not None and event.tag is not None:
            want = table.pcs(event.tag.form)[event.tag.position]
            if claimed != want:
                out.append(
                    Violation(
                        "PC",
                        (event.id,),
                        f"claims pitch class {claimed} at {event.tag.label}, which holds {want}",
                        cols.where(i),
                    )
                )
    return out


def check_order(
    piece: Piece | Columns,
    rules: Rules = Rules(),
    statements: list[TaggedStatement] | None = None,
) -> list[Violation]:
    """ORDER: within a statement positions advance and no pitch class recurs before it completes.

    Every event of a statement carries the statement's form. Gaps (skipped positions) are not
    ORDER violations. The only returns allowed are those the
    rules declare: re-striking the same note at once (``immediate_repeats``), and alternating
    between the two highest positions reached so far for at most ``oscillation_window`` extra
    notes (positions 3 4 3 4 are two extra notes).
    """
    return order_and_row(columns_of(piece), rules, statements)[0]


def order_and_row(
    cols: Columns,
    rules: Rules,
    statements: list[TaggedStatement] | None = None,
    row: Row | None = None,
    clean: list[bool] | None = None,
) -> tuple[list[Violation], list[Violation]]:
    """ORDER violations and, in the same pass when a row is given, ROW violations.

    Each statement is walked note by note, except those ``clean`` marks: the scan's judgement
    of these statements against this row (:attr:`StatementScan.clean`; the scan that groups the
    statements when none are given). A clean statement breaks neither rule: its events carry its
    form at strictly rising positions with the form's pitch classes, which then all differ.
    """
    if statements is None:
        statements, clean, _ = scan_statements(cols, row)
    table = None if row is None else FormTable(row, cols.piece.convention)
    row_bad: list[int] = []
    out: list[Violation] = []
    before: dict[int, int] = {}  # event -> the previous event of its voice (built when first needed)
    for k, stmt in enumerate(statements):
        if clean is not None and table is not None and clean[k]:
            continue
        _walk(cols, rules, stmt, table, out, row_bad, before)
    return out, ([] if table is None else row_violations(cols, table, row_bad))


def _shared_start(cols: Columns, stmt: TaggedStatement, before: dict[int, int]) -> int:
    """The position before a statement's first note that the note just before it in its voice
    sounds, tagged with another statement (a note both end and begin, tagged once: an elision),
    when the statement returns to that position later with that pitch class (a tremolo on its
    first pair); else -1. The statement has then heard that position before its first note."""
    first = stmt.indices[0]
    tag = cols.tags[first]
    if tag is None or tag.position == 0:
        return -1
    want = tag.position - 1
    again = next((i for i in stmt.indices if (t := cols.tags[i]) is not None and t.position == want), None)
    if again is None:
        return -1
    if not before:
        for line in cols.by_voice:
            before.update(zip(line[1:], line[:-1], strict=True))
    prev = before.get(first)
    if prev is None or (other := cols.tags[prev]) is None or other.statement == tag.statement:
        return -1
    return want if cols.midi[prev] % 12 == cols.midi[again] % 12 else -1


def _walk(
    cols: Columns,
    rules: Rules,
    stmt: TaggedStatement,
    table: FormTable | None,
    out: list[Violation],
    row_bad: list[int],
    before: dict[int, int],
) -> None:
    """ORDER (into ``out``) and ROW (the indices into ``row_bad``) of one statement, note by note
    (from the position an elided note before it holds, ``_shared_start``)."""
    tags, midi = cols.tags, cols.midi
    window, repeats = rules.oscillation_window, rules.immediate_repeats
    octaves = repeats and rules.octave_repeats
    form = stmt.form
    form_pcs = table.pcs(form) if table is not None else ()
    shared = _shared_start(cols, stmt, before) if stmt.indices else -1
    top = shared
    heard = 1 << shared if shared >= 0 else 0  # bit set of order positions heard
    pcs = 0  # bit set of pitch classes heard
    prev_pos, prev_midi, extra = -1, -1, 0
    for i in stmt.indices:
        tag = tags[i]
        assert tag is not None
        q = tag.position
        m = midi[i]
        c = m % 12
        bit = 1 << c
        problem = None
        if table is not None:
            if tag.form is form:
                if form_pcs[q] != c:
                    row_bad.append(i)
            elif table.pcs(tag.form)[q] != c:
                row_bad.append(i)
        if tag.form is not form and tag.form != form:
            out.append(
                Violation(
                    "ORDER",
                    (cols.events[i].id,),
                    f"statement {stmt.key}: {tag.label} is tagged {tag.form.label} in a statement "
                    f"of {form.label}",
                    cols.where(i),
                )
            )
            continue
        if q > top:
            if pcs & bit:
                problem = f"{pc_name(m)} ({tag.label}) recurs before the statement completes"
            top, extra = q, 0
        elif q == prev_pos and (m == prev_midi or (octaves and c == prev_midi % 12)):
            if not repeats:
                problem = f"{tag.label} is struck again at once (repeats are not allowed)"
        elif (
            window
            and top >= 1
            and q >= top - 1
            and prev_pos >= top - 1
            and q != prev_pos
            and heard >> (top - 1) & 3 == 3
        ):
            extra += 1
            if extra > window:
                problem = (
                    f"{tag.label}: oscillation between positions {top - 1} and {top} "
                    f"exceeds the window of {window}"
                )
        elif heard >> q & 1:
            problem = f"{pc_name(m)} ({tag.label}) recurs before the statement completes"
        else:
            problem = f"{tag.label} comes after position {top}: positions must advance"
        if problem is not None:
            out.append(Violation("ORDER", (cols.events[i].id,), f"statement {stmt.key}: {problem}", cols.where(i)))
        heard |= 1 << q
        pcs |= bit
        prev_pos, prev_midi = q, m
