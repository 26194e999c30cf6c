"""How row-form tags group into statements: the statements a piece's tags declare, the scan
that groups them (and judges them on the way), and statements read from the labels."""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

from serialkit.core.piece import Piece, Tag
from serialkit.core.predicates.columns import Columns, columns_of
from serialkit.core.rows import FORM_TYPES, Row, RowForm


class TaggedStatement(NamedTuple):
    """A row statement as the tags declare it: key, form and event indices in heard order."""

    key: str
    form: RowForm
    indices: tuple[int, ...]


_new_statement = partial(tuple.__new__, TaggedStatement)
"""``TaggedStatement(key, form, indices)`` from one ``(key, form, indices)`` tuple, without the
Python-level constructor (grouping a large piece makes one per statement)."""


class FormTable:
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
    by_type = FormTable(row, cols.piece.convention).by_type if row is not None else None
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
