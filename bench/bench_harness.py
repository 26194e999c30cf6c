"""Harness against raw generation on the same tasks, seeds and independent checker.

The target set is the eval engineer's 40-task bank x 3 seeds under the stochastic proposer's
``hostile`` profile (every error habit of issue 12 at a high rate; the harness was not tuned on it).
The anchor is the raw baseline measured in the same run. Printed per variant (raw, the harness on
serialkit's ladder, the harness on the paper's ladder ``harness-paper``): strict and relaxed
delivery, per-predicate pass rates, proposer calls and tokens per run and per released candidate,
and the authorship of the released notes. The harness is timed twice in the same run, with the
verifier's interval index off (the linear scan) and on, and both runs must release the same notes.

Targets (serialkit's ladder, hostile, bank x 3 seeds): strict >= 97 %, relaxed >= 99 %, <= 12 calls
per run. ``--bank generated`` runs seeded programmatic tasks instead (profile paper-raw by default
there, where raw delivery is about 13 %).

Usage: python bench/bench_harness.py [--tasks N] [--seeds K] [--bank builtin|generated]
       [--profile NAME] [--all-variants] [--no-index-timing]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from typing import Any

from serialkit.harness import Task, load_task, run
from serialkit.harness.authorship import AUTHORS
from serialkit.harness.seeded_tasks import generate_tasks
from serialkit.harness.verify import use_interval_index

PREDICATES = ("ROW", "ORDER", "COLL", "PC", "RANGE", "CROSS", "SCHED", "SPAN", "GRID", "DUR", "MONO", "SECTION", "EXTRA",
              "COMPLETE")
TARGET_STRICT = 0.97
TARGET_RELAXED = 0.99
TARGET_CALLS = 12


def tasks_from(bank: str, count: int) -> list[Task]:
    """The eval engineer's 40-task bank, or seeded programmatic tasks."""
    if bank == "builtin":
        from serialkit.eval.bank import load_bank

        tasks = [load_task(str(b.path)) for b in load_bank()]
        return tasks[:count] if count else tasks
    return generate_tasks(count or 40)


def summarise(results: list[Any]) -> dict[str, Any]:
    """Delivery, predicate pass rates, cost and authorship of one variant's runs."""
    n = len(results)
    released = [r for r in results if r.released]
    failed: Counter[str] = Counter()
    for r in results:
        failed.update(code for code, ok in r.verdict.predicates().items() if not ok)
    calls = sum(r.usage.calls for r in results)
    tokens = sum(r.usage.prompt_tokens + r.usage.completion_tokens for r in results)
    authors = {a: sum(r.report["authorship"]["shares"][a] for r in released) / len(released) if released else 0.0
               for a in AUTHORS}
    return {
        "runs": n,
        "strict": sum(r.verdict.strict for r in results) / n,
        "relaxed": sum(r.verdict.relaxed for r in results) / n,
        "pass": {code: 1 - failed[code] / n for code in PREDICATES},
        "calls_per_run": calls / n,
        "tokens_per_run": tokens / n,
        "calls_per_release": calls / len(released) if released else float("inf"),
        "tokens_per_release": tokens / len(released) if released else float("inf"),
        "seconds_per_run": sum(r.wall_seconds for r in results) / n,
        "authorship": authors,
    }


def run_all(tasks: list[Task], seeds: int, variant: str, profile: str) -> list[Any]:
    """Every task x seed under one variant."""
    return [run(task, variant=variant, seed=seed, proposer_options={"profile": profile})
            for task in tasks for seed in range(seeds)]


