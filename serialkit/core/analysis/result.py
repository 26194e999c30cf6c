"""From the final assignment to the public :class:`Analysis`: statements numbered in time order,
every note's tag, and every note that reads in more than one way with all its readings."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from serialkit.core.analysis.index import EventIndex
from serialkit.core.analysis.model import Ambiguity, Analysis, Statement
from serialkit.core.analysis.state import Assignment, Found
from serialkit.core.piece import Piece, Tag
from serialkit.core.rows import Convention, Row, RowForm


def percent(share: float | Fraction) -> str:
    """A share of notes (0 to 1) as text with one decimal, never rounded to a whole: "100.0%" only
    when every note is counted and "0.0%" only when none is (one note unexplained of 2,048 is
    99.9%, not 100.0%)."""
    text = f"{float(share):.1%}"
    if share < 1 and text == "100.0%":
        return "99.9%"
    if share > 0 and text == "0.0%":
        return "0.1%"
    return text


@dataclass(slots=True)
class _Numbering:
    """The statements that hold notes, numbered S1, S2 … by their first note."""

    found: list[Found]  # non-empty statements, in their assignment order
    renumber: dict[int, int]  # index in ``found`` → number - 1
    kept: set[int]  # ids of the kept Found objects
    ids: list[str]

    def number_of(self, a: Assignment, index: int) -> int | None:
        """The number (0-based) of assignment statement ``index``; None if it holds no note."""
        f = a.found[index]
        if id(f) not in self.kept or not f.slots:
            return None
        return self.renumber[self.found.index(f)]


def _numbering(a: Assignment) -> tuple[_Numbering, list[int]]:
    found = [f for f in a.found if f.slots]
    order = sorted(range(len(found)), key=lambda s: (min(found[s].slots.values()), found[s].form))
    renumber = {old: new for new, old in enumerate(order)}
    kept = {id(f) for f in a.found}
    return _Numbering(found, renumber, kept, [f"S{i + 1}" for i in range(len(found))]), order


def _readings(numbered: list[Found]) -> dict[int, list[tuple[int, int]]]:
    """Event → every (statement number, position) holding it: the statements it states a
    position of first, then those it repeats a position of, each in number order (a note
    repeating one statement's last position and stating the next one's first is labelled with
    the position it states)."""
    readings: dict[int, list[tuple[int, int]]] = {}
    for new, f in enumerate(numbered):
        for p, e in sorted(f.slots.items()):
            readings.setdefault(e, []).append((new, p))
    for new, f in enumerate(numbered):
        for e, p in f.repeats:
            readings.setdefault(e, []).append((new, p))
    return readings


def _statement(ix: EventIndex, f: Found, sid: str, form: RowForm, aliases: list[RowForm],
               shared: set[int]) -> Statement:
    slot_ids = tuple(ix.events[f.slots[p]].id if p in f.slots else None for p in range(12))
    voices: list[str] = []
    for p in sorted(f.slots):
        v = ix.events[f.slots[p]].voice
        if v not in voices:
            voices.append(v)
    return Statement(
        id=sid,
        form=form,
        event_ids=slot_ids,
        voices=tuple(voices),
        complete=len(f.slots) == 12,
        aliases=tuple(aliases),
        repeats=tuple(ix.events[e].id for e, _ in sorted(f.repeats)),
        elided=tuple(ix.events[e].id for e in sorted(f.slots.values()) if e in shared),
    )


def _ambiguity(a: Assignment, numbering: _Numbering, statements: list[Statement], i: int,
               reading: list[tuple[int, int]]) -> tuple[list[Tag], list[str]]:
    """Every candidate tag of event ``i`` (chosen first) and the reasons it reads in more than one way."""
    ids = numbering.ids
    s = reading[0][0]
    candidates: list[Tag] = []
    reasons: list[str] = []
    for s2, p2 in reading:
        st = statements[s2]
        candidates.append(Tag(st.form, p2, ids[s2]))
        candidates.extend(Tag(alias, p2, ids[s2]) for alias in st.aliases)
    if len(reading) > 1:
        reasons.append("elision: the note ends " + " and begins ".join(ids[s2] for s2, _ in reading))
    if statements[s].aliases:
        reasons.append(f"symmetric row: {statements[s].form.label} is also "
                       + ", ".join(x.label for x in statements[s].aliases))
    for s_old, p2 in a.fits_two.get(i, [])[1:]:
        other = numbering.number_of(a, s_old)
        if other is not None:
            candidates.append(Tag(statements[other].form, p2, ids[other]))
            reasons.append(f"fits two statements: also {statements[other].form.label}:{p2} of {ids[other]}")
    if i in a.pivots:
        s_old, p2 = a.pivots[i]
        other = numbering.number_of(a, s_old)
        if other is not None:
            candidates.append(Tag(statements[other].form, p2, ids[other]))
            first, second = sorted((s, other))
            reasons.append(f"pivot: the repeated note may end {ids[first]} or begin {ids[second]} "
                           f"(also {statements[other].form.label}:{p2} of {ids[other]})")
    return candidates, reasons


def build_result(piece: Piece, row: Row, convention: Convention, a: Assignment,
                 table: dict[RowForm, list[RowForm]], seconds: float) -> Analysis:
    """The analysis of ``piece`` the final assignment ``a`` describes."""
    ix = a.ix
    labels = list(table)
    numbering, order = _numbering(a)
    numbered = [numbering.found[old] for old in order]
    readings = _readings(numbered)
    shared = {e for e, r in readings.items() if len(r) > 1}
    statements = [_statement(ix, f, numbering.ids[new], labels[f.form], table[labels[f.form]], shared)
                  for new, f in enumerate(numbered)]
    tags: dict[str, Tag | None] = {}
    ambiguities: list[Ambiguity] = []
    for i, event in enumerate(ix.events):
        reading = readings.get(i)
        if not reading:
            tags[event.id] = None
            continue
        s, p = reading[0]
        tags[event.id] = Tag(statements[s].form, p, numbering.ids[s])
        candidates, reasons = _ambiguity(a, numbering, statements, i, reading)
        if reasons:
            ambiguities.append(Ambiguity(event.id, tuple(candidates), "; ".join(reasons)))
    return Analysis(
        row=row,
        convention=convention,
        tags={e.id: tags[e.id] for e in piece.events},
        statements=tuple(statements),
        unexplained=tuple(e.id for e in piece.events if tags[e.id] is None),
        ambiguities=tuple(ambiguities),
        seconds=seconds,
    )
