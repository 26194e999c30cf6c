"""The generate–verify–repair–trace harness: tasks, proposers, repair ladder, loop, certificates."""

from __future__ import annotations

from serialkit.harness.gate import Verdict, final_gate
from serialkit.harness.runner import MODES, VARIANTS, RunResult, run
from serialkit.harness.session import Usage
from serialkit.harness.tasks import Slot, Task, Texture, list_tasks, load_task

__all__ = [
    "MODES",
    "VARIANTS",
    "RunResult",
    "Slot",
    "Task",
    "Texture",
    "Usage",
    "Verdict",
    "final_gate",
    "list_tasks",
    "load_task",
    "run",
]
