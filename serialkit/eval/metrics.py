"""Per-candidate metrics: collisions per opportunity, degeneracy, pitch-line reduction, features.

Definitions (also in the README, section ``eval``):

- *collision opportunity*: a pair of events in different voices whose sounding intervals overlap
  by more than the tolerance; a *collision* is such a pair with the same pitch class.
- *degeneracy* = 0.25·density deficit + 0.25·coverage shortfall + 0.20·long-note excess
  + 0.15·pitch monotony + 0.15·rhythmic monotony, each component in [0, 1]; see
  :func:`degeneracy`.
- *pitch line*: the monophonic skyline, the highest MIDI pitch at each distinct onset.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from serialkit.core.piece import Event, Measure, Piece
from serialkit.core.timeline import bar_index
from serialkit.eval.stats import FloatArray, normalised_entropy

DEGENERACY_WEIGHTS: Mapping[str, float] = {
    "density_deficit": 0.25,
    "coverage_shortfall": 0.25,
    "long_note_excess": 0.20,
    "pitch_monotony": 0.15,
    "rhythmic_monotony": 0.15,
}
TARGET_DENSITY = 4.0  # events per bar per voice
COVERAGE_FLOOR = 0.75  # share of (bar, voice) cells with an onset
LONG_SHARE_CEILING = 0.30  # share of events lasting a whole bar or more
INTERVAL_CLIP = 12  # melodic intervals are clipped to ±12 semitones (25 bins)
INTERVAL_BINS = 2 * INTERVAL_CLIP + 1
DURATION_BINS = 8  # normaliser for rhythmic entropy: eight common note values
WINDOW = 12  # pitch-line window (notes) for the MMD feature vectors
HOP = 6


@dataclass(frozen=True, slots=True)
class Collisions:
    """Same-pitch-class overlaps between voices and the number of overlapping pairs (opportunities)."""

    collisions: int
    opportunities: int

    @property
    def rate(self) -> float:
        """Collisions per opportunity (0 when there was no opportunity)."""
        return self.collisions / self.opportunities if self.opportunities else 0.0


def count_collisions(events: Sequence[Event], tolerance: Fraction = Fraction(0)) -> Collisions:
    """Sweep sorted intervals; count overlapping cross-voice pairs and those sharing a pitch class."""
    ordered = sorted((e for e in events if e.duration > 0), key=lambda e: (e.onset, e.id))
    active: list[Event] = []
    collisions = opportunities = 0
    for event in ordered:
        active = [a for a in active if a.end - event.onset > tolerance]
        for other in active:
            if other.voice == event.voice:
                continue
            overlap = min(other.end, event.end) - event.onset
            if overlap > tolerance:
                opportunities += 1
                if other.midi % 12 == event.midi % 12:
                    collisions += 1
        active.append(event)
    return Collisions(collisions, opportunities)


def bars_of(piece: Piece, n_bars: int | None = None) -> tuple[Measure, ...]:
    """The piece's bars, extended (by its last meter) or cut to ``n_bars`` when the task says so."""
    bars = list(piece.bar_list())
    if n_bars is None or n_bars <= 0:
        return tuple(bars)
    ts = piece.time_signatures[-1] if piece.time_signatures else None
    length = ts.bar_length if ts is not None else Fraction(4)
    while len(bars) < n_bars:
        onset = bars[-1].onset + bars[-1].duration if bars else Fraction(0)
        bars.append(Measure(str(len(bars) + 1), onset, length))
    return tuple(bars[:n_bars])


def melodic_intervals(piece: Piece) -> list[int]:
    """Signed intervals between successive onsets within each voice (top note of a chord), clipped."""
    out: list[int] = []
    for events in piece.by_voice().values():
        tops: dict[Fraction, int] = {}
        for e in events:
            tops[e.onset] = max(tops.get(e.onset, e.midi), e.midi)
        line = [tops[t] for t in sorted(tops)]
        out.extend(max(-INTERVAL_CLIP, min(INTERVAL_CLIP, b - a)) for a, b in zip(line, line[1:], strict=False))
    return out


