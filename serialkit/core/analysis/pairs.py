"""Re-choosing statements together: two statements sounding at once re-choose their notes, and a
statement near a stretch of unexplained notes is read again without it."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from serialkit.core.analysis.chains import FREE, HORIZON, NEW, Chain, clusters
from serialkit.core.analysis.index import EventIndex
from serialkit.core.analysis.passing import RARE, STRANGE
from serialkit.core.analysis.selection import (
    EDGE,
    EXTRA,
    MIN_INNER,
    MIN_STATEMENT,
    POSITIONS_FIRST,
    accept,
    may_start,
    rebuild,
    release,
    select,
)
from serialkit.core.analysis.state import Assignment, Found

ROUNDS = 2
RESCUE = 4  # unexplained notes near a statement that make it worth searching again
RESCUE_GAIN = 3  # … and how many more notes the new reading must explain to be kept
DOUBT = 0.3  # a link dearer than this makes a statement worth re-choosing with its neighbours


def _span(a: Assignment, chain: Chain) -> tuple[int, int]:
    slices = [a.ix.sl[e] for e in chain.evs]
    return min(slices), max(slices)


def _best_pair(a: Assignment, s: int, t: int, old_s: Chain, old_t: Chain,
               before: float) -> list[tuple[int, Chain]]:
    """Both statements released: rebuilt in both orders, the pair scoring more than ``before``."""
    best: tuple[float, list[tuple[int, Chain]]] = (before + 1e-6, [])
    for first, second in ((s, t), (t, s)):
        chain_first = rebuild(a, old_s if first == s else old_t)
        if chain_first is None:
            continue
        accept(a, chain_first, first)
        chain_second = rebuild(a, old_t if second == t else old_s)
        release(a, first)
        if chain_second is None:
            continue
        total = chain_first.score + chain_second.score
        if total > best[0]:
            best = (total, [(first, chain_first), (second, chain_second)])
    return best[1]


def _try_pair(a: Assignment, s: int, t: int) -> bool:
    """Release statements ``s`` and ``t``, rebuild them in both orders, keep the best total."""
    old_s, old_t = a.found[s].chain, a.found[t].chain
    assert old_s is not None and old_t is not None
    release(a, s)
    release(a, t)
    best = _best_pair(a, s, t, old_s, old_t, old_s.score + old_t.score)
    if not best:
        accept(a, old_s, s)
        accept(a, old_t, t)
        return False
    (first, chain_first), (second, chain_second) = best
    accept(a, chain_first, first)
    fresh = rebuild(a, chain_second)  # same as before: claims are as they were then
    accept(a, fresh if fresh is not None else chain_second, second)
    return True


def _doubtful(a: Assignment, index: int) -> bool:
    """Could statement ``index`` read better? It misses a position or has a dear link."""
    chain = a.found[index].chain
    assert chain is not None
    return chain.distinct < 12 or max(chain.costs) > DOUBT


def _rechoose_round(a: Assignment) -> bool:
    live = [i for i, f in enumerate(a.found) if f.chain is not None]
    spans = {i: _span(a, a.found[i].chain) for i in live}  # type: ignore[arg-type]
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
    return improved


def rechoose_overlapping_pairs(a: Assignment) -> Assignment:
    """Re-choose the notes of every pair of statements whose time spans overlap (when either is
    doubtful), keeping a new pair only if it scores more."""
    for _ in range(ROUNDS):
        if not _rechoose_round(a):
            break
    return a


def _claimed(a: Assignment) -> int:
    return sum(1 for o in a.claims.owner if o != FREE)


Saved = tuple[list[list[int]], list[Found]]


def _save(a: Assignment) -> Saved:
    c = a.claims
    return [list(x) for x in (c.owner, c.pos, c.second, c.second_pos)], list(a.found)


def _restore(a: Assignment, saved: Saved) -> None:
    c = a.claims
    (c.owner, c.pos, c.second, c.second_pos), a.found = saved


def _at_cut_edge(a: Assignment, first: int, last: int) -> bool:
    """Does events ``first``..``last`` touch an edge where a window was cut out of a longer
    piece? The statements the cut leaves short there are context, not trouble to search again."""
    start, end = a.ix.cut
    if not (start or end) or first >= last:
        return False
    sl = a.ix.sl
    return start and sl[first] < EDGE or end and sl[last - 1] > sl[-1] - EDGE


def _search_stretch(a: Assignment, first: int, last: int, extra: float = EXTRA,
                    banned: frozenset[tuple[int, int]] = frozenset()) -> None:
    """Search the free notes of events ``first``..``last`` again: whole statements from their first
    notes, then inner fragments from every position (``extra``: see :func:`select`). Where the
    trouble is, a whole statement may open with a dear link (its first note far from its second,
    in a dense texture): its opening is not refused for that. ``banned``: (form, first note) of
    readings not to be begun again."""
    ix, owner = a.ix, a.claims.owner
    free = [i for i in range(first, last) if owner[i] == FREE]
    select(a, ((f, i, 0) for i in free for f in a.starts[ix.pc[i]] if (f, i) not in banned),
           MIN_STATEMENT, extra, dear=True)
    free = [i for i in free if owner[i] == FREE]
    select(a, ((f, i, a.position_in[f][ix.pc[i]]) for i in free for f in range(len(a.forms))
               if (f, i) not in banned), MIN_INNER, extra)


def reread_unexplained_stretches(a: Assignment) -> Assignment:
    """Where several notes near a statement stay unexplained, the statement may be a misreading
    that stole notes from the right one: release it, search that stretch again, and keep the new
    reading if it explains more notes. A note repeating its voice's previous note, which a
    statement holds, is no sign of a misreading (the placing steps give it its place)."""
    ix, claims = a.ix, a.claims
    owner, after = claims.owner, ix.prev_same
    for index in range(len(a.found)):
        chain = a.found[index].chain
        if chain is None:
            continue
        lo, hi = _span(a, chain)
        first = bisect_left(ix.sl, lo - HORIZON)
        last = bisect_right(ix.sl, hi + HORIZON)
        loose = sum(1 for i in range(first, last) if owner[i] == FREE and (after[i] < 0 or owner[after[i]] == FREE))
        if loose < RESCUE or _at_cut_edge(a, first, last):
            continue
        saved = _save(a)
        before = _claimed(a)
        release(a, index)
        _search_stretch(a, first, last)
        if _claimed(a) < before + RESCUE_GAIN:
            _restore(a, saved)
    return a


AROUND = 5  # at most this many statements sounding at a stretch of unexplained notes are read again
FEW = 0.05
"""Where more statements sound at a stretch, its notes are read again one by one
(``_reread_each_note``) only in a reading leaving at most this share of the notes unexplained (a
wrong row leaves trouble everywhere: reading it again note by note would not make it right)."""


def _clusters(a: Assignment) -> list[tuple[int, int]]:
    """Slice spans of the unexplained notes, those within HORIZON slices of each other together."""
    sl, owner = a.ix.sl, a.claims.owner
    return clusters([sl[i] for i in range(a.ix.n) if owner[i] == FREE])


def _made_whole(a: Assignment, olds: list[tuple[int | None, set[int]]]) -> bool:
    """Is each of ``olds`` (form, the notes a statement beside the trouble keeps) now part of a
    whole statement of its form (None: of any form)? It grows; it does not give up notes to
    another (a note it struck twice may be held by its repeat instead: ``_struck_again``)."""
    whole = [(f.form, set(f.chain.evs)) for f in a.found if f.chain is not None and f.chain.distinct == 12]
    return all(any(form in (None, g) and all(e in evs or _struck_again(a.ix, e, evs) for e in notes)
                   for g, evs in whole) for form, notes in olds)


def _struck_again(ix: EventIndex, e: int, evs: set[int]) -> bool:
    """Does ``evs`` hold the note struck right before or after ``e`` in its voice, of its pitch
    class (``e``'s repeat, or the note ``e`` repeats)?"""
    v, rank, pc = ix.voice[e], ix.vrank[e], ix.pc[e]
    return any(ix.voice[n] == v and abs(ix.vrank[n] - rank) == 1 and ix.pc[n] == pc for n in evs)


def _whole(a: Assignment) -> int:
    return sum(1 for f in a.found if f.chain is not None and f.chain.distinct == 12)


def _elided_with(a: Assignment, near: dict[int, tuple[int, int]]) -> set[int]:
    """The statements sharing a note with those of ``near`` (an elision: one's tail is the other's
    head), which a re-reading of ``near`` cannot give back a note it took from them without."""
    owner, second = a.claims.owner, a.claims.second
    out: set[int] = set()
    for k in near:
        chain = a.found[k].chain
        assert chain is not None
        for e in chain.evs:
            if second[e] != FREE:
                out.update(x for x in (owner[e], second[e]) if x not in near)
    return out


def _short_beside(a: Assignment, lo: int, hi: int, spans: dict[int, tuple[int, int]],
                  near: dict[int, tuple[int, int]]) -> tuple[dict[int, set[int]], ...]:
    """The statements that stop short of position 11 within HORIZON slices before slices
    ``lo``..``hi``, or start after position 0 within HORIZON slices after them: their missing
    positions may be the notes there (another statement read through them instead). And those
    opening within HORIZON slices after on a pitch class an unexplained note there has (or
    ending within HORIZON before on one): the statement may have taken a twin of its own note,
    one another statement needs, leaving its own unexplained. And those ending (opening) there
    on notes they share with another statement: an elided form may be another form that begins
    on its own note and ends on the unexplained ones (one row's tail is another's head). Each
    with the notes it must keep when it is read again (``_made_whole``): (those stopping short,
    those on a twin, those elided)."""
    ix, owner, second = a.ix, a.claims.owner, a.claims.second
    sl, pc = ix.sl, ix.pc
    loose = {pc[i] for i in range(bisect_left(sl, lo), bisect_right(sl, hi)) if owner[i] == FREE}
    out: dict[int, set[int]] = {}
    twins: dict[int, set[int]] = {}
    rotated: dict[int, set[int]] = {}
    for k, (first, last) in spans.items():
        if k in near:
            continue
        chain = a.found[k].chain
        assert chain is not None
        news = [p for p, kind in zip(chain.poss, chain.kinds, strict=True) if kind == NEW]
        keep = {e for e, kind in zip(chain.evs, chain.kinds, strict=True) if kind == NEW}
        if lo - HORIZON <= last < lo and max(news) < 11 or hi < first <= hi + HORIZON and min(news) > 0:
            out[k] = keep  # stopping short: it may only grow
        elif lo - HORIZON <= last < lo and pc[chain.evs[-1]] in loose:
            twins[k] = keep - {chain.evs[-1]}  # its last note may be the twin of its own
        elif hi < first <= hi + HORIZON and pc[chain.evs[0]] in loose:
            twins[k] = keep - {chain.evs[0]}  # its first note may be the twin of its own
        elif lo - HORIZON <= last < lo and second[chain.evs[0]] != FREE \
                or hi < first <= hi + HORIZON and second[chain.evs[-1]] != FREE:
            rotated[k] = {e for e in keep if second[e] == FREE}  # elided: may be another form
    return out, twins, rotated


def reread_around_unexplained(a: Assignment) -> Assignment:
    """Where notes stay unexplained, the statements sounding at them may have taken each other's
    notes (two forms sharing a segment, each read through the other's voice): release them all
    (at most AROUND, with those elided with them), search their stretch again from whole
    statements down to inner fragments, and keep the new reading only if it explains more notes
    with no fewer whole statements. If the usual priority finds no better reading, the stretch is
    searched once more with new positions first (a tremolo in one voice that spells another
    statement's opening does not outbid the statement that opens plainly). If neither helps, the
    statements stopping short right beside the trouble, or opening or ending beside it on a pitch
    class a note there has, are released too (one may own the notes a neighbour was read through,
    or have taken a twin of its own note), kept only if notes of the trouble itself are then
    explained and each of those statements is made whole. Where more than AROUND statements sound
    at the stretch, the statements sounding at each of its unexplained notes are read again
    instead, one note at a time (in a reading nearly whole: ``FEW``).
    The work is local: only the stretches where trouble is."""
    trouble = _clusters(a)
    few = sum(1 for o in a.claims.owner if o == FREE) <= FEW * a.ix.n  # a reading nearly whole
    for lo, hi in trouble:
        spans = {k: _span(a, f.chain) for k, f in enumerate(a.found) if f.chain is not None}
        near = {k: span for k, span in spans.items() if span[0] <= hi and span[1] >= lo}
        elided = _elided_with(a, near)
        if len(near) + len(elided) <= AROUND:  # else the statements sounding there alone
            near.update({k: spans[k] for k in elided})
        if len(near) > AROUND:
            if few:
                _reread_each_note(a, lo, hi)
            continue
        if near and _reread(a, lo, hi, near):
            continue
        short, twins, rotated = _short_beside(a, lo, hi, spans, near)
        both = {**short, **twins} if len(near) + len(short) + len(twins) <= AROUND else short
        if _reread_with(a, lo, hi, near, spans, both) or both != short and twins and short \
                and _reread_with(a, lo, hi, near, spans, short):
            continue  # (with the twins' statements; failing that, without them)
        wider = {**near, **{k: spans[k] for k in rotated}}
        wider.update({k: spans[k] for k in _elided_with(a, wider)})
        if rotated and len(wider) <= AROUND:
            _reread(a, lo, hi, wider, [(None, keep) for keep in rotated.values()])
    return a


def _reread_each_note(a: Assignment, lo: int, hi: int) -> None:
    """Too many statements sound at the stretch ``lo``..``hi`` to read them again together: for
    each of its unexplained notes in turn, the statements sounding at that note alone (at most
    AROUND, with those elided with them) are read again (``_reread``)."""
    sl, tried = a.ix.sl, set()
    spans = {k: _span(a, f.chain) for k, f in enumerate(a.found) if f.chain is not None}
    for u in range(bisect_left(sl, lo), bisect_right(sl, hi)):
        if a.claims.owner[u] != FREE:
            continue
        at = sl[u]
        near = {k: span for k, span in spans.items() if span[0] <= at <= span[1]}
        near.update({k: spans[k] for k in _elided_with(a, near)})
        key = frozenset(near)
        if near and len(near) <= AROUND and key not in tried:
            tried.add(key)
            if _reread(a, at, at, near):  # the statements changed: their spans again
                spans = {k: _span(a, f.chain) for k, f in enumerate(a.found) if f.chain is not None}


def _reread_with(a: Assignment, lo: int, hi: int, near: dict[int, tuple[int, int]],
                 spans: dict[int, tuple[int, int]], beside: dict[int, set[int]]) -> bool:
    """``_reread`` of ``near`` with the statements ``beside`` it (each with the notes it keeps)."""
    if not beside or len(near) + len(beside) > AROUND:
        return False
    olds: list[tuple[int | None, set[int]]] = [(a.found[k].form, keep) for k, keep in beside.items()]
    return _reread(a, lo, hi, {**near, **{k: spans[k] for k in beside}}, olds)


def _reread(a: Assignment, lo: int, hi: int, near: dict[int, tuple[int, int]],
            grow: list[tuple[int | None, set[int]]] | None = None) -> bool:
    """Release ``near`` and search the stretch again (see ``reread_around_unexplained``); True if
    the new reading is kept. ``grow``: kept only if it also explains notes of slices ``lo``..``hi``
    and each of these statements (form, notes) is part of a whole one (``_made_whole``). When
    neither priority helps and a released statement was broken (not whole), the stretch is
    searched once more without beginning those readings again (not elided ones: a pivot shared
    by two statements must not give way to a wrong note opening the second), kept only
    if fewer notes of the trouble stay unexplained."""
    sl, owner = a.ix.sl, a.claims.owner
    first = bisect_left(sl, min(lo, *(span[0] for span in near.values())) - HORIZON)
    last = bisect_right(sl, max(hi, *(span[1] for span in near.values())) + HORIZON)
    if _at_cut_edge(a, first, last):
        return False
    inside = range(bisect_left(sl, lo), bisect_right(sl, hi))
    saved = _save(a)
    before, whole_before = _claimed(a), _whole(a)
    loose = sum(1 for i in inside if owner[i] == FREE)
    broken = frozenset((f.form, f.chain.evs[0]) for f in (a.found[k] for k in near)
                       if f.chain is not None and f.chain.distinct < 12)
    tries = [(EXTRA, frozenset[tuple[int, int]]()), (POSITIONS_FIRST, frozenset[tuple[int, int]]())]
    for extra, banned in tries + ([(EXTRA, broken)] if broken else []):
        for k in near:
            release(a, k)
        _search_stretch(a, first, last, extra, banned)
        owner = a.claims.owner
        left = sum(1 for i in inside if owner[i] == FREE)
        if _claimed(a) > before and _whole(a) >= whole_before and (not grow or (
                left < loose and _made_whole(a, grow))) and (not banned or left < loose):
            return True
        _restore(a, saved)
        saved = _save(a)
    return False


def reread_strange_passes(a: Assignment) -> Assignment:
    """The first reading again with the voice-passing costs it teaches (``ix.strange``), where they
    change something: the statements that pass between voices at a cost now are released, each
    group sounding together with its stretch, and the stretch is searched again from statements'
    first notes, best-first, as the first reading did. A statement passing at no cost reads the
    same under the new costs, and its rivals only grow dearer: it stays. The work is local."""
    ix = a.ix
    strange, voice, sl = ix.strange, ix.voice, ix.sl
    assert strange is not None
    doubtful: list[tuple[int, int, int]] = []
    for k, f in enumerate(a.found):
        chain = f.chain
        if chain is None:
            continue
        evs = chain.evs
        if any(voice[x] != voice[y] and strange[x][voice[y]] > 0 for x, y in zip(evs, evs[1:], strict=False)):
            lo, hi = _span(a, chain)
            doubtful.append((lo, hi, k))
    doubtful.sort()
    groups: list[tuple[int, int, list[int]]] = []
    for lo, hi, k in doubtful:
        if groups and lo <= groups[-1][1] + HORIZON:
            glo, ghi, ks = groups[-1]
            groups[-1] = (glo, max(ghi, hi), [*ks, k])
        else:
            groups.append((lo, hi, [k]))
    for lo, hi, _ks in groups:
        for k, f in enumerate(a.found):  # with the statements sounding with them (built round them)
            if f.chain is not None:
                flo, fhi = _span(a, f.chain)
                if flo <= hi and fhi >= lo:
                    lo, hi = min(lo, flo), max(hi, fhi)
                    release(a, k)
        first, last = bisect_left(sl, lo - HORIZON), bisect_right(sl, hi + HORIZON)
        seeds = [(f, i, 0) for i in range(first, last) if may_start(a, i) for f in a.starts[ix.pc[i]]]
        select(a, seeds, MIN_STATEMENT)
        ix.strange = None  # what the new costs leave unread: statements as the first reading read them
        try:
            select(a, [(f, i, p) for f, i, p in seeds if may_start(a, i)], MIN_STATEMENT,
                   only=lambda chain: _habitual(a, chain, strange))
        finally:
            ix.strange = strange
    return a


def _habitual(a: Assignment, chain: Chain, strange: list[list[float]]) -> bool:
    """Is ``chain`` unbroken (something sounds at every moment from its first note to its last,
    ``state.silences``) and does each of its passes to another voice, but within a chord, go
    between two voices of which one passes rows to the other not rarely (``strange``, ``RARE``)?"""
    ix = a.ix
    sl, voice, silence = ix.sl, ix.voice, a.silence
    evs = chain.evs
    if any(silence[s] for s in range(sl[evs[0]] + 1, sl[evs[-1]] + 1)):
        return False
    return all(voice[x] == voice[y] or sl[x] == sl[y] or min(strange[x][voice[y]], strange[y][voice[x]]) < RARE * STRANGE
               for x, y in zip(evs, evs[1:], strict=False))
