"""Predicates on voices: RANGE (register) and CROSS (voice crossings)."""

from __future__ import annotations

from bisect import bisect_right
from fractions import Fraction
from operator import le

from serialkit.core.piece import Piece
from serialkit.core.predicates.columns import Columns, columns_of
from serialkit.core.predicates.model import Violation
from serialkit.core.rows import pc_name


def check_range(piece: Piece | Columns) -> list[Violation]:
    """RANGE: every event lies within its voice's declared [low, high] (MIDI, inclusive)."""
    cols = columns_of(piece)
    voices = cols.piece.voices
    low = [-1 if v.low is None else v.low for v in voices]
    high = [128 if v.high is None else v.high for v in voices]
    if all(x == -1 for x in low) and all(x == 128 for x in high):
        return []
    out: list[Violation] = []
    for i, (v, m) in enumerate(zip(cols.voice, cols.midi, strict=True)):
        if low[v] <= m <= high[v]:
            continue
        edge, side = (low[v], "below") if m < low[v] else (high[v], "above")
        out.append(
            Violation(
                "RANGE",
                (cols.ids[i],),
                f"MIDI {m} ({pc_name(m)}) is {side} the range of {cols.locator.voice_name(cols.events[i])} "
                f"{low[v] if low[v] >= 0 else '-'}..{high[v] if high[v] <= 127 else '-'} (limit {edge})",
                cols.where(i),
            )
        )
    return out


class _Sounding:
    """What one voice sounds at any time: lowest and highest MIDI, found by bisection.

    A voice whose notes never overlap (the usual case) is queried straight from its sorted
    onsets; any other voice gets a step profile over all of its note boundaries.
    """

    __slots__ = ("times", "ends", "low", "high")

    def __init__(self, idx: list[int], start: list[int], end: list[int], midi: list[int]) -> None:
        starts = [start[i] for i in idx]
        ends = [end[i] for i in idx]
        if all(map(le, ends[:-1], starts[1:])):  # no overlaps: one note at a time
            self.times, self.ends = starts, ends
            self.low = self.high = [midi[i] for i in idx]
            return
        times = sorted(set(starts).union(ends))
        low: list[int] = []
        high: list[int] = []
        active: list[int] = []
        p, n = 0, len(idx)
        for t in times:
            while p < n and starts[p] <= t:
                active.append(idx[p])
                p += 1
            active = [x for x in active if end[x] > t]
            pitches = [midi[x] for x in active]
            low.append(min(pitches, default=128))
            high.append(max(pitches, default=-1))
        self.times, self.low, self.high = times, low, high
        self.ends = [*times[1:], times[-1] + 1] if times else []

    def highest(self, t: int) -> int:
        """The highest MIDI sounding at ``t`` (-1 when silent)."""
        k = bisect_right(self.times, t) - 1
        return self.high[k] if k >= 0 and self.ends[k] > t else -1

    def lowest(self, t: int) -> int:
        """The lowest MIDI sounding at ``t`` (128 when silent)."""
        k = bisect_right(self.times, t) - 1
        return self.low[k] if k >= 0 and self.ends[k] > t else 128


