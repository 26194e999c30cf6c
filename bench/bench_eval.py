"""Benchmark: the whole bank × four variants × 3 runs, stochastic proposer, 2 jobs, under 10 minutes.

Anchor, measured in the same run: a naive loop calling ``serialkit.harness.run`` on a sample of the
same runs with no records, metrics or resumability, interleaved run by run with the runner's own
per-run path so both see the same machine load. The ratio shows what the runner's bookkeeping
(metrics, per-run folders, fsync'ed records) costs per run. The report is written to
``docs/example-report/`` (HTML and Markdown) and committed as the example.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from serialkit.eval.bank import load_bank
from serialkit.eval.execute import execute
from serialkit.eval.plan import VARIANTS, EvalConfig, plan_runs
from serialkit.eval.report import write_report
from serialkit.eval.runner import run_eval
from serialkit.eval.store import RunStore

ROOT = Path(__file__).resolve().parent.parent
BUDGET = 600.0
DOCS = ROOT / "docs" / "example-report"
RUN_DIR = Path("out") / "bench-eval"  # relative, so the committed report names no machine path
CORPUS = ROOT.parent / "shared" / "corpus"


def anchor_pairs(sample: int = 40) -> tuple[float, float]:
    """Seconds per run, naive vs runner, on a seeded sample, interleaved in one process (same load).

    Naive: ``harness.run`` with an output folder. Runner: ``execute`` (the same call plus metrics)
    into a private folder, the commit rename and the fsync'ed record append.
    """
    from serialkit.harness import load_task, run

    specs = random.Random(0).sample(plan_runs(load_bank("builtin"), EvalConfig(runs=3)), sample)
    naive = mine = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(Path(tmp) / "store")
        for spec in specs:
            started = time.perf_counter()
            run(load_task(spec.task_path), variant=spec.variant, proposer="stochastic", seed=spec.seed,
                out_dir=Path(tmp) / "naive" / spec.key.replace("|", "_"))
            naive += time.perf_counter() - started
            started = time.perf_counter()
            folder = store.tmp_dir(spec.key, "bench")
            record = execute(spec, str(folder))
            record["dir"] = store.commit_dir(spec.key, folder)
            store.append(record)
            mine += time.perf_counter() - started
    return naive / sample, mine / sample


def main() -> int:
    os.chdir(ROOT)
    shutil.rmtree(RUN_DIR, ignore_errors=True)
    config = EvalConfig(bank="builtin", variants=VARIANTS, runs=3, proposer="stochastic", jobs=2)
    started = time.perf_counter()
    summary = run_eval(config, RUN_DIR)
    seconds = time.perf_counter() - started
    n = summary.finished
    print(f"eval run: {n} runs ({len(load_bank())} tasks × {len(VARIANTS)} variants × 3) in "
          f"{seconds:.1f} s with 2 jobs = {n / seconds:.1f} runs/s; budget {BUDGET:.0f} s "
          f"→ {seconds / BUDGET:.1%} of budget; failed runs: {len(summary.errors)}")
    naive, mine = anchor_pairs()
    busy = sum(r["wall_seconds"] for r in RunStore(RUN_DIR).records())
    print(f"anchor (naive harness.run loop, 40 sampled runs, interleaved): {naive * 1000:.0f} ms/run; "
          f"runner per run (same runs: harness + metrics + folder + fsync'ed record): "
          f"{mine * 1000:.0f} ms/run → ratio {mine / naive:.2f}×")
    print(f"parallel efficiency: {busy:.1f} s of run time in {seconds:.1f} s on {config.jobs} jobs "
          f"= {busy / (seconds * config.jobs):.0%} (the machine is shared; load shows here)")
    reference = sorted(str(p) for p in CORPUS.glob("*.mei")) if CORPUS.is_dir() else []
    t0 = time.perf_counter()
    for name in ("report.html", "report.md"):
        write_report(RUN_DIR, DOCS / name, reference=reference)
    print(f"report: {time.perf_counter() - t0:.1f} s → {DOCS.relative_to(ROOT)}/report.html, report.md"
          f" (corpus reference: {len(reference)} scores)")
    if seconds > BUDGET or summary.errors:
        print("FAIL: over budget or runs failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
