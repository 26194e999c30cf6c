"""Correct pieces from a generator written apart from the analysis: how many read whole.

``tests/outside.py`` was written by an engineer who had not read the analysis, from what a
twelve-tone texture may do: statements passed between instruments (hand-offs), chords of
successive positions and re-struck notes in hand-off statements, single notes held 4–12 beats
while other streams go on, and a control texture of statements each in one instrument. No reading
was tuned against it. For each texture, hardest first, ``--pieces`` pieces of a random seed and a
random size (1,500–5,000 notes) drawn by ``--sample``; printed: the pieces read whole, the share of
notes explained, and each failing piece (texture, seed, size, notes left unexplained).

Target: every correct piece reads whole (exit 1 otherwise). With ``--repair``, each piece that does
not read whole is also repaired (``plan_repairs``, what ``serialkit repair`` plans) and every note
it would change is counted and listed: the piece is correct, so every change is a false edit
(target 0; exit 1 otherwise).
Run: ``.venv/bin/python bench/bench_outside.py [--sample 1] [--pieces 5] [--repair]``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from serialkit.core.analysis import analyze  # noqa: E402
from serialkit.core.suggest import Readings, plan_repairs  # noqa: E402
from tests.outside import TEXTURES, generate  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=1, help="seed of the random draw of pieces")
    parser.add_argument("--pieces", type=int, default=5, help="pieces per texture")
    parser.add_argument("--textures", default=",".join(TEXTURES))
    parser.add_argument("--repair", action="store_true", help="repair the pieces that do not read whole")
    args = parser.parse_args()
    rng = random.Random(args.sample)
    textures = [t for t in args.textures.split(",") if t]
    draws = {t: [(rng.randint(0, 10_000), rng.randint(1500, 5000)) for _ in range(args.pieces)] for t in textures}
    failed: list[tuple[str, int, int, int]] = []
    edits: list[str] = []
    start = time.process_time()
    print(f"sample {args.sample}: {args.pieces} pieces per texture, 1,500-5,000 notes")
    for name in textures:
        whole = notes = left_total = 0
        for seed, size in draws[name]:
            made = generate(TEXTURES[name], seed, size)
            left = len(analyze(made.piece, made.row).unexplained)
            notes += len(made.piece.events)
            left_total += left
            if left:
                failed.append((name, seed, size, left))
                if args.repair:
                    plan = plan_repairs(made.piece, made.row, readings=Readings())
                    edits += [f"{name} {seed} {size}: {a.suggestion.event_id} {a.suggestion.model} "
                              f"{a.suggestion.confidence:.0%}, {a.suggestion.reason}" for a in plan.applied]
            else:
                whole += 1
        share = 100.0 * (notes - left_total) / max(1, notes)
        print(f"{name:20} {whole:3}/{len(draws[name]):<3} read whole  ({notes:,} notes, {share:.2f} % explained)",
              flush=True)
    for name, seed, size, left in failed:
        print(f"  not whole: {name} seed {seed}, {size:,} notes: {left} unexplained")
    print(f"all: {sum(len(d) for d in draws.values()) - len(failed)}/{sum(len(d) for d in draws.values())} whole; "
          f"CPU {time.process_time() - start:.0f} s")
    if args.repair:
        print(f"false edits (notes a repair of these correct pieces changes): {len(edits)}")
        for line in edits:
            print(f"  {line}")
    return 1 if failed or edits else 0


if __name__ == "__main__":
    sys.exit(main())
