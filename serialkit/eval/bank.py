"""The task bank: 40 tasks in families, shipped in the package (``serialkit/eval/bank``)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from serialkit.core.errors import TaskError

BANK_DIR = Path(__file__).resolve().parent / "bank"


@dataclass(frozen=True, slots=True)
class BankTask:
    """One task file of a bank: its name, family, path and number of bars."""

    name: str
    family: str
    path: Path
    bars: int | None


def bank_dir(spec: str | os.PathLike[str]) -> Path:
    """``builtin`` → the shipped bank; otherwise a directory of task JSON files."""
    if str(spec) == "builtin":
        return BANK_DIR
    path = Path(spec)
    if not path.is_dir():
        raise TaskError(f"{path}: not a directory of task files (or 'builtin')")
    return path


def family_of(name: str, data: dict[str, Any]) -> str:
    """A task's family: its ``family`` field (or ``metadata.family``), else its name without the number."""
    meta = data.get("metadata")
    for value in (data.get("family"), meta.get("family") if isinstance(meta, dict) else None):
        if isinstance(value, str) and value:
            return value
    stem, _, tail = name.rpartition("-")
    return stem if stem and tail.isdigit() else name


def _bars(data: dict[str, Any]) -> int | None:
    value = data.get("bars")
    if isinstance(value, int):
        return value
    if isinstance(value, list):
        return len(value)
    return None


def read_bank_task(path: Path) -> BankTask:
    """The bank entry for one task file (name, family, bars) without running anything."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskError(f"{path}: cannot read task file ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise TaskError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    if not isinstance(data, dict):
        raise TaskError(f"{path}: a task file holds a JSON object")
    name = data.get("name") or data.get("id") or path.stem
    return BankTask(str(name), family_of(str(name), data), path, _bars(data))


def load_bank(spec: str | os.PathLike[str] = "builtin", validate: bool = False) -> list[BankTask]:
    """The tasks of a bank, sorted by file name; ``validate`` also loads each through the harness."""
    directory = bank_dir(spec)
    paths = sorted(p for p in directory.glob("*.json") if not p.name.startswith("."))
    if not paths:
        raise TaskError(f"{directory}: no task files (*.json)")
    tasks = [read_bank_task(p) for p in paths]
    names: dict[str, Path] = {}
    for task in tasks:
        if task.name in names:
            raise TaskError(f"{task.path}: task name {task.name!r} also used by {names[task.name]}")
        names[task.name] = task.path
    if validate:
        from serialkit.harness import load_task

        for task in tasks:
            load_task(str(task.path))
    return tasks
