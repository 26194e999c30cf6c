"""The state row-form inference works on: accepted statements and who holds each note.

Every step of the pipeline (``pipeline.py``) is a function from an :class:`Assignment` to the
next one. The state is plain data; the operations that keep its claims consistent (accept a chain,
release a statement) are in ``selection.py``.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from serialkit.core.analysis.chains import Chain, Claims
from serialkit.core.analysis.index import EventIndex

Owners = dict[int, list[tuple[int, int]]]  # event → every (statement, position) that holds it
Rebuilt = tuple[object, Callable[[list[int]], Any], Any, Any, Any, Chain | None]
"""A rebuild (``selection.rebuild``): the voice-passing costs, a getter of the notes whose claims it
read, their owners, second owners and positions then, and the chain found."""


@dataclass(slots=True)
class Found:
    """An accepted statement while the assignment is being built."""

    form: int
    slots: dict[int, int]  # position → event index
    repeats: list[tuple[int, int]] = field(default_factory=list)  # (event, position)
    chain: Chain | None = None

    def at_once(self, p: int, e: int) -> bool:
        """Does event ``e`` sound before the note of every position after ``p`` (a repeat of
        ``p`` struck at once, not after the statement went on)?"""
        return not any(q > p and y < e for q, y in self.slots.items())


@dataclass(slots=True)
class Assignment:
    """The statements accepted so far over one event index and the row's distinct forms.

    ``claims`` records, per event, the statement owning it (and a second owner for an elision);
    the chain steps read and write it. ``owners`` is the same information per event with every
    reading, built once the statements are chosen and kept by the local steps that place single
    notes. ``fits_two`` and ``pivots`` are the alternative readings the result reports.
    """

    ix: EventIndex
    forms: list[tuple[int, ...]]
    claims: Claims
    found: list[Found] = field(default_factory=list)
    starts: list[list[int]] = field(default_factory=list)  # pc → forms starting on it
    position_in: list[list[int]] = field(default_factory=list)  # form → pc → order position
    owners: Owners = field(default_factory=dict)
    fits_two: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # event → readings
    pivots: dict[int, tuple[int, int]] = field(default_factory=dict)  # event → the pivot reading not chosen
    rebuilt: dict[tuple[int, int, int], list[Rebuilt]] = field(default_factory=dict)
    """Per seed (form, start, position): the rebuilds made, with the claims they read
    (``selection.rebuild``)."""
    tails: dict[int, Chain] = field(default_factory=dict)
    """Per obvious statement (its index), its chain with the repeats after its last position,
    while the statements taken best-first may still begin on them (``statements``)."""
    silence: list[int] = field(default_factory=list)
    """Per slice: how long nothing has sounded when it begins (``silences``)."""
    sections: tuple[list[int], list[int]] = ([], [])
    """Per slice: how many slices its section has had before it, and how many it has after it
    (``sections``): a fragment is cut off at a section's edges as at the piece's."""


def new_assignment(ix: EventIndex, forms: list[tuple[int, ...]]) -> Assignment:
    """An empty assignment: nothing claimed, no statement accepted."""
    starts: list[list[int]] = [[] for _ in range(12)]
    for f, pcs in enumerate(forms):
        starts[pcs[0]].append(f)
    position_in = [[pcs.index(p) for p in range(12)] for pcs in forms]
    a = Assignment(ix, forms, Claims(ix.n), [], starts, position_in)
    a.silence = silences(ix)
    a.sections = sections(ix, a.silence)
    return a


BREAK = 8
"""A silence of every voice lasting this many times the piece's median distance between onsets
ends a section (Op. 21's bars 1–25 hold four silences of one quarter, their median distance)."""


def _silence(times: Sequence[Any], ends: Sequence[Any]) -> list[Any]:
    """Per time (distinct, ascending; ``ends``: the latest end of the notes struck then): how long
    nothing has sounded when it comes (0 at the first, and while a note struck before still sounds)."""
    out: list[Any] = []
    reach = None  # the latest end of the notes struck before
    for t, end in zip(times, ends, strict=True):
        out.append(0 if reach is None else max(0, t - reach))
        reach = end if reach is None else max(reach, end)
    return out


def silences(ix: EventIndex) -> list[int]:
    """Per slice: how long (ticks) nothing has sounded when it begins (0: a note still sounds)."""
    ticks, onsets = ix.slice_ticks, ix.slice_onsets  # whole ticks: quick to compare
    scale = next((t // o for t, o in zip(ticks, onsets, strict=True) if o), 1)  # ticks per quarter
    ends = list(ticks)  # per slice: the latest end of the notes struck then
    for i, e in enumerate(ix.events):
        s = ix.sl[i]
        d = e.duration
        ends[s] = max(ends[s], ticks[s] + d.numerator * (scale // d.denominator))
    return _silence(ticks, ends)


def breaks(onsets: Sequence[Any], silence: Sequence[Any]) -> list[int]:
    """The indices of the ``onsets`` (distinct, ascending) that begin a section after the first:
    ``silence`` (per onset, how long nothing has sounded then) is at least BREAK times the median
    distance between successive onsets."""
    gaps = sorted(b - a for a, b in zip(onsets, onsets[1:], strict=False))
    least = BREAK * gaps[len(gaps) // 2] if gaps else 0
    return [s for s in range(1, len(onsets)) if silence[s] >= least > 0]


class Sections:
    """The sections of a piece's notes (``sections``' rule, read from the notes themselves): the
    findings' and the suggestions' open ends are cut off at a section's edges as at the piece's."""

    def __init__(self, events: Iterable[Any]) -> None:
        ends: dict[Fraction, Fraction] = {}  # per onset: the latest end of the notes struck then
        for e in events:
            ends[e.onset] = max(ends.get(e.onset, e.onset), e.onset + e.duration)
        self.onsets = sorted(ends)
        self.starts = [0, *breaks(self.onsets, _silence(self.onsets, [ends[t] for t in self.onsets]))]
        """Index (in ``onsets``) of each section's first onset."""

    def span(self, a: Fraction, b: Fraction) -> tuple[Fraction, Fraction]:
        """The first onset of the section sounding at onset ``a``, and the last onset of the
        section sounding at ``b`` (the piece's first and last onsets when it has one section)."""
        onsets, starts = self.onsets, self.starts
        i = bisect.bisect_right(onsets, a) - 1
        j = bisect.bisect_right(onsets, b) - 1
        first = starts[max(0, bisect.bisect_right(starts, i) - 1)]
        k = bisect.bisect_right(starts, j)
        last = (starts[k] if k < len(starts) else len(onsets)) - 1
        return onsets[first], onsets[last]


def sections(ix: EventIndex, silence: list[int] | None = None) -> tuple[list[int], list[int]]:
    """Per slice: the slices of its section before it and after it. A section ends where every
    note has ended and nothing sounds for BREAK times the median distance between successive
    onsets (the piece's ends are a section's too): excerpts joined with rests between them, a
    movement's sections after a general pause. ``silence``: ``silences(ix)``, if known."""
    ticks = ix.slice_ticks
    count = len(ticks)
    silence = silences(ix) if silence is None else silence
    starts = [0, *breaks(ticks, silence)]
    before, after = [0] * count, [0] * count
    for k, first in enumerate(starts):
        last = starts[k + 1] if k + 1 < len(starts) else count
        for s in range(first, last):
            before[s], after[s] = s - first, last - 1 - s
    return before, after


def owners_of(found: list[Found]) -> Owners:
    """Event index → every (statement, position) that holds it."""
    owners: Owners = {}
    for s, f in enumerate(found):
        for p, e in f.slots.items():
            owners.setdefault(e, []).append((s, p))
        for e, p in f.repeats:
            owners.setdefault(e, []).append((s, p))
    return owners
