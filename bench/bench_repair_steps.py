"""Score repair against check on the same file: ``repair`` (writing OUT, its certificate and
review page; and as ``--dry-run``) and ``check`` with suggestions, in CPU seconds of this process.

Pieces: correct whole pieces of ``tests.synth`` families (about 1,500 notes, written to MusicXML)
and every score of ``fixtures/repair``. Target (issue 27): repair <= 2x check on the same score.

Run: ``.venv/bin/python bench/bench_repair_steps.py [--sizes 1500] [--families concurrent,distributed]
[--profile]`` (``--profile``: the top functions of each repair by cumulative time).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from serialkit.check.profiles import profile_for  # noqa: E402
from serialkit.check.report import check_piece, row_for  # noqa: E402
from serialkit.core.errors import SerialkitError  # noqa: E402
from serialkit.core.rows import Row  # noqa: E402
from serialkit.io import read_score, write_score  # noqa: E402
from serialkit.repair import repair_score  # noqa: E402
from tests import synth  # noqa: E402

FIXTURES = ROOT / "fixtures" / "repair"
REPAIR = 2.0


def cpu(fn: Any) -> tuple[float, Any]:
    gc.collect()
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def measure(name: str, path: Path, row: Row | str | None, tmp: Path, profile: bool) -> tuple[float, float, float]:
    rules = profile_for("analysis")
    def check() -> Any:
        piece = read_score(path)
        return check_piece(piece, row=row_for(piece, path, row)[0], profile=rules, suggest=True)

    t_check, _ = cpu(check)
    t_dry, _ = cpu(lambda: repair_score(path, row, dry_run=True))
    out = tmp / f"{name}-fixed{path.suffix}"
    prof = cProfile.Profile() if profile else None
    if prof is not None:
        prof.enable()
    t_write, result = cpu(lambda: repair_score(path, row, out=out))
    if prof is not None:
        prof.disable()
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
    print(f"{name:30s} {t_check:8.2f} {t_dry:8.2f} {t_dry / t_check:7.2f} {t_write:8.2f} {t_write / t_check:7.2f}"
          f"  {len(result.changes)} changed, {'pass' if result.passed else 'FAIL'}", flush=True)
    return t_check, t_dry, t_write


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1500")
    parser.add_argument("--families", default="concurrent,distributed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    missed = []
    print(f"{'score':30s} {'check s':>8s} {'dry s':>8s} {'dry/chk':>7s} {'write s':>8s} {'wr/chk':>7s}")
    with tempfile.TemporaryDirectory(prefix="bench-repair-") as d:
        tmp = Path(d)
        jobs: list[tuple[str, Path, Row | str | None]] = []
        for family in [f for f in args.families.split(",") if f]:
            for size in [int(s) for s in args.sizes.split(",") if s]:
                s = synth.whole(family, args.seed, size)
                path = tmp / f"{family}-{size}.musicxml"
                write_score(s.piece, path)
                jobs.append((f"{family} {size}", path, s.row))
        for path in sorted(FIXTURES.glob("*.musicxml")):
            jobs.append((path.stem, path, None))
        for name, path, row in jobs:
            try:
                t_check, t_dry, t_write = measure(name.replace(" ", "_"), path, row, tmp, args.profile)
            except SerialkitError as exc:  # a score check refuses (no row to be found) is not repaired either
                print(f"{name:30s} not measured: {exc}", flush=True)
                continue
            if max(t_dry, t_write) > REPAIR * t_check:
                missed.append(f"{name}: repair/check {max(t_dry, t_write) / t_check:.2f} > {REPAIR}")
    for m in missed:
        print("missed:", m)
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
