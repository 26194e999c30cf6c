"""A staff's voices read as one line (``staff_lines``) when they look like one line in layers."""

from __future__ import annotations

from fractions import Fraction

from serialkit.core.analysis import layered_staves, staff_lines
from serialkit.core.piece import Event, Piece, Voice


def _piece(notes: list[tuple[str, float, float]]) -> Piece:
    events = [Event(f"n{i}", v, Fraction(on), Fraction(d), 60 + i % 12) for i, (v, on, d) in enumerate(notes)]
    return Piece(tuple(events), voices=tuple(Voice(v) for v in dict.fromkeys(v for v, _, _ in notes)))


def test_overlapping_notes_of_one_line_written_as_two_voices_are_layers() -> None:
    # one line, every other note held over the next: a writer puts the held notes in voice 2
    notes = [("P1/1/1" if i % 2 == 0 else "P1/1/2", i * 0.5, 1.0) for i in range(24)]
    piece = _piece(notes)
    lines = staff_lines(piece)
    assert lines == {"P1/1/1": "P1/1", "P1/1/2": "P1/1"}
    assert layered_staves(piece, lines) == {"P1/1"}


def test_two_voices_that_move_together_are_lines_of_their_own() -> None:
    notes = [(v, i * 1.0, 1.0) for i in range(12) for v in ("P1/1/1", "P1/1/2")]
    piece = _piece(notes)
    lines = staff_lines(piece)
    assert layered_staves(piece, lines) == set()


def test_a_staff_with_one_voice_has_no_line_to_merge() -> None:
    piece = _piece([("P1/1/1", i * 1.0, 1.0) for i in range(12)] + [("P2/1/1", i * 1.0, 1.0) for i in range(12)])
    assert staff_lines(piece) == {}
