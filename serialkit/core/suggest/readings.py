"""Analyses of pieces already read (``Readings``), with the measures ranking takes of each: the
trouble (``_spots``), roughness, shape, holes, the notes holding positions. Standard library only;
``suggest`` and ``plan_repairs`` share one ``Readings``."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from serialkit.core.analysis.model import Analysis
from serialkit.core.piece import Piece
from serialkit.core.suggest.trouble import _Hole, _roughness, _shape, _short, _spots, _trouble_holes


@dataclass(frozen=True, slots=True)
class _Reading:
    """An analysis of a piece with the measures ranking takes of it."""

    analysis: Analysis
    badness: int
    roughness: int
    shape: int
    holes: tuple[_Hole, ...]
    spots: tuple[tuple[Fraction, Fraction, int], ...]
    """Where the trouble is (``_spots``): ``badness`` is their weight."""
    held: frozenset[str]
    """The notes holding a position of a statement (not repeats)."""
    short: int = 0
    """The positions the statements lack, at their ends too (``_short``)."""
    loose: tuple[Fraction, ...] = ()
    """The onsets of the unexplained notes."""

    def near(self, lo: Fraction, hi: Fraction) -> int:
        """The weight of the trouble between ``lo`` and ``hi``."""
        return sum(w for a, b, w in self.spots if a <= hi and lo <= b)

    def left_short(self, note: str) -> tuple[int, ...]:
        """The pitch classes a statement still lacks past ``note``, its first or last note (its
        open end's holes, ``_trouble_holes``), where no unexplained note sounds that could be the
        one missing, miswritten: the statement is cut off there — by the end of a copy, a section,
        the music's own design — not short of a wrong note. Empty when ``note`` ends no statement
        that stops short, or a note that could fill the gap sounds there. A hole between two
        notes of a statement is no cut: the statement goes on past it."""
        holes = [h for h in self.holes if h.around == {note}]
        if any(h.lo <= t <= h.hi for h in holes for t in self.loose):
            return ()
        return tuple(sorted({h.want for h in holes}))

    def past_own(self, want: int, at: Fraction, members: frozenset[str]) -> bool:
        """Is ``at`` in a hole wanting pitch class ``want`` of a statement of ``members`` (its
        found notes all among them) that lies past the statement's own notes — the notes beyond
        it only borrowed from another statement (``_Hole.past_own``) — with no unexplained note
        sounding there? Then the statement is cut off there as at an open end (``left_short``):
        a note changed to fill it only stretches the statement, however complete it then reads."""
        return any(h.past_own and h.want == want and h.lo <= at <= h.hi and h.members <= members
                   and not any(h.lo <= t <= h.hi for t in self.loose) for h in self.holes)


def notes_key(piece: Piece) -> tuple[tuple[Any, ...], ...]:
    """What an analysis of ``piece`` depends on, note by note: id, voice, onset, duration, pitch."""
    return tuple((e.id, e.voice, e.onset, e.duration, e.midi) for e in piece.events)


class Readings:
    """Analyses of pieces already read, by their notes (id, voice, onset, duration, pitch), voices,
    row and convention: the least recently used go past ``size``.

    ``suggest`` verifies each candidate by analysing the piece with the change made, and
    ``plan_repairs`` analyses the change it applies: the same pieces come back when a swap is a
    candidate of both its notes, when a repair's round applies what its suggestions verified,
    and when one piece is asked for suggestions twice (a report's, then a repair's: pass one
    ``Readings`` to both). Analyses are immutable, so sharing them changes no result."""

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self.analysed = 0
        """How many analyses were made (not found here)."""
        self._seen: OrderedDict[Hashable, _Reading] = OrderedDict()
        self._lock = threading.Lock()

    def read(self, piece: Piece, row: Any, convention: Any, analysis: Analysis | None = None, *,
             cut: tuple[bool, bool] = (False, False)) -> _Reading:
        """The reading of ``piece``: found, else ``analysis`` (already made of it) or a new one.
        ``cut``: where ``piece`` is a window cut out of a longer piece (see ``analyze``)."""
        from serialkit.core.analysis import analyze

        key = (notes_key(piece),
               piece.voice_ids, row, convention, cut)
        with self._lock:
            found = self._seen.get(key)
            if found is not None:
                self._seen.move_to_end(key)
                return found
        if analysis is None:
            analysis = analyze(piece, row, convention, cut=cut)
            self.analysed += 1
        holes = tuple(_trouble_holes(analysis, {e.id: e for e in piece.events}))
        unexplained = set(analysis.unexplained)
        spots = tuple(_spots(analysis, piece, holes))
        reading = _Reading(analysis, sum(w for _a, _b, w in spots), _roughness(analysis, piece),
                           _shape(analysis), holes, spots,
                           frozenset(e for st in analysis.statements for e in st.event_ids if e is not None),
                           _short(analysis), tuple(sorted(e.onset for e in piece.events if e.id in unexplained)))
        with self._lock:
            self._seen[key] = reading
            while len(self._seen) > self.size:
                self._seen.popitem(last=False)
        return reading
