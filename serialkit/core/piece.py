"""The piece model: events with exact Fraction time, voices, meter, sections, blueprint.

The parts (``Event``, ``Voice``, ``Tag`` …) live in ``events.py`` and are importable from here too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from serialkit.core.errors import PieceError
from serialkit.core.events import (
    Blueprint,
    BlueprintEntry,
    Event,
    Measure,
    Section,
    Source,
    Tag,
    Time,
    TimeSignature,
    Voice,
    _beat_text,
    as_fraction,
    fraction_str,
    voice_names,
)
from serialkit.core.piece_json import piece_from_dict, piece_to_dict
from serialkit.core.rows import Convention, Row, _check_convention
from serialkit.core.timeline import Locator, derive_bars

__all__ = [
    "_beat_text",
    "as_fraction",
    "Blueprint",
    "BlueprintEntry",
    "Event",
    "fraction_str",
    "Measure",
    "Piece",
    "Section",
    "Source",
    "Tag",
    "Time",
    "TimeSignature",
    "Voice",
]


@dataclass(frozen=True, slots=True)
class Piece:
    """Events plus meter, bars, sections, voice order (top to bottom), ranges, row, blueprint."""

    events: tuple[Event, ...]
    voices: tuple[Voice, ...] = ()
    time_signatures: tuple[TimeSignature, ...] = (TimeSignature(4, 4),)
    measures: tuple[Measure, ...] = ()
    pickup: Fraction = Fraction(0)
    sections: tuple[Section, ...] = ()
    blueprint: Blueprint | None = None
    row: Row | None = None
    convention: Convention = "relative"
    title: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    _voices: dict[str, tuple[Event, ...]] | None = field(default=None, init=False, repr=False, compare=False)
    """``by_voice``, once asked (the events never change)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "events", tuple(self.events))
        _check_convention(self.convention)
        seen: set[str] = set()
        for event in self.events:
            if event.id in seen:
                raise PieceError(f"event id {event.id!r} appears twice")
            seen.add(event.id)
        if not self.voices:
            order: dict[str, None] = {}
            for event in self.events:
                order.setdefault(event.voice, None)
            object.__setattr__(self, "voices", tuple(Voice(v) for v in order))
        else:
            known = {v.id for v in self.voices}
            for event in self.events:
                if event.voice not in known:
                    raise PieceError(f"event {event.id}: voice {event.voice!r} is not declared")

    # queries -------------------------------------------------------------
    @property
    def voice_ids(self) -> tuple[str, ...]:
        """Voice ids, top to bottom."""
        return tuple(v.id for v in self.voices)

    def voice(self, voice_id: str) -> Voice:
        """The voice with this id."""
        for v in self.voices:
            if v.id == voice_id:
                return v
        raise PieceError(f"no voice {voice_id!r}")

    def voice_names(self) -> dict[str, str]:
        """Voice id → the name every message uses (``Piano, staff 1, voice 2``; ``core.events.voice_names``)."""
        return voice_names(self.voices)

    def by_voice(self) -> dict[str, list[Event]]:
        """Events per voice, sorted by (onset, midi) (new lists: the caller may change them)."""
        if self._voices is None:
            out: dict[str, list[Event]] = {v: [] for v in self.voice_ids}
            for event in self.events:
                out.setdefault(event.voice, []).append(event)
            for events in out.values():
                events.sort(key=lambda e: (e.onset, e.midi, e.id))
            object.__setattr__(self, "_voices", {v: tuple(events) for v, events in out.items()})
        assert self._voices is not None
        return {v: list(events) for v, events in self._voices.items()}

    def event(self, event_id: str) -> Event:
        """The event with this id."""
        for e in self.events:
            if e.id == event_id:
                return e
        raise PieceError(f"no event {event_id!r}")

    @property
    def end(self) -> Fraction:
        """The end of the last sounding event."""
        return max((e.end for e in self.events), default=Fraction(0))

    def bar_list(self) -> tuple[Measure, ...]:
        """The bars: the explicit measures if given, else derived from meter and pickup."""
        if self.measures:
            return self.measures
        return derive_bars(self, self.end)

    def locator(self) -> Locator:
        """A bar/beat locator for this piece; build it once when asking about many events."""
        return Locator(self)

    def locate(self, onset: Fraction) -> tuple[str, Fraction]:
        """(bar number, 1-based beat in quarter notes) of a time point."""
        return self.locator().locate(onset)

    def describe(self, event: Event) -> str:
        """Human location of an event: ``voice v1, bar 3, beat 2 (part P1 ...)``."""
        return self.locator().describe(event)

    def section_of(self, onset: Fraction) -> str | None:
        """The id of the section containing a time point."""
        for s in self.sections:
            if s.start <= onset < s.end:
                return s.id
        return None

    def copy(self, **changes: Any) -> Piece:
        """A changed copy."""
        return replace(self, **changes)

    def with_events(self, events: Iterable[Event]) -> Piece:
        """The same piece with other events."""
        return replace(self, events=tuple(events))

    def with_tags(self, tags: Mapping[str, Tag | None]) -> Piece:
        """The same piece with tags replaced for the given event ids."""
        return replace(
            self,
            events=tuple(e.copy(tag=tags[e.id]) if e.id in tags else e for e in self.events),
        )

    # JSON -----------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (see ``schemas/piece.schema.json``)."""
        return piece_to_dict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Piece:
        """Build and validate a piece from its JSON form; errors name the field."""
        return piece_from_dict(data, cls)
