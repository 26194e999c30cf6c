"""Bars and beats: where a time point falls, computed once per piece rather than per question."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

from serialkit.core.events import Event, Measure, TimeSignature, _beat_text, voice_names

if TYPE_CHECKING:
    from serialkit.core.piece import Piece


def derive_bars(piece: Piece, end: Fraction) -> tuple[Measure, ...]:
    """Bars from meter and pickup, from 0 up to ``end`` (at least one bar)."""
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


def bar_index(bars: Sequence[Measure], onset: Fraction) -> int:
    """Index of the bar containing ``onset`` (the first bar for earlier times)."""
    lo, hi = 0, len(bars) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if bars[mid].onset <= onset:
            lo = mid
        else:
            hi = mid - 1
    return lo


class Locator:
    """Bar and beat of a time point for one piece: arithmetic under one meter, a bisection over
    the bars otherwise. Build it once (``Piece.locator()``) and ask it many times."""

    __slots__ = ("piece", "bars", "onsets", "length", "_names")

    def __init__(self, piece: Piece, end: Fraction | None = None) -> None:
        self.piece = piece
        meters = {(ts.numerator, ts.denominator) for ts in piece.time_signatures}
        self.length: Fraction | None = None
        self.bars: tuple[Measure, ...] = ()
        if not piece.measures and len(meters) <= 1:
            ts = piece.time_signatures[0] if piece.time_signatures else TimeSignature(4, 4)
            self.length = ts.bar_length
        else:
            self.bars = piece.measures or derive_bars(piece, piece.end if end is None else end)
        self.onsets = [b.onset for b in self.bars]
        self._names: dict[str, str] | None = None

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

    def voice_name(self, event: Event) -> str:
        """The voice as a reader names it (``Horn 2 in F``; ``Harp, staff 2``; ``Piano, voice 2``:
        ``core.events.voice_names``)."""
        if self._names is None:
            self._names = voice_names(self.piece.voices)
        return self._names.get(event.voice) or f"voice {event.voice}"

    def describe(self, event: Event) -> str:
        """``Horn 2 in F, bar 25, beat 2 (line 1837)``: the voice, then one bar number and beat.

        The bar is the bar the note sounds in, numbered as the score numbers its bars (a
        MusicXML ``<measure number>``, an MEI ``<measure n>``: the numbers notation software
        prints; counted from the meter for a piece that has no bars of its own), and the beat
        counts quarter notes from that bar's start. What follows in brackets is the file's, for
        finding the note in it, and each part says what it is:

        - ``written in bar 23``, when the note is written in another bar than the one it sounds
          in: an MEI bar whose layer runs past the meter's length (its last notes sound in the
          next bar, as the reader warns; a MusicXML bar lasts as long as its longest voice, so
          its notes never sound past it);
        - ``numbered 2a in the file``, when the file numbers the note's bar otherwise than the
          bar number given (a piece without bars of its own, whose notes name their bar);
        - ``line 1706``, the line of the note in the file.
        """
        bar, beat = self.locate(event.onset)
        text = f"{self.voice_name(event)}, bar {bar}, beat {_beat_text(beat)}"
        src = event.source
        extra = []
        if src is not None and src.measure is not None and src.measure != bar:
            written = self.bars and any(b.number == src.measure for b in self.bars)
            extra.append(f"written in bar {src.measure}" if written else f"numbered {src.measure} in the file")
        if src is not None and src.line is not None:
            extra.append(f"line {src.line}")
        return f"{text} ({', '.join(extra)})" if extra else text
