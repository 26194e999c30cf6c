"""A run directory's manifest (``manifest.json``): the setup it was made with and each extension,
the task copies it runs from, and the check that a resumed run directory keeps its setup."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from serialkit import __version__
from serialkit.core.errors import RunDirError, SerialkitError
from serialkit.eval.bank import BankTask, read_bank_task
from serialkit.eval.models import ModelSpec
from serialkit.eval.plan import EvalConfig, RunSpec, plan_runs
from serialkit.eval.store import RunStore
from serialkit.io.files.atomic import atomic_write

TASKS_DIR = "tasks"


def pin_tasks(tasks: Sequence[BankTask], root: Path) -> list[BankTask]:
    """Copy each task file into ``RUN_DIR/tasks`` on first use and run from the copy.

    The run directory is then self-contained, and a resumed experiment runs the very tasks it
    started with even if the bank changed in between.
    """
    pinned = []
    for task in tasks:
        copy = root / TASKS_DIR / f"{task.name}.json"
        if not copy.exists():
            atomic_write(copy, task.path.read_bytes())
        pinned.append(replace(task, path=copy))
    return pinned


def _manifest(config: EvalConfig, tasks: Sequence[BankTask], planned: int) -> dict[str, Any]:
    return {
        "serialkit": __version__,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "config": {k: v for k, v in asdict(config).items() if k not in ("jobs",)},
        "models": [asdict(m) for m in config.model_specs()],
        "planned": planned,
        "tasks": [{"name": t.name, "family": t.family, "path": f"{TASKS_DIR}/{t.name}.json"} for t in tasks],
    }


#: settings that say how an experiment runs, not what it is: a resumed experiment may change them
PACING = frozenset({"jobs", "rate_limit", "executor", "concurrency", "rpm", "tpm", "max_cost", "max_tokens",
                    "window"})
#: proposer options of the environment (a resumed experiment may change them too)
PACING_OPTIONS = frozenset({"timeout", "max_retries", "max_reply_bytes"})
SETUP_KEYS = ("bank", "tasks", "variants", "runs", "seed")


def _setups(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """The setups a run directory was made with: the first, then each ``--extend``'s."""
    return [manifest, *[e for e in manifest.get("extended", []) if isinstance(e, dict)]]


def _experiment(setup: dict[str, Any]) -> dict[str, Any]:
    """What a setup (a manifest or one of its extensions) says the experiment is, pacing left out."""
    cfg = setup.get("config") or {}
    out = {k: cfg[k] for k in SETUP_KEYS if k in cfg}
    out["options"] = {k: v for k, v in (cfg.get("proposer_options") or {}).items() if k not in PACING_OPTIONS}
    out["models"] = [{"proposer": m.get("proposer"), "model": m.get("name"), "base_url": m.get("base_url"),
                      "options": {k: v for k, v in (m.get("options") or {}).items() if k not in PACING_OPTIONS}}
                     for m in setup.get("models") or []]
    plain: dict[str, Any] = json.loads(json.dumps(out, default=str))  # tuples as lists, as the manifest has them
    return plain


def setup_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What differs between two setups, one phrase each (``runs 2 → 3``, ``model 'a' → 'b'``)."""
    a, b = _experiment(old), _experiment(new)
    changes = []
    for key in (*SETUP_KEYS, "options"):
        if key in a and key in b and a[key] != b[key]:
            changes.append(f"{key} {_shown(a[key])} → {_shown(b[key])}")
    ma, mb = a["models"], b["models"]
    if len(ma) == len(mb) == 1:
        for key in ("proposer", "model", "base_url", "options"):
            if ma[0][key] != mb[0][key]:
                name = "model options" if key == "options" else key.replace("_", "-")
                changes.append(f"{name} {_shown(ma[0][key])} → {_shown(mb[0][key])}")
    elif ma != mb:
        def names(ms: list[dict[str, Any]]) -> str:
            return "[" + ", ".join(f"{m['proposer']}:{m['model'] or '-'}@{m['base_url'] or '-'}" for m in ms) + "]"
        changes.append(f"models {names(ma)} → {names(mb)}")
    return changes


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ",".join(value) or "(all)"
    return json.dumps(value, sort_keys=True)


def _planned_keys(setup: dict[str, Any], root: Path) -> set[str]:
    """The run keys a recorded setup planned (from the task copies in the run directory)."""
    cfg = dict(setup.get("config") or {})
    fields = {f for f in EvalConfig.__dataclass_fields__}
    cfg = {k: v for k, v in cfg.items() if k in fields}
    cfg["models"] = tuple(ModelSpec(**m) for m in cfg.get("models") or ())
    for key in ("tasks", "variants"):
        if key in cfg:
            cfg[key] = tuple(cfg[key])
    try:
        config = EvalConfig(**cfg)
        tasks = [read_bank_task(root / t["path"]) for t in setup.get("tasks", [])]
        return {s.key for s in plan_runs(tasks, replace(config, tasks=()))}
    except (SerialkitError, TypeError, KeyError, ValueError):
        return set()


def setup_manifest(store: RunStore, config: EvalConfig, tasks: Sequence[BankTask], specs: Sequence[RunSpec],
                    extend: bool) -> dict[str, Any] | None:
    """The manifest to write (None: keep the one there). A run directory made with other settings
    is refused, naming them, unless ``extend``: then the manifest records them as an extension."""
    manifest = store.read_manifest()
    new = _manifest(config, tasks, len(specs))
    if manifest is None:
        return new
    changes = setup_changes(_setups(manifest)[-1], new)
    if not changes:
        return None
    if not extend:
        raise RunDirError(f"{store.root}: made with other settings ({'; '.join(changes)}); resume it with "
                          "its own (manifest.json), add these runs to it with --extend, or use a new RUN_DIR")
    planned: set[str] = set()
    for setup in _setups(manifest):
        planned |= _planned_keys(setup, store.root)
    planned |= {s.key for s in specs}
    extension = {k: new[k] for k in ("created", "config", "models", "tasks")}
    extension["planned"] = len(specs)
    extension["changes"] = changes
    return {**manifest, "planned": max(len(planned), int(manifest.get("planned") or 0)),
            "extended": [*manifest.get("extended", []), extension]}