def bench(tasks: list[Task], seeds: int, variants: list[str], profile: str) -> dict[str, Any]:
    """Run every variant on every task and seed; print the tables; return the summaries."""
    started = time.perf_counter()
    summary = {v: summarise(run_all(tasks, seeds, v, profile)) for v in variants}
    print(f"{'variant':<14} {'strict':>7} {'relaxed':>8} {'calls/run':>10} {'tokens/run':>11} "
          f"{'calls/release':>14} {'tokens/release':>15} {'s/run':>7}")
    for v, s in summary.items():
        print(f"{v:<14} {s['strict']:>7.1%} {s['relaxed']:>8.1%} {s['calls_per_run']:>10.2f} "
              f"{s['tokens_per_run']:>11.0f} {s['calls_per_release']:>14.2f} {s['tokens_per_release']:>15.0f} "
              f"{s['seconds_per_run']:>7.3f}")
    print("per-predicate pass rate (share of runs with no violation of that code)")
    print(f"{'variant':<14} " + " ".join(f"{c:>6}" for c in PREDICATES))
    for v, s in summary.items():
        print(f"{v:<14} " + " ".join(f"{s['pass'][c]:>6.1%}" for c in PREDICATES))
    print("authorship of released notes (mean share per released run)")
    print(f"{'variant':<14} " + " ".join(f"{a:>8}" for a in AUTHORS))
    for v, s in summary.items():
        print(f"{v:<14} " + " ".join(f"{s['authorship'][a]:>8.1%}" for a in AUTHORS))
    raw, harness = summary["raw"], summary["harness"]
    ratio = harness["strict"] / raw["strict"] if raw["strict"] else float("inf")
    print(f"anchor (raw, same run): strict delivery {raw['strict']:.1%}; harness / raw = {ratio:.2f}x; "
          f"wall {time.perf_counter() - started:.1f} s")
    return summary


def index_timing(tasks: list[Task], seeds: int, profile: str) -> float:
    """Wall time per harness run (reflow on) without and with the verifier's interval index, in the
    same run; the two must release the same notes. Returns the speed-up."""
    times, outputs = {}, {}
    for on in (False, True):
        before = use_interval_index(on)
        try:
            started = time.perf_counter()
            results = run_all(tasks, seeds, "harness", profile)
            times[on] = (time.perf_counter() - started) / len(results)
            outputs[on] = [(r.released, r.certificate["events"]) for r in results]
        finally:
            use_interval_index(before)
    same = outputs[False] == outputs[True]
    speedup = times[False] / times[True]
    print(f"harness wall time per run (reflow on): linear scan {times[False]:.3f} s, interval index "
          f"{times[True]:.3f} s -> {speedup:.2f}x faster (anchor: the linear scan, same run); "
          f"same released notes: {same}")
    if not same:
        raise SystemExit("the interval index changed the harness's output")
    return speedup


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=0, help="number of tasks (default: all 40 / 40 generated)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--bank", choices=("builtin", "generated"), default="builtin")
    parser.add_argument("--profile", default=None, help="stochastic error profile (default hostile on the bank, "
                                                        "paper-raw on generated tasks)")
    parser.add_argument("--all-variants", action="store_true", help="also run self-refine and soft-rules")
    parser.add_argument("--no-index-timing", action="store_true", help="skip the interval-index timing")
    args = parser.parse_args(argv)
    profile = args.profile or ("hostile" if args.bank == "builtin" else "paper-raw")
    variants = ["raw", "harness", "harness-paper"] + (["self-refine", "soft-rules"] if args.all_variants else [])
    tasks = tasks_from(args.bank, args.tasks)
    print(f"== {args.bank} tasks: {len(tasks)} x {args.seeds} seeds, stochastic proposer, profile {profile}")
    harness = bench(tasks, args.seeds, variants, profile)["harness"]
    if not args.no_index_timing:
        index_timing(tasks, args.seeds, profile)
    ok = (harness["strict"] >= TARGET_STRICT and harness["relaxed"] >= TARGET_RELAXED
          and harness["calls_per_run"] <= TARGET_CALLS)
    print(f"target (strict >= {TARGET_STRICT:.0%}, relaxed >= {TARGET_RELAXED:.0%}, <= {TARGET_CALLS} calls per run): "
          + ("met" if ok else f"MISSED (strict {harness['strict']:.1%}, relaxed {harness['relaxed']:.1%}, "
                               f"{harness['calls_per_run']:.2f} calls per run)"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
