"""A columnar view of a piece for the predicates: integer ticks, voice indices, lazy sort orders.

Every onset and duration becomes an exact integer count of ticks over the least common
denominator of all the piece's times, so the hot loops compare plain ints, never Fractions.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import repeat
from math import lcm
from operator import add, attrgetter, is_, mul

from serialkit.core.piece import Event, Piece, Tag
from serialkit.core.timeline import Locator

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
_POSITION = attrgetter("position")


class Columns:
    """Parallel lists, one entry per event, in the piece's event order."""

    __slots__ = (
        "piece", "events", "n", "silent", "scale", "voice", "start", "end", "midi", "tags",
        "_ids", "_order", "_by_voice", "_voice_midi", "_positions", "_untagged", "_locator",
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
        self.silent: int = dnum.count(0)  # grace notes: no duration
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
        self._by_voice: list[list[int]] | None = None
        self._voice_midi: list[list[int]] | None = None
        self._positions: list[int] | None = None
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
            self._untagged = sum(map(is_, self.tags, repeat(None)))
        return self._untagged

    @property
    def positions(self) -> list[int]:
        """Order positions of the tags (16 for an untagged event)."""
        if self._positions is None:
            tags = self.tags
            if self.untagged:
                self._positions = [16 if t is None else t.position for t in tags]
            else:
                self._positions = list(map(_POSITION, tags))
        return self._positions

    @property
    def order(self) -> list[int]:
        """Event indices sorted by onset, then order position (untagged last), then index."""
        if self._order is None:
            keys = list(map(add, map(mul, self.start, repeat(32)), self.positions))
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
    def locator(self) -> Locator:
        """The bar/beat locator (built once, on the first violation)."""
        if self._locator is None:
            last = max(self.end, default=0)
            self._locator = Locator(self.piece, Fraction(last, self.scale))
        return self._locator

    def where(self, i: int) -> str:
        """Human location of event ``i``: ``voice v1, bar 3, beat 2``."""
        return self.locator.describe(self.events[i])


def columns_of(piece: Piece | Columns) -> Columns:
    """Columns for a piece (or the same columns back)."""
    return piece if isinstance(piece, Columns) else Columns(piece)
