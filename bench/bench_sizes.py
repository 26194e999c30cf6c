"""Correct whole works of sizes nobody chose: how many read whole (every note explained).

``bench_scale`` and ``bench_verdict`` use fixed sizes and seeds, and the analysis was corrected on
what they showed. This bench draws its pieces at random — for each of the five hardest texture
families (``concurrent``, ``piano_hands``, ``repeats``, ``distributed``, ``elided_repeats``,
``handed``; the last two added after the others, so their draws of a sample stay what they were) ``--pieces`` pieces, each
of a random seed (0–400) and a random size (150–4,000 notes) from a random generator seeded by
``--sample`` — so a new ``--sample`` is music the analysis has never been looked at against. It
prints, hardest family first, the pieces read whole and each failing piece (family, seed, size,
notes left unexplained): the failures are the next work.

Target: every correct piece reads whole (exit 1 otherwise). Report the sample number with the
figure; a sample once used to correct the analysis is no longer an unseen one.
Run: ``.venv/bin/python bench/bench_sizes.py [--sample 43] [--pieces 20]``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from serialkit.core.analysis import analyze  # noqa: E402
from tests import synth  # noqa: E402

FAMILIES = ("concurrent", "piano_hands", "repeats", "distributed", "elided_repeats", "handed")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=43, help="seed of the random draw of pieces")
    parser.add_argument("--pieces", type=int, default=20, help="pieces per family")
    args = parser.parse_args()
    rng = random.Random(args.sample)
    draws = {family: [(rng.randint(0, 400), rng.randint(150, 4000)) for _ in range(args.pieces)]
             for family in FAMILIES}
    failed: list[tuple[str, int, int, int]] = []
    total = 0
    start = time.process_time()
    print(f"sample {args.sample}: {args.pieces} pieces per family, 150-4,000 notes, seeds 0-400")
    for family in FAMILIES:
        whole = tried = notes = 0
        for seed, size in draws[family]:
            try:
                piece = synth.whole(family, seed, size)
            except ValueError:
                continue  # a size the family cannot be built at
            tried += 1
            notes += len(piece.piece.events)
            left = analyze(piece.piece, piece.row).unexplained
            if left:
                failed.append((family, seed, size, len(left)))
            else:
                whole += 1
        total += tried
        print(f"{family:12} {whole:3}/{tried:<3} read whole  ({notes:,} notes)")
    for family, seed, size, left in failed:
        print(f"  not whole: {family} seed {seed}, {size:,} notes: {left} unexplained")
    print(f"all: {total - len(failed)}/{total} whole; CPU {time.process_time() - start:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
