"""The experiment runner: tasks × variants × runs × models through the harness, resumable and concurrent.

Local proposers run whole runs in parallel (``--jobs``, processes). Remote ones (``openai``) run
each run in a worker thread and share one :class:`~serialkit.harness.proposers.openai.Endpoint` per
model: an asyncio loop over the async client that keeps up to ``--concurrency`` requests in flight
across runs under the model's ``--rpm``/``--tpm`` limits. Each run stays deterministic given its
transcript. A budget (``--max-cost``, ``--max-tokens``) stops starting runs once reached; runs in
flight finish and are recorded, and ``--resume`` goes on from there.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import fnmatch
import json
import os
import signal
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path
from typing import Any

from serialkit import __version__
from serialkit.core.errors import SerialkitError, TaskError
from serialkit.eval.bank import BankTask, load_bank, read_bank_task
from serialkit.eval.metrics import piece_metrics
from serialkit.eval.models import ModelSpec, with_prices
from serialkit.eval.store import (
    ERRORS,
    MANIFEST,
    STATUS,
    RunDirError,
    RunStore,
    lock_run_dir,
    run_key,
)
from serialkit.harness.proposers.errors import EndpointError
from serialkit.interrupts import Interruptions as _Interruptions
from serialkit.io.atomic import atomic_write

VARIANTS: tuple[str, ...] = ("raw", "harness", "self-refine", "soft-rules")
# every variant in report order; ``harness-paper`` (the harness on the paper's ladder) runs when asked
VARIANT_ORDER: tuple[str, ...] = ("raw", "harness", "harness-paper", "self-refine", "soft-rules")
PREDICATE_CODES: tuple[str, ...] = ("ROW", "ORDER", "COLL", "PC", "RANGE", "CROSS", "SCHED")
TASKS_DIR = "tasks"
HARNESS_FIELDS = ("proposer", "model", "mode", "coverage", "notes", "scheduled", "repairs", "drops", "ladder",
                  "authorship")
REMOTE = frozenset({"openai"})


@dataclass(frozen=True)
class EvalConfig:
    """What to run: the bank, conditions, repetitions, models and how fast."""

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
    rate_limit: float | None = None  # run starts per second
    executor: str = "auto"  # "process", "thread" or "auto" (threads for remote proposers)
    models: tuple[ModelSpec, ...] = ()  # several models; empty = (proposer, model, base_url)
    concurrency: int | None = None  # requests in flight per remote model (default: jobs)
    rpm: int | None = None  # requests per minute per remote model (unless its entry says)
    tpm: int | None = None  # tokens per minute per remote model
    max_cost: float | None = None  # USD this invocation may spend
    max_tokens: int | None = None  # tokens this invocation may spend
    window: float = 60.0  # the rate limits' window in seconds (tests shorten it)

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
        for name in ("concurrency", "rpm", "tpm", "max_tokens"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise TaskError(f"--{name.replace('_', '-')} must be at least 1, not {value}")
        if self.max_cost is not None and self.max_cost <= 0:
            raise TaskError(f"--max-cost must be positive, not {self.max_cost}")

    def model_specs(self) -> tuple[ModelSpec, ...]:
        """The experiment's models (one from proposer/model/base_url when none are listed)."""
        models = self.models or (ModelSpec(self.model, self.proposer, self.base_url),)
        return with_prices(models)


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
    endpoint: int = 0  # index of its model in ``EvalConfig.model_specs()``


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


def run_options(config: EvalConfig, m: ModelSpec) -> dict[str, Any]:
    """The proposer options of model ``m``'s runs: the experiment's, its entry's, its name and URL."""
    options = {**config.proposer_options, **m.options}
    if m.name:
        options.setdefault("model", m.name)
    if m.base_url:
        options.setdefault("base_url", m.base_url)
    return options


def plan_runs(tasks: Sequence[BankTask], config: EvalConfig) -> list[RunSpec]:
    """All runs in a stable order: run index, task, variant, model (early stops stay balanced)."""
    tasks = select_tasks(tasks, config.tasks)
    models = config.model_specs()
    specs = []
    for run in range(config.runs):
        for task in tasks:
            for variant in config.variants:
                for index, m in enumerate(models):
                    options = run_options(config, m)
                    specs.append(RunSpec(
                        key=run_key(task.name, variant, run, m.proposer, m.name),
                        task=task.name, family=task.family, task_path=str(task.path),
                        variant=variant, run=run, proposer=m.proposer, model=m.name,
                        seed=run_seed(config.seed, task.name, run), proposer_options=options,
                        bars=task.bars, endpoint=index,
                    ))
    return specs


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _usage(usage: Any) -> dict[str, float]:
    """A run's usage: the counts (calls, tokens, calls whose token counts the server gave unreadable)
    as integers, the seconds as a number."""
    counts: dict[str, float] = {k: int(_get(usage, k, 0) or 0) for k in ("calls", "prompt_tokens", "completion_tokens")}
    counts["unreadable_usage"] = int(_get(usage, "unreadable_calls", 0) or _get(usage, "unreadable_usage", 0) or 0)
    return {**counts, "seconds": float(_get(usage, "seconds", 0) or 0)}


