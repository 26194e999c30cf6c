"""The experiment runner: tasks × variants × runs × models through the harness, resumable and concurrent.

Local proposers run whole runs in parallel (``--jobs``, processes). Remote ones (``openai``) run
each run in a worker thread and share one :class:`~serialkit.harness.proposers.openai.Endpoint` per
model: an asyncio loop over the async client that keeps up to ``--concurrency`` requests in flight
across runs under the model's ``--rpm``/``--tpm`` limits. Each run stays deterministic given its
transcript. A budget (``--max-cost``, ``--max-tokens``) stops starting runs once reached; runs in
flight finish and are recorded, and ``--resume`` goes on from there.

This module ties the parts together: the plan (:mod:`~serialkit.eval.plan`), the manifest
(:mod:`~serialkit.eval.manifest`), one run (:mod:`~serialkit.eval.execute`), the pool
(:mod:`~serialkit.eval.pool`), the live status (:mod:`~serialkit.eval.monitor`) and the records
(:mod:`~serialkit.eval.store`).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from serialkit.core.errors import RunDirError
from serialkit.eval.bank import load_bank
from serialkit.eval.execute import attempt, open_endpoints, shared_options
from serialkit.eval.manifest import pin_tasks, setup_manifest
from serialkit.eval.monitor import Monitor, StatusTicker
from serialkit.eval.plan import (
    PREDICATE_CODES,
    EvalConfig,
    RunSpec,
    check_names,
    plan_runs,
    select_tasks,
)
from serialkit.eval.pool import StartPacer, run_pool
from serialkit.eval.status import experiment_status
from serialkit.eval.store import MANIFEST, RunStore, lock_run_dir
from serialkit.interrupts import Interruptions as _Interruptions
from serialkit.io.files.atomic import atomic_write

# run_eval and its summary, and the names its callers use beside it
__all__ = ["PREDICATE_CODES", "EvalConfig", "EvalSummary", "RunSpec", "experiment_status", "plan_runs",
           "run_eval"]


@dataclass(frozen=True)
class EvalSummary:
    """What a call to :func:`run_eval` did. ``errors`` are the runs that errored (the model
    server failed, or the run crashed): not recorded as delivered or undelivered, run again by
    ``--resume``; ``stopped`` says why no further runs were started (a fatal endpoint error, or
    ``budget: …``)."""

    planned: int
    skipped: int
    finished: int
    errors: tuple[dict[str, Any], ...]
    interrupted: bool
    seconds: float
    run_dir: str
    stopped: str | None = None
    budget: bool = False
    requests: int = 0
    peak_in_flight: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return asdict(self)


def run_eval(config: EvalConfig, run_dir: str | os.PathLike[str], *, resume: bool = False,
             progress: Callable[[int], None] | None = None,
             on_run: Callable[[dict[str, Any]], None] | None = None,
             on_status: Callable[[dict[str, Any]], None] | None = None,
             status_every: float = 1.0, extend: bool = False) -> EvalSummary:
    """Run every planned run not yet recorded in ``run_dir``; records are appended as runs finish.

    Without ``resume`` the directory must not hold records yet. A directory made with other
    settings (``manifest.json``: bank, tasks, variants, runs, seed, models, proposer options; not
    how fast or within what budget) is refused, naming them, unless ``extend``: then this call's
    runs are added to the experiment and the manifest records the extension (``extended``) and the
    runs planned in all (``extend`` implies ``resume``). Ctrl-C stops new runs, records the
    ones in flight and returns with ``interrupted=True``; a kill loses at most the runs in flight.
    ``on_run`` gets each finished (or errored) run's record; ``on_status`` a status snapshot every
    ``status_every`` seconds (also written to ``RUN_DIR/status.json``). The run directory is locked
    for the call: a second runner on it is refused (:func:`~serialkit.eval.store.lock_run_dir`).
    """
    with lock_run_dir(run_dir):
        return _run_eval(config, run_dir, resume or extend, progress, on_run, on_status, status_every, extend)


def _run_eval(config: EvalConfig, run_dir: str | os.PathLike[str], resume: bool,
              progress: Callable[[int], None] | None, on_run: Callable[[dict[str, Any]], None] | None,
              on_status: Callable[[dict[str, Any]], None] | None, status_every: float,
              extend: bool = False) -> EvalSummary:
    started = time.perf_counter()
    store = RunStore(run_dir)
    existing = store.records() if store.path.exists() else []
    if existing and not resume:
        raise RunDirError(f"{store.root}: already holds {len(existing)} runs; pass --resume to continue it")
    check_names(config)
    models = config.model_specs()
    selected = select_tasks(load_bank(config.bank), config.tasks)
    specs = plan_runs(selected, config)
    manifest = setup_manifest(store, config, selected, specs, extend)  # before anything is written
    tasks = pin_tasks(selected, store.root)
    store.root.mkdir(parents=True, exist_ok=True)
    if manifest is not None:
        atomic_write(store.root / MANIFEST, json.dumps(manifest, indent=2))
    store.repair()
    store.clean_tmp()
    specs = plan_runs(tasks, config)
    done = {r["key"] for r in existing}
    todo = [s for s in specs if s.key not in done]
    endpoints = open_endpoints(config, models, {s.endpoint for s in todo})
    monitor = Monitor(store, len(specs), len(specs) - len(todo), models, endpoints)
    errors: list[dict[str, Any]] = []
    stop: list[str] = []
    budget: list[bool] = []

    def record(spec: RunSpec, tmp: Path, result: dict[str, Any]) -> None:
        remote = spec.endpoint in endpoints
        if "error" in result:
            result = store.keep_transcript(spec.key, tmp, result)
            endpoint = result.get("endpoint")
            errors.append({"key": spec.key, "error": result["error"],
                           "kind": endpoint["kind"] if endpoint else "crash"})
            # the run it was, for the error log and for ``on_run`` alike (``eval run --json``)
            result = {**result, "task": spec.task, "family": spec.family, "variant": spec.variant,
                      "run": spec.run, "proposer": spec.proposer, "model": spec.model,
                      "time": datetime.now(UTC).isoformat(timespec="seconds")}
            store.append_error(result)
            if endpoint and endpoint.get("fatal") and not stop:
                stop.append(result["error"])  # every further run would fail the same way
        else:
            usage = result.get("usage", {})
            result["cost"] = models[spec.endpoint].cost(usage.get("prompt_tokens", 0),
                                                        usage.get("completion_tokens", 0))
            result["dir"] = store.commit_dir(spec.key, tmp)
            result["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
            store.append(result)
        monitor.add(result, remote)
        if progress is not None:
            progress(1)
        if on_run is not None:
            on_run(result)

    def may_start() -> bool:
        if stop:
            return False
        prompt, completion, cost = monitor.spent()
        reason = None
        if config.max_tokens is not None and prompt + completion >= config.max_tokens:
            reason = f"budget: {prompt + completion} tokens spent (--max-tokens {config.max_tokens})"
        elif config.max_cost is not None and cost is not None and cost >= config.max_cost:
            reason = f"budget: ${cost:.4f} spent (--max-cost {config.max_cost:g})"
        if reason:
            stop.append(reason)
            budget.append(True)
            return False
        return True

    pacer = StartPacer(config.rate_limit)
    interrupted = False
    remote = bool(endpoints)
    threads = config.executor == "thread" or (config.executor == "auto" and remote)
    workers = config.jobs
    if remote:
        workers = max(workers, sum(e.concurrency for e in endpoints.values()))
    ticker = StatusTicker(monitor, on_status, status_every)
    try:
        if workers == 1 and not remote:
            # Ctrl-C and SIGTERM only count here: the run in flight finishes and is recorded, then no
            # further run starts; a second one abandons it at once. (A remote run, even one at a
            # time, goes to the pool: its main thread waits on a future, where an interrupt raised
            # could leave the future's lock held and the endpoint's loop stuck behind it.)
            signals = _Interruptions(abort_at=2)
            try:
                with signals.noted():
                    for spec in todo:
                        if signals.count or not may_start():
                            break
                        pacer.wait()
                        if signals.count:
                            break
                        tmp = store.tmp_dir(spec.key, uuid.uuid4().hex[:8])
                        monitor.running = 1
                        record(spec, tmp, attempt(spec, str(tmp), shared_options(spec, endpoints)))
                        monitor.running = 0
                interrupted = bool(signals.count)
            except KeyboardInterrupt:  # a second signal, or one from a callback
                interrupted = True
        else:
            interrupted = run_pool(todo, workers, threads, pacer, store, record, may_start, endpoints,
                                    monitor)
    finally:
        for endpoint in endpoints.values():
            endpoint.close()
        monitor.state = "interrupted" if interrupted else ("stopped" if stop else "finished")
        monitor.stopped = stop[0] if stop else None
        ticker.stop()
    store.clean_tmp()
    prompt, completion, cost = monitor.spent()
    snap = monitor.snapshot()
    return EvalSummary(len(specs), len(specs) - len(todo), monitor.finished, tuple(errors), interrupted,
                       round(time.perf_counter() - started, 3), str(store.root),
                       stop[0] if stop else None, bool(budget), snap["requests"],
                       snap["peak_requests_in_flight"], prompt, completion,
                       None if cost is None else round(cost, 6))
