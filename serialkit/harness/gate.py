"""The final gate of every variant: ``serialkit.check.gate`` on the candidate framed by its task."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from serialkit.check.gate import CODES, GateVerdict, gate_candidate
from serialkit.core.piece import Event
from serialkit.harness.tasks import Task

Verdict = GateVerdict
"""The gate's verdict (strict, relaxed, violations, verified labels, delivered / scheduled)."""

__all__ = ["CODES", "Verdict", "final_gate", "limits_for", "rules_for"]


def rules_for(task: Task) -> Any:
    """The checker's Rules for a task."""
    from serialkit.core.predicates import Rules

    return Rules(
        tolerance=task.tolerance,
        immediate_repeats=task.immediate_repeats,
        oscillation_window=task.oscillation_window,
        max_crossing_share=task.max_crossing_share,
    )


def limits_for(task: Task) -> Any:
    """The gate's time limits for a task: its length, grid, shortest and longest note; every
    task voice is monophonic."""
    from serialkit.core.predicates import Limits

    tex = task.texture
    return Limits(length=task.length, grid=tex.grid, min_duration=tex.min_duration,
                  max_duration=tex.max_duration, monophonic=True)


def final_gate(task: Task, events: list[Event], trace: bool | None = None,
               unreadable: Iterable[str] = ()) -> Verdict:
    """Check a candidate with the one gate: its claimed tags (wherever its notes carry them — the
    harness's trace and the baselines' claims alike), its inferred reading, its sections and, for
    strict release, its completeness. ``trace`` is accepted for old callers and changes nothing:
    no variant gets a laxer gate. ``unreadable``: sections whose reply could not be read."""
    del trace
    return gate_candidate(task.frame(tuple(events)), rules_for(task), unreadable=unreadable,
                          limits=limits_for(task))
