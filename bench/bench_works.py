"""Whole works built from the real Webern excerpts: does a correct work read as its copies do alone?

For every family of ``tests.works`` (hardest first: canon on a second orchestra, re-orchestrated
copies, mixed transforms, other tempi, joined with no rest, inverted, reversed in time, transposed)
and seeds 0..N-1, the bench builds Op. 21 bars 1–25 twelve times (1,536 notes) and Op. 27/II bars
1–11 34 times (1,564 notes), analyses the piece with its row and counts, per piece:

- ``excess``: notes left unexplained that the same copy alone explains (the target: 0; the
  copies are correct twelve-tone music, Webern's own odd note in Op. 21 is left alone either way);
- ``stitched``: statements holding notes of two copies (a copy joined with no rest may lend its
  last notes to the next one's statement; across a rest or between orchestras it is a misreading);
- the analysis's CPU seconds; with ``--check``, ``check`` with suggestions against music21's parse
  of the same file, and with ``--repair`` ``repair --dry-run``'s changes to notes the copy alone
  explains (false edits; the target: 0) and its time against the check's.

Run: ``.venv/bin/python bench/bench_works.py [--seeds 4] [--families a,b] [--excerpts op21,op27]
[--check] [--repair]`` (exit 1 when a piece has excess notes or a false edit; skipped when
``../shared/corpus`` is absent).
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import works  # noqa: E402

COUNT = {"op21": 12, "op27": 34}


def cpu(fn: Any) -> tuple[float, Any]:
    gc.collect()
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def run(which: str, name: str, seed: int, check: bool, repair: bool, tmp: Path) -> dict[str, Any]:
    from serialkit.core.analysis import analyze

    piece, copies = works.family(which, name, COUNT[which], seed)
    _excerpt, row = works.excerpt(which)
    seconds, analysis = cpu(lambda: analyze(piece, row))
    extra = works.excess(which, piece, copies, analysis)
    out: dict[str, Any] = {"notes": len(piece.events), "excess": sum(map(len, extra.values())),
                           "copies": len(extra), "stitched": len(works.stitched(analysis)), "analyse": seconds}
    if check or repair:
        from music21 import converter

        from serialkit.check.profiles import profile_for
        from serialkit.check.report import check_piece
        from serialkit.io import read_score, write_score
        from serialkit.repair import repair_score

        path = tmp / f"{which}-{name}-{seed}.musicxml"
        write_score(piece, path)
        out["music21"], _ = cpu(lambda: converter.parse(str(path), forceSource=True))
        out["check"], _ = cpu(lambda: check_piece(read_score(path), row=row, profile=profile_for("analysis"),
                                                  suggest=True))
        if repair:
            out["repair"], result = cpu(lambda: repair_score(path, row, dry_run=True))
            alone = set(analysis.unexplained)
            out["false_edits"] = sum(1 for c in result.changes if c.event_id not in alone)
    return out


def span(rows: list[dict[str, Any]], key: str) -> str:
    """The least and the most of ``key`` over the pieces."""
    return f"{min(r[key] for r in rows)}-{max(r[key] for r in rows)}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--families", default=",".join(works.FAMILIES))
    parser.add_argument("--excerpts", default="op21,op27")
    parser.add_argument("--check", action="store_true", help="also time check against music21's parse")
    parser.add_argument("--repair", action="store_true", help="also run repair --dry-run (slow)")
    args = parser.parse_args()
    if not works.available():
        print("skipped: ../shared/corpus is not here")
        return 0
    from serialkit.core.native import status

    print("chain search:", ", ".join(status().values()))
    missed = 0
    header = f"{'excerpt':8} {'family':15} {'notes':>6} {'whole':>6} {'excess':>9} {'stitched':>9} {'analyse s':>10}"
    if args.check or args.repair:
        header += f" {'check/m21':>10}"
    if args.repair:
        header += f" {'rep/chk':>8} {'false edits':>11}"
    print(header)
    with tempfile.TemporaryDirectory() as tmp:
        for which in args.excerpts.split(","):
            for name in args.families.split(","):
                rows = [run(which, name, seed, args.check, args.repair, Path(tmp)) for seed in range(args.seeds)]
                whole = sum(1 for r in rows if not r["excess"])
                line = (f"{which:8} {name:15} {rows[0]['notes']:>6} {whole:>3}/{len(rows):<2} {span(rows, 'excess'):>9} "
                        f"{span(rows, 'stitched'):>9} {sum(r['analyse'] for r in rows) / len(rows):>10.2f}")
                if args.check or args.repair:
                    ratios = [r["check"] / r["music21"] for r in rows]
                    line += f" {min(ratios):>4.2f}-{max(ratios):<5.2f}"
                if args.repair:
                    line += f" {max(r['repair'] / r['check'] for r in rows):>8.2f} {span(rows, 'false_edits'):>11}"
                print(line, flush=True)
                missed += sum(1 for r in rows if r["excess"] or r.get("false_edits"))
    print(f"{missed} pieces read wrong or edited" if missed else "every piece reads as its copies alone")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
