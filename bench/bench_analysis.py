"""Row-form inference against music21's ``search.serial`` on the project's synthetic pieces.

For every texture family (seed 0), 5,000-note pieces of two polyphonic textures, and the
5,000-note piece of the target (four voices, one row per voice, the texture music21 can read): the
share of notes each labels, the share serialkit labels correctly, and the CPU time of each
(process time, so other load on the machine does not count), measured in this run. Then serialkit's
per-note accuracy for every family over seeds 0–7 and the share of wrong notes it reports as
unexplained. Targets (issue 14), all in one run: every family >= 99 % per note, >= 95 % of the
wrong notes of the ``wrong_notes`` family unexplained, and on the 5,000-note piece serialkit at
least 50x faster than music21 while labelling every note (the median of REPEAT timings of each).
Run: ``.venv/bin/python bench/bench_analysis.py`` (exit 1 if a target is missed).
"""

from __future__ import annotations

import gc
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from music21.search import serial  # noqa: E402

from serialkit.core.analysis import analyze  # noqa: E402
from tests.synth import FAMILIES, Score, Synth, concurrent, distributed, large, score  # noqa: E402

TARGET = 50.0
ACCURACY = 0.99
REPORTED = 0.95
SEEDS = range(8)
REPEAT = 3


def music21_stream(synth: Synth) -> Any:
    """The piece as music21 likes it best: one Part per voice, monophonic (a note lasts until the
    next onset), simultaneous notes as one Chord, measures made by music21."""
    from music21 import chord, note, stream

    score_ = stream.Score()
    for voice, events in synth.piece.by_voice().items():
        part = stream.Part(id=voice)
        onsets = sorted({e.onset for e in events})
        for k, onset in enumerate(onsets):
            here = [e for e in events if e.onset == onset]
            length = (onsets[k + 1] - onset) if k + 1 < len(onsets) else max(e.duration for e in here)
            item = note.Note(here[0].midi) if len(here) == 1 else chord.Chord([e.midi for e in here])
            item.quarterLength = length
            part.insert(onset, item)
        part.makeMeasures(inPlace=True)
        score_.insert(0, part)
    return score_


def music21_labels(synth: Synth) -> tuple[float, float, float]:
    """(share of notes inside a found statement, share music21 labels, seconds) for music21."""
    stream = music21_stream(synth)
    total = len(synth.piece.events)
    gc.collect()
    started = time.process_time()
    matcher = serial.TransformedSegmentMatcher(stream, "skipConsecutive", includeChords=True)
    found = matcher.find([list(synth.row.pcs)])
    seconds = time.process_time() - started
    covered: dict[tuple[object, float], int] = {}  # a tied note counts once: (part, offset of its start)
    firsts: dict[tuple[object, float], int] = {}
    for segment in found:
        for k, n in enumerate(segment.segment):
            key = (segment.partNumber, _start(n))
            covered[key] = len(n.pitches)
            if k == 0:
                firsts[key] = len(n.pitches)
    return sum(covered.values()) / total, sum(firsts.values()) / total, seconds


def _start(n: Any) -> float:
    """The score offset where a (possibly tied) note begins."""
    offset = float(n.getOffsetInHierarchy(n.activeSite.activeSite)) if n.activeSite else 0.0
    return offset - (float(n.quarterLength) if n.tie is not None and n.tie.type != "start" else 0.0)


def serialkit_labels(synth: Synth) -> tuple[float, float, float]:
    """(share of notes labelled, share labelled correctly, seconds) for serialkit."""
    gc.collect()
    started = time.process_time()
    analysis = analyze(synth.piece, synth.row)
    seconds = time.process_time() - started
    result = score(synth, analysis)
    return float(analysis.coverage), result.accuracy, seconds


def family_accuracy() -> tuple[bool, list[str]]:
    """Per-family accuracy over SEEDS and the wrong notes reported; (all targets met, lines)."""
    lines = [f"{'family':<20}{'notes':>7}{'correct':>9}{'statements':>11}{'wrong reported':>16}"]
    ok = True
    for name, make in FAMILIES.items():
        total = Score(0, 0, 0, 0, 0, 0)
        for seed in SEEDS:
            synth = make(seed)
            result = score(synth, analyze(synth.piece, synth.row))
            for field in ("notes", "correct", "statements", "recalled", "wrong", "wrong_unexplained"):
                setattr(total, field, getattr(total, field) + getattr(result, field))
        wrong = f"{total.wrong_unexplained}/{total.wrong} ({total.wrong_reported:.0%})" if total.wrong else "-"
        met = total.accuracy >= ACCURACY and (not total.wrong or total.wrong_reported >= REPORTED)
        ok &= met
        lines.append(f"{name:<20}{total.notes:>7}{total.accuracy:>9.2%}{total.recall:>11.1%}{wrong:>16}"
                     f"{'' if met else '  NOT met'}")
    return ok, lines


def main() -> int:
    print(f"load average {os.getloadavg()[0]:.1f} (CPU time is measured, so load matters little)")
    print(f"{'piece':<20}{'notes':>6}  {'m21 in-stmt':>11}{'m21 labels':>11}{'m21 s':>8}  "
          f"{'sk labels':>9}{'sk correct':>11}{'sk s':>8}{'speed-up':>9}")
    pieces = [(name, make(0)) for name, make in FAMILIES.items()]
    pieces += [("5000 distributed", distributed(0, statements=416)),
               ("5000 concurrent", concurrent(0, statements=140)), ("5000-note", large(0))]
    ratio = 0.0
    coverage = 0.0
    for name, synth in pieces:
        last = name == "5000-note"
        runs = [music21_labels(synth) for _ in range(REPEAT if last else 1)]
        m_cov, m_lab, _ = runs[0]
        m_sec = statistics.median(r[2] for r in runs)
        ours = [serialkit_labels(synth) for _ in range(REPEAT if last else 1)]
        s_cov, s_acc, _ = ours[0]
        s_sec = statistics.median(r[2] for r in ours)
        ratio = m_sec / s_sec
        coverage = s_cov
        print(f"{name:<20}{len(synth.piece.events):>6}  {m_cov:>11.1%}{m_lab:>11.1%}{m_sec:>8.3f}  "
              f"{s_cov:>9.1%}{s_acc:>11.1%}{s_sec:>8.3f}{ratio:>8.1f}x")
    fast = ratio >= TARGET and coverage == 1.0
    print(f"5000-note piece: serialkit {ratio:.1f}x faster than music21 search.serial (median of "
          f"{REPEAT}; target >= {TARGET:.0f}x), labels {coverage:.1%} of notes: {'met' if fast else 'NOT met'}")
    accurate, lines = family_accuracy()
    print(f"\nserialkit per-note accuracy, seeds {SEEDS.start}-{SEEDS.stop - 1} "
          f"(target >= {ACCURACY:.0%} every family; wrong notes reported >= {REPORTED:.0%}):")
    print("\n".join(lines))
    print(f"accuracy targets: {'met' if accurate else 'NOT met'}")
    return 0 if fast and accurate else 1


if __name__ == "__main__":
    sys.exit(main())
