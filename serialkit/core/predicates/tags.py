"""Predicates on row-form tags: ROW, PC, ORDER, SCHED, and how tags group into statements."""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable
from functools import partial
from itertools import repeat
from operator import attrgetter, is_, itemgetter
from typing import NamedTuple

from serialkit.core.piece import Piece, Tag
from serialkit.core.predicates.columns import Columns, columns_of
from serialkit.core.predicates.model import Rules, Violation
from serialkit.core.rows import FORM_TYPES, Row, RowForm, pc_name

_SECTION = attrgetter("section")
_STATEMENT = attrgetter("statement")
_CLAIMED = attrgetter("claimed_pc")
_FORM = attrgetter("form")
_FIRST: Callable[[list[int]], int] = itemgetter(0)


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
    if all(map(is_, map(_CLAIMED, cols.events), repeat(None))):  # nothing claimed
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


def tagged_statements(piece: Piece | Columns, use_ids: bool = True) -> list[TaggedStatement]:
    """Tagged events grouped into statements, each in heard order (onset, then position).

    An explicit ``tag.statement`` id groups its events (across voices). Events without one (or
    every event, when ``use_ids`` is False) form implicit statements per voice: a run of
    consecutive events of one form, which ends when the form changes, when position 0 follows a
    later position (a fresh start), or when, after position 11, any position but 11 or 10 (an
    immediate repeat or an oscillation) follows.
    """
    cols = columns_of(piece)
    tags = cols.tags
    if use_ids and not cols.untagged:
        # Every event is tagged: group by statement id in one C-level pass, appending each index
        # in onset order to its statement's list (None collects the events without an id; when
        # there are any, the general pass below groups them by voice).
        by_key: defaultdict[str | None, list[int]] = defaultdict(list)
        order = cols.order
        any(map(list.append, map(by_key.__getitem__, map(_STATEMENT, map(tags.__getitem__, order))), order))
        if None not in by_key:
            grouped = list(by_key.values())
            first_forms = map(_FORM, map(tags.__getitem__, map(_FIRST, grouped)))
            return list(map(_new_statement, zip(by_key, first_forms, map(tuple, grouped), strict=True)))
    groups: dict[str, list[int]] = {}
    forms: dict[str, RowForm] = {}
    run_key: dict[int, str] = {}
    run_last: dict[int, tuple[RowForm, int]] = {}
    runs = 0
    voice = cols.voice
    for i in cols.order:
        tag = tags[i]
        if tag is None:
            continue
        key = tag.statement if use_ids else None
        if key is None:
            v = voice[i]
            last = run_last.get(v)
            if (
                last is None
                or (last[0] is not tag.form and last[0] != tag.form)
                or (last[1] == 11 and tag.position < 10)
                or (tag.position == 0 and last[1] > 0)
            ):
                runs += 1
                run_key[v] = f"~{cols.piece.voice_ids[v]}.{runs}"
            key = run_key[v]
            run_last[v] = (tag.form, tag.position)
        members = groups.get(key)
        if members is None:
            groups[key] = [i]
            forms[key] = tag.form
        else:
            members.append(i)
    return [TaggedStatement(k, forms[k], tuple(v)) for k, v in groups.items()]


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
) -> tuple[list[Violation], list[Violation]]:
    """ORDER violations and, in the same pass when a row is given, ROW violations."""
    stmts = tagged_statements(cols) if statements is None else statements
    table = None if row is None else _FormTable(row, cols.piece.convention)
    row_bad: list[int] = []
    out: list[Violation] = []
    tags, midi = cols.tags, cols.midi
    by_type = table.by_type if table is not None else {}
    for stmt in stmts:
        if table is not None:
            # A statement whose events all carry its form object at strictly rising positions
            # with the form's pitch classes breaks neither rule (its pitch classes then all
            # differ): confirm that in a quick pass, and walk only the others note by note.
            form = stmt.form
            form_pcs = by_type[form.type][form.n]
            top = -1
            for i in stmt.indices:
                tag = tags[i]
                q = tag.position  # type: ignore[union-attr]
                if q <= top or tag.form is not form or form_pcs[q] != midi[i] % 12:  # type: ignore[union-attr]
                    break
                top = q
            else:
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
) -> list[Violation]:
    """SCHED: each event's form is the form the blueprint schedules for its section and voice
    at that point in the voice's sequence of statements (aliases of a symmetric row agree)."""
    cols = columns_of(piece)
    p = cols.piece
    if p.blueprint is None:
        return []
    stmts = tagged_statements(cols) if statements is None else statements
    the_row = _row_of(p, row)
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
    sec_col = list(map(_SECTION, cols.events))
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
