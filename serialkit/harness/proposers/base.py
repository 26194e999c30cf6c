"""What every proposer shares: requests, replies, usage records and proposal parsing."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

from serialkit.core.errors import RowError
from serialkit.core.rows import RowForm
from serialkit.core.spelling import parse_pitch
from serialkit.harness.tasks import Task

KINDS = ("section", "patch", "refine")
#: what a reply the server stopped at the token limit (``finish_reason: "length"``) is called, and the remedy
CUT_OFF = "the reply was cut off at the token limit"
RAISE_LIMIT = "raise the limit with -O max_tokens=N"


@dataclass(frozen=True)
class Request:
    """One call to a proposer: write a section, patch flagged notes, or refine after feedback."""

    call_id: str
    kind: str
    task: Task
    section: str
    attempt: int
    variant: str = "harness"
    soft_rules: bool = False
    context: tuple[dict[str, Any], ...] = ()
    missing: tuple[dict[str, Any], ...] = ()
    patches: tuple[dict[str, Any], ...] = ()
    feedback: str = ""

    def payload(self) -> dict[str, Any]:
        """The machine-readable part of the prompt (also what a transcript records)."""
        task = self.task
        sec = task.section(self.section)
        out: dict[str, Any] = {
            "kind": self.kind,
            "section": self.section,
            "attempt": self.attempt,
            "span": [time_json(sec.start), time_json(sec.end)],
            "row": list(task.row.pcs),
            "convention": task.convention,
            "meter": f"{task.meter.numerator}/{task.meter.denominator}",
            "voices": [
                {"id": v.id, "low": v.low, "high": v.high,
                 "forms": [f.label for f in task.blueprint.forms_for(self.section, v.id)]}
                for v in task.voices
            ],
            "texture": task.texture.to_dict(),
        }
        if self.missing:
            out["missing"] = list(self.missing)
        if self.context:
            out["keep"] = list(self.context)
        if self.patches:
            out["patches"] = list(self.patches)
        if self.feedback:
            out["feedback"] = self.feedback
        return out


def time_json(value: Fraction) -> int | str:
    """A time as JSON: an integer when whole, else ``"n/d"``."""
    return int(value) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


@dataclass
class CallUsage:
    """Tokens, latency, HTTP tries and outcome of one proposer call. ``unreadable`` names the
    server's token counts that could not be read (not a whole number of 0 or more: ``"lots"``,
    ``-500000``); those counts are then charged at their upper bound (see
    :func:`~serialkit.harness.prompts.upper_bound_tokens`), never believed and never zero."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    tries: int = 1
    status: str = "ok"
    unreadable: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``unreadable`` only when set)."""
        out: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "seconds": round(self.seconds, 6),
            "tries": self.tries,
            "status": self.status,
        }
        if self.unreadable is not None:
            out["unreadable"] = self.unreadable
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CallUsage:
        """From JSON form."""
        unreadable = data.get("unreadable")
        return cls(
            int(data.get("prompt_tokens", 0)),
            int(data.get("completion_tokens", 0)),
            float(data.get("seconds", 0.0)),
            int(data.get("tries", 1)),
            str(data.get("status", "ok")),
            None if unreadable is None else str(unreadable),
        )


@dataclass
class Reply:
    """A proposer's answer: the raw text (or None) and an error message when the call failed;
    ``cut_off`` when the server stopped writing at the token limit (``finish_reason: "length"``)."""

    text: str | None
    usage: CallUsage = field(default_factory=CallUsage)
    error: str | None = None
    cut_off: bool = False


class Proposer(Protocol):
    """Anything that answers requests; ``name`` and ``model`` go into certificates."""

    name: str
    model: str | None

    def propose(self, request: Request) -> Reply:
        """Answer one request; never raise for a bad answer, report it in ``Reply.error``."""
        ...


@dataclass(frozen=True)
class ProposedEvent:
    """One event as a proposer wrote it (times exact), with its claimed tag when given."""

    voice: str
    onset: Fraction
    duration: Fraction
    midi: int
    form: RowForm | None = None
    position: int | None = None
    pc: int | None = None
    id: str | None = None


@dataclass
class Parsed:
    """The events that could be read from a reply and the problems met reading it."""

    events: list[ProposedEvent]
    errors: list[str]
    ok: bool


def extract_json(text: str) -> Any:
    """The first JSON object in ``text``: the whole text, a fenced block, or a balanced ``{...}``."""
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        pass
    for block in re.findall(r"```(?:json|JSON)?\s*\n?(.*?)```", text, flags=re.S):
        try:
            return json.loads(block)
        except json.JSONDecodeError:
            continue
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            if "events" in value:
                return value
            found.append(value)
    salvaged = _salvage(text)
    if salvaged is not None:
        return salvaged
    if found:
        return found[0]
    raise ValueError("no JSON object found in the reply")


def _salvage(text: str) -> dict[str, Any] | None:
    """The complete events of an answer cut off mid-JSON: every whole object of its ``events`` list
    (the cut one is lost). None when there is no such list or no whole event in it."""
    match = re.search(r'"events"\s*:\s*\[', text)
    if match is None:
        return None
    decoder = json.JSONDecoder()
    events = []
    pos = match.end()
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] != "{":
            break
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            break
        events.append(value)
    return {"events": events, "truncated": True} if events else None


def to_time(value: Any, what: str) -> Fraction:
    """An exact time from a JSON number or fraction string (floats snapped to 1/960); what cannot
    be one is a ValueError saying so in the reply's own terms (never Python's ``Fraction`` text)."""
    if isinstance(value, bool):
        raise ValueError(f"{what} is a boolean")
    try:
        if isinstance(value, int):
            return Fraction(value)
        if isinstance(value, float):
            return Fraction(repr(value)).limit_denominator(960)
        if isinstance(value, str):
            text = value.strip()
            if "." in text and "/" not in text:
                return Fraction(text).limit_denominator(960)
            return Fraction(text)
    except (ValueError, ZeroDivisionError, OverflowError):
        shown = json.dumps(value)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise ValueError(f"{what} {shown} is not a number or a fraction such as 3/2") from None
    kinds = {dict: "an object", list: "a list", type(None): "null"}
    raise ValueError(f"{what} must be a number, not {kinds.get(type(value), type(value).__name__)}")


def parse_proposal(reply: Reply, task: Task) -> Parsed:
    """Read the events of a reply; malformed events are skipped with a message, never raised."""
    if reply.text is None:
        return Parsed([], [reply.error or "no reply"], False)
    try:
        data = extract_json(reply.text)
    except ValueError as exc:
        if reply.cut_off:
            return Parsed([], [f"{CUT_OFF} before any whole event; {RAISE_LIMIT}"], False)
        return Parsed([], [f"malformed output: {exc}"], False)
    if isinstance(data, list):
        data = {"events": data}
    if not isinstance(data, dict) or not isinstance(data.get("events"), list):
        return Parsed([], ["malformed output: no 'events' list"], False)
    voices = set(task.voice_ids)
    events: list[ProposedEvent] = []
    errors: list[str] = []
    if data.get("truncated") is True and "section" not in data:
        read = f"read the {len(data['events'])} whole events before the cut"
        errors.append(f"{CUT_OFF}: {read}; {RAISE_LIMIT}" if reply.cut_off else f"answer cut off mid-JSON: {read}")
    for i, item in enumerate(data["events"]):
        try:
            events.append(_event(item, voices))
        except (ValueError, TypeError, KeyError, ZeroDivisionError, RowError) as exc:
            errors.append(f"events[{i}]: {exc}")
    return Parsed(events, errors, True)


def unreadable_why(parsed: Parsed) -> str | None:
    """Why a reply could not be read (wholly or in part), in the words every variant uses; None
    when it was read whole."""
    if parsed.ok and not parsed.errors:
        return None
    if parsed.ok and parsed.events:  # read in part: how many notes were lost, and the first reason
        lost = len(parsed.errors)
        return f"{lost} note{'s' if lost != 1 else ''} unreadable: {parsed.errors[0]}"
    return parsed.errors[0] if parsed.errors else "the reply has no notes"


def _number(value: Any) -> Any:
    """An integer written as a string (``"60"``) read as the integer; anything else unchanged."""
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        return int(value)
    return value


def _midi(item: dict[str, Any]) -> int:
    """The MIDI number of a proposed note: ``midi`` (or ``pitch``) as a number or as a note name with
    its octave (``"Bb4"``, ``"B♭4"``: models write names as often as numbers)."""
    key = "midi" if "midi" in item else "pitch" if "pitch" in item else None
    if key is None:
        raise ValueError("no 'midi' (a MIDI number, or a note name with its octave such as Bb4)")
    value = _number(item[key])
    if isinstance(value, str):
        return parse_pitch(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise ValueError(f"{key} {value!r} is not an integer or a note name such as Bb4")
    return int(value)


def _event(item: Any, voices: set[str]) -> ProposedEvent:
    if not isinstance(item, dict):
        raise ValueError("not an object")
    for key in ("voice", "onset", "duration"):
        if key not in item:
            raise ValueError(f"no '{key}'")
    voice = str(item["voice"])
    if voice not in voices:
        raise ValueError(f"unknown voice {voice!r}")
    midi = _midi(item)
    onset = to_time(item["onset"], "onset")
    duration = to_time(item["duration"], "duration")
    if onset < 0 or duration <= 0:
        raise ValueError(f"onset {onset} / duration {duration} out of range")
    form = RowForm.parse(str(item["form"])) if item.get("form") is not None else None
    position = _number(item.get("position"))
    if position is not None and (isinstance(position, bool) or not isinstance(position, int) or not 0 <= position <= 11):
        raise ValueError(f"position {position!r} is not in 0..11")
    pc = _number(item.get("pc"))
    if pc is not None and (isinstance(pc, bool) or not isinstance(pc, int)):
        raise ValueError(f"pc {pc!r} is not an integer")
    ident = item.get("id")
    return ProposedEvent(voice, onset, duration, int(midi), form, position, pc, None if ident is None else str(ident))
