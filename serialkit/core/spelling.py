"""Pitch spelling: note names to pitch classes and back (octave-free), and note names with
their octave to MIDI numbers."""

from __future__ import annotations

import re
from collections.abc import Iterable

from serialkit.core.errors import RowError

PC_NAMES_SHARP = ("C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B")
PC_NAMES_FLAT = ("C", "Db", "D", "Eb", "E", "F", "Gb", "G", "Ab", "A", "Bb", "B")

# Letter steps; German H is B natural (a bare B is B flat only in a German spelling: is_german_spelling).
_STEP = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11, "H": 11}
# Accidental spellings, longest first so that "is"/"es" win over single letters.
_ACCIDENTALS: tuple[tuple[str, int], ...] = (
    ("𝄪", 2), ("𝄫", -2), ("is", 1), ("es", -1),
    ("#", 1), ("♯", 1), ("x", 2), ("b", -1), ("♭", -1), ("-", -1), ("♮", 0),
)
# German "s" after A or E: As = A flat, Es = E flat (and Ases, Eses).
_GERMAN_S = ("A", "E")
_INT_RE = re.compile(r"^[+-]?\d+$")
# Numeral spellings of 10 and 11 accepted when a row is written in numbers.
NUMERALS = {"T": 10, "A": 10, "E": 11, "B": 11}


def pc_name(pc: int, flats: bool = False) -> str:
    """The spelling of a pitch class (sharps by default)."""
    return (PC_NAMES_FLAT if flats else PC_NAMES_SHARP)[pc % 12]


def is_integer_token(token: str) -> bool:
    """True if ``token`` is written as a (possibly signed) decimal integer."""
    return bool(_INT_RE.match(token.strip()))


def _spelled(token: str) -> tuple[str, int, bool]:
    """(letter, alteration in semitones, German spelling?) of a note name without octave."""
    text = token.strip()
    if not text or text[0].upper() not in _STEP:
        raise RowError(_unknown(token))
    letter = text[0].upper()
    alter = 0
    german = letter == "H"
    rest = text[1:]
    first = True
    while rest:
        if first and letter in _GERMAN_S and rest[0] in "sS":
            alter -= 1
            german = True
            rest = rest[1:]
            first = False
            continue
        for symbol, value in _ACCIDENTALS:
            if rest.startswith(symbol) or (symbol in ("is", "es") and rest.lower().startswith(symbol)):
                alter += value
                german = german or symbol in ("is", "es")
                rest = rest[len(symbol):]
                break
        else:
            raise RowError(_unknown(token))
        first = False
    return letter, alter, german


def parse_note_name(token: str, german: bool = False) -> int:
    """The pitch class of an octave-free note name: C#, Db, F♯, B♭, Cx, Ebb, E𝄫, Fis, Es, H.

    ``german``: the name is one of a German spelling (see :func:`is_german_spelling`), where a
    bare B is B flat (H is B natural in either)."""
    letter, alter, _ = _spelled(token)
    if german and letter == "B" and token.strip()[1:] == "":
        return 10
    return (_STEP[letter] + alter) % 12


def is_german_spelling(tokens: Iterable[str]) -> bool:
    """True when note names are spelt the German way: an H, or an -is/-es (As, Es) suffix. Only then
    is a bare B read as B flat ("Fis Es As H C D E F G A B Cis"); elsewhere B is B natural."""
    for token in tokens:
        try:
            if _spelled(token)[2]:
                return True
        except RowError:
            continue
    return False


_PITCH_RE = re.compile(r"^\s*(?P<name>\D+?)\s*(?P<octave>-1|\d+)\s*$")  # B-4 is B flat 4 (music21)


def parse_pitch(token: str) -> int:
    """The MIDI number of a note name with its octave, middle C being C4: ``Bb4`` → 70,
    ``B♭4`` → 70, ``B-4`` → 70, ``F#3`` → 54, ``Cb4`` → 59, ``B#3`` → 60, ``H4`` → 71, ``C-1`` → 0."""
    match = _PITCH_RE.match(token)
    if match is None:
        raise RowError(f"{token!r} is not a note with its octave (such as C4, Bb3 or F♯5)")
    letter, alter, _ = _spelled(match["name"])
    return 12 * (int(match["octave"]) + 1) + _STEP[letter] + alter


def parse_numeral(token: str) -> int:
    """A pitch class written as a number 0..11, or T/A (10) and E/B (11)."""
    text = token.strip()
    if text.upper() in NUMERALS:
        return NUMERALS[text.upper()]
    if not is_integer_token(text):
        raise RowError(f"{token!r} is not a pitch-class number (0..11, T or E) in a row of numbers")
    value = int(text)
    if not 0 <= value <= 11:
        raise RowError(f"pitch class {value} is out of range 0..11")
    return value


def parse_pitch_class(token: str) -> int:
    """One pitch class from a number string (0..11) or a note name."""
    if is_integer_token(token):
        return parse_numeral(token)
    return parse_note_name(token)


def _unknown(token: str) -> str:
    return (
        f"unknown note name {token!r} (expected a letter A-G, or German H, with accidentals "
        "#, b, ♯, ♭, x, 𝄪, 𝄫, or German -is/-es)"
    )
