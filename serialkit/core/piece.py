"""The piece model: events with exact Fraction time, voices, meter, sections, blueprint."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from serialkit.core.errors import PieceError
from serialkit.core.rows import Convention, Row, RowForm, _check_convention, position_label

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
        if self.onset < 0:
            raise PieceError(f"event {self.id}: onset {self.onset} is negative")
        if self.duration < 0:
            raise PieceError(f"event {self.id}: duration {self.duration} is negative")
        if self.duration == 0 and not self.grace:
            raise PieceError(f"event {self.id}: duration is 0 but it is not a grace note")
        if isinstance(self.midi, bool) or not isinstance(self.midi, int) or not 0 <= self.midi <= 127:
            raise PieceError(f"event {self.id}: MIDI pitch {self.midi!r} is out of range 0..127")

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

    def by_voice(self) -> dict[str, list[Event]]:
        """Events per voice, sorted by (onset, midi)."""
        out: dict[str, list[Event]] = {v: [] for v in self.voice_ids}
        for event in self.events:
            out.setdefault(event.voice, []).append(event)
        for events in out.values():
            events.sort(key=lambda e: (e.onset, e.midi, e.id))
        return out

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
        bars: list[Measure] = []
        end = self.end
        onset = Fraction(0)
        index = 0
        number = 0 if self.pickup else 1
        while onset < end or not bars:
            ts = self._meter_at_bar(index)
            length = self.pickup if (index == 0 and self.pickup) else ts.bar_length
            bars.append(Measure(str(number), onset, length))
            onset += length
            index += 1
            number += 1
            if index > 1_000_000:  # pragma: no cover - guard
                break
        return tuple(bars)

    def _meter_at_bar(self, index: int) -> TimeSignature:
        current = self.time_signatures[0] if self.time_signatures else TimeSignature(4, 4)
        for ts in self.time_signatures:
            if ts.bar <= index:
                current = ts
        return current

    def locate(self, onset: Fraction) -> tuple[str, Fraction]:
        """(bar number, 1-based beat in quarter notes) of a time point."""
        bars = self.bar_list()
        lo, hi = 0, len(bars) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if bars[mid].onset <= onset:
                lo = mid
            else:
                hi = mid - 1
        bar = bars[lo]
        return bar.number, onset - bar.onset + 1

    def describe(self, event: Event) -> str:
        """Human location of an event: ``voice v1, bar 3, beat 2 (part P1 ...)``."""
        bar, beat = self.locate(event.onset)
        text = f"voice {event.voice}, bar {bar}, beat {_beat_text(beat)}"
        if event.source is not None and event.source.part is not None:
            text += f" ({event.source.describe()})"
        return text

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
        return piece_from_dict(data)


def event_to_dict(e: Event) -> dict[str, Any]:
    """JSON form of one event."""
    out: dict[str, Any] = {
        "id": e.id,
        "voice": e.voice,
        "onset": fraction_str(e.onset),
        "duration": fraction_str(e.duration),
        "midi": e.midi,
    }
    if e.section is not None:
        out["section"] = e.section
    if e.tag is not None:
        out["tag"] = {"form": e.tag.form.label, "position": e.tag.position}
        if e.tag.statement is not None:
            out["tag"]["statement"] = e.tag.statement
    if e.source is not None:
        src = {
            k: (fraction_str(v) if isinstance(v, Fraction) else v)
            for k in ("part", "measure", "staff", "voice", "beat", "line")
            if (v := getattr(e.source, k)) is not None
        }
        out["source"] = src
    if e.grace:
        out["grace"] = True
    if e.tied_ids:
        out["tied_ids"] = list(e.tied_ids)
    if e.claimed_pc is not None:
        out["pc"] = e.claimed_pc
    return out


def piece_to_dict(p: Piece) -> dict[str, Any]:
    """JSON form of a piece."""
    out: dict[str, Any] = {
        "format": "serialkit-piece",
        "version": 1,
        "voices": [
            {k: v for k, v in (("id", x.id), ("name", x.name), ("low", x.low), ("high", x.high)) if v is not None}
            for x in p.voices
        ],
        "time_signatures": [
            {"numerator": t.numerator, "denominator": t.denominator, "bar": t.bar}
            for t in p.time_signatures
        ],
        "events": [event_to_dict(e) for e in p.events],
    }
    if p.title is not None:
        out["title"] = p.title
    if p.pickup:
        out["pickup"] = fraction_str(p.pickup)
    if p.measures:
        out["measures"] = [
            {"number": m.number, "onset": fraction_str(m.onset), "duration": fraction_str(m.duration)}
            for m in p.measures
        ]
    if p.sections:
        out["sections"] = [
            {"id": s.id, "start": fraction_str(s.start), "end": fraction_str(s.end)} for s in p.sections
        ]
    if p.blueprint is not None:
        out["blueprint"] = p.blueprint.to_dict()
    if p.row is not None:
        out["row"] = list(p.row.pcs)
    out["convention"] = p.convention
    if p.metadata:
        out["metadata"] = dict(p.metadata)
    return out


def _need(data: Mapping[str, Any], key: str, where: str) -> Any:
    if not isinstance(data, Mapping):
        raise PieceError(f"{where}: expected an object, got {type(data).__name__}")
    if key not in data:
        raise PieceError(f"{where}: missing field {key!r}")
    return data[key]


def event_from_dict(d: Mapping[str, Any], where: str = "event") -> Event:
    """One event from its JSON form."""
    ident = _need(d, "id", where)
    where = f"{where} {ident!r}"
    tag = None
    if d.get("tag") is not None:
        t = d["tag"]
        tag = Tag(
            RowForm.parse(str(_need(t, "form", f"{where}.tag"))),
            int(_need(t, "position", f"{where}.tag")),
            t.get("statement"),
        )
    source = None
    if d.get("source") is not None:
        s = d["source"]
        source = Source(
            part=s.get("part"),
            measure=None if s.get("measure") is None else str(s["measure"]),
            staff=s.get("staff"),
            voice=None if s.get("voice") is None else str(s["voice"]),
            beat=None if s.get("beat") is None else as_fraction(s["beat"], f"{where}.source.beat"),
            line=s.get("line"),
        )
    midi = _need(d, "midi", where)
    return Event(
        id=str(ident),
        voice=str(_need(d, "voice", where)),
        onset=as_fraction(_need(d, "onset", where), f"{where}: onset"),
        duration=as_fraction(_need(d, "duration", where), f"{where}: duration"),
        midi=midi,
        section=None if d.get("section") is None else str(d["section"]),
        tag=tag,
        source=source,
        grace=bool(d.get("grace", False)),
        tied_ids=tuple(str(x) for x in d.get("tied_ids", ())),
        claimed_pc=d.get("pc"),
    )


def piece_from_dict(data: Mapping[str, Any]) -> Piece:
    """A validated piece from its JSON form."""
    if not isinstance(data, Mapping):
        raise PieceError(f"piece: expected a JSON object, got {type(data).__name__}")
    raw_events = _need(data, "events", "piece")
    if not isinstance(raw_events, list):
        raise PieceError("piece: 'events' must be a list")
    events = [event_from_dict(e, f"events[{i}]") for i, e in enumerate(raw_events)]
    voices = tuple(
        Voice(
            str(_need(v, "id", f"voices[{i}]")),
            v.get("name"),
            v.get("low"),
            v.get("high"),
        )
        for i, v in enumerate(data.get("voices", ()))
    )
    time_signatures = tuple(
        TimeSignature(
            int(_need(t, "numerator", f"time_signatures[{i}]")),
            int(_need(t, "denominator", f"time_signatures[{i}]")),
            int(t.get("bar", 0)),
        )
        for i, t in enumerate(data.get("time_signatures", ({"numerator": 4, "denominator": 4},)))
    )
    measures = tuple(
        Measure(
            str(_need(m, "number", f"measures[{i}]")),
            as_fraction(_need(m, "onset", f"measures[{i}]")),
            as_fraction(_need(m, "duration", f"measures[{i}]")),
        )
        for i, m in enumerate(data.get("measures", ()))
    )
    sections = tuple(
        Section(
            str(_need(s, "id", f"sections[{i}]")),
            as_fraction(_need(s, "start", f"sections[{i}]"), f"sections[{i}].start"),
            as_fraction(_need(s, "end", f"sections[{i}]"), f"sections[{i}].end"),
        )
        for i, s in enumerate(data.get("sections", ()))
    )
    blueprint = Blueprint.from_dict(data["blueprint"]) if data.get("blueprint") else None
    row = Row.parse(data["row"]) if data.get("row") is not None else None
    return Piece(
        events=tuple(events),
        voices=voices,
        time_signatures=time_signatures or (TimeSignature(4, 4),),
        measures=measures,
        pickup=as_fraction(data.get("pickup", 0), "pickup"),
        sections=sections,
        blueprint=blueprint,
        row=row,
        convention=_check_convention(str(data.get("convention", "relative"))),
        title=data.get("title"),
        metadata=dict(data.get("metadata", {})),
    )
