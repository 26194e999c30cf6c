"""serialkit: check, label, repair, generate and engrave twelve-tone music.

The public API is imported on first use, so ``import serialkit`` stays light::

    import serialkit as sk
    score = sk.read_score("fixtures/pieces/demo-piece.json")
    result = sk.check(score)                # the report `serialkit check` prints
    sk.annotate(score, out="labelled.musicxml")
    sk.repair(score, out="repaired.json")
    sk.render(score, "score.svg", check_report=result)
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

from serialkit.core.errors import (
    PieceError,
    PluginError,
    ProposerError,
    RowError,
    ScoreReadError,
    ScoreWriteError,
    SerialkitError,
    TaskError,
)

if TYPE_CHECKING:
    from serialkit.api import (
        CheckResult,
        Score,
        annotate,
        check,
        from_music21,
        generate,
        read_score,
        render,
        repair,
        to_music21,
    )
    from serialkit.check.annotate import Annotated
    from serialkit.check.report import CheckReport
    from serialkit.core.rows import Row
    from serialkit.harness.runner import RunResult
    from serialkit.harness.tasks import Task, load_task
    from serialkit.render import RenderResult
    from serialkit.repair import RepairResult

_LAZY = {
    "read_score": "serialkit.api",
    "check": "serialkit.api",
    "annotate": "serialkit.api",
    "repair": "serialkit.api",
    "render": "serialkit.api",
    "generate": "serialkit.api",
    "from_music21": "serialkit.api",
    "to_music21": "serialkit.api",
    "Score": "serialkit.api",
    "CheckResult": "serialkit.api",
    "CheckReport": "serialkit.check.report",
    "Annotated": "serialkit.check.annotate",
    "RepairResult": "serialkit.repair",
    "RenderResult": "serialkit.render",
    "RunResult": "serialkit.harness.runner",
    "Row": "serialkit.core.rows",
    "Task": "serialkit.harness.tasks",
    "load_task": "serialkit.harness.tasks",
}
"""Public name → the module it comes from, imported when the name is first used."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'serialkit' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


class _Package(types.ModuleType):
    """The ``serialkit`` module: ``serialkit.check`` and ``serialkit.render`` stay the API's
    functions when their subpackages are imported (reach those as ``from serialkit.check import
    ...`` or ``importlib.import_module("serialkit.check")``)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _LAZY and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__all__ = [
    "Annotated",
    "CheckReport",
    "CheckResult",
    "PieceError",
    "PluginError",
    "ProposerError",
    "RenderResult",
    "RepairResult",
    "Row",
    "RowError",
    "RunResult",
    "Score",
    "ScoreReadError",
    "ScoreWriteError",
    "SerialkitError",
    "Task",
    "TaskError",
    "__version__",
    "annotate",
    "check",
    "from_music21",
    "generate",
    "load_task",
    "read_score",
    "render",
    "repair",
    "to_music21",
]
