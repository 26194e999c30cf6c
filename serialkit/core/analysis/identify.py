"""Find a piece's row when none is given: catalogued rows first, then the opening aggregate."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction

from serialkit.core.errors import RowError
from serialkit.core.piece import Event, Piece
from serialkit.core.rows import Row

SCAN = 96  # events per stream searched for twelve-note windows
TRIAL = 240  # events analysed to compare candidate rows


def _streams(piece: Piece) -> list[list[int]]:
    """Pitch-class streams to search: the whole piece in time order, then each voice."""
    ordered = sorted(piece.events, key=lambda e: (e.onset, e.midi, e.id))
    streams = [_pcs(ordered)]
    for events in piece.by_voice().values():
        streams.append(_pcs(events))
    return streams


def _pcs(events: Sequence[Event]) -> list[int]:
    out: list[int] = []
    for e in events:
        if not out or out[-1] != e.pc:  # repeated notes do not break a row
            out.append(e.pc)
    return out[:SCAN]


def candidate_rows(piece: Piece) -> list[Row]:
    """Rows the piece may use: twelve-note windows that the catalog knows, else the first windows
    of twelve distinct pitch classes (each taken as P0, as first stated)."""
    from serialkit.core import catalog

    known: list[Row] = []
    plain: list[Row] = []
    seen: set[tuple[int, ...]] = set()
    for stream in _streams(piece):
        for i in range(max(0, len(stream) - 11)):
            window = tuple(stream[i : i + 12])
            if len(set(window)) != 12 or window in seen:
                continue
            seen.add(window)
            matches = catalog.identify(window)
            if matches:
                known.append(Row(window, matches[0].entry.name))
            elif len(plain) < 6:
                plain.append(Row(window))
    return known[:12] or plain


def identify_row(
    piece: Piece, score: Callable[[Piece, Row], Fraction] | None = None
) -> Row:
    """The row of an untagged piece: the candidate that explains the most of its opening."""
    if piece.row is not None:
        return piece.row
    rows = candidate_rows(piece)
    if not rows:
        raise RowError(
            "cannot identify the row: no twelve consecutive notes with twelve distinct pitch "
            "classes in the opening; give the row explicitly (e.g. --row 'A F# G G# ...')"
        )
    if len(rows) == 1 or score is None:
        return rows[0]
    trial = piece.with_events(sorted(piece.events, key=lambda e: (e.onset, e.id))[:TRIAL])
    best = rows[0]
    best_score = Fraction(-1)
    seen: set[frozenset[tuple[int, ...]]] = set()
    for row in rows:
        family = frozenset(row.forms().values())
        if family in seen:  # the same row under another form: same coverage
            continue
        seen.add(family)
        value = score(trial, row)
        if value > best_score:
            best, best_score = row, value
    return best
