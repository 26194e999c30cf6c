"""Predicates on voices: RANGE (register) and CROSS (voice crossings)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from fractions import Fraction
from functools import partial, reduce
from itertools import compress, count, islice, repeat
from operator import and_, gt, le, lt, or_

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
    """What one voice sounds at any time, for the partners it may cross.

    A voice whose notes never overlap (``single``, the usual case) sounds one note at a time: a
    partner in the same rhythm is compared with it note against note. For other partners,
    :meth:`profile` gives steps to bisect: ``times[k]`` starts step k, which lasts until
    ``ends[k]`` and sounds ``low[k]``..``high[k]`` (a step per note for a single voice, else a
    step at every note boundary). Its value lists carry a silent step in front, so that
    ``bisect_right(times, t)`` indexes them directly (index 0: before the voice's first note).
    """

    __slots__ = ("idx", "times", "pitches", "ends", "single", "_profile")

    def __init__(self, idx: list[int], starts: list[int], pitches: list[int], end: list[int]) -> None:
        self.idx, self.times, self.pitches = idx, starts, pitches
        self.ends = list(map(end.__getitem__, idx))
        self.single = all(map(le, self.ends, islice(starts, 1, None)))
        self._profile: tuple[list[int], list[int], list[int], list[int]] | None = None

    def profile(self, end: list[int], midi: list[int]) -> tuple[list[int], list[int], list[int], list[int]]:
        """``(times, ends, low, high)``, the value lists with the silent step in front."""
        if self._profile is not None:
            return self._profile
        starts, silent = self.times, self.times[0] if self.times else 0
        if self.single:
            self._profile = (starts, [silent, *self.ends], [128, *self.pitches], [-1, *self.pitches])
            return self._profile
        idx = self.idx
        times = sorted(set(starts).union(self.ends))
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
        self._profile = (times, [silent, *times[1:], times[-1] + 1] if times else [silent], low, high)
        return self._profile


def crossed_noteheads(piece: Piece | Columns) -> tuple[list[int], int]:
    """Indices of crossed noteheads (in onset order) and how many noteheads were judged.

    Voices are ordered top to bottom as the piece lists them. A notehead in voice i is crossed
    when, at its onset, it sounds strictly below a note then sounding in a voice listed below i,
    or strictly above a note then sounding in a voice listed above i ("sounding at t" means
    onset <= t < end, so notes starting together count). Grace notes are not judged and do not
    sound. Voices are compared pairwise, all notes of a pair at once: with a partner in the same
    rhythm note against note; with any other only the notes outside its register, by bisection
    in its sounding profile.
    """
    cols = columns_of(piece)
    start, end, midi = cols.start, cols.end, cols.midi
    n_voices = len(cols.piece.voices)
    per_voice, pitches = cols.by_voice, cols.voice_midi
    if cols.silent:  # grace notes: neither judged nor sounding
        per_voice = [[i for i in idx if end[i] > start[i]] for idx in per_voice]
        pitches = [list(map(midi.__getitem__, idx)) for idx in per_voice]
    judged = sum(map(len, per_voice))
    onsets = [list(map(start.__getitem__, idx)) for idx in per_voice]
    vmin = [min(p, default=128) for p in pitches]
    vmax = [max(p, default=-1) for p in pitches]
    below = [[j for j in range(i + 1, n_voices) if vmax[j] > vmin[i]] for i in range(n_voices)]
    above = [[j for j in range(i) if vmin[j] < vmax[i]] for i in range(n_voices)]
    needed = {j for i in range(n_voices) for j in below[i] + above[i]}
    sounding = {j: _Sounding(per_voice[j], onsets[j], pitches[j], end) for j in sorted(needed)}
    crossed: list[int] = []
    for v in range(n_voices):
        t_v, m_v = onsets[v], pitches[v]
        masks: list[Iterator[bool]] = []  # over all of v's notes, from partners in v's rhythm
        hits: set[int] = set()  # positions in v's notes, from the other partners
        # crossed when a voice below then sounds higher, or a voice above lower
        for j, higher in [(j, True) for j in below[v]] + [(j, False) for j in above[v]]:
            partner = sounding[j]
            if partner.single and partner.times == t_v:
                masks.append(map(gt if higher else lt, partner.pitches, m_v))
                continue
            times, ends, low, high = partner.profile(end, midi)
            if higher:  # only notes under the partner's top can sit under it
                at = list(compress(count(), map(gt, repeat(vmax[j]), m_v)))
            else:
                at = list(compress(count(), map(lt, repeat(vmin[j]), m_v)))
            ts, ms = list(map(t_v.__getitem__, at)), list(map(m_v.__getitem__, at))
            k = list(map(bisect_right, repeat(times), ts))
            there = map(gt, map(ends.__getitem__, k), ts)
            beyond = map(gt, map(high.__getitem__, k), ms) if higher else map(lt, map(low.__getitem__, k), ms)
            hits.update(compress(at, map(and_, there, beyond)))
        if hits:
            for mask in masks:
                hits.update(compress(count(), mask))
            crossed += map(per_voice[v].__getitem__, sorted(hits))
        elif masks:
            crossed += compress(per_voice[v], reduce(partial(map, or_), masks))
    crossed.sort(key=start.__getitem__)
    return crossed, judged


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
