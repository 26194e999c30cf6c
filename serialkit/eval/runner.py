"""The experiment runner: tasks × variants × runs through the harness, resumable and concurrent."""

from __future__ import annotations

import concurrent.futures as cf
import fnmatch
import json
import os
import signal
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path
from typing import Any

from serialkit import __version__
from serialkit.core.errors import SerialkitError, TaskError
from serialkit.eval.bank import BankTask, load_bank
from serialkit.eval.metrics import piece_metrics
from serialkit.eval.store import MANIFEST, RunDirError, RunStore, run_key
from serialkit.harness.proposers.errors import EndpointError
from serialkit.io.atomic import atomic_write

VARIANTS: tuple[str, ...] = ("raw", "harness", "self-refine", "soft-rules")
PREDICATE_CODES: tuple[str, ...] = ("ROW", "ORDER", "COLL", "PC", "RANGE", "CROSS", "SCHED")
TASKS_DIR = "tasks"
HARNESS_FIELDS = ("proposer", "model", "mode", "coverage", "notes", "scheduled", "repairs", "drops")


@dataclass(frozen=True)
class EvalConfig:
    """What to run: the bank, conditions, repetitions, proposer and how fast."""

    bank: str = "builtin"
    tasks: tuple[str, ...] = ()  # glob patterns on task name or family; empty = all
    variants: tuple[str, ...] = VARIANTS
    runs: int = 3
    proposer: str = "stochastic"
    model: str | None = None
    base_url: str | None = None
    proposer_options: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    jobs: int = 1
    rate_limit: float | None = None  # run starts per second (remote endpoints)
    executor: str = "auto"  # "process", "thread" or "auto" (threads for remote proposers)

    def __post_init__(self) -> None:
        if self.runs < 1:
            raise TaskError(f"--runs must be at least 1, not {self.runs}")
        if self.jobs < 1:
            raise TaskError(f"--jobs must be at least 1, not {self.jobs}")
        if not self.variants:
            raise TaskError("no variants given")
        if self.rate_limit is not None and self.rate_limit <= 0:
            raise TaskError(f"--rate-limit must be positive, not {self.rate_limit}")
        if self.executor not in ("auto", "process", "thread"):
            raise TaskError(f"unknown executor {self.executor!r} (process, thread, auto)")


@dataclass(frozen=True)
class RunSpec:
    """One run to do: everything a worker process needs, picklable."""

    key: str
    task: str
    family: str
    task_path: str
    variant: str
    run: int
    proposer: str
    model: str | None
    seed: int
    proposer_options: dict[str, Any]
    bars: int | None


@dataclass(frozen=True)
class EvalSummary:
    """What a call to :func:`run_eval` did. ``errors`` are the runs that errored (the model
    server failed, or the run crashed): not recorded as delivered or undelivered, run again by
    ``--resume``; ``stopped`` says why no further runs were started (a fatal endpoint error)."""

    planned: int
    skipped: int
    finished: int
    errors: tuple[dict[str, Any], ...]
    interrupted: bool
    seconds: float
    run_dir: str
    stopped: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return asdict(self)


def run_seed(base: int, task: str, run: int) -> int:
    """The proposer seed of a run: the same for every variant, so conditions are paired."""
    return (base * 1_000_003 + zlib.crc32(f"{task}#{run}".encode())) % (2**31 - 1)


def select_tasks(tasks: Sequence[BankTask], patterns: Sequence[str]) -> list[BankTask]:
    """Tasks whose name or family matches one of the glob patterns (all when none given)."""
    if not patterns:
        return list(tasks)
    chosen = [t for t in tasks if any(fnmatch.fnmatchcase(t.name, p) or fnmatch.fnmatchcase(t.family, p)
                                      for p in patterns)]
    if not chosen:
        raise TaskError(f"--tasks {','.join(patterns)}: no task of the bank matches")
    return chosen


def plan_runs(tasks: Sequence[BankTask], config: EvalConfig) -> list[RunSpec]:
    """All runs in a stable order: run index, then task, then variant (early stops stay balanced)."""
    tasks = select_tasks(tasks, config.tasks)
    options = dict(config.proposer_options)
    if config.model:
        options.setdefault("model", config.model)
    if config.base_url:
        options.setdefault("base_url", config.base_url)
    specs = []
    for run in range(config.runs):
        for task in tasks:
            for variant in config.variants:
                specs.append(RunSpec(
                    key=run_key(task.name, variant, run, config.proposer, config.model),
                    task=task.name, family=task.family, task_path=str(task.path),
                    variant=variant, run=run, proposer=config.proposer, model=config.model,
                    seed=run_seed(config.seed, task.name, run), proposer_options=options,
                    bars=task.bars,
                ))
    return specs


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _usage(usage: Any) -> dict[str, float]:
    return {k: float(_get(usage, k, 0) or 0) for k in ("calls", "prompt_tokens", "completion_tokens", "seconds")}


