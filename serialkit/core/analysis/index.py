"""A flat, time-ordered view of a piece's events that the chain search reads with plain ints."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from fractions import Fraction
from math import lcm

from serialkit.core.piece import Event

HOLD = 16
"""A note sounding through this many later slices is held while the other voices move on."""


class EventIndex:
    """Events sorted by onset with per-event slice, voice and pitch-class columns and lookups.

    A *slice* is one distinct onset (a simultaneity, read as an unordered set). ``vrank`` is the
    rank of an event's onset among its own voice's distinct onsets, so two events of one voice
    are adjacent when their ``vrank`` differ by one. With ``lines`` (voice id → line id), the
    voices of one line are read as one voice: ``voice`` and ``voice_names`` then speak of lines.
    """

    __slots__ = ("events", "n", "pc", "sl", "voice", "vrank", "by_pc", "by_pc_sl", "voice_sl",
                 "voice_names", "slice_onsets", "slice_ticks", "sv_count", "sv_mask", "vkey", "repeat_ok", "strange",
                 "next_sl", "next_of", "prev_same", "cut", "held", "held_end")

    def repeat_gap_ok(self, last: int, c: int) -> bool:
        """Can ``c`` (the next onset of ``last``'s voice) repeat ``last``? See ``repeat_ok``."""
        return self.repeat_ok[last]

    def __init__(self, events: Sequence[Event], voice_order: Sequence[str] = (),
                 lines: Mapping[str, str] | None = None) -> None:
        line = lines or {}
        voices = dict.fromkeys((*voice_order, *(e.voice for e in events)))
        line_rank: dict[str, int] = {}
        for v in voices:  # each voice ranks as its line: the voices of one line read as one voice
            line_rank.setdefault(line.get(v, v), len(line_rank))
        rank = {v: line_rank[line.get(v, v)] for v in voices}
        scale = lcm(*{e.onset.denominator for e in events}, *{e.duration.denominator for e in events})
        tick = [e.onset.numerator * (scale // e.onset.denominator) for e in events]
        order = sorted(range(len(events)), key=lambda i: (tick[i], rank[events[i].voice], events[i].midi, events[i].id))
        ordered = [events[i] for i in order]
        starts = [tick[i] for i in order]
        self.events: tuple[Event, ...] = tuple(ordered)
        self.n = len(ordered)
        self.voice_names: tuple[str, ...] = tuple(line_rank)
        self.pc: list[int] = [e.midi % 12 for e in ordered]
        self.voice: list[int] = [rank[e.voice] for e in ordered]
        self.sl: list[int] = []
        self.slice_onsets: list[Fraction] = []
        slice_ticks: list[int] = []
        self.slice_ticks = slice_ticks  # the slices' onsets as whole ticks (quick to compare)
        for e, t in zip(ordered, starts, strict=True):
            if not slice_ticks or t != slice_ticks[-1]:
                slice_ticks.append(t)
                self.slice_onsets.append(e.onset)
            self.sl.append(len(slice_ticks) - 1)
        self._voices()
        self._chords()
        self._repeat_windows(ordered, starts, slice_ticks, scale)
        self._held(ordered, starts, slice_ticks, scale)
        # learnt by a first reading, per event: the extra cost of passing a row from its voice to voice v
        self.strange: list[list[float]] | None = None
        # (start, end): the events are a window cut out of a longer piece there; a cut edge is
        # context, not trouble
        self.cut: tuple[bool, bool] = (False, False)
        self.by_pc: list[list[int]] = [[] for _ in range(12)]
        for i in range(self.n):
            self.by_pc[self.pc[i]].append(i)
        self.by_pc_sl: list[list[int]] = [[self.sl[i] for i in lst] for lst in self.by_pc]
        self._next_onsets()

    def _voices(self) -> None:
        """Each event's rank among its voice's onsets, and each voice's slices."""
        self.vrank: list[int] = [0] * self.n
        counters: dict[int, tuple[int, int]] = {}
        self.voice_sl: dict[int, list[int]] = {}
        for i in range(self.n):
            v = self.voice[i]
            last_slice, count = counters.get(v, (-1, -1))
            if self.sl[i] != last_slice:
                count += 1
                self.voice_sl.setdefault(v, []).append(self.sl[i])
            counters[v] = (self.sl[i], count)
            self.vrank[i] = count

    def _chords(self) -> None:
        """Per (slice, voice) key ``slice * vkey + voice``: how many notes, and their pitch classes."""
        self.vkey = len(self.voice_names) + 1
        self.sv_count: dict[int, int] = {}
        self.sv_mask: dict[int, int] = {}
        for i in range(self.n):
            key = self.sl[i] * self.vkey + self.voice[i]
            self.sv_count[key] = self.sv_count.get(key, 0) + 1
            self.sv_mask[key] = self.sv_mask.get(key, 0) | (1 << self.pc[i])

    def _next_onsets(self) -> None:
        """Per event: the slice of its voice's next onset (-1: none); ``next_of`` mapping
        ``(that slice * vkey + voice) * 12 + pc`` to the first event there with that pitch class;
        and ``prev_same``, the note of its pitch class at its voice's previous onset (-1: none)."""
        self.next_sl: list[int] = [-1] * self.n
        for i in range(self.n):
            slices = self.voice_sl[self.voice[i]]
            if self.vrank[i] + 1 < len(slices):
                self.next_sl[i] = slices[self.vrank[i] + 1]
        self.next_of: dict[int, int] = {}
        for i in range(self.n):
            self.next_of.setdefault((self.sl[i] * self.vkey + self.voice[i]) * 12 + self.pc[i], i)
        self.prev_same: list[int] = [-1] * self.n
        for i in range(self.n):
            if self.vrank[i] > 0:
                before = self.voice_sl[self.voice[i]][self.vrank[i] - 1]
                self.prev_same[i] = self.next_of.get((before * self.vkey + self.voice[i]) * 12 + self.pc[i], -1)

    def _repeat_windows(self, ordered: Sequence[Event], starts: list[int], slice_ticks: list[int],
                        scale: int) -> None:
        """A repeat must follow soon: the voice's next onset comes within the longer of the note's
        duration and one quarter note after it ends, and at most four quarter notes after."""
        self.repeat_ok: list[bool] = [False] * self.n
        for i in range(self.n):
            slices = self.voice_sl[self.voice[i]]
            if self.vrank[i] + 1 < len(slices):
                d = ordered[i].duration
                length = d.numerator * (scale // d.denominator)
                gap = slice_ticks[slices[self.vrank[i] + 1]] - (starts[i] + length)
                self.repeat_ok[i] = gap <= min(max(length, scale), 4 * scale)

    def _held(self, ordered: Sequence[Event], starts: list[int], slice_ticks: list[int], scale: int) -> None:
        """A note held while the other voices move on (sounding through HOLD or more later
        slices): ``held`` those slices (0 for any other note), ``held_end`` its end (ticks). Its
        voice's next note follows its end, not its onset (``chains._next_position``)."""
        self.held: list[int] = [0] * self.n
        self.held_end: list[int] = [0] * self.n
        for i, e in enumerate(ordered):
            d = e.duration
            end = starts[i] + d.numerator * (scale // d.denominator)
            through = bisect_left(slice_ticks, end) - 1 - self.sl[i]
            if through >= HOLD:
                self.held[i], self.held_end[i] = through, end

    def ids(self, indices: Sequence[int]) -> tuple[str, ...]:
        """The event ids of some indices."""
        return tuple(self.events[i].id for i in indices)
