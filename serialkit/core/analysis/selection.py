"""Choosing chains: the best chain from a seed, best-first acceptance, and the claim bookkeeping.

A chain may take a note another statement holds only as an elision (the tail of one statement
is the head of the next); accepting a chain claims its notes, releasing a statement gives them back.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from operator import itemgetter

from serialkit.core.analysis.chains import (
    CHORD,
    ELIDE,
    FREE,
    NEW,
    PACE_AFTER,
    REP,
    REPEAT,
    SHORT,
    TIME_MODE,
    VOICE_MODE,
    Chain,
    build_chain,
)
from serialkit.core.analysis.state import Assignment, Found

MIN_STATEMENT = 7  # distinct positions a statement needs when it starts at its first note
MIN_FRAGMENT = 4  # … and a fragment at the excerpt's edges (cut off by the excerpt)
MIN_INNER = 6  # … and a fragment inside the piece (a statement whose opening is wrong or missing)
EDGE = 12  # slices from either end of the piece that count as its edges
MIN_SCORE = 3.5
SURE = 0.95  # a voice-mode chain scoring this share of its length is taken without a time-mode try
EXTRA = 0.4  # priority lost per repeated note or tremolo return: a repeat proves less than a position
POSITIONS_FIRST = 1.0 - REPEAT  # … and in a second look at trouble: a repeat adds nothing
REBUILT = 4  # rebuilds kept per statement's seed (``rebuild``): the latest


FEW = 4 if 1.0 + 2 * (1.0 + 2 * CHORD) < MIN_SCORE else 0
"""A chain of fewer notes is never ``acceptable``: its score is at most one per note (the first
link costs nothing, each other at least ``-2 * CHORD``), under MIN_SCORE, and it holds fewer
than MIN_FRAGMENT positions."""


def best_chain(a: Assignment, form: int, start: int, pos: int, dear: bool = False,
               wanted: bool = False, reached: list[int] | None = None) -> Chain | None:
    """The better of the voice-mode and time-mode chains of ``form`` from ``start`` at ``pos``.
    ``dear``: a chain whose opening is too dear (see ``build_chain``) is still taken when it
    goes on to state every position left, none skipped. ``wanted``: the caller keeps the chain
    only if it is ``acceptable`` (``select``, whose seeds leave at least MIN_FRAGMENT positions):
    a chain of fewer than ``FEW`` notes counts as none. It is never acceptable, and of the two
    modes' chains the other wins whenever it is (it scores more), so what is kept is the same.
    ``reached``: see ``build_chain`` (each chain followed tells it)."""
    best = _chain(a, form, start, pos, VOICE_MODE, dear, wanted, reached)
    if best is not None and best.distinct == 12 - pos and best.score >= SURE * (12 - pos):
        return best  # a whole statement at almost no cost: time mode cannot beat it by much
    chain = _chain(a, form, start, pos, TIME_MODE, dear, wanted, reached)
    if chain is not None and (best is None or chain.score > best.score):
        best = chain
    return best


def _chain(a: Assignment, form: int, start: int, pos: int, mode: int, dear: bool,
           wanted: bool = False, reached: list[int] | None = None) -> Chain | None:
    least = FEW if wanted else 0
    chain = build_chain(a.ix, form, a.forms[form], start, pos, mode, a.claims, least=least, reached=reached)
    if chain is SHORT:  # a chain that dies young: no dearer opening is looked for (it is no None)
        return None
    if chain is None and dear:
        chain = build_chain(a.ix, form, a.forms[form], start, pos, mode, a.claims, abort=False, least=least)
        if chain is SHORT or chain is not None and (
                chain.distinct != 12 - pos or chain.skips or chain.evs[0] != start):
            return None
    return chain


def acceptable(a: Assignment, chain: Chain, minimum: int) -> bool:
    """Is ``chain`` long and cheap enough (fragments shorter than MIN_INNER only at the edges of
    the piece or of a section, ``state.sections``)?"""
    if chain.distinct < minimum or chain.score < MIN_SCORE:
        return False
    if minimum < MIN_INNER and chain.distinct < MIN_INNER:
        sl, (before, after) = a.ix.sl, a.sections
        return before[sl[chain.evs[0]]] < EDGE or after[sl[chain.evs[-1]]] < EDGE
    return True


def still_valid(a: Assignment, chain: Chain) -> bool:
    """Can ``chain`` still be accepted under the current claims?"""
    claims = a.claims
    head = True
    for e, p, kind in zip(chain.evs, chain.poss, chain.kinds, strict=True):
        if not claims.available(e, p, head):
            return False
        if kind != NEW and not (claims.owner[e] == FREE or kind == REP and claims.repeat_available(e, p)):
            return False
        if claims.owner[e] == FREE:
            head = False
    return True


def select(a: Assignment, seeds: Iterable[tuple[int, int, int]], minimum: int,
           extra: float = EXTRA, dear: bool = False, only: Callable[[Chain], bool] | None = None) -> Assignment:
    """Accept chains best-first from seeds (form, start event, start position); a chain that lost
    notes to a better one is built again from its seed and queued anew. A chain's priority is its
    score less ``extra`` per repeated note; of two alike, the one spanning fewer slices (an invariant
    pair struck twice: the statement beginning on the later pair leaves the earlier to the one
    ending there; ``dear``: see ``best_chain``). ``only``: the chains that may be accepted (all,
    without it)."""
    heap: list[tuple[float, int, int, Chain]] = []
    counter = 0
    sl = a.ix.sl
    for form, start, pos in seeds:
        if 12 - pos < minimum:
            continue  # positions only rise along a chain: too few are left to reach ``minimum``
        chain = best_chain(a, form, start, pos, dear, wanted=True)
        if chain is not None and acceptable(a, chain, minimum) and (only is None or only(chain)):
            heap.append((-_priority(a, chain, extra), sl[chain.evs[-1]] - sl[chain.evs[0]], counter, chain))
            counter += 1
    heapq.heapify(heap)
    while heap:
        chain = heapq.heappop(heap)[-1]
        if still_valid(a, chain):
            accept(a, chain)
            continue
        start, pos = chain.start, chain.start_pos
        if not a.claims.available(start, pos, True):
            # its first note went to two statements elided there: the statement begins on its next
            if len(chain.evs) < 2 or chain.kinds[1] != NEW or a.claims.owner[chain.evs[1]] != FREE:
                continue
            start, pos = chain.evs[1], chain.poss[1]
        fresh = best_chain(a, chain.form, start, pos, dear, wanted=True)
        if fresh is not None and acceptable(a, fresh, minimum) and (only is None or only(fresh)):
            heapq.heappush(heap, (-_priority(a, fresh, extra), sl[fresh.evs[-1]] - sl[fresh.evs[0]], counter, fresh))
            counter += 1
    return a


FAR_COST = 0.7
"""A link this dear (a pass to another voice over several onsets; a note of the same voice after a
rest costs far less) ..."""
FAR_WAIT = 4
"""... that waits more than this many times the chain's mean wait before it is a far link
(``_far_link``)."""


def _far_link(a: Assignment, chain: Chain) -> int:
    """The first link of ``chain`` costing ``FAR_COST`` or more that waits more than ``FAR_WAIT``
    times the chain's mean wait so far (after its first ``PACE_AFTER`` waits), or its length: a
    statement the end of a section cuts off, stretched over the break to the next section's first
    notes (the chain's own ``PACE`` allows eight times its pace, and a chain that creeps on by
    links of five or six times goes on)."""
    costs = chain.costs
    if max(costs) < FAR_COST:
        return len(costs)
    onsets, sl = a.ix.slice_ticks, a.ix.sl
    first = last = onsets[sl[chain.evs[0]]]
    waits = 0
    for k in range(1, len(costs)):
        t = onsets[sl[chain.evs[k]]]
        if costs[k] >= FAR_COST and waits >= PACE_AFTER and (t - last) * waits > FAR_WAIT * (last - first):
            return k
        if t > last:
            waits, last = waits + 1, t
    return len(costs)


def _priority(a: Assignment, chain: Chain, extra: float) -> float:
    """Which chain is accepted first: its score, repeated notes counting less than new positions
    (a chain that swallows a neighbour's repeats does not outbid the statement beginning there),
    up to its far link (``_far_link``): the notes it reaches past one count for it only after the
    chains that reach them at their own pace. Webern's Op. 21 excerpt joined to a copy of itself a
    semitone higher: the excerpt's last statement, cut off two positions short, outbid the copy's
    first statement in the horn by the two positions it took from it over the join (10.16 against
    9.94), and ten correct notes of every copy were left unexplained."""
    end = _far_link(a, chain)
    costs, kinds = chain.costs[:end], chain.kinds[:end]
    return sum(1.0 - c for c in costs) - extra * sum(1 for k in kinds if k != NEW)


def accept(a: Assignment, chain: Chain, index: int | None = None) -> None:
    """Record a chain as statement ``index`` (default: a new one) and claim its events."""
    if index is None:
        index = len(a.found)
        a.found.append(Found(chain.form, {}))
    found = Found(chain.form, {}, [], chain)
    a.found[index] = found
    claims = a.claims
    owner, pos, second, second_pos = claims.owner, claims.pos, claims.second, claims.second_pos
    slots, repeats = found.slots, found.repeats
    for e, p, kind in zip(chain.evs, chain.poss, chain.kinds, strict=True):
        if kind == NEW and p not in slots:
            slots[p] = e
        else:
            repeats.append((e, p))
        if owner[e] == FREE:
            owner[e] = index
            pos[e] = p
        else:
            second[e] = index
            second_pos[e] = p


def release(a: Assignment, index: int) -> None:
    """Give back the events of statement ``index`` (it stays in the list, empty)."""
    claims = a.claims
    owner, pos, second, second_pos = claims.owner, claims.pos, claims.second, claims.second_pos
    found = a.found[index]
    for e in list(found.slots.values()) + [e for e, _ in found.repeats]:
        if owner[e] == index:
            owner[e] = second[e]
            pos[e] = second_pos[e]
            second[e] = FREE
        elif second[e] == index:
            second[e] = FREE
    a.found[index] = Found(found.form, {}, [], None)


def rebuild(a: Assignment, chain: Chain) -> Chain | None:
    """The best chain for the same form and start as ``chain``, under the current claims.

    Re-choosing pairs of statements rebuilds each statement again and again, each time with
    other statements released: a rebuild made before (``Assignment.rebuilt``) is reused when
    every note whose claims its searches read (``build_chain``'s ``reached``) has the claims it
    had then, under the same voice-passing costs — the search is a function of those alone
    (with the index), so it would find the same."""
    claims = a.claims
    if not claims.available(chain.start, chain.start_pos, True):
        return None
    key = (chain.form, chain.start, chain.start_pos)
    owner, second, pos = claims.owner, claims.second, claims.pos
    strange = a.ix.strange
    made = a.rebuilt.setdefault(key, [])
    for passing, read, owners, seconds, places, found in made:
        if passing is strange and read(owner) == owners and read(second) == seconds and read(pos) == places:
            return found
    reached: list[int] = []
    found = best_chain(a, chain.form, chain.start, chain.start_pos, reached=reached)
    read = itemgetter(*reached, chain.start)  # never a single index: a tuple of values
    made.append((strange, read, read(owner), read(second), read(pos), found))
    if len(made) > REBUILT:
        del made[0]
    return found


def may_start(a: Assignment, i: int) -> bool:
    """Can a statement begin at event ``i``: free, or ending an accepted one (elision)?"""
    claims = a.claims
    return claims.owner[i] == FREE or (claims.second[i] == FREE and claims.pos[i] >= 12 - ELIDE)
