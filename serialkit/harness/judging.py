"""A candidate judged for release: its task's rules and time limits, then ``serialkit.check.gate``."""

from __future__ import annotations

from collections.abc import Iterable

from serialkit.check.gate import GateVerdict, gate_candidate
from serialkit.core.piece import Event
from serialkit.core.predicates import Limits, Rules
from serialkit.harness.tasks import Task

__all__ = ["judge_candidate", "limits_for", "rules_for"]


def rules_for(task: Task) -> Rules:
    """The checker's Rules for a task."""
    return Rules(
        tolerance=task.tolerance,
        immediate_repeats=task.immediate_repeats,
        oscillation_window=task.oscillation_window,
        max_crossing_share=task.max_crossing_share,
    )


def limits_for(task: Task) -> Limits:
    """The gate's time limits for a task: its length, grid, shortest and longest note; every
    task voice is monophonic."""
    tex = task.texture
    return Limits(length=task.length, grid=tex.grid, min_duration=tex.min_duration,
                  max_duration=tex.max_duration, monophonic=True)


def judge_candidate(task: Task, events: list[Event], unreadable: Iterable[str] = ()) -> GateVerdict:
    """Frame a candidate's notes by its task and pass them through the gate: their claimed tags
    (the harness's trace and the baselines' claims alike), their inferred reading, the sections
    and, for strict release, completeness. ``unreadable``: sections whose reply could not be read."""
    return gate_candidate(task.frame(tuple(events)), rules_for(task), unreadable=unreadable,
                          limits=limits_for(task))
