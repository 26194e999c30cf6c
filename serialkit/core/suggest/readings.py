"""Analyses of pieces already read (``Readings``), with the measures ranking takes of each: the
trouble (``_spots``), roughness, shape, holes, the notes holding positions. Standard library only;
``suggest`` and ``plan_repairs`` share one ``Readings``."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from fractions import Fraction
from functools import cached_property
from typing import Any

from serialkit.core.analysis.model import Analysis, Statement
from serialkit.core.piece import Event, Piece
from serialkit.core.suggest.trouble import _Hole, _spots, _trouble_holes


class _Reading:
    """An analysis of a piece with the measures ranking takes of it, each taken when first asked:
    a screen whose changed notes stay unexplained asks none of them (most screens)."""

    def __init__(self, analysis: Analysis, piece: Piece) -> None:
        self.analysis = analysis
        self._piece = piece

    @cached_property
    def holes(self) -> tuple[_Hole, ...]:
        """The statements' holes (``_trouble_holes``)."""
        return tuple(_trouble_holes(self.analysis, {e.id: e for e in self._piece.events}))

    @cached_property
    def spots(self) -> tuple[tuple[Fraction, Fraction, int], ...]:
        """Where the trouble is (``_spots``): ``badness`` is their weight."""
        return tuple(_spots(self.analysis, self._piece, self.holes))

    @cached_property
    def badness(self) -> int:
        return sum(w for _a, _b, w in self.spots)

    @cached_property
    def roughness(self) -> int:
        return _roughness(self.analysis, self._piece)

    @cached_property
    def shape(self) -> int:
        return _shape(self.analysis)

    @cached_property
    def held(self) -> frozenset[str]:
        """The notes holding a position of a statement (not repeats)."""
        return frozenset(e for st in self.analysis.statements for e in st.event_ids if e is not None)

    @cached_property
    def short(self) -> int:
        """The positions the statements lack, at their ends too (``_short``)."""
        return _short(self.analysis)

    @cached_property
    def loose(self) -> tuple[Fraction, ...]:
        """The onsets of the unexplained notes."""
        unexplained = set(self.analysis.unexplained)
        return tuple(sorted(e.onset for e in self._piece.events if e.id in unexplained))

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
        reading = _Reading(analysis, piece)
        with self._lock:
            self._seen[key] = reading
            while len(self._seen) > self.size:
                self._seen.popitem(last=False)
        return reading


def _shape(analysis: Analysis) -> int:
    """Notes statements hold twice: repeats of a position and notes borrowed from another
    statement (elided)."""
    return sum(len(s.repeats) + len(s.elided) for s in analysis.statements)


def _short(analysis: Analysis) -> int:
    """Positions the statements lack, between their notes and at their ends (a statement an
    excerpt cuts off lacks its ends alike before and after any correction)."""
    return sum(12 - s.found for s in analysis.statements)


def _roughness(analysis: Analysis, piece: Piece) -> int:
    """How far the statements are from plain lines (``_rough``, summed), plus the statements that
    cross another in a voice (``_crossed``)."""
    events = {e.id: e for e in piece.events}
    return sum(_rough(s, events) for s in analysis.statements) + _crossed(analysis, events)


def _crossed(analysis: Analysis, events: Mapping[str, Event]) -> int:
    """Pairs of statements whose own notes in one voice interleave: one begins there before the
    other ends there, and ends after it begins, neither inside the other. A line states its rows
    one after another; a wrong note at a boundary can be "corrected" into a reading where the
    earlier statement's last note comes after the next one's first (B A written B B read as A B:
    the correct note B taken for the later statement)."""
    spans: dict[str, list[tuple[Fraction, Fraction]]] = {}
    for s in analysis.statements:
        times: dict[str, list[Fraction]] = {}
        for e in s.event_ids:
            if e is not None and e in events and e not in s.elided:
                times.setdefault(events[e].voice, []).append(events[e].onset)
        for voice, ts in times.items():
            spans.setdefault(voice, []).append((min(ts), max(ts)))
    out = 0
    for line in spans.values():
        line.sort()
        for i, (a0, a1) in enumerate(line):
            for b0, b1 in line[i + 1:]:
                if b0 > a1:
                    break
                if a0 < b0 < a1 < b1:
                    out += 1
    return out


def _rough(s: Statement, events: Mapping[str, Event]) -> int:
    """How far a statement is from a plain line: neighbouring positions found out of time order,
    and positions held in a voice that neither neighbouring position is in, or the first or last
    position in another voice than the line it starts or ends (a note of another voice, or another
    statement's, taken for it)."""
    found = [events[e] for e in s.event_ids if e is not None and e in events]
    out = sum(1 for a, b in zip(found, found[1:], strict=False) if a.onset > b.onset)
    out += sum(1 for a, b, c in zip(found, found[1:], found[2:], strict=False) if a.voice == c.voice != b.voice)
    if len(found) > 2:  # the first or last position in another voice than the line it starts or ends
        out += (found[0].voice != found[1].voice == found[2].voice) + (found[-1].voice != found[-2].voice == found[-3].voice)
    return out