def degeneracy(piece: Piece, n_bars: int | None = None) -> dict[str, float]:
    """The five degeneracy components and their weighted ``score`` (0 = lively, 1 = degenerate).

    - density deficit = max(0, 1 − d/4), d = events per bar per voice;
    - coverage shortfall = max(0, 0.75 − c)/0.75, c = share of (bar, voice) cells with an onset;
    - long-note excess = max(0, s − 0.30)/0.70, s = share of events lasting at least the bar
      they start in;
    - pitch monotony = 1 − H(melodic intervals)/log2(min(N, 25)), intervals clipped to ±12;
    - rhythmic monotony = 1 − H(durations)/log2(min(N, 8)).
    """
    bars = bars_of(piece, n_bars)
    n_voices = max(1, len(piece.voices))
    events = [e for e in piece.events if not e.grace]
    cells = max(1, len(bars) * n_voices)
    density = len(events) / cells
    active: set[tuple[int, str]] = set()
    long_notes = 0
    for e in events:
        index = bar_index(bars, e.onset)
        if bars[index].onset <= e.onset < bars[index].onset + bars[index].duration:
            active.add((index, e.voice))
        if e.duration >= bars[index].duration:
            long_notes += 1
    coverage = len(active) / cells
    long_share = long_notes / len(events) if events else 0.0
    intervals = melodic_intervals(piece)
    parts = {
        "density_deficit": max(0.0, 1.0 - density / TARGET_DENSITY),
        "coverage_shortfall": max(0.0, COVERAGE_FLOOR - coverage) / COVERAGE_FLOOR,
        "long_note_excess": max(0.0, long_share - LONG_SHARE_CEILING) / (1.0 - LONG_SHARE_CEILING),
        "pitch_monotony": 1.0 - normalised_entropy(intervals, INTERVAL_BINS),
        "rhythmic_monotony": 1.0 - normalised_entropy([e.duration for e in events], DURATION_BINS),
    }
    parts["score"] = sum(DEGENERACY_WEIGHTS[k] * v for k, v in parts.items())
    return parts


def pitch_line(piece: Piece) -> list[int]:
    """Monophonic reduction: the highest MIDI pitch sounding from each distinct onset (skyline)."""
    tops: dict[Fraction, int] = {}
    for e in piece.events:
        if e.grace:
            continue
        tops[e.onset] = max(tops.get(e.onset, e.midi), e.midi)
    return [tops[t] for t in sorted(tops)]


def interval_histogram(line: Sequence[int]) -> FloatArray:
    """Counts of signed melodic intervals (clipped to ±12) over 25 bins."""
    hist = np.zeros(INTERVAL_BINS, dtype=np.float64)
    for a, b in zip(line, line[1:], strict=False):
        hist[max(-INTERVAL_CLIP, min(INTERVAL_CLIP, b - a)) + INTERVAL_CLIP] += 1
    return hist


def line_features(line: Sequence[int]) -> list[list[float]]:
    """MMD samples: windows of 12 notes (hop 6), each its normalised interval histogram."""
    if len(line) < 2:
        return []
    starts = range(0, max(1, len(line) - WINDOW + 1), HOP)
    out = []
    for s in starts:
        hist = interval_histogram(line[s:s + WINDOW])
        out.append((hist / hist.sum()).tolist())
    return out


def piece_metrics(piece: Piece, n_bars: int | None = None,
                  tolerance: Fraction = Fraction(0)) -> dict[str, Any]:
    """Everything the report needs about one candidate, JSON-ready (stored in the run record)."""
    coll = count_collisions(piece.events, tolerance)
    return {
        "events": len(piece.events),
        "bars": len(bars_of(piece, n_bars)),
        "voices": len(piece.voices),
        "collisions": coll.collisions,
        "opportunities": coll.opportunities,
        "degeneracy": degeneracy(piece, n_bars) if piece.events else None,
        "pitch_line": pitch_line(piece),
    }
