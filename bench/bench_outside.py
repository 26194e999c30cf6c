"""Correct pieces from a generator written apart from the analysis: how many read whole.

``tests/outside.py`` was written by an engineer who had not read the analysis, from what a
twelve-tone texture may do: statements passed between instruments (hand-offs), chords of
successive positions and re-struck notes in hand-off statements, single notes held 4–12 beats
while other streams go on, and a control texture of statements each in one instrument. No reading
was tuned against it. For each texture, hardest first, ``--pieces`` pieces of a random seed and a
random size (1,500–5,000 notes) drawn by ``--sample``; printed: the pieces read whole, the share of
notes explained, and each failing piece (texture, seed, size, notes left unexplained).

Target: every correct piece reads whole (exit 1 otherwise).
Run: ``.venv/bin/python bench/bench_outside.py [--sample 1] [--pieces 5]``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from serialkit.core.analysis import analyze  # noqa: E402
from tests.outside import TEXTURES, generate  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=1, help="seed of the random draw of pieces")
    parser.add_argument("--pieces", type=int, default=5, help="pieces per texture")
    parser.add_argument("--textures", default=",".join(TEXTURES))
    args = parser.parse_args()
    rng = random.Random(args.sample)
    textures = [t for t in args.textures.split(",") if t]
    draws = {t: [(rng.randint(0, 10_000), rng.randint(1500, 5000)) for _ in range(args.pieces)] for t in textures}
    failed: list[tuple[str, int, int, int]] = []
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
            else:
                whole += 1
        share = 100.0 * (notes - left_total) / max(1, notes)
        print(f"{name:20} {whole:3}/{len(draws[name]):<3} read whole  ({notes:,} notes, {share:.2f} % explained)",
              flush=True)
    for name, seed, size, left in failed:
        print(f"  not whole: {name} seed {seed}, {size:,} notes: {left} unexplained")
    print(f"all: {sum(len(d) for d in draws.values()) - len(failed)}/{sum(len(d) for d in draws.values())} whole; "
          f"CPU {time.process_time() - start:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
