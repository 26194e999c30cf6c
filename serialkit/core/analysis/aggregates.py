"""Rows from chords: the order of an uncatalogued row read off a chordal or simultaneous texture.

When statements sound one after another as chords (or with notes struck together), no run of
twelve successive notes spells the row, but each statement still fills the *aggregate* — a run of
successive onsets holding the twelve pitch classes once each — as a succession of unordered sets.
A row is consistent with such an aggregate when one of its 48 forms, cut at the same places,
holds the same sets in the same order. The candidates are the orderings of the aggregate with the
fewest (its chords read in every vertical order); the ones consistent with the most other
aggregates of the opening are proposed (taken as P0 in the form the first aggregate states, when
one fits it) — but only when one row class is the most consistent: a row that differs only in the
order inside chords every statement sounds together explains the notes just as well, and then no
uncatalogued row can be claimed. When the aggregates speak (most of them are consistent with the
best rows), a catalogued row must be as consistent to be tried. Identification judges what is left
by a real analysis, like every candidate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import permutations, product

from serialkit.core.piece import Event

FULL = 0xFFF
MAX_ORDERINGS = 5040  # orderings of the base aggregate tried
MIN_AGREE = 3  # aggregates (the base among them) a proposed row must be consistent with


@dataclass(frozen=True, slots=True)
class _Aggregate:
    """Successive onsets filling the twelve pitch classes: each onset's set as a bit mask."""

    masks: tuple[int, ...]
    bounds: tuple[int, ...]  # 0, then the cumulative sizes: where a form is cut
    first: dict[int, tuple[int, ...]]  # a mask equal to the first set moved down by t → the t's

    @property
    def orderings(self) -> int:
        count = 1
        for m in self.masks:
            for k in range(2, m.bit_count() + 1):
                count *= k
        return count


def _rot(mask: int, t: int) -> int:
    return ((mask << t) | (mask >> (12 - t))) & FULL if t else mask


def _aggregate(masks: Sequence[int]) -> _Aggregate:
    bounds = [0]
    for m in masks:
        bounds.append(bounds[-1] + m.bit_count())
    first: dict[int, list[int]] = {}
    for t in range(12):
        first.setdefault(_rot(masks[0], (12 - t) % 12), []).append(t)
    return _Aggregate(tuple(masks), tuple(bounds), {k: tuple(v) for k, v in first.items()})


def find_aggregates(events: Sequence[Event]) -> list[_Aggregate]:
    """Non-overlapping runs of successive onsets (all voices) holding each pitch class once."""
    slices: list[tuple[int, int]] = []  # (mask, notes) per onset
    previous = None
    for e in sorted(events, key=lambda e: e.onset):
        if slices and e.onset == previous:
            mask, count = slices[-1]
            slices[-1] = (mask | 1 << e.pc, count + 1)
        else:
            slices.append((1 << e.pc, 1))
            previous = e.onset
    out = []
    i = 0
    while i < len(slices):
        acc, run, j = 0, [], i
        while j < len(slices) and acc != FULL:
            mask, count = slices[j]
            if count != mask.bit_count() or acc & mask:
                break
            acc |= mask
            run.append(mask)
            j += 1
        if acc == FULL:
            out.append(_aggregate(run))
            i = j
        else:
            i += 1
    return out


def _lines(row: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    prime = tuple(row)
    inverse = tuple((2 * row[0] - p) % 12 for p in row)
    return prime, prime[::-1], inverse, inverse[::-1]


def _fitting_form(row: Sequence[int], agg: _Aggregate) -> tuple[int, ...] | None:
    """The first form of ``row`` that holds ``agg``'s sets in order, or None."""
    cut = agg.bounds
    for line in _lines(row):
        prefix = [0]
        for p in line:
            prefix.append(prefix[-1] | 1 << p)
        for t in agg.first.get(prefix[cut[1]], ()):
            if all(_rot(prefix[cut[k + 1]] ^ prefix[cut[k]], t) == agg.masks[k] for k in range(1, len(agg.masks))):
                return tuple((p + t) % 12 for p in line)
    return None


def _orderings(agg: _Aggregate) -> list[tuple[int, ...]]:
    sets = [[p for p in range(12) if m >> p & 1] for m in agg.masks]
    return [sum(parts, ()) for parts in product(*(permutations(s) for s in sets))]


def _agreement(row: Sequence[int], aggs: Sequence[_Aggregate], need: int) -> int:
    """How many of ``aggs`` some form of ``row`` holds (counting stops once ``need`` is out of reach)."""
    agree = 0
    for k, agg in enumerate(aggs):
        if _fitting_form(row, agg) is not None:
            agree += 1
        elif agree + len(aggs) - k - 1 < need:
            break
    return agree


@dataclass(frozen=True, slots=True)
class Proposal:
    """What the aggregates say: the uncatalogued rows to try, and which catalogued ones fit."""

    rows: tuple[tuple[int, ...], ...]
    aggregates: tuple[_Aggregate, ...] = ()
    top: int = 0  # aggregates the most consistent rows hold

    @property
    def decisive(self) -> bool:
        """Do the aggregates speak: most of them are held by the most consistent rows?"""
        return self.top >= MIN_AGREE and 2 * self.top >= len(self.aggregates)

    def fits(self, row: Sequence[int]) -> bool:
        """Is ``row`` as consistent with the aggregates as the best (always, if not decisive)?"""
        return not self.decisive or _agreement(row, self.aggregates, self.top) >= self.top


def propose(events: Sequence[Event], windows: Sequence[tuple[int, ...]],
            key: Callable[[Sequence[int]], object]) -> Proposal:
    """The uncatalogued rows worth a trial analysis, given twelve-note ``windows`` of the music.

    Without MIN_AGREE aggregates (no statements filling the aggregate one after another) the
    windows stand. Otherwise the one row class — among the base aggregate's orderings and the
    windows — consistent with the most aggregates is proposed (as the first aggregate states it);
    if several classes are equally consistent, the chords cannot tell them apart and none is.
    """
    aggs = find_aggregates(events)
    if len(aggs) < MIN_AGREE:
        return Proposal(tuple(windows))
    base = min(aggs, key=lambda a: a.orderings)
    rows = list(windows) + (_orderings(base) if base.orderings <= MAX_ORDERINGS else [])
    best: dict[object, tuple[int, ...]] = {}
    top = MIN_AGREE
    for row in rows:
        agree = _agreement(row, aggs, top)
        if agree > top:
            top, best = agree, {}
        if agree == top:
            best.setdefault(key(row), tuple(row))
    proposal = Proposal((), tuple(aggs), top if best else 0)
    if not proposal.decisive:
        return Proposal(tuple(windows), tuple(aggs), proposal.top)
    if len(best) != 1:
        return proposal
    (row,) = best.values()
    return Proposal((_fitting_form(row, aggs[0]) or row,), tuple(aggs), top)