def _violation_counts(verdict: Any) -> dict[str, int]:
    counts = dict.fromkeys(PREDICATE_CODES, 0)
    for v in _get(verdict, "violations", ()) or ():
        code = str(_get(v, "code"))
        counts[code] = counts.get(code, 0) + 1
    return counts


def execute(spec: RunSpec, out_dir: str, shared: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run one task under one variant; write its outputs to ``out_dir``; return its record.
    ``shared`` are proposer options that cannot be pickled (an endpoint shared by runs)."""
    from serialkit.harness import load_task, run  # the harness is imported in the worker

    start_time = time.time()
    started = time.perf_counter()
    task = load_task(spec.task_path)
    result = run(task, variant=spec.variant, proposer=spec.proposer,
                 proposer_options={**spec.proposer_options, **(shared or {})}, seed=spec.seed, out_dir=out_dir)
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
        if "authorship" in extra and record["released"]:  # shares of released notes only
            record["authorship"] = extra["authorship"]
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
    """A pool worker's first act: leave Ctrl-C and SIGTERM sent to the whole group to the parent
    (which lets the runs in flight finish and records them), then let them through again (held
    back by ``_signals_held`` while the worker was forked)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD)


HELD = {signal.SIGINT, signal.SIGTERM}


@contextlib.contextmanager
def _signals_held(hold: bool = True) -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM back in this thread while workers may be forked: a worker forked
    with them blocked cannot be interrupted before ``_ignore_sigint`` runs (a Ctrl-C inside the
    fork's own bookkeeping left a broken worker and a runner that never exited). The parent
    gets them after."""
    if not hold:
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _attempt(spec: RunSpec, tmp: str, shared: dict[str, Any] | None = None) -> dict[str, Any]:
    try:
        return execute(spec, tmp, shared)
    except EndpointError as exc:  # the model server failed: errored, not a verdict
        return {"key": spec.key, "error": str(exc), "endpoint": exc.to_dict()}
    except SerialkitError as exc:
        return {"key": spec.key, "error": f"{type(exc).__name__}: {exc}"}
    except Exception as exc:  # a failing run must not stop the experiment
        return {"key": spec.key, "error": f"{type(exc).__name__}: {exc}"}


class RateLimiter:
    """At most ``rate`` run starts per second (a token bucket of size 1), thread-safe."""

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
    """Unknown variants, proposers or proposer options are bad input, found before anything runs."""
    from serialkit.harness import VARIANTS as known
    from serialkit.harness.session import check_proposer_options
    from serialkit.plugins import registry

    for variant in config.variants:
        if variant not in known:
            raise TaskError(f"unknown variant {variant!r} (known: {', '.join(known)})")
    for m in config.model_specs():
        registry("proposers").get(m.proposer)
        # an option the proposer does not take would fail every run: refuse it before any starts
        check_proposer_options(m.proposer, run_options(config, m))
    if config.max_cost is not None:
        unpriced = [m.name or m.proposer for m in config.model_specs() if not m.priced]
        if unpriced:
            raise TaskError(f"--max-cost: no price for {', '.join(unpriced)}; give input_price and "
                            "output_price in a --models file (or SERIALKIT_PRICES), or use --max-tokens")


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


def _setup_manifest(store: RunStore, config: EvalConfig, tasks: Sequence[BankTask], specs: Sequence[RunSpec],
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


class Monitor:
    """What an experiment is doing right now: runs done, requests in flight, tokens, cost, ETA.
    Written to ``RUN_DIR/status.json`` (for ``eval status``) and shown by the CLI."""

    def __init__(self, store: RunStore, planned: int, done: int, models: tuple[ModelSpec, ...],
                 endpoints: dict[int, Any]) -> None:
        self.store = store
        self.planned = planned
        self.done_before = done
        self.models = models
        self.endpoints = endpoints
        self.finished = 0
        self.errored = 0
        self.running = 0
        self.tokens = [0, 0]  # prompt, completion of runs recorded now (local proposers)
        self.cost_local = 0.0
        self.started = time.monotonic()
        self.state = "running"
        self.stopped: str | None = None
        self._lock = threading.Lock()

    def spent(self) -> tuple[int, int, float | None]:
        """(prompt tokens, completion tokens, USD or None) spent by this invocation so far."""
        prompt, completion = self.tokens
        cost: float | None = self.cost_local
        for index, endpoint in self.endpoints.items():
            stats = endpoint.stats.to_dict()
            prompt += stats["prompt_tokens"]
            completion += stats["completion_tokens"]
            c = self.models[index].cost(stats["prompt_tokens"], stats["completion_tokens"])
            cost = None if c is None or cost is None else cost + c
        return prompt, completion, cost

    def add(self, record: dict[str, Any], remote: bool) -> None:
        with self._lock:
            if "error" in record:
                self.errored += 1
                return
            self.finished += 1
            if not remote:
                usage = record.get("usage", {})
                self.tokens[0] += int(usage.get("prompt_tokens", 0))
                self.tokens[1] += int(usage.get("completion_tokens", 0))
                if record.get("cost") is not None:
                    self.cost_local += float(record["cost"])

    def snapshot(self) -> dict[str, Any]:
        """The status as JSON-ready data."""
        prompt, completion, cost = self.spent()
        elapsed = time.monotonic() - self.started
        done = self.done_before + self.finished
        left = max(0, self.planned - done)
        eta = elapsed / self.finished * left if self.finished and self.state == "running" else None
        requests = in_flight = peak = 0
        for endpoint in self.endpoints.values():
            stats = endpoint.stats.to_dict()
            requests += stats["requests"]
            in_flight += stats["in_flight"]
            peak = max(peak, stats["peak_in_flight"])
        return {
            "state": self.state, "stopped": self.stopped, "pid": os.getpid(),
            "updated": datetime.now(UTC).isoformat(timespec="seconds"),
            "planned": self.planned, "done": done, "finished_now": self.finished, "errored": self.errored,
            "runs_in_flight": self.running, "requests": requests, "requests_in_flight": in_flight,
            "peak_requests_in_flight": peak, "prompt_tokens": prompt, "completion_tokens": completion,
            "cost": None if cost is None else round(cost, 6), "elapsed": round(elapsed, 1),
            "eta": None if eta is None else round(eta, 1),
        }

    def write(self) -> dict[str, Any]:
        snap = self.snapshot()
        try:
            atomic_write(self.store.root / STATUS, json.dumps(snap, indent=2))
        except OSError:
            pass  # the status file is a convenience; the records are what count
        return snap


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
    _check_names(config)
    models = config.model_specs()
    selected = select_tasks(load_bank(config.bank), config.tasks)
    specs = plan_runs(selected, config)
    manifest = _setup_manifest(store, config, selected, specs, extend)  # before anything is written
    tasks = _pin_tasks(selected, store.root)
    store.root.mkdir(parents=True, exist_ok=True)
    if manifest is not None:
        atomic_write(store.root / MANIFEST, json.dumps(manifest, indent=2))
    store.repair()
    store.clean_tmp()
    specs = plan_runs(tasks, config)
    done = {r["key"] for r in existing}
    todo = [s for s in specs if s.key not in done]
    endpoints = _endpoints(config, models, {s.endpoint for s in todo})
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

    limiter = RateLimiter(config.rate_limit)
    interrupted = False
    remote = bool(endpoints)
    threads = config.executor == "thread" or (config.executor == "auto" and remote)
    workers = config.jobs
    if remote:
        workers = max(workers, sum(e.concurrency for e in endpoints.values()))
    ticker = _Ticker(monitor, on_status, status_every)
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
                        limiter.wait()
                        if signals.count:
                            break
                        tmp = store.tmp_dir(spec.key, uuid.uuid4().hex[:8])
                        monitor.running = 1
                        record(spec, tmp, _attempt(spec, str(tmp), _shared(spec, endpoints)))
                        monitor.running = 0
                interrupted = bool(signals.count)
            except KeyboardInterrupt:  # a second signal, or one from a callback
                interrupted = True
        else:
            interrupted = _run_pool(todo, workers, threads, limiter, store, record, may_start, endpoints,
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


class _Ticker:
    """Writes the status file (and calls back) every ``every`` seconds until stopped."""

    def __init__(self, monitor: Monitor, callback: Callable[[dict[str, Any]], None] | None,
                 every: float) -> None:
        self.monitor = monitor
        self.callback = callback
        self.every = every
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="serialkit-status", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            snap = self.monitor.write()
            if self.callback is not None:
                self.callback(snap)
            if self._done.wait(self.every):
                return

    def stop(self) -> None:
        self._done.set()
        self._thread.join(timeout=5)
        snap = self.monitor.write()
        if self.callback is not None:
            self.callback(snap)


def _endpoints(config: EvalConfig, models: tuple[ModelSpec, ...], used: set[int]) -> dict[int, Any]:
    """One shared endpoint per remote model that has runs to do."""
    out: dict[int, Any] = {}
    if not any(m.proposer in REMOTE for m in models):
        return out
    from serialkit.harness.proposers.limits import Limits
    from serialkit.harness.proposers.openai import Endpoint

    for index, m in enumerate(models):
        if m.proposer not in REMOTE or index not in used:
            continue
        options = {**config.proposer_options, **m.options}
        limits = Limits(m.rpm or config.rpm, m.tpm or config.tpm, config.window)
        out[index] = Endpoint(
            m.base_url or config.base_url or options.get("base_url"),
            concurrency=m.concurrency or config.concurrency or config.jobs, limits=limits,
            timeout=float(options.get("timeout", 60.0)), max_retries=int(options.get("max_retries", 2)),
        )
    return out


def _shared(spec: RunSpec, endpoints: dict[int, Any]) -> dict[str, Any] | None:
    endpoint = endpoints.get(spec.endpoint)
    return None if endpoint is None else {"endpoint": endpoint}


def _run_pool(todo: Sequence[RunSpec], jobs: int, threads: bool, limiter: RateLimiter,
              store: RunStore, record: Callable[[RunSpec, Path, dict[str, Any]], None],
              may_start: Callable[[], bool], endpoints: dict[int, Any], monitor: Monitor) -> bool:
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
        if not may_start():
            return False
        spec = next(pending, None)
        if spec is None:
            return False
        limiter.wait()
        tmp = store.tmp_dir(spec.key, uuid.uuid4().hex[:8])
        with _signals_held(not threads):  # a worker forked here starts with Ctrl-C held back
            future = pool.submit(_attempt, spec, str(tmp), _shared(spec, endpoints))
        flight[future] = (spec, tmp)
        monitor.running = len(flight)
        return True

    signals = _Interruptions()
    try:
        with signals.noted():  # Ctrl-C and SIGTERM only set a flag here, never interrupt a lock
            while len(flight) < jobs and not signals.count and submit():
                pass
            while flight and signals.count < 2:  # a second Ctrl-C abandons the runs in flight
                ready, _ = cf.wait(flight, timeout=POLL, return_when=cf.FIRST_COMPLETED)
                for future in ready:
                    spec, tmp = flight.pop(future)
                    monitor.running = len(flight)
                    record(spec, tmp, _result(spec, future))
                    if not signals.count:
                        submit()
        interrupted = bool(signals.count)
    except KeyboardInterrupt:  # not the main thread (no handlers of ours), or from a callback
        interrupted = True
        try:  # finish and record what is in flight; a second Ctrl-C abandons it
            for future in cf.as_completed(list(flight)):
                spec, tmp = flight.pop(future)
                record(spec, tmp, _result(spec, future))
        except KeyboardInterrupt:
            pass
    finally:
        workers = list(getattr(pool, "_processes", None) or {}) if interrupted else []
        pool.shutdown(wait=not interrupted, cancel_futures=True)
        _end_workers(workers)
        monitor.running = 0
    return interrupted


POLL = 0.2  # seconds between looks at the interruption flag while runs are in flight


def _end_workers(pids: Sequence[int]) -> None:
    """End the process workers of an interrupted pool: the runs they held are recorded (or were
    abandoned by a second Ctrl-C), and a worker left behind — one that cannot end by itself — must
    not keep the runner (joining its pool at exit) or the machine waiting."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _result(spec: RunSpec, future: cf.Future[dict[str, Any]]) -> dict[str, Any]:
    try:
        return future.result()
    except Exception as exc:  # a worker that died (BrokenProcessPool) fails only its runs
        return {"key": spec.key, "error": f"{type(exc).__name__}: {exc}"}


def load_records(run_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The finished runs of a run directory: none when every run so far errored (its
    ``errors.jsonl`` or manifest is there); an error when it is no run directory at all."""
    store = RunStore(run_dir)
    if not store.path.exists():
        if (store.root / ERRORS).exists() or (store.root / MANIFEST).exists():
            return []
        raise RunDirError(f"{store.root}: no {store.path.name} here; is this a run directory?")
    return store.records()


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
