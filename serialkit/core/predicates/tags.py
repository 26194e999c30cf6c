"""Predicates on row-form tags: ROW, PC, ORDER, SCHED, and how tags group into statements."""

from __future__ import annotations

from bisect import bisect_right
from functools import partial
from typing import NamedTuple

from serialkit.core.piece import Piece, Tag
from serialkit.core.predicates.columns import Columns, columns_of
from serialkit.core.predicates.records import Rules, Violation
from serialkit.core.rows import FORM_TYPES, Row, RowForm, pc_name


class TaggedStatement(NamedTuple):
    """A row statement as the tags declare it: key, form and event indices in heard order."""

    key: str
    form: RowForm
    indices: tuple[int, ...]


_new_statement = partial(tuple.__new__, TaggedStatement)
"""``TaggedStatement(key, form, indices)`` from one ``(key, form, indices)`` tuple, without the
Python-level constructor (grouping a large piece makes one per statement)."""


class _FormTable:
    """Pitch classes of a form, looked up by its type and index (no hashing of form objects)."""

    __slots__ = ("row", "convention", "by_type")

    def __init__(self, row: Row, convention: str) -> None:
        self.row = row
        self.convention = convention
        by_form = row.forms(convention)  # type: ignore[arg-type]
        self.by_type: dict[str, list[tuple[int, ...]]] = {
            t: [by_form[RowForm(t, n)] for n in range(12)] for t in FORM_TYPES
        }

    def pcs(self, form: RowForm) -> tuple[int, ...]:
        return self.by_type[form.type][form.n]


def _row_of(piece: Piece, row: Row | None) -> Row | None:
    return row if row is not None else piece.row


def check_row(piece: Piece | Columns, row: Row | None = None) -> list[Violation]:
    """ROW: each tagged event's pitch class is its form's pitch class at its order position."""
    cols = columns_of(piece)
    the_row = _row_of(cols.piece, row)
    if the_row is None:
        return []
    table = _FormTable(the_row, cols.piece.convention)
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


def row_violations(cols: Columns, table: _FormTable, bad: list[int]) -> list[Violation]:
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
    table = None if the_row is None else _FormTable(the_row, cols.piece.convention)
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


class StatementScan(NamedTuple):
    """Tagged statements and what the pass that grouped them learned (:func:`scan_statements`).

    ``clean`` (only when a row was given): per statement, True when every event carries the
    statement's own form object, at a strictly rising position, with that form's pitch class —
    the statement then breaks neither ORDER nor ROW. ``homes``: per statement its voice index and
    its events' own section id, given only when every statement lies in one voice and one section
    and all its events carry one form object.
    """

    statements: list[TaggedStatement]
    clean: list[bool] | None
    homes: list[tuple[int, str | None]] | None


class _Open:
    """A statement while the scan groups it."""

    __slots__ = ("key", "members", "put", "form", "pcs", "voice", "section", "top", "clean", "uniform")

    def __init__(self, key: str, form: RowForm, pcs: tuple[int, ...], voice: int, section: str | None) -> None:
        self.key, self.form, self.pcs, self.voice, self.section = key, form, pcs, voice, section
        self.members: list[int] = []
        self.put = self.members.append
        self.top = -1
        self.clean = self.uniform = True

    def odd(self, tag: Tag, section: str | None, pc: int, no_row: bool) -> None:
        """Note an event that is not simply the next one of a clean, uniform statement."""
        if tag.form is not self.form or section != self.section:
            self.uniform = False
        q = tag.position
        if q > self.top and tag.form is self.form and (no_row or self.pcs[q] == pc):
            self.top = q
        else:
            self.clean = False


def scan_statements(
    piece: Piece | Columns, row: Row | None = None, use_ids: bool = True
) -> StatementScan:
    """Tagged events grouped into statements (see :func:`tagged_statements`) in one pass in heard
    order, which on the way judges each statement ``clean`` against ``row`` and finds its home
    (:class:`StatementScan`)."""
    cols = columns_of(piece)
    by_type = _FormTable(row, cols.piece.convention).by_type if row is not None else None
    no_row = by_type is None
    tags, voice, midi, sections = cols.tags, cols.voice, cols.midi, cols.sections
    voice_ids = cols.piece.voice_ids
    # the statement each voice is in; at first one whose key equals no statement's
    nowhere = _Open(object(), RowForm("P", 0), (), -1, None)  # type: ignore[arg-type]
    current = [nowhere] * len(voice_ids)
    opened: dict[str, _Open] = {}
    run_key: dict[int, str] = {}
    run_last: dict[int, tuple[RowForm, int]] = {}
    runs = 0
    for i in cols.order:
        t = tags[i]
        if t is None:
            continue
        v = voice[i]
        key = t.statement if use_ids else None
        if key is None:  # an implicit statement: a run of one form in this voice
            last = run_last.get(v)
            q = t.position
            if (
                last is None
                or (last[0] is not t.form and last[0] != t.form)
                or (last[1] == 11 and q < 10)
                or (q == 0 and last[1] > 0)
            ):
                runs += 1
                run_key[v] = f"~{voice_ids[v]}.{runs}"
            key = run_key[v]
            run_last[v] = (t.form, q)
        st = current[v]
        if key != st.key:
            known = opened.get(key)
            if known is None:
                form = t.form
                pcs = () if by_type is None else by_type[form.type][form.n]
                st = opened[key] = _Open(key, form, pcs, v, sections[i])
            else:
                st = known
                if st.voice != v:
                    st.uniform = False
            current[v] = st
        st.put(i)
        q = t.position
        if q > st.top and t.form is st.form and sections[i] == st.section and (no_row or st.pcs[q] == midi[i] % 12):
            st.top = q
        else:
            st.odd(t, sections[i], midi[i] % 12, no_row)
    found = list(opened.values())
    statements = [_new_statement((st.key, st.form, tuple(st.members))) for st in found]
    clean = None if no_row else [st.clean for st in found]
    homes = [(st.voice, st.section) for st in found] if all(st.uniform for st in found) else None
    return StatementScan(statements, clean, homes)


