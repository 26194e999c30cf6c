"""Benchmark: requests in flight across runs against a model that takes 200 ms a reply.

200 harness runs (the five ``mono-line`` bank tasks × 40 seeds) through the ``openai`` proposer
against the local OpenAI-compatible test server (tests/harness/fake_openai.py), each reply held back
200 ms. Anchor, measured in the same run: the same experiment at ``--concurrency 1``. Target: wall
time at ``--concurrency 16`` at most 1/5 of the anchor, and the server sees at least 8 requests at
once. Then the same 200 runs with ``--rpm`` set shows the limiter's pace.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from serialkit.eval.bank import load_bank  # noqa: E402
from serialkit.eval.plan import EvalConfig  # noqa: E402
from serialkit.eval.runner import run_eval  # noqa: E402
from serialkit.harness import load_task  # noqa: E402
from tests.harness.fake_openai import FakeOpenAI, max_in_window  # noqa: E402

REPLY = 0.2
RUNS = 40  # seeds per task: 5 tasks × 40 = 200 runs


def experiment(concurrency: int, rpm: int | None = None) -> dict[str, float]:
    tasks = [load_task(str(t.path)) for t in load_bank("builtin") if t.family == "mono-line"]
    with FakeOpenAI(tasks, ["ok"], reply_delay=REPLY) as server, tempfile.TemporaryDirectory() as tmp:
        config = EvalConfig(variants=("harness",), runs=RUNS, tasks=("mono-line",), proposer="openai",
                            model="bench-model", base_url=server.base_url, concurrency=concurrency, rpm=rpm,
                            proposer_options={"max_retries": 2, "timeout": 30.0})
        started = time.perf_counter()
        summary = run_eval(config, Path(tmp) / "run")
        wall = time.perf_counter() - started
        assert summary.finished == 200 and not summary.errors, summary.errors[:3]
        return {"wall": wall, "requests": len(server.received), "peak": server.peak,
                "max_per_minute": max_in_window(server.times, 60.0)}


def main() -> int:
    os.environ.pop("SERIALKIT_API_KEY", None)
    os.environ.pop("OPENAI_API_KEY", None)
    load = os.getloadavg()[0]
    fast = experiment(16)
    slow = experiment(1)
    ratio = fast["wall"] / slow["wall"]
    print(f"200 harness runs, {int(slow['requests'])} requests, replies held {REPLY * 1000:.0f} ms "
          f"(load average {load:.1f} on {os.cpu_count()} cores)")
    print(f"  --concurrency 1 : {slow['wall']:.1f} s (anchor), server peak {slow['peak']:.0f} in flight")
    print(f"  --concurrency 16: {fast['wall']:.1f} s, server peak {fast['peak']:.0f} in flight")
    print(f"  ratio {ratio:.3f} (target <= 0.200); speed-up {1 / ratio:.1f}x")
    limited = experiment(16, rpm=300)
    print(f"  --concurrency 16 --rpm 300: {limited['wall']:.1f} s, at most {limited['max_per_minute']:.0f} "
          f"requests in any 60 s window (limit 300)")
    ok = ratio <= 0.2 and fast["peak"] >= 8 and limited["max_per_minute"] <= 300
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
