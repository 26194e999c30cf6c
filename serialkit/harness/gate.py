"""The final gate: the independent checker on inferred tags (every candidate) and trace tags."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from serialkit.core.piece import Event, Piece
from serialkit.harness.tasks import Task

CODES = ("ROW", "ORDER", "COLL", "PC", "RANGE", "CROSS", "SCHED", "UNEXPLAINED")


@dataclass(frozen=True)
class Verdict:
    """Strict and relaxed verdicts of the independent checker, with every violation found."""

    strict: bool
    relaxed: bool
    violations: tuple[dict[str, Any], ...] = ()
    unexplained: tuple[str, ...] = ()
    coverage: Fraction = Fraction(1)
    checker: str = ""
    analysis: str = ""
    notes: tuple[str, ...] = field(default=())

    def passed(self, mode: str) -> bool:
        """The verdict in ``strict`` or ``relaxed`` mode."""
        return self.strict if mode == "strict" else self.relaxed

    def counts(self) -> dict[str, int]:
        """Violations per predicate code."""
        out: dict[str, int] = {}
        for v in self.violations:
            out[v["code"]] = out.get(v["code"], 0) + 1
        return out

    def predicates(self) -> dict[str, bool]:
        """Pass (True) or fail per predicate code."""
        counts = self.counts()
        return {code: counts.get(code, 0) == 0 for code in CODES}

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "strict": self.strict,
            "relaxed": self.relaxed,
            "checker": self.checker,
            "analysis": self.analysis,
            "coverage": str(self.coverage),
            "predicates": self.predicates(),
            "counts": self.counts(),
            "unexplained": list(self.unexplained),
        }


def rules_for(task: Task) -> Any:
    """The checker's Rules for a task."""
    kwargs: dict[str, Any] = {
        "tolerance": task.tolerance,
        "immediate_repeats": task.immediate_repeats,
        "oscillation_window": task.oscillation_window,
        "max_crossing_share": task.max_crossing_share,
    }
    from serialkit.core.predicates import Rules

    return Rules(**kwargs)


@dataclass(frozen=True)
class _Checked:
    strict: bool
    relaxed: bool
    violations: list[dict[str, Any]]
    unexplained: tuple[str, ...]
    coverage: Fraction
    checker: str


def _check(piece: Piece, task: Task) -> _Checked:
    """The project's checker (``serialkit.check.check_piece``, as ``serialkit check`` runs it)."""
    from serialkit.check import check_piece

    rules = rules_for(task)
    report = check_piece(piece, row=task.row, convention=task.convention, rules=rules, plugins=True)
    verdict = report.verdict
    found = [v.to_dict() for v in verdict.violations]
    coverage = Fraction(report.coverage) if report.coverage is not None else Fraction(1)
    return _Checked(bool(verdict.strict), bool(verdict.relaxed), found, tuple(report.unexplained), coverage,
                    "serialkit.check")


def final_gate(task: Task, events: list[Event], trace: bool) -> Verdict:
    """Check a candidate: on inferred tags always (untagged, like every candidate), and on the
    trace's own tags too when it has a trace; release needs both."""
    piece = task.frame(tuple(events))
    bare = piece.with_events(e.copy(tag=None) for e in piece.events)
    inferred = _check(bare, task)
    strict, relaxed = inferred.strict, inferred.relaxed
    violations = [dict(v, tags="inferred") for v in inferred.violations]
    if trace:
        own = _check(piece, task)
        strict, relaxed = strict and own.strict, relaxed and own.relaxed
        violations += [dict(v, tags="trace") for v in own.violations]
    if not events:
        strict = relaxed = False
        violations.append({"code": "UNEXPLAINED", "event_ids": [], "message": "the candidate has no notes",
                           "location": None, "tags": "inferred"})
    return Verdict(strict, relaxed, tuple(violations), inferred.unexplained, inferred.coverage,
                   inferred.checker, "serialkit.core.analysis")
