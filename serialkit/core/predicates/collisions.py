"""COLL: two events in different voices sounding the same pitch class at once (exact sweep)."""

from __future__ import annotations

from fractions import Fraction

from serialkit.core.piece import Piece
from serialkit.core.predicates.columns import Columns, columns_of
from serialkit.core.predicates.records import Violation
from serialkit.core.rows import pc_name


def collision_pairs(piece: Piece | Columns, tolerance: Fraction = Fraction(0)) -> list[tuple[int, int]]:
    """Index pairs (earlier, later) of colliding events, by a sweep over sorted intervals.

    Two events collide when they are in different voices, share a pitch class and their sounding
    intervals overlap by more than ``tolerance``: ``min(e1, e2) - max(s1, s2) > tolerance``. That
    is exactly a positive overlap of the intervals shrunk to ``[s, e - tolerance)``, so touching
    intervals never collide and a note no longer than the tolerance collides with nothing. One
    pass in onset order keeps, per pitch class, the events still sounding; each event is compared
    only with those, so the work is O(n log n + k + d) for k collisions and d overlapping
    same-pitch-class pairs inside one voice (octave doublings, normally none).
    """
    cols = columns_of(piece)
    if tolerance:
        cols = cols.rescaled(tolerance.denominator)
        tol = cols.ticks(tolerance)
        ends = [e - tol for e in cols.end]
    else:
        ends = cols.end
    start, voice, midi = cols.start, cols.voice, cols.midi
    active: list[list[int]] = [[] for _ in range(12)]
    pairs: list[tuple[int, int]] = []
    for i in cols.order:
        s = start[i]
        if ends[i] <= s:
            continue  # empty after shrinking: grace notes, notes within the tolerance
        act = active[midi[i] % 12]
        if act:
            if len(act) == 1:
                j = act[0]
                if ends[j] <= s:
                    act[0] = i
                    continue
                if voice[j] != voice[i]:
                    pairs.append((j, i))
            else:
                act[:] = [j for j in act if ends[j] > s]
                v = voice[i]
                for j in act:
                    if voice[j] != v:
                        pairs.append((j, i))
        act.append(i)
    return pairs


def naive_collision_pairs(piece: Piece, tolerance: Fraction = Fraction(0)) -> set[tuple[str, str]]:
    """The same relation by comparing every pair of events with Fractions (tests, benchmarks)."""
    events = [e for e in piece.events]
    found: set[tuple[str, str]] = set()
    for a_index, a in enumerate(events):
        for b in events[a_index + 1 :]:
            if a.voice == b.voice or a.midi % 12 != b.midi % 12:
                continue
            if min(a.end, b.end) - max(a.onset, b.onset) > tolerance:
                found.add((min(a.id, b.id), max(a.id, b.id)))
    return found


def check_collisions(piece: Piece | Columns, tolerance: Fraction = Fraction(0)) -> list[Violation]:
    """COLL violations: one per colliding pair, located at the later onset."""
    cols = columns_of(piece)
    out: list[Violation] = []
    events = cols.events
    for j, i in collision_pairs(cols, tolerance):
        a, b = events[j], events[i]
        overlap = min(a.end, b.end) - max(a.onset, b.onset)
        out.append(
            Violation(
                "COLL",
                (a.id, b.id),
                f"{pc_name(a.midi)} sounds in {cols.locator.voice_name(a)} and {cols.locator.voice_name(b)} at once "
                f"(overlap {_q(overlap)} quarter{'s' if overlap > 1 else ''})",
                cols.where(i),
            )
        )
    return out


def _q(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
