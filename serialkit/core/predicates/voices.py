"""Predicates on voices: RANGE (register) and CROSS (voice crossings)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator
from fractions import Fraction
from itertools import compress, count, islice, repeat
from operator import and_, gt, le, lt

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
    if all(low[v] <= min(p) and max(p) <= high[v] for v, p in enumerate(cols.voice_midi) if p):
        return []
    out: list[Violation] = []
    for i, (v, m) in enumerate(zip(cols.voice, cols.midi, strict=True)):
        if low[v] <= m <= high[v]:
            continue
        edge, side = (low[v], "below") if m < low[v] else (high[v], "above")
        out.append(
            Violation(
                "RANGE",
                (cols.events[i].id,),
                f"MIDI {m} ({pc_name(m)}) is {side} the range of {cols.locator.voice_name(cols.events[i])} "
                f"{low[v] if low[v] >= 0 else '-'}..{high[v] if high[v] <= 127 else '-'} (limit {edge})",
                cols.where(i),
            )
        )
    return out


class _Sounding:
    """What one voice sounds at any time: lowest and highest MIDI, looked up by bisection.

    ``times[k]`` starts step k, which lasts until ``ends[k]`` and sounds ``low[k]``..``high[k]``.
    A voice whose notes never overlap (``single``, the usual case) has a step per note, straight
    from its onset-sorted notes; any other voice gets a step profile over all of its note
    boundaries. The value lists carry one silent step in front, so that
    ``bisect_right(times, t)`` indexes them directly (index 0: before the voice's first note).
    """

    __slots__ = ("times", "ends", "low", "high", "single")

    def __init__(self, idx: list[int], starts: list[int], pitches: list[int], end: list[int], midi: list[int]) -> None:
        ends = list(map(end.__getitem__, idx))
        silent = starts[0] if starts else 0
        self.single = all(map(le, ends[:-1], starts[1:]))
        if self.single:  # one note at a time
            self.times = starts
            self.ends = [silent, *ends]
            self.low = [128, *pitches]
            self.high = [-1, *pitches]
            return
        times = sorted(set(starts).union(ends))
        low: list[int] = [128]
        high: list[int] = [-1]
        active: list[int] = []
        p, n = 0, len(idx)
        for t in times:
            while p < n and starts[p] <= t:
                active.append(idx[p])
                p += 1
            active = [x for x in active if end[x] > t]
            pitches_now = [midi[x] for x in active]
            low.append(min(pitches_now, default=128))
            high.append(max(pitches_now, default=-1))
        self.times, self.low, self.high = times, low, high
        self.ends = [silent, *times[1:], times[-1] + 1] if times else [silent]

    def above(self, onsets: list[int], pitches: list[int]) -> Iterator[bool]:
        """For each (time, MIDI): does this voice then sound something higher?"""
        if self.single and onsets == self.times:  # the same rhythm: note k sounds against note k
            return map(gt, islice(self.high, 1, None), pitches)
        k = list(map(bisect_right, repeat(self.times), onsets))
        return map(and_, map(gt, map(self.ends.__getitem__, k), onsets), map(gt, map(self.high.__getitem__, k), pitches))

    def below(self, onsets: list[int], pitches: list[int]) -> Iterator[bool]:
        """For each (time, MIDI): does this voice then sound something lower?"""
        if self.single and onsets == self.times:
            return map(lt, islice(self.low, 1, None), pitches)
        k = list(map(bisect_right, repeat(self.times), onsets))
        return map(and_, map(gt, map(self.ends.__getitem__, k), onsets), map(lt, map(self.low.__getitem__, k), pitches))


def crossed_noteheads(piece: Piece | Columns) -> tuple[list[int], int]:
    """Indices of crossed noteheads (in onset order) and how many noteheads were judged.

    Voices are ordered top to bottom as the piece lists them. A notehead in voice i is crossed
    when, at its onset, it sounds strictly below a note then sounding in a voice listed below i,
    or strictly above a note then sounding in a voice listed above i ("sounding at t" means
    onset <= t < end, so notes starting together count). Grace notes are not judged and do not
    sound. Voices are compared pairwise, all notes of a pair at once: a partner in the same
    rhythm note against note; any other only for the notes outside its register, by bisection
    in its sounding profile.
    """
    cols = columns_of(piece)
    start, end, midi = cols.start, cols.end, cols.midi
    n_voices = len(cols.piece.voices)
    per_voice, pitches = cols.by_voice, cols.voice_midi
    if not all(map(lt, start, end)):  # grace notes: neither judged nor sounding
        per_voice = [[i for i in idx if end[i] > start[i]] for idx in per_voice]
        pitches = [list(map(midi.__getitem__, idx)) for idx in per_voice]
    judged = sum(map(len, per_voice))
    onsets = [list(map(start.__getitem__, idx)) for idx in per_voice]
    vmin = [min(p, default=128) for p in pitches]
    vmax = [max(p, default=-1) for p in pitches]
    below = [[j for j in range(i + 1, n_voices) if vmax[j] > vmin[i]] for i in range(n_voices)]
    above = [[j for j in range(i) if vmin[j] < vmax[i]] for i in range(n_voices)]
    needed = {j for i in range(n_voices) for j in below[i] + above[i]}
    sounding = {j: _Sounding(per_voice[j], onsets[j], pitches[j], end, midi) for j in sorted(needed)}
    crossed: list[int] = []
    for v in range(n_voices):
        hits: set[int] = set()
        mine, t_v, m_v = per_voice[v], onsets[v], pitches[v]
        for j in below[v]:  # crossed when voice j then sounds higher
            hits.update(_pairwise(sounding[j], t_v, m_v, vmax[j].__gt__, _Sounding.above))
        for j in above[v]:  # crossed when voice j then sounds lower
            hits.update(_pairwise(sounding[j], t_v, m_v, vmin[j].__lt__, _Sounding.below))
        crossed += map(mine.__getitem__, sorted(hits))
    crossed.sort(key=start.__getitem__)
    return crossed, judged


def _pairwise(
    partner: _Sounding,
    onsets: list[int],
    pitches: list[int],
    can_cross: Callable[[int], bool],
    crosses: Callable[[_Sounding, list[int], list[int]], Iterator[bool]],
) -> Iterator[int]:
    """Positions (in a voice's note list) of the notes the partner voice crosses."""
    if partner.single and onsets == partner.times:
        return compress(count(), crosses(partner, onsets, pitches))
    at = list(compress(count(), map(can_cross, pitches)))  # only these can cross
    ts, ms = list(map(onsets.__getitem__, at)), list(map(pitches.__getitem__, at))
    return compress(at, crosses(partner, ts, ms))


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
            tuple(cols.events[i].id for i in crossed),
            f"{len(crossed)} of {judged} noteheads sit in a voice crossing "
            f"({float(share):.1%} > {float(max_share):.1%} allowed)",
            cols.where(crossed[0]),
        )
    ]
