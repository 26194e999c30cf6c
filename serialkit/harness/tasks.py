"""Harness tasks: row, voices, meter, sections, blueprint, texture, rules and attempt budget."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from serialkit.core.errors import PieceError, RowError, TaskError
from serialkit.core.piece import (
    Blueprint,
    Piece,
    Section,
    TimeSignature,
    Voice,
    as_fraction,
    fraction_str,
)
from serialkit.core.rows import Convention, Row, RowForm, _check_convention

TASK_FORMAT = "serialkit-task"


@dataclass(frozen=True, slots=True)
class Texture:
    """Rhythmic bounds: shortest and longest note and the onset grid, in quarter notes."""

    min_duration: Fraction = Fraction(1, 2)
    max_duration: Fraction = Fraction(2)
    grid: Fraction = Fraction(1, 2)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "min_duration": fraction_str(self.min_duration),
            "max_duration": fraction_str(self.max_duration),
            "grid": fraction_str(self.grid),
        }


@dataclass(frozen=True, slots=True)
class Slot:
    """One scheduled note: voice, section, form, order position, pitch class, statement id."""

    voice: str
    section: str
    index: int
    form: RowForm
    position: int
    pc: int
    statement: str

    @property
    def label(self) -> str:
        """``P0:3``."""
        return f"{self.form.label}:{self.position}"


@dataclass(frozen=True, slots=True)
class Task:
    """A generation task (schema ``task``)."""

    name: str
    row: Row
    voices: tuple[Voice, ...]
    meter: TimeSignature
    bars: int
    sections: tuple[Section, ...]
    blueprint: Blueprint
    convention: Convention = "relative"
    texture: Texture = field(default_factory=Texture)
    immediate_repeats: bool = False
    oscillation_window: int = 0
    tolerance: Fraction = Fraction(0)
    max_crossing_share: Fraction = Fraction(1, 10)
    attempts: int = 3
    description: str = ""

    def __post_init__(self) -> None:
        validate_task(self)

    # queries -----------------------------------------------------------
    @property
    def voice_ids(self) -> tuple[str, ...]:
        """Voice ids, top to bottom."""
        return tuple(v.id for v in self.voices)

    def voice(self, voice_id: str) -> Voice:
        """The voice with this id."""
        for v in self.voices:
            if v.id == voice_id:
                return v
        raise TaskError(f"task {self.name}: no voice {voice_id!r}")

    def section(self, section_id: str) -> Section:
        """The section with this id."""
        for s in self.sections:
            if s.id == section_id:
                return s
        raise TaskError(f"task {self.name}: no section {section_id!r}")

    @property
    def length(self) -> Fraction:
        """The piece length in quarter notes."""
        return self.bars * self.meter.bar_length

    def slots(self, section_id: str, voice_id: str) -> tuple[Slot, ...]:
        """The scheduled notes of one voice in one section, in order."""
        return _slots(self, section_id, voice_id)

    def all_slots(self) -> tuple[Slot, ...]:
        """Every scheduled note of the task."""
        return tuple(s for sec in self.sections for v in self.voice_ids for s in self.slots(sec.id, v))

    def frame(self, events: tuple[Any, ...] = ()) -> Piece:
        """A piece carrying this task's voices, meter, sections, blueprint and row."""
        return Piece(
            events=events,
            voices=self.voices,
            time_signatures=(self.meter,),
            sections=self.sections,
            blueprint=self.blueprint,
            row=self.row,
            convention=self.convention,
            title=self.name,
        )

    def digest(self) -> str:
        """A short content hash of the task's JSON form."""
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    # JSON --------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON form (schema ``task``)."""
        bar = self.meter.bar_length
        return {
            "format": TASK_FORMAT,
            "version": 1,
            "name": self.name,
            "description": self.description,
            "row": list(self.row.pcs),
            "convention": self.convention,
            "voices": [
                {k: v for k, v in (("id", x.id), ("name", x.name), ("low", x.low), ("high", x.high)) if v is not None}
                for x in self.voices
            ],
            "meter": f"{self.meter.numerator}/{self.meter.denominator}",
            "bars": self.bars,
            "sections": [
                {"id": s.id, "bars": [int(s.start / bar) + 1, int(s.end / bar)]} for s in self.sections
            ],
            "blueprint": self.blueprint.to_dict(),
            "texture": self.texture.to_dict(),
            "repetition": {
                "immediate_repeats": self.immediate_repeats,
                "oscillation_window": self.oscillation_window,
            },
            "tolerance": fraction_str(self.tolerance),
            "max_crossing_share": fraction_str(self.max_crossing_share),
            "attempts": self.attempts,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "task") -> Task:
        """Build and validate a task from its JSON form; errors name the field."""
        return task_from_dict(data, where)