def _violation_counts(verdict: Any) -> dict[str, int]:
    counts = dict.fromkeys(PREDICATE_CODES, 0)
    for v in _get(verdict, "violations", ()) or ():
        code = str(_get(v, "code"))
        counts[code] = counts.get(code, 0) + 1
    return counts


def execute(spec: RunSpec, out_dir: str) -> dict[str, Any]:
    """Run one task under one variant; write its outputs to ``out_dir``; return its record."""
    from serialkit.harness import load_task, run  # the harness is imported in the worker

    start_time = time.time()
    started = time.perf_counter()
    task = load_task(spec.task_path)
    result = run(task, variant=spec.variant, proposer=spec.proposer,
                 proposer_options=dict(spec.proposer_options), seed=spec.seed, out_dir=out_dir)
    wall = time.perf_counter() - started
    piece = _get(result, "piece")
    verdict = _get(result, "verdict")
    record: dict[str, Any] = {
        "key": spec.key, "task": spec.task, "family": spec.family, "variant": spec.variant,
        "run": spec.run, "proposer": spec.proposer, "model": spec.model, "seed": spec.seed,
        "released": bool(_get(result, "released", False)),
        "strict": bool(_get(verdict, "strict", False)),
        "relaxed": bool(_get(verdict, "relaxed", False)),
        "counts": _violation_counts(verdict),
        "usage": _usage(_get(result, "usage")),
        "wall_seconds": round(wall, 4), "start_time": round(start_time, 4),
        "piece": None, "score": None, "metrics": None,
    }
    out = Path(out_dir)
    to_record = getattr(result, "to_record", None)
    if callable(to_record):
        extra = to_record()
        record["harness"] = {k: extra[k] for k in HARNESS_FIELDS if k in extra}
    if piece is not None:
        if not (out / "candidate.json").exists():  # the harness writes the candidate piece itself
            atomic_write(out / "candidate.json", json.dumps(piece.to_dict(), ensure_ascii=False))
        record["piece"] = "candidate.json"
        record["metrics"] = piece_metrics(piece, spec.bars, _tolerance(task))
    if (out / "score.musicxml").exists():
        record["score"] = "score.musicxml"
    return record


def _tolerance(task: Any) -> Fraction:
    value = _get(task, "tolerance", 0)
    try:
        return Fraction(str(value or 0))
    except (ValueError, ZeroDivisionError):
        return Fraction(0)


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _attempt(spec: RunSpec, tmp: str) -> dict[str, Any]:
    try:
        return execute(spec, tmp)
    except EndpointError as exc:  # the model server failed: errored, not a verdict
        return {"key": spec.key, "error": str(exc), "endpoint": exc.to_dict()}
    except SerialkitError as exc:
        return {"key": spec.key, "error": f"{type(exc).__name__}: {exc}"}
    except Exception as exc:  # a failing run must not stop the experiment
        return {"key": spec.key, "error": f"{type(exc).__name__}: {exc}"}


class RateLimiter:
    """At most ``rate`` starts per second (a token bucket of size 1), thread-safe."""

    def __init__(self, rate: float | None) -> None:
        self.interval = 1.0 / rate if rate else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            time.sleep(start - now)


def _check_names(config: EvalConfig) -> None:
    """Unknown variants or proposers are bad input, found before anything runs."""
    from serialkit.harness import VARIANTS as known
    from serialkit.plugins import registry

    for variant in config.variants:
        if variant not in known:
            raise TaskError(f"unknown variant {variant!r} (known: {', '.join(known)})")
    registry("proposers").get(config.proposer)


def _pin_tasks(tasks: Sequence[BankTask], root: Path) -> list[BankTask]:
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


def _manifest(config: EvalConfig, tasks: Sequence[BankTask]) -> dict[str, Any]:
    return {
        "serialkit": __version__,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "config": {k: v for k, v in asdict(config).items() if k not in ("jobs",)},
        "tasks": [{"name": t.name, "family": t.family, "path": f"{TASKS_DIR}/{t.path.name}"} for t in tasks],
    }


