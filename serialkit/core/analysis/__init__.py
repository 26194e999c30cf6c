"""Row-form inference: label every note of an untagged piece with its row form and order position.

``analyze(piece, row)`` searches the time-ordered events (simultaneities as unordered sets) for
chains that spell row forms — within a voice or passed between voices, allowing repeated notes,
tremolos, chords in any vertical order, elisions and missing notes — then picks a consistent set of
statements that explains the most notes. Notes that fit no statement stay unexplained (wrong notes
are reported, never forced into a form), and every note that reads in more than one way is listed
as an ambiguity with all its candidate labels.
"""

from __future__ import annotations

import time
from dataclasses import replace

from serialkit.core.analysis.assign import Assigner
from serialkit.core.analysis.identify import Candidate, Identification, candidate_rows
from serialkit.core.analysis.identify import identify as _identify
from serialkit.core.analysis.index import EventIndex
from serialkit.core.analysis.model import Ambiguity, Analysis, Statement
from serialkit.core.analysis.passing import learn_voice_passing
from serialkit.core.piece import Piece, Tag
from serialkit.core.rows import Convention, Row, RowForm, _check_convention

__all__ = [
    "Ambiguity",
    "Analysis",
    "Candidate",
    "Identification",
    "Statement",
    "analyze",
    "candidate_rows",
    "identify",
    "identify_row",
]


def identify(piece: Piece) -> Identification:
    """Which row an untagged piece uses (catalogue, then opening aggregate), by trial coverage:
    the row (P0 as the catalogue stores it), its catalogue entry, and the runner-up."""
    return _identify(piece, lambda p, r: analyze(p, r))


def identify_row(piece: Piece) -> Row:
    """The piece's own row if it names one, else the identified row (see ``identify``)."""
    return piece.row if piece.row is not None else identify(piece).row


def analyze(piece: Piece, row: Row | str | None = None, convention: Convention = "relative") -> Analysis:
    """Infer a tag for every event of ``piece`` (or mark it unexplained) against ``row``.

    Parameters
    ----------
    piece:
        The piece; existing tags are ignored (inference is the same for every piece).
    row:
        The row (P0 in the relative convention). None: the piece's own row, else identified.
    convention:
        ``relative`` (default) or ``absolute`` labels.
    """
    started = time.perf_counter()
    convention = _check_convention(convention)
    found: Identification | None = None
    if row is None and piece.row is not None:
        row = piece.row
    elif row is None:
        found = identify(piece)
        row = found.row
    row = Row.parse(row)
    table = row.distinct_forms(convention)
    labels = list(table)
    forms = [row.form(f, convention) for f in labels]
    ix = EventIndex(piece.events, piece.voice_ids)
    assigner = Assigner(ix, forms)
    assigner.statements()
    strange = learn_voice_passing(ix, assigner)
    if strange is not None:  # read again, knowing which voices pass rows to which
        ix.strange = strange
        assigner = Assigner(ix, forms)
        assigner.statements()
    assigner.finish()
    result = _result(piece, row, convention, ix, assigner, labels, table, started)
    if found is None:
        return result
    return replace(result, identification=found, notes=(*result.notes, found.summary()))


def _result(
    piece: Piece,
    row: Row,
    convention: Convention,
    ix: EventIndex,
    assigner: Assigner,
    labels: list[RowForm],
    table: dict[RowForm, list[RowForm]],
    started: float,
) -> Analysis:
    found = [f for f in assigner.found if f.slots]
    order = sorted(range(len(found)), key=lambda s: (min(found[s].slots.values()), found[s].form))
    renumber = {old: new for new, old in enumerate(order)}
    original = {id(f): i for i, f in enumerate(assigner.found)}
    ids = [f"S{i + 1}" for i in range(len(found))]
    readings: dict[int, list[tuple[int, int]]] = {}
    statements: list[Statement] = []
    for new, old in enumerate(order):
        f = found[old]
        for p, e in sorted(f.slots.items()):
            readings.setdefault(e, []).append((new, p))
        for e, p in f.repeats:
            readings.setdefault(e, []).append((new, p))
    shared = {e for e, r in readings.items() if len(r) > 1}
    for new, old in enumerate(order):
        f = found[old]
        slot_ids = tuple(ix.events[f.slots[p]].id if p in f.slots else None for p in range(12))
        voices: list[str] = []
        for p in sorted(f.slots):
            v = ix.events[f.slots[p]].voice
            if v not in voices:
                voices.append(v)
        statements.append(
            Statement(
                id=ids[new],
                form=labels[f.form],
                event_ids=slot_ids,
                voices=tuple(voices),
                complete=len(f.slots) == 12,
                aliases=tuple(table[labels[f.form]]),
                repeats=tuple(ix.events[e].id for e, _ in sorted(f.repeats)),
                elided=tuple(ix.events[e].id for e in sorted(f.slots.values()) if e in shared),
            )
        )
    tags: dict[str, Tag | None] = {}
    ambiguities: list[Ambiguity] = []
    for i, event in enumerate(ix.events):
        reading = readings.get(i)
        if not reading:
            tags[event.id] = None
            continue
        s, p = reading[0]
        form = statements[s].form
        tags[event.id] = Tag(form, p, ids[s])
        candidates: list[Tag] = []
        reasons: list[str] = []
        for s2, p2 in reading:
            st = statements[s2]
            candidates.append(Tag(st.form, p2, ids[s2]))
            candidates.extend(Tag(alias, p2, ids[s2]) for alias in st.aliases)
        if len(reading) > 1:
            reasons.append("elision: the note ends " + " and begins ".join(ids[s2] for s2, _ in reading))
        if statements[s].aliases:
            reasons.append(
                f"symmetric row: {form.label} is also "
                + ", ".join(a.label for a in statements[s].aliases)
            )
        others = assigner.fits_two.get(i, [])[1:]
        for s_old, p2 in others:
            f_old = assigner.found[s_old]
            if id(f_old) not in original or not f_old.slots:
                continue
            s2 = renumber[found.index(f_old)]
            candidates.append(Tag(statements[s2].form, p2, ids[s2]))
            reasons.append(f"fits two statements: also {statements[s2].form.label}:{p2} of {ids[s2]}")
        if i in assigner.pivots:
            s_old, p2 = assigner.pivots[i]
            f_old = assigner.found[s_old]
            if id(f_old) in original and f_old.slots:
                s2 = renumber[found.index(f_old)]
                candidates.append(Tag(statements[s2].form, p2, ids[s2]))
                first, second = sorted((s, s2))
                reasons.append(f"pivot: the repeated note may end {ids[first]} or begin {ids[second]} "
                               f"(also {statements[s2].form.label}:{p2} of {ids[s2]})")
        if reasons:
            ambiguities.append(Ambiguity(event.id, tuple(candidates), "; ".join(reasons)))
    ordered_tags = {e.id: tags[e.id] for e in piece.events}
    unexplained = tuple(e.id for e in piece.events if tags[e.id] is None)
    return Analysis(
        row=row,
        convention=convention,
        tags=ordered_tags,
        statements=tuple(statements),
        unexplained=unexplained,
        ambiguities=tuple(ambiguities),
        seconds=time.perf_counter() - started,
    )

