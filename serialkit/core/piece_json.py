"""The JSON form of pieces and events (see ``schemas/piece.schema.json``); errors name the field."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from serialkit.core.errors import PieceError
from serialkit.core.events import (
    Blueprint,
    Event,
    Measure,
    Section,
    Source,
    Tag,
    TimeSignature,
    Voice,
    as_fraction,
    fraction_str,
)
from serialkit.core.rows import Row, RowForm, _check_convention

if TYPE_CHECKING:
    from serialkit.core.piece import Piece


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


def piece_from_dict(data: Mapping[str, Any], cls: type[Piece]) -> Piece:
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
    return cls(
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