def crossed_noteheads(piece: Piece | Columns) -> tuple[list[int], int]:
    """Indices of crossed noteheads (in onset order) and how many noteheads were judged.

    Voices are ordered top to bottom as the piece lists them. A notehead in voice i is crossed
    when, at its onset, it sounds strictly below a note then sounding in a voice listed below i,
    or strictly above a note then sounding in a voice listed above i ("sounding at t" means
    onset <= t < end, so notes starting together count). Grace notes are not judged and do not
    sound. Only notes outside the register all partner voices share can cross, so only those are
    looked up, each by bisection in the partner voices' sounding profiles.
    """
    cols = columns_of(piece)
    start, end, voice, midi = cols.start, cols.end, cols.voice, cols.midi
    n_voices = len(cols.piece.voices)
    per_voice: list[list[int]] = [[] for _ in range(n_voices)]
    add = [lst.append for lst in per_voice]
    for i in cols.order:
        add[voice[i]](i)
    per_voice = [[i for i in idx if end[i] > start[i]] for idx in per_voice]
    judged = sum(map(len, per_voice))
    midi_of = midi.__getitem__
    vmin = [min(map(midi_of, idx), default=128) for idx in per_voice]
    vmax = [max(map(midi_of, idx), default=-1) for idx in per_voice]
    below = [[j for j in range(i + 1, n_voices) if vmax[j] > vmin[i]] for i in range(n_voices)]
    above = [[j for j in range(i) if vmin[j] < vmax[i]] for i in range(n_voices)]
    # A note at or above every partner below, and at or below every partner above, cannot cross.
    floor = [max((vmax[j] for j in below[i]), default=-1) for i in range(n_voices)]
    ceiling = [min((vmin[j] for j in above[i]), default=128) for i in range(n_voices)]
    needed = {j for i in range(n_voices) for j in below[i] + above[i]}
    sounding = {j: _Sounding(per_voice[j], start, end, midi) for j in sorted(needed)}
    crossed: list[int] = []
    for v in range(n_voices):
        if not (below[v] or above[v]):
            continue
        lo, hi = floor[v], ceiling[v]
        under = [(vmax[j], sounding[j].times, sounding[j].ends, sounding[j].high) for j in below[v]]
        over = [(vmin[j], sounding[j].times, sounding[j].ends, sounding[j].low) for j in above[v]]
        if len(under) <= 1 and len(over) <= 1:  # the usual case: only neighbours can cross
            crossed += _crossed_by_neighbours(per_voice[v], start, midi, under, over)
            continue
        for i in per_voice[v]:
            m = midi[i]
            if lo <= m <= hi:
                continue
            t = start[i]
            if m < lo:  # some voice below may sound higher
                for top, times, ends, pitch in under:
                    if m < top:
                        k = bisect_right(times, t) - 1
                        if k >= 0 and ends[k] > t and pitch[k] > m:
                            crossed.append(i)
                            break
                else:
                    if m > hi:
                        for bottom, times, ends, pitch in over:
                            if m > bottom:
                                k = bisect_right(times, t) - 1
                                if k >= 0 and ends[k] > t and pitch[k] < m:
                                    crossed.append(i)
                                    break
            else:  # m > hi: some voice above may sound lower
                for bottom, times, ends, pitch in over:
                    if m > bottom:
                        k = bisect_right(times, t) - 1
                        if k >= 0 and ends[k] > t and pitch[k] < m:
                            crossed.append(i)
                            break
    crossed.sort(key=start.__getitem__)
    return crossed, judged


_Partner = tuple[int, list[int], list[int], list[int]]


def _crossed_by_neighbours(
    idx: list[int], start: list[int], midi: list[int], under: list[_Partner], over: list[_Partner]
) -> list[int]:
    """``crossed_noteheads`` for a voice with at most one partner below and one above."""
    top, u_times, u_ends, u_high = under[0] if under else (-1, [], [], [])
    bottom, o_times, o_ends, o_low = over[0] if over else (128, [], [], [])
    found = []
    for i in idx:
        m = midi[i]
        if m < top:
            t = start[i]
            k = bisect_right(u_times, t) - 1
            if k >= 0 and u_ends[k] > t and u_high[k] > m:
                found.append(i)
                continue
        if m > bottom:
            t = start[i]
            k = bisect_right(o_times, t) - 1
            if k >= 0 and o_ends[k] > t and o_low[k] < m:
                found.append(i)
    return found


def crossing_share(piece: Piece | Columns) -> Fraction:
    """The share of judged noteheads that are crossed (0 for an empty piece)."""
    crossed, judged = crossed_noteheads(piece)
    return Fraction(len(crossed), judged) if judged else Fraction(0)


def check_crossings(piece: Piece | Columns, max_share: Fraction = Fraction(1, 10)) -> list[Violation]:
    """CROSS: one violation naming every crossed notehead when their share exceeds ``max_share``."""
    cols = columns_of(piece)
    crossed, judged = crossed_noteheads(cols)
    if not judged or Fraction(len(crossed), judged) <= max_share:
        return []
    share = Fraction(len(crossed), judged)
    return [
        Violation(
            "CROSS",
            tuple(cols.ids[i] for i in crossed),
            f"{len(crossed)} of {judged} noteheads sit in a voice crossing "
            f"({float(share):.1%} > {float(max_share):.1%} allowed)",
            cols.where(crossed[0]),
        )
    ]
