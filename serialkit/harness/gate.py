"""The final gate: the independent checker on inferred tags (every candidate) and trace tags."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from serialkit.core.piece import Event, Piece, Tag
from serialkit.harness import fallback
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
    """The checker's Rules for a task (the predicates module's, or the fallback's)."""
    kwargs = {
        "tolerance": task.tolerance,
        "immediate_repeats": task.immediate_repeats,
        "oscillation_window": task.oscillation_window,
        "max_crossing_share": task.max_crossing_share,
    }
    try:
        from serialkit.core.predicates import Rules
    except ImportError:
        return fallback.Rules(**kwargs)
    return Rules(**kwargs)


def _gate(piece: Piece, task: Task) -> tuple[bool, bool, list[dict[str, Any]], str]:
    rules = rules_for(task)
    try:
        from serialkit.core.predicates import gate
    except ImportError:
        strict, relaxed, found = fallback.gate(piece, rules)
        return strict, relaxed, found, "serialkit.harness.fallback"
    verdict = gate(piece, rules)
    found = [v.to_dict() if hasattr(v, "to_dict") else dict(v) for v in verdict.violations]
    return bool(verdict.strict), bool(verdict.relaxed), found, "serialkit.core.predicates"


def infer_tags(piece: Piece, task: Task) -> tuple[Piece, tuple[str, ...], Fraction, str]:
    """The piece tagged by the row-form analysis (untagged first), aliases named as scheduled."""
    bare = piece.with_events(e.copy(tag=None) for e in piece.events)
    try:
        from serialkit.core.analysis import analyze
    except ImportError:
        tags, unexplained = fallback.analyze(bare, task.row, task.convention)
        name = "serialkit.harness.fallback"
        coverage = Fraction(len(bare.events) - len(unexplained), max(1, len(bare.events)))
    else:
        result = analyze(bare, row=task.row, convention=task.convention)
        tags = dict(result.tags)
        unexplained = tuple(result.unexplained)
        coverage = Fraction(result.coverage)
        name = "serialkit.core.analysis"
    tagged = bare.with_tags({eid: _as_scheduled(bare, task, eid, tag) for eid, tag in tags.items()})
    return tagged, tuple(unexplained), coverage, name


def _as_scheduled(piece: Piece, task: Task, event_id: str, tag: Tag | None) -> Tag | None:
    """Rename an inferred form to the scheduled alias with the same pitch classes, if any."""
    if tag is None:
        return None
    event = piece.event(event_id)
    pcs = task.row.form(tag.form, task.convention)
    for form in task.blueprint.forms_for(event.section, event.voice):
        if form != tag.form and task.row.form(form, task.convention) == pcs:
            return Tag(form, tag.position, tag.statement)
    return tag


def final_gate(task: Task, events: list[Event], trace: bool) -> Verdict:
    """Check a candidate: inferred tags always; the trace's own tags too when it has a trace."""
    piece = task.frame(tuple(events))
    tagged, unexplained, coverage, analysis = infer_tags(piece, task)
    strict, relaxed, found, checker = _gate(tagged, task)
    violations = [dict(v, tags="inferred") for v in found]
    if trace:
        t_strict, t_relaxed, t_found, _ = _gate(piece, task)
        strict, relaxed = strict and t_strict, relaxed and t_relaxed
        violations += [dict(v, tags="trace") for v in t_found]
    if unexplained:
        strict = relaxed = False
        violations.append({
            "code": "UNEXPLAINED",
            "event_ids": list(unexplained),
            "message": f"{len(unexplained)} note(s) belong to no row statement the analysis can find",
            "location": None,
            "tags": "inferred",
        })
    if not events:
        strict = relaxed = False
        violations.append({"code": "UNEXPLAINED", "event_ids": [], "message": "the candidate has no notes",
                           "location": None, "tags": "inferred"})
    return Verdict(strict, relaxed, tuple(violations), unexplained, coverage, checker, analysis)
