"""Notes named as the score writes them (``core.notenames``): the reader's spelling and its staff's
transposition give the written name; a corrected pitch is spelt from the note's own letter."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from serialkit.core.notenames import NoteNames, pitch_name, sounding_name
from serialkit.core.piece import Event, Piece, Source
from serialkit.core.spelling import parse_pitch

_NATURAL = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}


@given(step=st.sampled_from("CDEFGAB"), alter=st.integers(-1, 1), octave=st.integers(2, 6),
       transposition=st.sampled_from([0, -2, -3, -7, -9, -14, 12]), change=st.integers(-6, 6),
       model=st.sampled_from(["accidental", "third", "step", "swap", "other"]))
def test_a_note_is_named_as_written_and_a_correction_as_it_would_be_written(
        step: str, alter: int, octave: int, transposition: int, change: int, model: str) -> None:
    written = 12 * (octave + 1) + _NATURAL[step] + alter
    midi = written + transposition
    source = Source(alter=alter, transposition=transposition, written=written)
    event = Event("n1", "v", Fraction(0), Fraction(1), midi, source=source)
    names = NoteNames(Piece((event,)))
    assert names.name("n1") == pitch_name(step, alter, octave)
    assert parse_pitch(names.name("n1", midi + change, model)) == written + change
    assert (names.sounding("n1") is None) == (transposition == 0)
    assert names.sounding("n1") in (None, sounding_name(midi))
    # a note whose pitch changed after reading (a correction made) is named at its new pitch
    moved = NoteNames(Piece((event.copy(midi=midi + change),)))
    assert parse_pitch(moved.name("n1")) == written + change
    if change and model == "accidental" and abs(change) == 1 and (alter + change) in (-1, 0, 1) \
            and (step, alter + change) not in {("E", 1), ("B", 1), ("F", -1), ("C", -1)}:
        assert names.name("n1", midi + change, model)[0] == step  # a semitone error keeps the letter


def test_a_piece_without_spelling_is_named_as_it_sounds() -> None:
    event = Event("n1", "v", Fraction(0), Fraction(1), 70)
    names = NoteNames(Piece((event,)))
    assert (names.name("n1"), names.name("n1", 67), names.sounding("n1")) == ("A#4", "G4", None)


def test_the_readers_record_spelling_and_transposition(fixtures: Path) -> None:
    """A clarinet in Bb's written C5 sounds A#4: read from MusicXML, it is named C5."""
    from serialkit.io import read_score

    piece = read_score(fixtures / "repair" / "clarinet-wrong.musicxml")
    names = NoteNames(piece)
    assert (names.name("p1n4"), names.sounding("p1n4")) == ("C5", "A#4")
    assert names.place("p1n4") == "the C5 at bar 2, beat 1"
