"""Bank runs through the openai proposer against a server whose failures stick to the request.

The server is the test suite's ``HostileOpenAI`` (tests/harness/fake_openai.py) with
``persistent_status=500``: a request it picks (8 % of request identities: kind, section, attempt,
notes asked about) gets HTTP 500 every time it is sent unchanged, so the SDK's retries cannot get
past it; 15 % of the rest fail once (429 or 500) and clear on the retry. Printed: runs that ended as
an endpoint error (``generate`` exits 2), strict and relaxed delivery, proposer calls per run, and
errored calls. ``--no-reask`` switches the harness's re-ask off (every endpoint error ends the run),
the behaviour before it.

Usage: python bench/bench_reask.py [--tasks 8] [--seeds 3] [--no-reask]  (run from the repository root)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from serialkit.core.errors import EndpointError  # noqa: E402
from serialkit.eval.bank import load_bank  # noqa: E402
from serialkit.harness import load_task, run  # noqa: E402
from serialkit.harness.proposers import errors  # noqa: E402
from tests.harness.fake_openai import HostileOpenAI  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=8, help="the bank's first N tasks")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--no-reask", action="store_true", help="end the run at the first endpoint error")
    args = parser.parse_args(argv)
    if args.no_reask:
        for cls in vars(errors).values():
            if isinstance(cls, type) and issubclass(cls, EndpointError):
                cls.reaskable = False
    os.environ.setdefault("SERIALKIT_API_KEY", "sk-serialkit-bench")
    tasks = [load_task(str(b.path)) for b in load_bank()][:args.tasks]
    errored = strict = relaxed = calls = failed = 0
    runs = 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.seeds):
            with HostileOpenAI(tasks, seed=seed, persistent_status=500) as server:
                for task in tasks:
                    runs += 1
                    options: dict[str, Any] = {"base_url": server.base_url, "model": "sticky", "timeout": 5.0,
                                               "max_retries": 2}
                    try:
                        result = run(task, proposer="openai", proposer_options=options, seed=seed,
                                     out_dir=Path(tmp) / f"{task.name}-{seed}")
                    except EndpointError:
                        errored += 1
                        continue
                    strict += result.released
                    relaxed += result.verdict.passed("relaxed")
                    calls += result.usage.calls
                    failed += result.usage.failed_calls
    finished = runs - errored
    print(f"{runs} runs ({args.tasks} tasks x {args.seeds} seeds), re-ask {'off' if args.no_reask else 'on'}, "
          f"{time.perf_counter() - started:.1f} s")
    print(f"  ended as an endpoint error (exit 2): {errored} of {runs}")
    print(f"  strict delivery: {strict} of {runs}; relaxed: {relaxed} of {runs}")
    if finished:
        print(f"  calls per finished run: {calls / finished:.1f}; errored calls re-asked: {failed}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
