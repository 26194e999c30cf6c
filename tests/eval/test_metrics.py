"""Candidate metrics against hand-computed values and invariants."""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import combinations

import pytest
from hypothesis import given, settings

from serialkit.core.piece import Event, Piece, TimeSignature, Voice
from serialkit.eval.metrics import (
    count_collisions,
    degeneracy,
    line_features,
    melodic_intervals,
    piece_metrics,
    pitch_line,
)
from tests.strategies import row_statement_pieces

F = Fraction


def ev(i: str, voice: str, onset: float | Fraction, dur: float | Fraction, midi: int) -> Event:
    return Event(i, voice, F(onset), F(dur), midi)


def test_collisions_and_opportunities_by_hand() -> None:
    events = [
        ev("a1", "a", 0, 2, 60),  # overlaps b1 (C vs C: collision) and b2 (C vs D)
        ev("b1", "b", 1, 1, 48),
        ev("b2", "b", 1, 2, 50),  # same voice as b1: not an opportunity
        ev("a2", "a", 2, 1, 62),  # touches a1's end; overlaps b2 (D vs D: collision)
        ev("c1", "c", 3, 1, 62),  # starts when a2 and b2 end: no overlap
    ]
    result = count_collisions(events)
    assert (result.collisions, result.opportunities) == (2, 3)
    assert result.rate == pytest.approx(2 / 3)
    tolerant = count_collisions(events, tolerance=F(1))  # only overlaps longer than a crotchet
    assert (tolerant.collisions, tolerant.opportunities) == (0, 0)


@settings(max_examples=30, deadline=None)
@given(row_statement_pieces(max_voices=3, max_statements=2))
def test_sweep_agrees_with_the_pairwise_definition(piece: Piece) -> None:
    coll = opp = 0
    for a, b in combinations(piece.events, 2):
        if a.voice != b.voice and min(a.end, b.end) - max(a.onset, b.onset) > 0:
            opp += 1
            coll += a.pc == b.pc
    result = count_collisions(piece.events)
    assert (result.collisions, result.opportunities) == (coll, opp)


def test_degeneracy_components_by_hand() -> None:
    # One voice, 4/4, 2 bars planned. Bar 1: C D E (1, 1, 2 quarters); bar 2 empty... except a
    # whole note G starting at beat 1 of bar 2 is long (>= a bar).
    piece = Piece(
        (ev("1", "v", 0, 1, 60), ev("2", "v", 1, 1, 62), ev("3", "v", 2, 2, 64), ev("4", "v", 4, 4, 67)),
        voices=(Voice("v"),), time_signatures=(TimeSignature(4, 4),),
    )
    d = degeneracy(piece, n_bars=4)
    # density: 4 events / (4 bars * 1 voice) = 1 per bar → deficit 1 - 1/4
    assert d["density_deficit"] == pytest.approx(0.75)
    # coverage: onsets in bars 1 and 2 of 4 = 0.5 → (0.75 - 0.5) / 0.75
    assert d["coverage_shortfall"] == pytest.approx(1 / 3)
    # long notes: 1 of 4 = 0.25 ≤ 0.30 → 0
    assert d["long_note_excess"] == 0.0
    # intervals +2 +2 +3: H = -(2/3 log2 2/3 + 1/3 log2 1/3) over log2(min(3, 25))
    h = -(2 / 3 * math.log2(2 / 3) + 1 / 3 * math.log2(1 / 3))
    assert d["pitch_monotony"] == pytest.approx(1 - h / math.log2(3))
    # durations 1 1 2 4: H = 1.5 bits over log2(4)
    assert d["rhythmic_monotony"] == pytest.approx(1 - 1.5 / 2)
    expected = 0.25 * 0.75 + 0.25 / 3 + 0.15 * (1 - h / math.log2(3)) + 0.15 * 0.25
    assert d["score"] == pytest.approx(expected)


def test_a_lively_line_scores_near_zero_and_a_drone_near_one() -> None:
    pitches = [60, 67, 62, 71, 64, 57, 65, 72, 59, 66, 61, 68, 63, 70, 58, 69]
    durs = [F(1, 2), F(1, 4), F(1, 4), F(1), F(3, 4), F(1, 4), F(1, 2), F(1, 2)] * 2
    events, t = [], F(0)
    for i, (p, d) in enumerate(zip(pitches, durs, strict=True)):
        events.append(ev(str(i), "v", t, d, p))
        t += d
    lively = degeneracy(Piece(tuple(events)), n_bars=2)
    drone = degeneracy(Piece((ev("x", "v", 0, 8, 60),)), n_bars=2)
    assert lively["score"] < 0.2 < 0.7 < drone["score"]


def test_pitch_line_is_the_skyline_and_features_are_windows() -> None:
    piece = Piece((ev("a", "s", 0, 1, 72), ev("b", "b", 0, 2, 48), ev("c", "b", 1, 1, 50),
                   ev("d", "s", 2, 1, 70)))
    assert pitch_line(piece) == [72, 50, 70]
    assert sorted(melodic_intervals(piece)) == [-2, 2]
    feats = line_features(list(range(60, 90)))  # 30 notes → windows at 0, 6, 12, 18
    assert len(feats) == 4 and all(abs(sum(f) - 1) < 1e-9 for f in feats)
    assert line_features([60]) == []


def test_piece_metrics_is_json_ready() -> None:
    import json

    piece = Piece((ev("a", "s", 0, 1, 72), ev("b", "b", 0, 2, 60)))
    m = piece_metrics(piece, n_bars=1)
    assert (m["collisions"], m["opportunities"], m["events"], m["bars"]) == (1, 1, 2, 1)
    json.dumps(m)
