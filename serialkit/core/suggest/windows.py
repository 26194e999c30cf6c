"""Where a candidate correction of a long piece is verified: the window of notes round the change,
widened to hold whole the statements sounding at its edges (``aligned``), from the statements of
the piece's analysis (``statement_spans``). Standard library only."""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from fractions import Fraction

from serialkit.core.analysis.model import Analysis
from serialkit.core.piece import Event


def statement_spans(analysis: Analysis, events: Mapping[str, Event]) -> list[tuple[Fraction, Fraction]]:
    """First and last onsets of each statement of ``analysis``."""
    out = []
    for st in analysis.statements:
        times = [events[e].onset for e in st.event_ids if e is not None and e in events]
        if times:
            out.append((min(times), max(times)))
    return out


def aligned(spans: Sequence[tuple[Fraction, Fraction]], onsets: Sequence[Fraction], lo: int, hi: int,
            reach: int) -> tuple[int, int]:
    """The window ``lo``..``hi`` of the notes in time order widened (by at most ``reach`` notes a
    side) to hold whole the statements sounding at its edges: a window that cuts no statement
    reads no scraps at its edges, and candidates near one another share their window."""
    if lo > 0:
        t = onsets[lo]
        start = min((a for a, b in spans if a <= t <= b), default=t)
        lo = max(lo - reach, bisect.bisect_left(onsets, start))
    if hi < len(onsets):
        t = onsets[hi - 1]
        end = max((b for a, b in spans if a <= t <= b), default=t)
        hi = min(hi + reach, bisect.bisect_right(onsets, end))
    return lo, hi
