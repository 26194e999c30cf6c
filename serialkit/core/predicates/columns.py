"""A columnar view of a piece for the predicates: integer ticks, voice indices, lazy sort orders.

Every onset and duration becomes an exact integer count of ticks over the least common
denominator of all the piece's times, so the hot loops compare plain ints, never Fractions.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from itertools import repeat
from math import lcm
from operator import add, attrgetter, mul
from typing import Any

from serialkit.core.piece import Event, Piece, Tag
from serialkit.core.timeline import Locator

# Fraction's public numerator/denominator are Python-level properties over these slots; read the
# slots directly where this interpreter has them (CPython, PyPy), the properties elsewhere.
_SLOTTED = hasattr(Fraction(1, 2), "_numerator") and Fraction(1, 2)._numerator == 1  # type: ignore[attr-defined]
_ID = attrgetter("id")


class Columns:
    """Parallel lists, one entry per event, in the piece's event order."""

    __slots__ = (
        "piece", "events", "n", "silent", "claims", "scale", "voice", "start", "end", "midi", "tags", "sections",
        "in_order", "_ids", "_order", "_by_voice", "_voice_midi", "_voice_low", "_voice_high", "_positions", "_untagged", "_locator",
    )

    def __init__(self, piece: Piece, extra_denominators: tuple[int, ...] = ()) -> None:
        events = piece.events
        self.piece = piece
        self.events: tuple[Event, ...] = events
        self.n = len(events)
        index = {v: i for i, v in enumerate(piece.voice_ids)}
        if _SLOTTED:
            read = _read(events, index, extra_denominators)
        else:  # pragma: no cover - every known interpreter keeps Fraction's slots
            read = _read_plain(events, index, extra_denominators)
        self.scale: int = read[0]
        self.start: list[int] = read[1]
        self.end: list[int] = read[2]
        self.voice: list[int] = read[3]
        self.midi: list[int] = read[4]
        self.tags: list[Tag | None] = read[5]
        self.sections: list[str | None] = read[6]  # each event's own section id
        self._positions: list[int] = read[7]
        self.silent: int = read[8]  # grace notes: no duration
        self.claims: int = read[9]  # events claiming a pitch class
        self.in_order: bool = read[10]
        self._ids: list[str] | None = None
        self._order: Sequence[int] | None = None
        self._by_voice: list[list[int]] | None = None
        self._voice_midi: list[list[int]] | None = None
        self._voice_low: list[int] | None = None
        self._voice_high: list[int] | None = None
        self._untagged: int | None = None
        self._locator: Locator | None = None

    def ticks(self, value: Fraction) -> int:
        """A time in ticks (exact only when its denominator divides the scale)."""
        return value.numerator * (self.scale // value.denominator)

    def rescaled(self, denominator: int) -> Columns:
        """These columns, re-ticked so that ``1/denominator`` is a whole number of ticks."""
        if self.scale % denominator == 0:
            return self
        return Columns(self.piece, (denominator,))

    @property
    def ids(self) -> list[str]:
        """Event ids (built on first use: only violations need them)."""
        if self._ids is None:
            self._ids = list(map(_ID, self.events))
        return self._ids

    @property
    def untagged(self) -> int:
        """How many events carry no tag."""
        if self._untagged is None:
            self._untagged = self._positions.count(_UNTAGGED)
        return self._untagged

    @property
    def positions(self) -> list[int]:
        """Order positions of the tags (16 for an untagged event)."""
        return self._positions

    @property
    def order(self) -> Sequence[int]:
        """Event indices sorted by onset, then order position (untagged last), then index: the
        indices themselves (a range) when the events already stand in that order (:attr:`in_order`)."""
        if self._order is None:
            if self.in_order:
                self._order = range(self.n)
            else:
                keys = list(map(add, map(mul, self.start, repeat(32)), self._positions))
                self._order = sorted(range(self.n), key=keys.__getitem__)
        return self._order

    @property
    def by_voice(self) -> list[list[int]]:
        """Event indices per voice (in the piece's voice order), each list in onset order."""
        if self._by_voice is None:
            per_voice: list[list[int]] = [[] for _ in self.piece.voice_ids]
            add = [lst.append for lst in per_voice]
            voice = self.voice
            for i in self.order:
                add[voice[i]](i)
            self._by_voice = per_voice
        return self._by_voice

    @property
    def voice_midi(self) -> list[list[int]]:
        """MIDI pitches per voice, in the order of :attr:`by_voice`."""
        if self._voice_midi is None:
            midi = self.midi.__getitem__
            self._voice_midi = [list(map(midi, idx)) for idx in self.by_voice]
        return self._voice_midi

    @property
    def voice_low(self) -> list[int]:
        """The lowest MIDI pitch of each voice (128 for a voice without notes)."""
        if self._voice_low is None:
            self._voice_low = [min(p, default=128) for p in self.voice_midi]
        return self._voice_low

    @property
    def voice_high(self) -> list[int]:
        """The highest MIDI pitch of each voice (-1 for a voice without notes)."""
        if self._voice_high is None:
            self._voice_high = [max(p, default=-1) for p in self.voice_midi]
        return self._voice_high

    @property
    def locator(self) -> Locator:
        """The bar/beat locator (built once, on the first violation)."""
        if self._locator is None:
            last = max(self.end, default=0)
            self._locator = Locator(self.piece, Fraction(last, self.scale))
        return self._locator

    def where(self, i: int) -> str:
        """Human location of event ``i``: ``voice v1, bar 3, beat 2``."""
        return self.locator.describe(self.events[i])


_UNTAGGED = 16
"""The order position of an untagged event in :attr:`Columns.positions` (after every real one)."""

_Read = tuple[
    int, list[int], list[int], list[int], list[int], list["Tag | None"], list["str | None"], list[int], int, int, bool
]


def _read(events: tuple[Event, ...], index: dict[str, int], extra: tuple[int, ...]) -> _Read:
    """Every column in one pass over the events: ``(scale, start, end, voice, midi, tags,
    sections, positions, silent, claims, in_order)``.

    The scale grows as new denominators turn up (the ticks read so far are multiplied up), so it
    ends as the least common multiple of every onset's and duration's denominator (and ``extra``).
    ``in_order``: the sort key of :attr:`Columns.order` never falls from one event to the next.
    """
    scale = lcm(1, *extra)
    factor = {d: scale // d for d in {1, *extra}}
    start: list[int] = []
    end: list[int] = []
    voice: list[int] = []
    midi: list[int] = []
    tags: list[Tag | None] = []
    sections: list[str | None] = []
    positions: list[int] = []
    put_start, put_end, put_voice, put_midi, put_tag, put_section, put_position = (
        start.append, end.append, voice.append, midi.append, tags.append, sections.append, positions.append
    )
    silent = claims = 0
    last, last_q = -1, 0  # the last sort key: onset ticks, then position
    in_order = True
    o: Any  # a Fraction, read through its slots
    d: Any
    for e in events:
        o, d = e.onset, e.duration
        try:
            fo, fd = factor[o._denominator], factor[d._denominator]
        except KeyError:  # a new denominator: grow the scale
            grown = lcm(scale, o._denominator, d._denominator)
            m = grown // scale
            start[:] = [x * m for x in start]
            end[:] = [x * m for x in end]
            if start:
                last = start[-1]
            scale = grown
            for k in factor:
                factor[k] = scale // k
            fo = factor[o._denominator] = scale // o._denominator
            fd = factor[d._denominator] = scale // d._denominator
        s = o._numerator * fo
        dn = d._numerator
        if not dn:
            silent += 1
        t = e.tag
        q = _UNTAGGED if t is None else t.position
        if s != last:
            if s < last:
                in_order = False
            last = s
        elif q < last_q:
            in_order = False
        last_q = q
        put_start(s)
        put_end(s + dn * fd)
        put_voice(index[e.voice])
        put_midi(e.midi)
        put_tag(t)
        put_section(e.section)
        put_position(q)
        if e.claimed_pc is not None:
            claims += 1
    return scale, start, end, voice, midi, tags, sections, positions, silent, claims, in_order


def _read_plain(events: tuple[Event, ...], index: dict[str, int], extra: tuple[int, ...]) -> _Read:
    """The same columns through Fraction's public attributes, several passes (the plain definition)."""
    dens = {1, *extra}
    for e in events:
        dens.update((e.onset.denominator, e.duration.denominator))
    scale = lcm(*dens)
    start = [e.onset.numerator * (scale // e.onset.denominator) for e in events]
    end = [s + e.duration.numerator * (scale // e.duration.denominator) for s, e in zip(start, events, strict=True)]
    tags = [e.tag for e in events]
    positions = [_UNTAGGED if t is None else t.position for t in tags]
    keys = [s * 32 + q for s, q in zip(start, positions, strict=True)]
    return (
        scale, start, end, [index[e.voice] for e in events], [e.midi for e in events], tags,
        [e.section for e in events], positions,
        sum(1 for e in events if e.duration == 0), sum(1 for e in events if e.claimed_pc is not None),
        keys == sorted(keys),
    )


def columns_of(piece: Piece | Columns) -> Columns:
    """Columns for a piece (or the same columns back)."""
    return piece if isinstance(piece, Columns) else Columns(piece)
