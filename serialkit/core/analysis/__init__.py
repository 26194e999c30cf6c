"""Row-form inference: label every note of an untagged piece with its row form and order position.

``analyze(piece, row)`` searches the time-ordered events (simultaneities as unordered sets) for
chains that spell row forms — within a voice or passed between voices, allowing repeated notes,
tremolos, chords in any vertical order, elisions and missing notes — then picks a consistent set of
statements that explains the most notes. Notes that fit no statement stay unexplained (wrong notes
are reported, never forced into a form), and every note that reads in more than one way is listed
as an ambiguity with all its candidate labels. The steps, in order, are in ``pipeline.py``.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import replace
from fractions import Fraction

from serialkit.core.analysis.identify import Candidate, Identification, candidate_rows
from serialkit.core.analysis.identify import identify as _identify
from serialkit.core.analysis.index import EventIndex
from serialkit.core.analysis.model import Ambiguity, Analysis, Statement
from serialkit.core.analysis.pipeline import read
from serialkit.core.analysis.result import build_result
from serialkit.core.events import VOICE_KEY
from serialkit.core.piece import Piece
from serialkit.core.rows import Convention, Row, _check_convention

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


def staff_lines(piece: Piece) -> dict[str, str]:
    """Voice id → its staff, for the staves a reader gave several voices (``part/staff/voice``
    ids). A notation program splits one line into voices wherever its notes overlap, so a staff's
    voices may be one line written in layers; empty when no staff has several voices."""
    staff: dict[str, str] = {}
    for v in piece.voice_ids:
        if (m := VOICE_KEY.match(v)) is not None:
            staff[v] = f"{m.group(1)}/{m.group(2)}"
    sizes = Counter(staff.values())
    return {v: s for v, s in staff.items() if sizes[s] > 1}


LAYERED = Fraction(1, 20)  # at most this share of a staff's onsets starting in two of its voices at once


def layered_staves(piece: Piece, lines: dict[str, str]) -> set[str]:
    """The staves whose voices look like one line written in layers: their voices almost never
    start a note at the same moment (voices of one staff that are lines of their own often do)."""
    starts: dict[str, dict[object, set[str]]] = {}
    for e in piece.events:
        staff = lines.get(e.voice)
        if staff is not None and not e.grace:
            starts.setdefault(staff, {}).setdefault(e.onset, set()).add(e.voice)
    return {staff for staff, onsets in starts.items()
            if sum(1 for vs in onsets.values() if len(vs) > 1) <= LAYERED * len(onsets)}


def analyze(piece: Piece, row: Row | str | None = None, convention: Convention = "relative", *,
            cut: tuple[bool, bool] = (False, False)) -> Analysis:
    """Infer a tag for every event of ``piece`` (or mark it unexplained) against ``row``.

    Parameters
    ----------
    piece:
        The piece; existing tags are ignored (inference is the same for every piece).
    row:
        The row (P0 in the relative convention). None: the piece's own row, else identified.
    convention:
        ``relative`` (default) or ``absolute`` labels.
    cut:
        (start, end): ``piece`` is a window cut out of a longer piece (a suggestion's
        verification) at its start, at its end. Statements a cut edge cuts off are context, not
        trouble, so no fragment is sought from the notes of its ``EDGE`` slices and the
        stretches touching them are not searched again (``take_fragments``, ``pairs.reread_*``).
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
    forms = [row.form(f, convention) for f in table]
    lines = staff_lines(piece)
    staves = layered_staves(piece, lines) if lines else set()
    layered = {v: s for v, s in lines.items() if s in staves}
    readings = [layered, {}] if layered else [{}]
    if lines and lines != layered:
        readings.append(lines)
    result: Analysis | None = None
    for voices_as in readings:  # the likeliest reading first; another only for trouble
        if result is not None and not result.unexplained:
            break
        ix = EventIndex(piece.events, piece.voice_ids, voices_as or None)
        ix.cut = cut
        other = build_result(piece, row, convention, read(ix, forms), table, 0.0)
        if result is None or len(other.unexplained) < len(result.unexplained):
            result = other
    assert result is not None
    result = replace(result, seconds=time.perf_counter() - started)
    if found is None:
        return result
    return replace(result, identification=found, notes=(*result.notes, found.summary()))
