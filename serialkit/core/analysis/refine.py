"""Pairwise re-optimisation: two statements sounding at once re-choose their notes together."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING

from serialkit.core.analysis.chains import FREE, HORIZON, Chain

if TYPE_CHECKING:
    from serialkit.core.analysis.assign import Assigner

ROUNDS = 2
RESCUE = 4  # unexplained notes near a statement that make it worth searching again
RESCUE_GAIN = 3  # … and how many more notes the new reading must explain to be kept
DOUBT = 0.3  # a link dearer than this makes a statement worth re-choosing with its neighbours


def _span(a: Assigner, chain: Chain) -> tuple[int, int]:
    slices = [a.ix.sl[e] for e in chain.evs]
    return min(slices), max(slices)


def _try_pair(a: Assigner, s: int, t: int) -> bool:
    """Release statements ``s`` and ``t``, rebuild them in both orders, keep the best total."""
    old_s, old_t = a.found[s].chain, a.found[t].chain
    assert old_s is not None and old_t is not None
    before = old_s.score + old_t.score
    a.release(s)
    a.release(t)
    best: tuple[float, list[tuple[int, Chain]]] = (before + 1e-6, [])
    for first, second in ((s, t), (t, s)):
        chain_first = a.rebuild(first, old_s if first == s else old_t)
        if chain_first is None:
            continue
        a.accept(chain_first, first)
        chain_second = a.rebuild(second, old_t if second == t else old_s)
        a.release(first)
        if chain_second is None:
            continue
        total = chain_first.score + chain_second.score
        if total > best[0]:
            best = (total, [(first, chain_first), (second, chain_second)])
    if not best[1]:
        a.accept(old_s, s)
        a.accept(old_t, t)
        return False
    (first, chain_first), (second, chain_second) = best[1]
    a.accept(chain_first, first)
    fresh = a.rebuild(second, chain_second)  # same as before: claims are as they were then
    a.accept(fresh if fresh is not None else chain_second, second)
    return True


def _doubtful(a: Assigner, index: int) -> bool:
    """Could statement ``index`` read better? It misses a position or has a dear link."""
    chain = a.found[index].chain
    assert chain is not None
    return chain.distinct < 12 or max(chain.costs) > DOUBT


def refine(a: Assigner) -> None:
    """Re-choose the notes of every pair of statements whose time spans overlap."""
    for _ in range(ROUNDS):
        live = [i for i, f in enumerate(a.found) if f.chain is not None]
        spans = {}
        for i in live:
            chain = a.found[i].chain
            assert chain is not None
            spans[i] = _span(a, chain)
        live.sort(key=lambda i: spans[i])
        improved = False
        for x, s in enumerate(live):
            for t in live[x + 1 :]:
                if spans[t][0] > spans[s][1]:
                    break
                if not (_doubtful(a, s) or _doubtful(a, t)):
                    continue
                if _try_pair(a, s, t):
                    improved = True
                    spans[s] = _span(a, a.found[s].chain)  # type: ignore[arg-type]
                    spans[t] = _span(a, a.found[t].chain)  # type: ignore[arg-type]
        if not improved:
            break


def _claimed(a: Assigner) -> int:
    return sum(1 for o in a.claims.owner if o != FREE)


def rescue(a: Assigner) -> None:
    """Where several notes near a statement stay unexplained, the statement may be a misreading
    that stole notes from the right one: release it, search that stretch again, and keep the new
    reading if it explains more notes."""
    from serialkit.core.analysis.assign import MIN_INNER, MIN_STATEMENT

    ix, claims = a.ix, a.claims
    for index in range(len(a.found)):
        chain = a.found[index].chain
        if chain is None:
            continue
        lo, hi = _span(a, chain)
        lo, hi = lo - HORIZON, hi + HORIZON
        first = bisect_left(ix.sl, lo)
        last = bisect_right(ix.sl, hi)
        free = [i for i in range(first, last) if claims.owner[i] == FREE]
        if len(free) < RESCUE:
            continue
        saved = ([list(x) for x in (claims.owner, claims.pos, claims.second, claims.second_pos)],
                 list(a.found))
        before = _claimed(a)
        a.release(index)
        free = [i for i in range(first, last) if claims.owner[i] == FREE]
        a.select(((f, i, 0) for i in free for f in a.starts[ix.pc[i]]), MIN_STATEMENT)
        free = [i for i in free if claims.owner[i] == FREE]
        a.select(((f, i, a.position_in[f][ix.pc[i]]) for i in free for f in range(len(a.forms))),
                 MIN_INNER)
        if _claimed(a) >= before + RESCUE_GAIN:
            continue
        (claims.owner, claims.pos, claims.second, claims.second_pos), a.found = saved
