"""Where a single note fits a statement: in time order between its neighbours, and no other note of
its pitch class nearer (the placing steps ask it of every note they give a place)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from serialkit.core.analysis.chains import HORIZON, PACE, PACE_AFTER
from serialkit.core.analysis.state import Assignment, Found, Owners


def _fits(a: Assignment, f: Found, p: int, u: int, owners: Owners | None = None) -> int | None:
    """How far (in slices) ``u`` sits from its neighbours if it can hold position ``p`` of ``f``
    in time order; None if it cannot. With ``owners``, notes other statements hold do not count
    as nearer candidates for an end position."""
    sl = a.ix.sl
    lo: int | None = None  # the latest slice of a position before ``p``, the earliest after (one pass)
    hi: int | None = None
    for q, e in f.slots.items():
        if q < p:
            if lo is None or sl[e] > lo:
                lo = sl[e]
        elif q > p and (hi is None or sl[e] < hi):
            hi = sl[e]
    if lo is None and hi is None:
        return None
    x = sl[u]
    if lo is not None and x < lo:
        return None
    if hi is not None and x > hi:
        return None
    if lo is None:
        assert hi is not None
        if p != min(f.slots) - 1 or hi - x > HORIZON or _nearer(a, u, x, hi, owners) or _off_pace(a, f, x):
            return None
        return hi - x
    if hi is None:
        if p != max(f.slots) + 1 or x - lo > HORIZON or _nearer(a, u, lo, x, owners) or _off_pace(a, f, x):
            return None
        return x - lo
    return min(x - lo, hi - x)


def _off_pace(a: Assignment, f: Found, x: int) -> bool:
    """Would a note at slice ``x``, after all of ``f``'s notes or before them, leave the
    statement's pace, once it has moved on PACE_AFTER times? After them: the wait from the end of
    its notes (a note held while the others move waits nothing) more than PACE times its mean wait
    between onsets (the rule that ends a chain, ``chains.build_chain``). Before them: the wait to
    its first onset more than PACE times its longest wait (a chain read from that note would not
    have its pace yet: an opening note held or followed by a rest is Webern's as much as anyone's).
    Slices count onsets, not time: fifty bars of rest are one slice, and a statement an excerpt
    cuts off does not reach over them for the next section's note."""
    ix = a.ix
    ticks = ix.slice_ticks
    slices = sorted({ix.sl[e] for e in f.slots.values()})  # one a distinct onset
    waits = len(slices) - 1
    if waits < PACE_AFTER:
        return False
    first, last = slices[0], slices[-1]
    if x < first:
        return ticks[first] - ticks[x] > PACE * max(ticks[b] - ticks[a] for a, b in zip(slices, slices[1:], strict=False))
    if (ticks[x] - ticks[last]) * waits <= PACE * (ticks[last] - ticks[first]):
        return False  # on pace from the last onset: from the notes' end too
    onsets, events = ix.slice_onsets, ix.events
    end = max(events[e].onset + events[e].duration for e in f.slots.values())
    return (onsets[x] - end) * waits > PACE * (onsets[last] - onsets[first])


def _nearer(a: Assignment, u: int, low: int, high: int, owners: Owners | None = None) -> bool:
    """Is there another note of ``u``'s pitch class strictly between slices ``low`` and ``high``
    (so ``u`` is not the one that extends the statement)? With ``owners``: another free note."""
    pc = a.ix.pc[u]
    lsl = a.ix.by_pc_sl[pc]
    first, last = bisect_right(lsl, low), bisect_left(lsl, high)
    if owners is None:
        return first < last
    return any(e not in owners for e in a.ix.by_pc[pc][first:last])


class NearStatements:
    """The statements a note at a given slice may fit: ``_fits`` is None for a statement whose
    notes all lie more than HORIZON slices from it, so only those within are asked (a piece's
    statements are many, the ones near a note few). ``took`` keeps it true as statements take
    notes."""

    BUCKET = 64

    def __init__(self, a: Assignment) -> None:
        self.sl = a.ix.sl
        self.buckets: dict[int, set[int]] = {}
        self.span: dict[int, tuple[int, int]] = {}
        for t, g in enumerate(a.found):
            if g.slots:
                slices = [self.sl[e] for e in g.slots.values()]
                self._add(t, min(slices), max(slices))

    def _add(self, t: int, lo: int, hi: int) -> None:
        self.span[t] = (lo, hi)
        for b in range((lo - HORIZON) // self.BUCKET, (hi + HORIZON) // self.BUCKET + 1):
            self.buckets.setdefault(b, set()).add(t)

    def at(self, x: int) -> list[int]:
        """The statements (in their order) whose notes come within HORIZON slices of slice ``x``,
        and perhaps a few more."""
        return sorted(self.buckets.get(x // self.BUCKET, ()))

    def took(self, t: int, e: int) -> None:
        """Statement ``t`` took note ``e`` into a position."""
        x = self.sl[e]
        lo, hi = self.span.get(t, (x, x))
        if t not in self.span or not lo <= x <= hi:
            self._add(t, min(lo, x), max(hi, x))
