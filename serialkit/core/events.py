"""The parts of a piece: events with exact Fraction time, their tags and sources, voices, meter,
bars, sections and the blueprint. ``Piece`` (``piece.py``) holds them together; the modules that
describe a piece — its timeline (``timeline.py``) and its JSON form (``piece_json.py``) — need only
these parts, so nothing in the core imports ``piece.py`` back."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from serialkit.core.errors import PieceError
from serialkit.core.rows import RowForm, position_label

Time = Fraction


def as_fraction(value: object, what: str = "time") -> Fraction:
    """An exact Fraction from an int, a Fraction or a string like ``"3/2"`` (never a float)."""
    if isinstance(value, bool):
        raise PieceError(f"{what} must be a number, not {value!r}")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, str):
        try:
            return Fraction(value.strip())
        except (ValueError, ZeroDivisionError) as exc:
            raise PieceError(f"{what} {value!r} is not an exact number like 3/2") from exc
    if isinstance(value, float):
        raise PieceError(f"{what} {value!r} is a float; write it as a fraction string like '3/2'")
    raise PieceError(f"{what} must be a number or a fraction string, not {type(value).__name__}")


def fraction_str(value: Fraction) -> str | int:
    """JSON form of a Fraction: an int when whole, else ``"n/d"``."""
    return int(value) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


@dataclass(frozen=True, slots=True)
class Tag:
    """A note's row label: its form, its 0-based order position, and optionally its statement id."""

    form: RowForm
    position: int
    statement: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.form, RowForm):
            object.__setattr__(self, "form", RowForm.parse(self.form))
        if not 0 <= self.position <= 11:
            raise PieceError(f"order position must be in 0..11, not {self.position}")

    @property
    def label(self) -> str:
        """``P0:3``."""
        return position_label(self.form, self.position)


@dataclass(frozen=True, slots=True)
class Source:
    """Where a note came from in its file: part, measure, staff, voice, beat, line."""

    part: str | None = None
    measure: str | None = None
    staff: int | None = None
    voice: str | None = None
    beat: Fraction | None = None
    line: int | None = None
    alter: int | None = field(default=None, compare=False)
    """The written alteration (sharps > 0, flats < 0) a score reader found: with ``written`` it
    gives the note as the score writes it (None: not known; ``core.notenames``)."""
    transposition: int = field(default=0, compare=False)
    """Sounding minus written semitones (a transposing part's staff)."""
    written: int | None = field(default=None, compare=False)
    """The written MIDI pitch the reader found (a note whose pitch changed since is named anew)."""

    def describe(self) -> str:
        """Human form: ``part P1, bar 3, beat 2``."""
        bits = []
        if self.part is not None:
            bits.append(f"part {self.part}")
        if self.measure is not None:
            bits.append(f"bar {self.measure}")
        if self.staff is not None:
            bits.append(f"staff {self.staff}")
        if self.voice is not None:
            bits.append(f"voice {self.voice}")
        if self.beat is not None:
            bits.append(f"beat {_beat_text(self.beat)}")
        if self.line is not None:
            bits.append(f"line {self.line}")
        return ", ".join(bits)


def _beat_text(beat: Fraction) -> str:
    return str(beat.numerator) if beat.denominator == 1 else f"{beat.numerator}/{beat.denominator}"


@dataclass(frozen=True, slots=True)
class Event:
    """One notehead: id, voice, onset and duration in quarter notes, sounding MIDI pitch."""

    id: str
    voice: str
    onset: Fraction
    duration: Fraction
    midi: int
    section: str | None = None
    tag: Tag | None = None
    source: Source | None = None
    grace: bool = False
    tied_ids: tuple[str, ...] = ()
    claimed_pc: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise PieceError(f"event id must be a non-empty string, not {self.id!r}")
        if not isinstance(self.onset, Fraction):
            object.__setattr__(self, "onset", as_fraction(self.onset, f"event {self.id}: onset"))
        if not isinstance(self.duration, Fraction):
            object.__setattr__(
                self, "duration", as_fraction(self.duration, f"event {self.id}: duration")
            )
        problem = event_problem(self.id, self.onset, self.duration, self.midi, self.grace)
        if problem is not None:
            raise PieceError(problem)

    @property
    def pc(self) -> int:
        """The sounding pitch class."""
        return self.midi % 12

    @property
    def end(self) -> Fraction:
        """Onset plus duration."""
        return self.onset + self.duration

    def copy(self, **changes: Any) -> Event:
        """A changed copy."""
        return replace(self, **changes)


def event_problem(event_id: str, onset: Fraction, duration: Fraction, midi: object, grace: bool) -> str | None:
    """Why an ``Event`` with these values cannot be (the message it refuses them with), or None:
    for a reader that checks a score's notes without building their events."""
    if not isinstance(event_id, str) or not event_id:
        return f"event id must be a non-empty string, not {event_id!r}"
    # the sign of a Fraction is its numerator's (comparing numerators is exact and cheap)
    if onset.numerator < 0:
        return f"event {event_id}: onset {onset} is negative"
    if duration.numerator < 0:
        return f"event {event_id}: duration {duration} is negative"
    if duration.numerator == 0 and not grace:
        return f"event {event_id}: duration is 0 but it is not a grace note"
    if isinstance(midi, bool) or not isinstance(midi, int) or not 0 <= midi <= 127:
        return f"event {event_id}: MIDI pitch {midi!r} is out of range 0..127"
    return None


