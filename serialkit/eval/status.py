"""``eval status``: how far a running or stopped experiment is, read from its run directory's files
(records, error log, manifest and the runner's ``status.json``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from serialkit.core.errors import RunDirError
from serialkit.eval.models import ModelSpec
from serialkit.eval.store import MANIFEST, RunStore


def experiment_status(run_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """``eval status``: done/total, errored, tokens, cost and ETA of a running or stopped experiment,
    from its files (records, error log, manifest and the runner's ``status.json``)."""
    store = RunStore(run_dir)
    manifest = store.read_manifest()
    if manifest is None and not store.path.exists():
        raise RunDirError(f"{store.root}: no {MANIFEST} or {store.path.name} here; is this a run directory?")
    records = store.records() if store.path.exists() else []
    errored = store.errored()
    models = {(m.get("proposer"), m.get("name")): ModelSpec(**m) for m in (manifest or {}).get("models", [])}
    prompt = sum(int(r.get("usage", {}).get("prompt_tokens", 0)) for r in records)
    completion = sum(int(r.get("usage", {}).get("completion_tokens", 0)) for r in records)
    unreadable = sum(int(r.get("usage", {}).get("unreadable_usage", 0)) for r in records)
    cost: float | None = 0.0
    for r in records:
        c = r.get("cost")
        if c is None:
            m = models.get((r.get("proposer"), r.get("model")))
            usage = r.get("usage", {})
            c = m.cost(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)) if m else None
        cost = None if c is None or cost is None else cost + float(c)
    live = store.read_status() or {}
    state = live.get("state", "stopped" if records else "not started")
    if state == "running" and not _alive(live.get("pid")):
        state = "stopped (the runner is gone)"
    planned = int((manifest or {}).get("planned") or live.get("planned") or len(records))
    planned = max(planned, int(live.get("planned") or 0))
    running = state == "running"
    return {
        "run_dir": str(store.root), "state": state, "stopped": live.get("stopped"),
        "planned": planned, "done": len(records), "errored": len(errored),
        "runs_in_flight": live.get("runs_in_flight", 0) if running else 0,
        "requests_in_flight": live.get("requests_in_flight", 0) if running else 0,
        "prompt_tokens": prompt, "completion_tokens": completion, "unreadable_usage": unreadable,
        "cost": None if cost is None else round(cost, 6),
        "eta": live.get("eta") if running else None, "updated": live.get("updated"),
        "by_model": _by_model(records),
    }


def _by_model(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for r in records:
        row = out.setdefault(f"{r.get('proposer')}:{r.get('model') or '-'}", {"done": 0, "released": 0})
        row["done"] += 1
        row["released"] += bool(r.get("released"))
    return out


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
