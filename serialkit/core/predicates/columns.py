"""A columnar view of a piece for the predicates: integer ticks, voice indices, lazy sort orders.

Every onset and duration becomes an exact integer count of ticks over the least common
denominator of all the piece's times, so the hot loops compare plain ints, never Fractions.
"""

from __future__ import annotations

from bisect import bisect_right
from fractions import Fraction
from math import lcm
from operator import add, attrgetter, mul

from serialkit.core.piece import Event, Measure, Piece, Tag, TimeSignature, _beat_text

_ONSET = attrgetter("onset")
_DURATION = attrgetter("duration")
# Fraction's public numerator/denominator are Python-level properties over these slots; read the
# slots directly where this interpreter has them (CPython), the properties elsewhere.
_SLOTTED = hasattr(Fraction(1, 2), "_numerator") and Fraction(1, 2)._numerator == 1  # type: ignore[attr-defined]
_NUM = attrgetter("_numerator" if _SLOTTED else "numerator")
_DEN = attrgetter("_denominator" if _SLOTTED else "denominator")
_VOICE = attrgetter("voice")
_MIDI = attrgetter("midi")
_TAG = attrgetter("tag")
_ID = attrgetter("id")


class Columns:
    """Parallel lists, one entry per event, in the piece's event order."""

    __slots__ = (
        "piece", "events", "n", "scale", "voice", "start", "end", "midi", "tags",
        "_ids", "_order", "_locator",
    )

    def __init__(self, piece: Piece, extra_denominators: tuple[int, ...] = ()) -> None:
        events = piece.events
        self.piece = piece
        self.events: tuple[Event, ...] = events
        self.n = len(events)
        onsets = list(map(_ONSET, events))
        durations = list(map(_DURATION, events))
        onum = list(map(_NUM, onsets))
        oden = list(map(_DEN, onsets))
        dnum = list(map(_NUM, durations))
        dden = list(map(_DEN, durations))
        dens = set(oden)
        dens.update(dden)
        dens.update(extra_denominators)
        self.scale: int = lcm(*dens) if dens else 1
        factor = {d: self.scale // d for d in dens}
        self.start: list[int] = list(map(mul, onum, map(factor.__getitem__, oden)))
        self.end: list[int] = list(map(add, self.start, map(mul, dnum, map(factor.__getitem__, dden))))
        index = {v: i for i, v in enumerate(piece.voice_ids)}
        self.voice: list[int] = list(map(index.__getitem__, map(_VOICE, events)))
        self.midi: list[int] = list(map(_MIDI, events))
        self.tags: list[Tag | None] = list(map(_TAG, events))
        self._ids: list[str] | None = None
        self._order: list[int] | None = None
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
    def order(self) -> list[int]:
        """Event indices sorted by onset, then order position (untagged last), then index."""
        if self._order is None:
            tags = self.tags
            pos = [16 if t is None else t.position for t in tags]
            keys = list(map(add, map((32).__mul__, self.start), pos))
            self._order = sorted(range(self.n), key=keys.__getitem__)
        return self._order

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


class Locator:
    """Bar and beat of a time point, matching ``Piece.locate``/``describe`` without rebuilding
    the bars per call: arithmetic under one meter, a bisection over the bars otherwise."""

    __slots__ = ("piece", "bars", "onsets", "length")

    def __init__(self, piece: Piece, end: Fraction | None = None) -> None:
        self.piece = piece
        meters = {(ts.numerator, ts.denominator) for ts in piece.time_signatures}
        self.length: Fraction | None = None
        self.bars: tuple[Measure, ...] = ()
        if not piece.measures and len(meters) <= 1:
            ts = piece.time_signatures[0] if piece.time_signatures else TimeSignature(4, 4)
            self.length = ts.bar_length
        else:
            self.bars = piece.measures or _derive_bars(piece, piece.end if end is None else end)
        self.onsets = [b.onset for b in self.bars]

    def locate(self, onset: Fraction) -> tuple[str, Fraction]:
        """(bar number, 1-based beat in quarter notes)."""
        if self.length is not None:
            pickup = self.piece.pickup
            if pickup and onset < pickup:
                return "0", onset + 1
            k = (onset - pickup) // self.length
            return str(k + 1), onset - pickup - k * self.length + 1
        k = max(0, bisect_right(self.onsets, onset) - 1)
        bar = self.bars[k]
        return bar.number, onset - bar.onset + 1

    def describe(self, event: Event) -> str:
        """``voice v1, bar 3, beat 2`` plus the source part/measure when known."""
        bar, beat = self.locate(event.onset)
        text = f"voice {event.voice}, bar {bar}, beat {_beat_text(beat)}"
        if event.source is not None and event.source.part is not None:
            text += f" ({event.source.describe()})"
        return text


def _derive_bars(piece: Piece, end: Fraction) -> tuple[Measure, ...]:
    """Bars from meter and pickup up to ``end`` (as ``Piece.bar_list`` does, given the end)."""
    meters = sorted(piece.time_signatures, key=lambda ts: ts.bar) or [TimeSignature(4, 4)]
    bars: list[Measure] = []
    onset = Fraction(0)
    index = 0
    number = 0 if piece.pickup else 1
    current = meters[0]
    m = 0
    while onset < end or not bars:
        while m < len(meters) and meters[m].bar <= index:
            current = meters[m]
            m += 1
        length = piece.pickup if (index == 0 and piece.pickup) else current.bar_length
        bars.append(Measure(str(number), onset, length))
        onset += length
        index += 1
        number += 1
    return tuple(bars)


def columns_of(piece: Piece | Columns) -> Columns:
    """Columns for a piece (or the same columns back)."""
    return piece if isinstance(piece, Columns) else Columns(piece)