@lru_cache(maxsize=4096)
def _slots(task: Task, section_id: str, voice_id: str) -> tuple[Slot, ...]:
    out: list[Slot] = []
    for k, form in enumerate(task.blueprint.forms_for(section_id, voice_id)):
        pcs = task.row.form(form, task.convention)
        statement = f"{voice_id}.{section_id}.{k}"
        for pos, pc in enumerate(pcs):
            out.append(Slot(voice_id, section_id, len(out), form, pos, pc, statement))
    return tuple(out)


def validate_task(task: Task) -> None:
    """Raise TaskError naming what is wrong with a task."""
    where = f"task {task.name}"
    if not task.voices:
        raise TaskError(f"{where}: no voices")
    if task.bars <= 0:
        raise TaskError(f"{where}: bars must be positive, not {task.bars}")
    if task.attempts < 1:
        raise TaskError(f"{where}: attempts must be at least 1, not {task.attempts}")
    ids = [v.id for v in task.voices]
    if len(set(ids)) != len(ids):
        raise TaskError(f"{where}: voice ids repeat: {ids}")
    for v in task.voices:
        if v.low is None or v.high is None:
            raise TaskError(f"{where}: voice {v.id} needs a range (low and high)")
        if v.high - v.low < 11:
            raise TaskError(f"{where}: voice {v.id} range {v.low}..{v.high} holds fewer than 12 pitch classes")
    tex = task.texture
    if not 0 < tex.grid <= tex.min_duration <= tex.max_duration:
        raise TaskError(f"{where}: texture needs 0 < grid <= min_duration <= max_duration")
    cursor = Fraction(0)
    for s in task.sections:
        if s.start != cursor:
            raise TaskError(f"{where}: section {s.id} starts at {s.start}, expected {cursor} (sections must tile the bars)")
        cursor = s.end
    if cursor != task.length:
        raise TaskError(f"{where}: sections end at {cursor}, the piece at {task.length}")
    known_sections = {s.id for s in task.sections}
    for entry in task.blueprint.entries:
        if entry.section not in known_sections:
            raise TaskError(f"{where}: blueprint names unknown section {entry.section!r}")
        if entry.voice not in ids:
            raise TaskError(f"{where}: blueprint names unknown voice {entry.voice!r}")
    for s in task.sections:
        for vid in ids:
            notes = 12 * len(task.blueprint.forms_for(s.id, vid))
            if notes * tex.min_duration > s.end - s.start:
                raise TaskError(
                    f"{where}: section {s.id} voice {vid}: {notes} notes of at least "
                    f"{tex.min_duration} do not fit in {s.end - s.start} quarter notes"
                )


def _frac(data: Mapping[str, Any], key: str, default: Fraction, where: str) -> Fraction:
    if key not in data:
        return default
    try:
        return as_fraction(data[key], f"{where}.{key}")
    except PieceError as exc:
        raise TaskError(str(exc)) from exc


