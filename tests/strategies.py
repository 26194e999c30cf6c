"""Hypothesis strategies shared by the test suite: rows are permutations of 0–11, pieces are built from rows."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

from serialkit.core.piece import Event, Piece, Voice
from serialkit.core.rows import ALL_FORMS, Row, RowForm

pitch_classes = st.integers(min_value=0, max_value=11)
rows = st.permutations(list(range(12))).map(lambda pcs: Row(tuple(pcs)))
row_forms = st.sampled_from(ALL_FORMS)
conventions = st.sampled_from(["relative", "absolute"])
transpositions = st.integers(min_value=0, max_value=11)

# Durations from a small exact set, including triplet and quintuplet values.
durations = st.sampled_from(
    [Fraction(1), Fraction(1, 2), Fraction(1, 4), Fraction(3, 2), Fraction(2), Fraction(1, 3),
     Fraction(2, 3), Fraction(1, 5), Fraction(3, 4), Fraction(1, 6)]
)


@st.composite
def row_statement_pieces(draw: st.DrawFn, max_voices: int = 4, max_statements: int = 3) -> Piece:
    """A tagged piece: each voice states whole row forms one note after another."""
    row = draw(rows)
    n_voices = draw(st.integers(min_value=1, max_value=max_voices))
    events: list[Event] = []
    voices = []
    for v in range(n_voices):
        vid = f"v{v + 1}"
        base = 72 - 12 * v
        voices.append(Voice(vid, low=base - 12, high=base + 12))
        onset = Fraction(0)
        for s in range(draw(st.integers(min_value=1, max_value=max_statements))):
            form: RowForm = draw(row_forms)
            for pos, pc in enumerate(row.form(form)):
                dur = draw(durations)
                midi = base - 6 + (pc - (base - 6)) % 12
                from serialkit.core.piece import Tag

                events.append(
                    Event(f"{vid}-{s}-{pos}", vid, onset, dur, midi, tag=Tag(form, pos, f"{vid}.{s}"))
                )
                onset += dur
    return Piece(tuple(events), voices=tuple(voices), row=row)