def tagged_statements(piece: Piece | Columns, use_ids: bool = True) -> list[TaggedStatement]:
    """Tagged events grouped into statements, each in heard order (onset, then position), the
    statements in the order they start.

    An explicit ``tag.statement`` id groups its events (across voices). Events without one (or
    every event, when ``use_ids`` is False) form implicit statements per voice: a run of
    consecutive events of one form, which ends when the form changes, when position 0 follows a
    later position (a fresh start), or when, after position 11, any position but 11 or 10 (an
    immediate repeat or an oscillation) follows.
    """
    return scan_statements(piece, None, use_ids).statements


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
    table = None if row is None else _FormTable(row, cols.piece.convention)
    row_bad: list[int] = []
    out: list[Violation] = []
    for k, stmt in enumerate(statements):
        if clean is not None and table is not None and clean[k]:
            continue
        _walk(cols, rules, stmt, table, out, row_bad)
    return out, ([] if table is None else row_violations(cols, table, row_bad))


def _walk(
    cols: Columns,
    rules: Rules,
    stmt: TaggedStatement,
    table: _FormTable | None,
    out: list[Violation],
    row_bad: list[int],
) -> None:
    """ORDER (into ``out``) and ROW (the indices into ``row_bad``) of one statement, note by note."""
    tags, midi = cols.tags, cols.midi
    window, repeats = rules.oscillation_window, rules.immediate_repeats
    octaves = repeats and rules.octave_repeats
    form = stmt.form
    form_pcs = table.pcs(form) if table is not None else ()
    top = -1
    heard = 0  # bit set of order positions heard
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
    the_row = _row_of(p, row)
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


def contradicted_statement_ids(piece: Piece | Columns) -> str | None:
    """Where the statement ids a piece declares contradict its labels, as one clause naming the
    note; None when they agree (or no note declares one).

    Labels (form and order position) are the music's claim; an id only says which notes one
    statement holds. It contradicts the labels when one id holds two forms, when one voice's
    notes change id between two consecutive positions of one form (P0:3 then P0:4: the labels
    say one statement goes on), or when one id starts its form again in a voice after position 11
    (a second statement). Each of these would make ORDER, SCHED, EXTRA or COMPLETE judge how a
    file groups its ids instead of the notes.
    """
    cols = columns_of(piece)
    tags, voice, ids = cols.tags, cols.voice, cols.ids
    forms: dict[str, RowForm] = {}
    last: dict[int, int] = {}  # voice → index of its last note with a statement id
    for i in cols.order:
        tag = tags[i]
        if tag is None or tag.statement is None:
            continue
        key = tag.statement
        form = forms.setdefault(key, tag.form)
        if tag.form != form:
            return (f"note {ids[i]} ({tag.label}) has statement id {key!r}, which holds {form.label}: "
                    "a statement has one form")
        v = voice[i]
        j = last.get(v)
        last[v] = i
        prev = tags[j] if j is not None else None
        if prev is None or prev.form != tag.form:
            continue
        if prev.statement != key and tag.position == prev.position + 1:
            return (f"note {ids[i]} ({tag.label}) continues the statement of note {ids[j]} "  # type: ignore[index]
                    f"({prev.label}) under another statement id ({key!r}, not {prev.statement!r})")
        if prev.statement == key and prev.position == 11 and tag.position == 0:
            return (f"note {ids[i]} ({tag.label}) starts {tag.form.label} again after position 11 "
                    f"under the same statement id {key!r}")
    return None


def statements_from_labels(piece: Piece) -> tuple[Piece, str | None]:
    """``piece`` with statement ids its labels support: its own ids when they agree with the labels,
    else ids read from the labels alone (each voice's runs of one form in time order, as
    :func:`tagged_statements` groups notes without ids), with the reason as one clause."""
    why = contradicted_statement_ids(piece)
    if why is None:
        return piece, None
    cols = Columns(piece)
    regrouped: dict[str, Tag] = {}
    for stmt in tagged_statements(cols, use_ids=False):
        for i in stmt.indices:
            tag = cols.tags[i]
            assert tag is not None
            regrouped[cols.ids[i]] = Tag(tag.form, tag.position, stmt.key)
    return piece.with_tags(regrouped), why
