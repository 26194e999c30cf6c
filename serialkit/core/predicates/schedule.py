"""SCHED: each statement's form is the one the blueprint schedules for its section and voice."""

from __future__ import annotations

from bisect import bisect_right

from serialkit.core.piece import Piece
from serialkit.core.predicates.columns import Columns, columns_of
from serialkit.core.predicates.records import Violation
from serialkit.core.predicates.statements import TaggedStatement, scan_statements
from serialkit.core.rows import Row, RowForm


def check_schedule(
    piece: Piece | Columns,
    statements: list[TaggedStatement] | None = None,
    row: Row | None = None,
    homes: list[tuple[int, str | None]] | None = None,
) -> list[Violation]:
    """SCHED: each event's form is the form the blueprint schedules for its section and voice
    at that point in the voice's sequence of statements (aliases of a symmetric row agree).

    With ``homes`` (:attr:`StatementScan.homes` of these statements, in the order they start) a
    piece that keeps its schedule is confirmed statement by statement; otherwise, and to report
    what breaks it, event by event."""
    cols = columns_of(piece)
    p = cols.piece
    if p.blueprint is None:
        return []
    if statements is None:
        statements, _, homes = scan_statements(cols)
    stmts = statements
    the_row = row if row is not None else p.row
    if homes is not None and _keeps_schedule(p, stmts, homes, the_row):
        return []
    sid = [-1] * cols.n  # the statement of each event (-1: in none)
    for k, stmt in enumerate(stmts):
        for i in stmt.indices:
            sid[i] = k
    sections = sorted(p.sections, key=lambda s: s.start)
    in_ticks = all(cols.scale % s.start.denominator == 0 for s in sections) and all(
        cols.scale % s.end.denominator == 0 for s in sections
    )
    starts = [cols.ticks(s.start) for s in sections] if in_ticks else []
    ends = [cols.ticks(s.end) for s in sections] if in_ticks else []
    seen: dict[tuple[str | None, int], dict[int, int]] = {}
    plan: dict[tuple[str | None, int], tuple[RowForm, ...]] = {}
    out: list[Violation] = []
    voice_ids = p.voice_ids
    n_voices = len(voice_ids)
    # The (section, statement) each voice was last in, and what the blueprint wants there.
    last_sec: list[str | None] = [None] * n_voices
    last_sid = [-2] * n_voices
    last_nth = [0] * n_voices
    last_want: list[RowForm | None] = [None] * n_voices
    sec_col = cols.sections
    tags, voice = cols.tags, cols.voice
    for i in cols.order:
        k = sid[i]
        v = voice[i]
        section = sec_col[i]
        if section is None and sections:  # an event without one is where its onset falls
            if in_ticks:
                b = bisect_right(starts, cols.start[i]) - 1
                section = sections[b].id if b >= 0 and cols.start[i] < ends[b] else None
            else:
                section = p.section_of(cols.events[i].onset)
        if k == last_sid[v] and section == last_sec[v]:
            want = last_want[v]
            if tags[i].form is want:  # type: ignore[union-attr]  # the usual case: the form the blueprint wants here
                continue
        elif k < 0:
            continue
        else:
            order = seen.setdefault((section, v), {})
            nth = order.setdefault(k, len(order))
            scheduled = plan.get((section, v))
            if scheduled is None:
                scheduled = plan[(section, v)] = p.blueprint.forms_for(section, voice_ids[v])
            last_sec[v], last_sid[v], last_nth[v] = section, k, nth
            want = last_want[v] = scheduled[nth] if nth < len(scheduled) else None
        tag = tags[i]
        assert tag is not None
        if want is None:
            nth = last_nth[v]
            scheduled = plan[(section, v)]
            why = (
                f"the blueprint schedules nothing for voice {voice_ids[v]} in section {section}"
                if not scheduled
                else f"statement {nth + 1} in voice {voice_ids[v]}, section {section}, "
                f"is beyond the {len(scheduled)} scheduled"
            )
            out.append(Violation("SCHED", (cols.events[i].id,), f"{tag.label}: {why}", cols.where(i)))
        elif tag.form is not want and tag.form != want and not _aliases(
            the_row, p.convention, tag.form, want
        ):
            out.append(
                Violation(
                    "SCHED",
                    (cols.events[i].id,),
                    f"{tag.label}: the blueprint schedules {want.label} for statement "
                    f"{last_nth[v] + 1} of voice {voice_ids[v]} in section {section}",
                    cols.where(i),
                )
            )
    return out


def _keeps_schedule(
    p: Piece, stmts: list[TaggedStatement], homes: list[tuple[int, str | None]], row: Row | None
) -> bool:
    """True when each statement, lying wholly in its home voice and section, carries the form
    scheduled for it there: the n-th statement to start in a voice and section the n-th form."""
    if p.sections and any(section is None for _, section in homes):
        return False  # such events belong where their onsets fall: judged event by event
    assert p.blueprint is not None
    voice_ids = p.voice_ids
    started: dict[tuple[int, str | None], int] = {}
    plan: dict[tuple[int, str | None], tuple[RowForm, ...]] = {}
    for stmt, home in zip(stmts, homes, strict=True):
        nth = started.get(home, 0)
        started[home] = nth + 1
        scheduled = plan.get(home)
        if scheduled is None:
            scheduled = plan[home] = p.blueprint.forms_for(home[1], voice_ids[home[0]])
        if nth >= len(scheduled):
            return False
        want, form = scheduled[nth], stmt.form
        if form is not want and form != want and not _aliases(row, p.convention, form, want):
            return False
    return True


def _aliases(row: Row | None, convention: str, a: RowForm, b: RowForm) -> bool:
    if row is None:
        return False
    return row.form(a, convention) == row.form(b, convention)  # type: ignore[arg-type]
