"""One run: a task under one variant through the harness, its outputs written to a folder and its
record returned; a failing run comes back as an error record. Remote models' endpoints are opened
here once per experiment and shared by its runs."""

from __future__ import annotations

import json
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

from serialkit.core.errors import EndpointError, SerialkitError
from serialkit.eval.metrics import piece_metrics
from serialkit.eval.models import ModelSpec
from serialkit.eval.plan import PREDICATE_CODES, REMOTE, EvalConfig, RunSpec
from serialkit.io.files.atomic import atomic_write

HARNESS_FIELDS = ("proposer", "model", "mode", "coverage", "notes", "scheduled", "repairs", "drops", "ladder",
                  "authorship")


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


def attempt(spec: RunSpec, tmp: str, shared: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run ``spec`` in ``tmp``: its record, or an error record when the run failed."""
    try:
        return execute(spec, tmp, shared)
    except EndpointError as exc:  # the model server failed: errored, not a verdict
        return {"key": spec.key, "error": str(exc), "endpoint": exc.to_dict()}
    except SerialkitError as exc:
        return {"key": spec.key, "error": f"{type(exc).__name__}: {exc}"}
    except Exception as exc:  # a failing run must not stop the experiment
        return {"key": spec.key, "error": f"{type(exc).__name__}: {exc}"}


def open_endpoints(config: EvalConfig, models: tuple[ModelSpec, ...], used: set[int]) -> dict[int, Any]:
    """One shared endpoint per remote model that has runs to do."""
    out: dict[int, Any] = {}
    if not any(m.proposer in REMOTE for m in models):
        return out
    from serialkit.harness.proposers.limits import RateLimits
    from serialkit.harness.proposers.openai import Endpoint

    for index, m in enumerate(models):
        if m.proposer not in REMOTE or index not in used:
            continue
        options = {**config.proposer_options, **m.options}
        limits = RateLimits(m.rpm or config.rpm, m.tpm or config.tpm, config.window)
        out[index] = Endpoint(
            m.base_url or config.base_url or options.get("base_url"),
            concurrency=m.concurrency or config.concurrency or config.jobs, limits=limits,
            timeout=float(options.get("timeout", 60.0)), max_retries=int(options.get("max_retries", 2)),
        )
    return out


def shared_options(spec: RunSpec, endpoints: dict[int, Any]) -> dict[str, Any] | None:
    """The unpicklable proposer options of a run: its model's shared endpoint, if remote."""
    endpoint = endpoints.get(spec.endpoint)
    return None if endpoint is None else {"endpoint": endpoint}
