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


# --- notated pieces (score I/O round trips) -------------------------------------------------

notated_meters = st.sampled_from([(4, 4), (3, 4), (2, 4), (6, 8), (5, 8), (2, 2), (7, 16)])


@st.composite
def notated_pieces(draw: st.DrawFn, max_voices: int = 3, max_groups: int = 8) -> Piece:
    """Untagged pieces that exercise notation: tuplets, ties over barlines, chords, grace notes,
    several voices (``part/staff/voice`` keys or plain ids), meter changes and pickups."""
    from serialkit.core.piece import TimeSignature

    structured = draw(st.booleans())
    keys = ["P1/1/1", "P1/1/2", "P1/2/1", "P2/1/1"] if structured else ["v1", "v2", "v3"]
    n_voices = draw(st.integers(min_value=1, max_value=max_voices))
    voice_ids = keys[:n_voices]
    events: list[Event] = []
    for vid in voice_ids:
        t = Fraction(0)
        for g in range(draw(st.integers(min_value=1, max_value=max_groups))):
            t += draw(st.sampled_from([Fraction(0), Fraction(0), Fraction(1, 2), Fraction(1, 3)]))
            if draw(st.integers(min_value=0, max_value=5)) == 0:
                graces = draw(st.lists(st.integers(40, 90), min_size=1, max_size=2, unique=True))
                for k, midi in enumerate(graces):
                    events.append(Event(f"{vid}-g{g}-{k}", vid, t, Fraction(0), midi, grace=True))
            dur = draw(durations | st.sampled_from([Fraction(5), Fraction(7, 2), Fraction(4, 3)]))
            chord = draw(st.lists(st.integers(36, 96), min_size=1, max_size=3, unique=True))
            for k, midi in enumerate(chord):
                events.append(Event(f"{vid}-n{g}-{k}", vid, t, dur, midi))
            t += dur
    first = draw(notated_meters)
    meters = [TimeSignature(first[0], first[1], 0)]
    if draw(st.booleans()):
        second = draw(notated_meters)
        meters.append(TimeSignature(second[0], second[1], draw(st.integers(1, 3))))
    pickup = draw(st.sampled_from([Fraction(0), Fraction(0), Fraction(1), Fraction(1, 2)]))
    if pickup >= meters[0].bar_length:
        pickup = Fraction(0)
    return Piece(tuple(events), voices=tuple(Voice(v) for v in voice_ids),
                 time_signatures=tuple(meters), pickup=pickup)