def task_from_dict(data: Mapping[str, Any], where: str = "task") -> Task:
    """A validated task from its JSON form."""
    if not isinstance(data, Mapping):
        raise TaskError(f"{where}: expected a JSON object, got {type(data).__name__}")
    _validate_schema(data, where)
    try:
        name = str(data.get("name", "task"))
        row = Row.parse(data["row"])
        convention = _check_convention(str(data.get("convention", "relative")))
        voices = tuple(Voice(str(v["id"]), v.get("name"), v.get("low"), v.get("high")) for v in data["voices"])
        num, _, den = str(data.get("meter", "4/4")).partition("/")
        meter = TimeSignature(int(num), int(den or 4))
        bars = int(data["bars"])
        bar = meter.bar_length
        sections = tuple(
            Section(str(s["id"]), (int(s["bars"][0]) - 1) * bar, int(s["bars"][1]) * bar)
            for s in data.get("sections", [{"id": "A", "bars": [1, bars]}])
        )
        blueprint = Blueprint.from_dict(data["blueprint"])
        tex = data.get("texture", {})
        texture = Texture(
            _frac(tex, "min_duration", Fraction(1, 2), f"{where}.texture"),
            _frac(tex, "max_duration", Fraction(2), f"{where}.texture"),
            _frac(tex, "grid", Fraction(1, 2), f"{where}.texture"),
        )
        rep = data.get("repetition", {})
        return Task(
            name=name,
            row=row,
            voices=voices,
            meter=meter,
            bars=bars,
            sections=sections,
            blueprint=blueprint,
            convention=convention,
            texture=texture,
            immediate_repeats=bool(rep.get("immediate_repeats", False)),
            oscillation_window=int(rep.get("oscillation_window", 0)),
            tolerance=_frac(data, "tolerance", Fraction(0), where),
            max_crossing_share=_frac(data, "max_crossing_share", Fraction(1, 10), where),
            attempts=int(data.get("attempts", 3)),
            description=str(data.get("description", "")),
        )
    except (RowError, PieceError) as exc:
        raise TaskError(f"{where}: {exc}") from exc
    except TaskError as exc:
        raise TaskError(f"{where}: {str(exc).removeprefix(f'task {name}: ')}") from exc
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise TaskError(f"{where}: malformed field ({exc})") from exc


def _validate_schema(data: Mapping[str, Any], where: str) -> None:
    from serialkit.harness.schemas import validation_errors

    errors = validation_errors("task", data)
    if errors:
        raise TaskError(f"{where}: {errors[0]}")


def _bundled() -> dict[str, Any]:
    root = resources.files("serialkit.harness") / "tasks"
    out: dict[str, Any] = {}
    for item in sorted(root.iterdir(), key=lambda p: p.name):
        if item.name.endswith(".json"):
            out[item.name[: -len(".json")]] = item
    return out


def list_tasks() -> list[str]:
    """Names of the example tasks shipped in the package."""
    return list(_bundled())


def load_task(path_or_name: str | Path | Task) -> Task:
    """A task from a JSON file or the name of a bundled example task."""
    if isinstance(path_or_name, Task):
        return path_or_name
    path = Path(path_or_name)
    bundled = _bundled()
    if not path.exists() and str(path_or_name) in bundled:
        text = bundled[str(path_or_name)].read_text(encoding="utf-8")
        where = f"bundled task {path_or_name}"
    else:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            known = ", ".join(bundled) or "none"
            raise TaskError(f"{path}: cannot read task ({exc.strerror}); bundled tasks: {known}") from exc
        where = str(path)
    return task_from_text(text, where)


def task_from_text(text: str | bytes, where: str) -> Task:
    """A task from the text of a task JSON file (``where`` names it in errors: ``-`` for
    standard input)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise TaskError(f"{where}: not UTF-8 text (byte {exc.start})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TaskError(f"{where}: line {exc.lineno}: invalid JSON ({exc.msg})") from exc
    return task_from_dict(data, where)
