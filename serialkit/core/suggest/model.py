"""Suggested corrections: the vocabulary — error models, edits, suggestions and their text.

The error models (how engraving and copying errors happen), the values ``suggest`` returns and
``describe`` prints, and the pitch a pitch class is written at in a note's octave region. Standard
library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from serialkit.core.rows import RowForm, pc_name, position_label

MODELS = ("accidental", "third", "step", "swap", "other")
"""The error models, most common first."""


DEFAULT_THRESHOLD = 0.6
"""The confidence a suggestion needs before ``repair`` applies it."""


@dataclass(frozen=True, slots=True)
class Edit:
    """One pitch change: the event and its MIDI pitch before and after."""

    event_id: str
    before: int
    after: int

    def to_dict(self) -> dict[str, Any]:
        """JSON form with note names."""
        return {
            "event_id": self.event_id,
            "before": self.before,
            "after": self.after,
            "before_name": _name(self.before),
            "after_name": _name(self.after),
        }


@dataclass(frozen=True, slots=True)
class Suggestion:
    """The note most likely meant, the statement it completes, and why."""

    event_id: str
    midi: int
    edits: tuple[Edit, ...]
    model: str
    confidence: float
    form: RowForm
    position: int
    statement: str | None
    reason: str

    @property
    def label(self) -> str:
        """The label the note would get: ``P0:3``."""
        return position_label(self.form, self.position)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (the check report's ``suggestions[].candidates`` entries)."""
        return {
            "event_id": self.event_id,
            "midi": self.midi,
            "name": _name(self.midi),
            "model": self.model,
            "confidence": round(self.confidence, 3),
            "statement": self.statement,
            "form": self.form.label,
            "position": self.position,
            "label": self.label,
            "edits": [e.to_dict() for e in self.edits],
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class NoteSuggestions:
    """The candidates for one reported note, best first (empty: nothing plausible)."""

    event_id: str
    midi: int
    candidates: tuple[Suggestion, ...] = field(default=())
    finding: str = "unexplained"
    complete: bool = True
    """Every candidate correction of the note was verified (False: ``suggest``'s ``budget`` ran out
    first, so "nothing plausible" only means nothing among those tried)."""

    @property
    def best(self) -> Suggestion | None:
        """The top candidate, or None."""
        return self.candidates[0] if self.candidates else None

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "event_id": self.event_id,
            "midi": self.midi,
            "name": _name(self.midi),
            "finding": self.finding,
            "candidates": [c.to_dict() for c in self.candidates],
        } | ({} if self.complete else {"complete": False})


def _name(midi: int) -> str:
    return f"{pc_name(midi)}{midi // 12 - 1}"


def error_model(before: int, after: int) -> str:
    """Which error model explains writing ``before`` where ``after`` was meant (same octave)."""
    d = abs(after - before)
    if d == 1:
        return "accidental"
    if d in (3, 4):
        return "third"
    if d == 2:
        return "step"
    return "other"


def _nearest(midi: int, pc: int) -> int:
    """The pitch of class ``pc`` in ``midi``'s octave region, by error model: ±1, ±3/±4, ±2,
    else the nearest (a tritone goes down)."""
    up = (pc - midi) % 12
    if up == 0:
        return midi
    for step in (1, 3, 4, 2):
        if up == step:
            return _clamp(midi + step)
        if up == 12 - step:
            return _clamp(midi - step)
    return _clamp(midi + up if up < 6 else midi - (12 - up))


def _clamp(midi: int) -> int:
    while midi > 127:
        midi -= 12
    while midi < 0:
        midi += 12
    return midi


_MODEL_TEXT = {
    "accidental": "a dropped or added accidental (a semitone)",
    "third": "a note a line off (a third; a wrong clef line)",
    "step": "a note a step off (a whole tone)",
    "swap": "two notes written in each other's place",
    "other": "no common copying error explains it",
}


def describe(candidate: Mapping[str, Any]) -> str:
    """One line for a candidate's JSON form: ``D#3 (P5:7 of S11; accidental, 82%)``; a swap, or
    two wrong notes side by side, names the other note too."""
    where = str(candidate["label"]) + (f" of {candidate['statement']}" if candidate.get("statement") else "")
    pitch = _with_sounding(str(candidate["name"]), candidate.get("sounding"), int(candidate["midi"]))
    model = str(candidate["model"])
    others = [e for e in candidate.get("edits") or () if e["event_id"] != candidate["event_id"]]
    if others:
        other = others[0]
        at = f" at {other['at']}" if other.get("at") else f" ({other['event_id']})"
        pitch = f"{pitch}, and {other.get('after_name') or _name(int(other['after']))} for the " \
                f"{other.get('before_name') or _name(int(other['before']))}{at}"
        if model != "swap":  # two wrong notes side by side
            model = f"two wrong notes, {model}"
    return f"{pitch} ({where}; {model}, {float(candidate['confidence']):.0%})"


def _with_sounding(name: str, sounding: Any, midi: int) -> str:
    """``A4 (sounding G4)`` for a transposing part's note (its written name names another pitch
    than it sounds); ``A4`` otherwise."""
    from serialkit.core.errors import RowError
    from serialkit.core.spelling import parse_pitch

    if not sounding:
        return name
    try:
        same = parse_pitch(name) == midi
    except RowError:  # a name that is not a pitch: shown as it is
        same = True
    return name if same else f"{name} (sounding {sounding})"