@dataclass(frozen=True, slots=True)
class Voice:
    """A voice (part/staff/voice key) with an optional register [low, high] in MIDI."""

    id: str
    name: str | None = None
    low: int | None = None
    high: int | None = None

    def __post_init__(self) -> None:
        if self.low is not None and self.high is not None and self.low > self.high:
            raise PieceError(f"voice {self.id}: range low {self.low} is above high {self.high}")


VOICE_KEY = re.compile(r"^([^/]+)/(\d+)/([^/]+)$")
"""A score reader's voice id: ``part/staff/voice`` (the staff as the file numbers it)."""


def voice_names(voices: Sequence[Voice]) -> dict[str, str]:
    """Voice id → the name a reader sees, the one every message uses: the part's name, then
    ``staff k`` (k within the part) only when the part has several staves, then ``voice j`` only
    when that staff holds several voices — ``Piano, staff 1, voice 2``. A part without a name is
    ``part n`` (left out when it is the only part and a staff or voice follows); two parts of one
    name are told apart by their number. Ids that are not reader keys (a JSON piece's) are named
    as written: the voice's name when it is the only one of that name, else ``voice v1``."""
    keyed = {v.id: m.groups() for v in voices if (m := VOICE_KEY.match(v.id))}
    parts: dict[str, str | None] = {}  # part key → name, in voice order
    staves: dict[str, dict[str, list[str]]] = {}  # part key → staff → voice ids
    for v in voices:
        if v.id in keyed:
            part, staff, _ = keyed[v.id]
            parts[part] = parts.get(part) or v.name
            staves.setdefault(part, {}).setdefault(staff, []).append(v.id)
    shared = Counter(name for name in parts.values() if name)
    loose = Counter(v.name for v in voices if v.id not in keyed and v.name)
    out: dict[str, str] = {}
    for v in voices:
        if v.id not in keyed:
            out[v.id] = v.name if v.name and loose[v.name] == 1 else f"voice {v.id}"
            continue
        part, staff, _ = keyed[v.id]
        number = list(parts).index(part) + 1
        order = sorted(staves[part], key=int)
        bits = []
        if len(order) > 1:
            bits.append(f"staff {order.index(staff) + 1}")
        if len(staves[part][staff]) > 1:
            bits.append(f"voice {staves[part][staff].index(v.id) + 1}")
        name = parts[part]
        if name is None:
            if len(parts) > 1 or not bits:
                bits.insert(0, f"part {number}")
        else:
            bits.insert(0, name if shared[name] == 1 else f"{name} (part {number})")
        out[v.id] = ", ".join(bits)
    return out


@dataclass(frozen=True, slots=True)
class TimeSignature:
    """A meter that holds from bar index ``bar`` (0-based, counting a pickup bar) onward."""

    numerator: int
    denominator: int
    bar: int = 0

    def __post_init__(self) -> None:
        if self.numerator <= 0 or self.denominator <= 0:
            raise PieceError(f"time signature {self.numerator}/{self.denominator} is invalid")

    @property
    def bar_length(self) -> Fraction:
        """Length of one bar in quarter notes."""
        return Fraction(4 * self.numerator, self.denominator)


@dataclass(frozen=True, slots=True)
class Measure:
    """A bar as it stands in the score: its number (as printed), onset and length."""

    number: str
    onset: Fraction
    duration: Fraction


@dataclass(frozen=True, slots=True)
class Section:
    """A named time span [start, end) of the piece."""

    id: str
    start: Fraction
    end: Fraction

    def __post_init__(self) -> None:
        if self.end < self.start:
            raise PieceError(f"section {self.id}: end {self.end} is before start {self.start}")


@dataclass(frozen=True, slots=True)
class BlueprintEntry:
    """The forms scheduled, in order, for one voice in one section."""

    section: str
    voice: str
    forms: tuple[RowForm, ...]


@dataclass(frozen=True, slots=True)
class Blueprint:
    """The stored row-form schedule: for each section and voice, the forms in order."""

    entries: tuple[BlueprintEntry, ...] = ()

    def forms_for(self, section: str | None, voice: str) -> tuple[RowForm, ...]:
        """The forms scheduled for a voice in a section (empty if none)."""
        for entry in self.entries:
            if entry.section == section and entry.voice == voice:
                return entry.forms
        return ()

    def to_dict(self) -> list[dict[str, Any]]:
        """JSON form."""
        return [
            {"section": e.section, "voice": e.voice, "forms": [f.label for f in e.forms]}
            for e in self.entries
        ]

    @classmethod
    def from_dict(cls, data: Sequence[Mapping[str, Any]]) -> Blueprint:
        """From JSON form."""
        entries = []
        for i, item in enumerate(data):
            try:
                entries.append(
                    BlueprintEntry(
                        str(item["section"]),
                        str(item["voice"]),
                        tuple(RowForm.parse(f) for f in item["forms"]),
                    )
                )
            except KeyError as exc:
                raise PieceError(f"blueprint entry {i}: missing field {exc.args[0]!r}") from exc
        return cls(tuple(entries))