def run_eval(config: EvalConfig, run_dir: str | os.PathLike[str], *, resume: bool = False,
             progress: Callable[[int], None] | None = None) -> EvalSummary:
    """Run every planned run not yet recorded in ``run_dir``; records are appended as runs finish.

    Without ``resume`` the directory must not hold records yet. Ctrl-C stops new runs, records the
    ones in flight and returns with ``interrupted=True``; a kill loses at most the runs in flight.
    """
    started = time.perf_counter()
    store = RunStore(run_dir)
    existing = store.records() if store.path.exists() else []
    if existing and not resume:
        raise RunDirError(f"{store.root}: already holds {len(existing)} runs; pass --resume to continue it")
    _check_names(config)
    tasks = _pin_tasks(select_tasks(load_bank(config.bank), config.tasks), store.root)
    store.root.mkdir(parents=True, exist_ok=True)
    store.repair()
    store.clean_tmp()
    if not (store.root / MANIFEST).exists():
        atomic_write(store.root / MANIFEST, json.dumps(_manifest(config, tasks), indent=2))
    specs = plan_runs(tasks, config)
    done = {r["key"] for r in existing}
    todo = [s for s in specs if s.key not in done]
    errors: list[dict[str, Any]] = []
    finished = 0
    stop: list[str] = []

    def record(spec: RunSpec, tmp: Path, result: dict[str, Any]) -> None:
        nonlocal finished
        if "error" in result:
            endpoint = result.get("endpoint")
            errors.append({"key": spec.key, "error": result["error"],
                           "kind": endpoint["kind"] if endpoint else "crash"})
            store.append_error({**result, "task": spec.task, "family": spec.family, "variant": spec.variant,
                                "run": spec.run, "proposer": spec.proposer, "model": spec.model,
                                "time": datetime.now(UTC).isoformat(timespec="seconds")})
            if endpoint and endpoint.get("fatal") and not stop:
                stop.append(result["error"])  # every further run would fail the same way
        else:
            result["dir"] = store.commit_dir(spec.key, tmp)
            result["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
            store.append(result)
            finished += 1
        if progress is not None:
            progress(1)

    limiter = RateLimiter(config.rate_limit)
    interrupted = False
    threads = config.executor == "thread" or (config.executor == "auto" and config.proposer == "openai")
    if config.jobs == 1:
        try:
            for spec in todo:
                if stop:
                    break
                limiter.wait()
                tmp = store.tmp_dir(spec.key, uuid.uuid4().hex[:8])
                record(spec, tmp, _attempt(spec, str(tmp)))
        except KeyboardInterrupt:
            interrupted = True
    else:
        interrupted = _run_pool(todo, config.jobs, threads, limiter, store, record, stop)
    store.clean_tmp()
    return EvalSummary(len(specs), len(specs) - len(todo), finished, tuple(errors), interrupted,
                       round(time.perf_counter() - started, 3), str(store.root),
                       stop[0] if stop else None)


def _run_pool(todo: Sequence[RunSpec], jobs: int, threads: bool, limiter: RateLimiter,
              store: RunStore, record: Callable[[RunSpec, Path, dict[str, Any]], None],
              stop: list[str]) -> bool:
    """Keep ``jobs`` runs in flight; the parent alone writes records. True when interrupted."""
    pool: cf.Executor
    if threads:
        pool = cf.ThreadPoolExecutor(max_workers=jobs)
    else:
        pool = cf.ProcessPoolExecutor(max_workers=jobs, initializer=_ignore_sigint)
    pending = iter(todo)
    flight: dict[cf.Future[dict[str, Any]], tuple[RunSpec, Path]] = {}
    interrupted = False

    def submit() -> bool:
        if stop:
            return False
        spec = next(pending, None)
        if spec is None:
            return False
        limiter.wait()
        tmp = store.tmp_dir(spec.key, uuid.uuid4().hex[:8])
        flight[pool.submit(_attempt, spec, str(tmp))] = (spec, tmp)
        return True

    try:
        while len(flight) < jobs and submit():
            pass
        while flight:
            ready, _ = cf.wait(flight, return_when=cf.FIRST_COMPLETED)
            for future in ready:
                spec, tmp = flight.pop(future)
                record(spec, tmp, _result(spec, future))
                if not interrupted:
                    submit()
    except KeyboardInterrupt:
        interrupted = True
        try:  # finish and record what is in flight; a second Ctrl-C abandons it
            for future in cf.as_completed(list(flight)):
                spec, tmp = flight.pop(future)
                record(spec, tmp, _result(spec, future))
        except KeyboardInterrupt:
            pass
    finally:
        pool.shutdown(wait=not interrupted, cancel_futures=True)
    return interrupted


def _result(spec: RunSpec, future: cf.Future[dict[str, Any]]) -> dict[str, Any]:
    try:
        return future.result()
    except Exception as exc:  # a worker that died (BrokenProcessPool) fails only its runs
        return {"key": spec.key, "error": f"{type(exc).__name__}: {exc}"}


def load_records(run_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The finished runs of a run directory (error if it has none)."""
    store = RunStore(run_dir)
    if not store.path.exists():
        raise RunDirError(f"{store.root}: no {store.path.name} here; is this a run directory?")
    return store.records()
