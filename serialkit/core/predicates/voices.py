"""Predicates on voices: RANGE (register) and CROSS (voice crossings)."""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_right
from fractions import Fraction
from itertools import compress, count, islice, repeat
from operator import and_, gt, le, lt

from serialkit.core.piece import Piece
from serialkit.core.predicates.columns import Columns, columns_of
from serialkit.core.predicates.records import Violation
from serialkit.core.rows import pc_name


def check_range(piece: Piece | Columns) -> list[Violation]:
    """RANGE: every event lies within its voice's declared [low, high] (MIDI, inclusive)."""
    cols = columns_of(piece)
    voices = cols.piece.voices
    low = [-1 if v.low is None else v.low for v in voices]
    high = [128 if v.high is None else v.high for v in voices]
    if all(x == -1 for x in low) and all(x == 128 for x in high):
        return []
    if all(low[v] <= lo and hi <= high[v] for v, (lo, hi) in enumerate(zip(cols.voice_low, cols.voice_high, strict=True))):
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
    partner in the same rhythm is compared with it note against note, all notes at once through
    :attr:`lanes` (:func:`_sounds_higher`). For other partners, :meth:`profile` gives steps to
    bisect: ``times[k]`` starts step k, which lasts until ``ends[k]`` and sounds
    ``low[k]``..``high[k]`` (a step per note for a single voice, else a step at every note
    boundary). Its value lists carry a silent step in front, so that ``bisect_right(times, t)``
    indexes them directly (index 0: before the voice's first note).
    """

    __slots__ = ("idx", "times", "pitches", "ends", "single", "_lanes", "_profile")

    def __init__(self, idx: list[int], start: list[int], pitches: list[int], end: list[int]) -> None:
        self.idx, self.pitches = idx, pitches
        self.times = _ticks(idx, start)
        self.ends = _ticks(idx, end)
        self.single = _in_turn(self.times, self.ends)
        self._lanes: int | None = None
        self._profile: tuple[list[int], list[int], list[int], list[int]] | None = None

    @property
    def lanes(self) -> int:
        """The pitches as one integer, a byte per note (the first note in the lowest byte)."""
        if self._lanes is None:
            self._lanes = int.from_bytes(bytes(self.pitches), "little")
        return self._lanes

    def profile(self, end: list[int], midi: list[int]) -> tuple[list[int], list[int], list[int], list[int]]:
        """``(times, ends, low, high)``, the value lists with the silent step in front."""
        if self._profile is not None:
            return self._profile
        starts, ends = list(self.times), list(self.ends)
        silent = starts[0] if starts else 0
        if self.single:
            self._profile = (starts, [silent, *ends], [128, *self.pitches], [-1, *self.pitches])
            return self._profile
        idx = self.idx
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
        self._profile = (times, [silent, *times[1:], times[-1] + 1] if times else [silent], low, high)
        return self._profile


_Ticks = array | list  # type: ignore[type-arg]
"""Tick values of one voice's notes: a machine array (64-bit), or a list where one does not fit."""


def _ticks(idx: list[int], column: list[int]) -> _Ticks:
    """The values of ``column`` at ``idx``, as 64-bit integers when they fit (so that comparing two
    voices' onsets is one memory comparison, and :func:`_in_turn` can look at all notes at once)."""
    try:
        return array("q", map(column.__getitem__, idx))
    except OverflowError:  # ticks beyond 2**63: a scale no real score reaches
        return list(map(column.__getitem__, idx))


_TOP64 = (1 << 63).to_bytes(8, sys.byteorder)


def _in_turn(starts: _Ticks, ends: _Ticks) -> bool:
    """True when each note ends by the next one's onset (the voice sounds one note at a time).

    The plain test is ``all(e <= s for e, s in zip(ends, starts[1:]))``. On 64-bit arrays all
    notes are tested at once: each value is a 64-bit lane of one integer; setting the top bit of
    every next onset's lane and subtracting the ends, no lane borrows from the next (the values
    are below 2**63), and a lane keeps its top bit exactly when end <= next onset."""
    n = len(starts) - 1
    if n <= 0:
        return True
    if isinstance(starts, array) and isinstance(ends, array):
        top = int.from_bytes(_TOP64 * n, sys.byteorder)
        following = int.from_bytes(starts[1:].tobytes(), sys.byteorder)
        until = int.from_bytes(ends[:-1].tobytes(), sys.byteorder)
        return ((following | top) - until) & top == top
    return all(map(le, ends, islice(starts, 1, None)))


def _sounds_higher(a: int, b: int, top: int) -> int:
    """The lanes where ``b`` holds a higher pitch than ``a``, with their top bit set (every other
    bit clear). ``a`` and ``b`` hold a pitch 0..127 in each byte; ``top`` has the top bit of each
    of their bytes set (:func:`_tops`).

    Each lane of ``(a | top) - b`` is a + 128 - b, between 1 and 255, so no lane borrows from
    the next; its top bit is set exactly when a >= b, so the lanes where it is clear are those
    where b > a."""
    return ((a | top) - b) & top ^ top


def _tops(n: int) -> int:
    """The top bit of each of ``n`` bytes."""
    return int.from_bytes(b"\x80" * n, "little")


def crossed_notes(piece: Piece | Columns) -> tuple[list[int], int]:
    """Indices of crossed notes (in onset order) and how many notes were judged.

    A note is one sounding note, its tied noteheads merged (an event). Voices are ordered top to
    bottom as the piece lists them. A note in voice i is crossed
    when, at its onset, it sounds strictly below a note then sounding in a voice listed below i,
    or strictly above a note then sounding in a voice listed above i ("sounding at t" means
    onset <= t < end, so notes starting together count). Grace notes are not judged and do not
    sound. Voices whose registers do not overlap are never compared. Others are compared
    pairwise, all notes of a pair at once: with a single-note partner in the same rhythm note
    against note (a byte per note, :func:`_sounds_higher`); with any other only the notes outside
    its register, by bisection in its sounding profile.
    """
    cols = columns_of(piece)
    start, end, midi = cols.start, cols.end, cols.midi
    n_voices = len(cols.piece.voices)
    per_voice, pitches = cols.by_voice, cols.voice_midi
    if cols.silent:  # grace notes: neither judged nor sounding
        per_voice = [[i for i in idx if end[i] > start[i]] for idx in per_voice]
        pitches = [list(map(midi.__getitem__, idx)) for idx in per_voice]
        vmin = [min(p, default=128) for p in pitches]
        vmax = [max(p, default=-1) for p in pitches]
    else:
        vmin, vmax = cols.voice_low, cols.voice_high
    judged = sum(map(len, per_voice))
    below = [[j for j in range(i + 1, n_voices) if vmax[j] > vmin[i]] for i in range(n_voices)]
    above = [[j for j in range(i) if vmin[j] < vmax[i]] for i in range(n_voices)]
    needed = sorted({j for i in range(n_voices) for j in below[i] + above[i]})  # every voice with a partner
    sounding = {j: _Sounding(per_voice[j], start, pitches[j], end) for j in needed}
    rhythm: dict[int, int] = {}  # voice -> the first voice with the same onsets
    for j in needed:
        same = (r for r in set(rhythm.values()) if sounding[r].times == sounding[j].times)
        rhythm[j] = next(same, j)
    crossed: list[int] = []
    for v in needed:
        mine = sounding[v]
        t_v, m_v = mine.times, pitches[v]
        lanes = 0  # over all of v's notes, from partners in v's rhythm
        top = _tops(len(m_v))
        hits: set[int] = set()  # positions in v's notes, from the other partners
        # crossed when a voice below then sounds higher, or a voice above lower
        for j, higher in [(j, True) for j in below[v]] + [(j, False) for j in above[v]]:
            partner = sounding[j]
            if partner.single and rhythm[j] == rhythm[v]:
                if higher:
                    lanes |= _sounds_higher(mine.lanes, partner.lanes, top)
                else:
                    lanes |= _sounds_higher(partner.lanes, mine.lanes, top)
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
            if lanes:
                hits.update(compress(count(), lanes.to_bytes(len(m_v), "little")))
            crossed += map(per_voice[v].__getitem__, sorted(hits))
        elif lanes:
            crossed += compress(per_voice[v], lanes.to_bytes(len(m_v), "little"))
    crossed.sort(key=start.__getitem__)
    return crossed, judged


def crossing_share(piece: Piece | Columns) -> Fraction:
    """The share of judged notes that are crossed (0 for an empty piece)."""
    crossed, judged = crossed_notes(piece)
    return Fraction(len(crossed), judged) if judged else Fraction(0)


def _unjudged(graces: int) -> str:
    """What the share leaves out, when anything: the grace notes, which take no time."""
    if not graces:
        return ""
    return "; the grace note is not judged" if graces == 1 else f"; the {graces} grace notes are not judged"


def check_crossings(piece: Piece | Columns, max_share: Fraction = Fraction(1, 10)) -> list[Violation]:
    """CROSS: one violation naming every crossed note when their share exceeds ``max_share``.

    The message says what the share is of: the notes judged, which are all the piece's notes but
    its grace notes (``50 of 120 notes sit in a voice crossing (...; the 8 grace notes are not
    judged)``)."""
    cols = columns_of(piece)
    crossed, judged = crossed_notes(cols)
    if not judged or Fraction(len(crossed), judged) <= max_share:
        return []
    share = Fraction(len(crossed), judged)
    return [
        Violation(
            "CROSS",
            tuple(cols.events[i].id for i in crossed),
            f"{len(crossed)} of {judged} notes sit in a voice crossing "
            f"({float(share):.1%} > {float(max_share):.1%} allowed{_unjudged(cols.n - judged)})",
            cols.where(crossed[0]),
        )
    ]
