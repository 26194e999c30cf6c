"""Batch benchmark: ``check`` over a folder of scores, one process against two.

Writes N copies of a real-sized score (the Op. 21 excerpt when ../shared/corpus is there, else
the features fixture) into a temporary folder and times, in the same run:
- the anchor: a plain loop of ``read_score`` + ``check_piece`` in this process;
- ``serialkit.batch.run_batch(check_job, …)`` with ``jobs=1`` (the batch machinery's overhead);
- the same with ``jobs=2`` (processes; the speed-up on a 2-core machine).
Prints wall-clock ratios against the anchor. Target: overhead ≤ 1.1×, two jobs ≤ 0.75× the anchor
(other load on a shared machine raises both; the load average is printed beside them).
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from serialkit.batch import collect, run_batch
from serialkit.check import check_piece
from serialkit.core.rows import Row
from serialkit.io import read_score
from serialkit.jobs import check_job

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "webern-op21-i-mm1-25.mei"
FIXTURE = ROOT / "fixtures" / "scores" / "features.mei"
COPIES = 16
ROUNDS = 3


def main() -> None:
    source = CORPUS if CORPUS.is_file() else FIXTURE
    with tempfile.TemporaryDirectory(prefix="serialkit-bench-batch-") as tmp:
        folder = Path(tmp)
        for i in range(COPIES):
            shutil.copyfile(source, folder / f"score-{i:02d}{source.suffix}")
        sources = collect([str(folder)])
        outputs = [None] * len(sources)
        options = {"row": "webern-op21" if source == CORPUS else None, "identify": source != CORPUS}

        row = Row.parse("webern-op21") if source == CORPUS else None

        def anchor() -> None:
            for src in sources:
                assert src.path is not None
                check_piece(read_score(src.path), row=row, identify=row is None, source=src.name)

        def batch(jobs: int) -> None:
            outcomes = list(run_batch(check_job, sources, outputs, options, jobs=jobs))
            assert all(o.status != "unreadable" for o in outcomes), outcomes[0].error

        times: dict[str, list[float]] = {"anchor": [], "jobs=1": [], "jobs=2": []}
        anchor()  # warm-up: imports, catalogue, fonts
        for _ in range(ROUNDS):
            for name, fn in (("anchor", anchor), ("jobs=1", lambda: batch(1)), ("jobs=2", lambda: batch(2))):
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    load = os.getloadavg()[0]
    print(f"{COPIES} copies of {source.name}, median of {ROUNDS} rounds, load average {load:.1f}")
    print(f"anchor (plain loop):  {med['anchor']:.2f} s")
    print(f"batch, 1 process:     {med['jobs=1']:.2f} s  ratio {med['jobs=1'] / med['anchor']:.2f}x (target <= 1.1x)")
    print(f"batch, 2 processes:   {med['jobs=2']:.2f} s  ratio {med['jobs=2'] / med['anchor']:.2f}x (target <= 0.75x)")
    if med["jobs=1"] / med["anchor"] > 1.1 or med["jobs=2"] / med["anchor"] > 0.75:
        print("TARGET MISSED")
        sys.exit(1)


if __name__ == "__main__":
    main()
