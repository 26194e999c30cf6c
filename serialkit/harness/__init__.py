"""The generate–verify–repair–trace harness: tasks, proposers, repair ladder, loop, certificates.

Task data (``load_task``, ``Task``) loads without the runner: ``run``, ``RunResult``, ``MODES``,
``VARIANTS`` and ``Usage`` are imported on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from serialkit.harness.tasks import Slot, Task, Texture, list_tasks, load_task

if TYPE_CHECKING:
    from serialkit.harness.runner import MODES, VARIANTS, RunResult, run
    from serialkit.harness.session import Usage

_LAZY = {
    "MODES": "serialkit.harness.runner",
    "VARIANTS": "serialkit.harness.runner",
    "RunResult": "serialkit.harness.runner",
    "run": "serialkit.harness.runner",
    "Usage": "serialkit.harness.session",
}

__all__ = [
    "MODES",
    "VARIANTS",
    "RunResult",
    "Slot",
    "Task",
    "Texture",
    "Usage",
    "list_tasks",
    "load_task",
    "run",
]


def __getattr__(name: str) -> Any:
    """The runner's names, imported when first asked for."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'serialkit.harness' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
