"""Violation records, declared rules and the predicate verdict: plain frozen values."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from serialkit.core.errors import PieceError

PREDICATE_CODES: tuple[str, ...] = ("ROW", "ORDER", "COLL", "PC", "RANGE", "CROSS", "SCHED")
"""The seven hard-predicate codes, in report order (the gate adds its own: ``check.gate.GATE_CODES``)."""

PREDICATE_STRICT_ONLY: frozenset[str] = frozenset({"SCHED"})
"""Predicate codes a relaxed :class:`PredicateVerdict` ignores: SCHED, the blueprint's order of forms."""

UNTAGGED_CODES: tuple[str, ...] = ("COLL", "PC", "RANGE", "CROSS")
"""Codes that need no row-form tags (PC checks claimed pitch classes against MIDI)."""


@dataclass(frozen=True, slots=True)
class Violation:
    """One failed predicate: its code, the events involved, a message and a human location."""

    code: str
    event_ids: tuple[str, ...]
    message: str
    location: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.event_ids, tuple):
            object.__setattr__(self, "event_ids", tuple(self.event_ids))

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"code", "event_ids", "message", "location"}``."""
        return {
            "code": self.code,
            "event_ids": list(self.event_ids),
            "message": self.message,
            "location": self.location,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Violation:
        """From JSON form."""
        return cls(
            str(data["code"]),
            tuple(str(x) for x in data.get("event_ids", ())),
            str(data.get("message", "")),
            str(data.get("location", "")),
        )

    def __str__(self) -> str:
        where = f" at {self.location}" if self.location else ""
        return f"{self.code}{where}: {self.message}"


@dataclass(frozen=True, slots=True)
class Rules:
    """Declared allowances and limits; nothing here is ever inferred from the music.

    ``tolerance``: overlap (quarter notes) two same-pitch-class events in different voices may
    share before they collide. ``immediate_repeats``: a note may be re-struck at once within a
    statement. ``oscillation_window``: how many extra notes may alternate between two adjacent
    order positions (3 4 3 4 has two extra notes). ``max_crossing_share``: the largest share of
    notes (grace notes aside) allowed to sit in a voice crossing. ``octave_repeats``: with ``immediate_repeats``,
    the repeat may sound in another octave (a doubling or a re-strike an octave away, common in
    real scores).
    """

    tolerance: Fraction = Fraction(0)
    immediate_repeats: bool = False
    oscillation_window: int = 0
    max_crossing_share: Fraction = Fraction(1, 10)
    octave_repeats: bool = False

    def __post_init__(self) -> None:
        for name in ("tolerance", "max_crossing_share"):
            value = getattr(self, name)
            if isinstance(value, bool) or isinstance(value, float):
                raise PieceError(f"rules: {name} must be exact (int or Fraction), not {value!r}")
            if not isinstance(value, Fraction):
                try:
                    value = Fraction(value)
                except (TypeError, ValueError) as exc:
                    raise PieceError(f"rules: {name} {value!r} is not a number") from exc
                object.__setattr__(self, name, value)
            if value < 0:
                raise PieceError(f"rules: {name} must not be negative, not {value}")
        if self.max_crossing_share > 1:
            raise PieceError(f"rules: max_crossing_share {self.max_crossing_share} is above 1")
        if isinstance(self.oscillation_window, bool) or not isinstance(self.oscillation_window, int):
            raise PieceError("rules: oscillation_window must be an integer")
        if self.oscillation_window < 0:
            raise PieceError(f"rules: oscillation_window must be >= 0, not {self.oscillation_window}")

    def to_dict(self) -> dict[str, Any]:
        """JSON form (fractions as ``"n/d"`` strings)."""
        return {
            "tolerance": str(self.tolerance),
            "immediate_repeats": self.immediate_repeats,
            "oscillation_window": self.oscillation_window,
            "max_crossing_share": str(self.max_crossing_share),
            "octave_repeats": self.octave_repeats,
        }


@dataclass(frozen=True, slots=True)
class PredicateVerdict:
    """The predicates' answer over one piece: strict (every predicate) and relaxed (without SCHED).

    ``unchecked`` names predicates the rules ask for that could not run (ROW and ORDER without a
    row): a verdict with one of them is never a pass, whatever the others found."""

    violations: tuple[Violation, ...]
    checked: tuple[str, ...] = PREDICATE_CODES
    notes: tuple[str, ...] = field(default=())
    strict_only: frozenset[str] = PREDICATE_STRICT_ONLY
    unchecked: tuple[str, ...] = ()

    @property
    def strict(self) -> bool:
        """True when no predicate failed and none the rules ask for went unchecked."""
        return not self.violations and not self.unchecked

    @property
    def relaxed(self) -> bool:
        """True when nothing but strict-only predicates (SCHED) failed or went unchecked."""
        return all(v.code in self.strict_only for v in self.violations) and all(
            code in self.strict_only for code in self.unchecked)

    def passed(self, mode: str = "strict") -> bool:
        """The verdict of one mode, ``strict`` or ``relaxed``."""
        if mode not in ("strict", "relaxed"):
            raise PieceError(f"verdict mode must be 'strict' or 'relaxed', not {mode!r}")
        return self.strict if mode == "strict" else self.relaxed

    def counts(self) -> dict[str, int]:
        """Violations per code (every checked code present, zero when clean)."""
        tally = Counter(v.code for v in self.violations)
        codes = list(self.checked) + sorted(set(tally) - set(self.checked))
        return {code: tally.get(code, 0) for code in codes}

    def by_code(self, code: str) -> list[Violation]:
        """The violations of one code."""
        return [v for v in self.violations if v.code == code]

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "strict": self.strict,
            "relaxed": self.relaxed,
            "checked": list(self.checked),
            "unchecked": list(self.unchecked),
            "counts": self.counts(),
            "violations": [v.to_dict() for v in self.violations],
            "notes": list(self.notes),
        }
