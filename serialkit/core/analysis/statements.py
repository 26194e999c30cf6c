"""The chain steps: whole statements (the obvious ones, then best-first), then fragments."""

from __future__ import annotations

from serialkit.core.analysis.chains import ELIDE, FREE, HORIZON, VOICE_MODE, Chain, build_chain
from serialkit.core.analysis.index import EventIndex
from serialkit.core.analysis.selection import (
    EDGE,
    MIN_FRAGMENT,
    MIN_STATEMENT,
    accept,
    may_start,
    select,
)
from serialkit.core.analysis.state import Assignment

PLAIN = 0.3  # the dearest link an obvious statement may have (next note of the same voice)


def _whole(ix: EventIndex, chain: Chain) -> Chain | None:
    """The chain's first twelve links if they are positions 0–11 in order, each the next onset of
    the same voice leaving at most one chord note behind (what follows — a note the next statement
    may begin on — is left to later steps); None otherwise."""
    evs = chain.evs[:12]
    if len(evs) < 12 or chain.poss[:12] != list(range(12)) or any(chain.kinds[:12]):
        return None
    voice, vrank = ix.voice, ix.vrank
    for k in range(1, 12):
        a, b = evs[k - 1], evs[k]
        if voice[a] != voice[b] or vrank[b] - vrank[a] > 1 or chain.costs[k] > PLAIN:
            return None
    if len(chain.evs) == 12:
        return chain
    whole = Chain(chain.form, chain.mode, chain.start, 0, evs, chain.poss[:12], chain.kinds[:12],
                  chain.costs[:12], sum(1.0 - c for c in chain.costs[:12]), 12, 0)
    return whole


def take_obvious_statements(a: Assignment) -> Assignment:
    """Accept, in time order, statements no other reading can compete with: twelve successive
    notes of one voice (chords allowed) spelling exactly one form."""
    ix, claims = a.ix, a.claims
    for i in range(ix.n):
        if claims.owner[i] != FREE:
            continue
        found = []
        v = ix.voice[i]
        near = ix.sv_mask[ix.sl[i] * ix.vkey + v]
        slices = ix.voice_sl[v]
        if ix.vrank[i] + 1 < len(slices):
            near |= ix.sv_mask[slices[ix.vrank[i] + 1] * ix.vkey + v]
        for form in a.starts[ix.pc[i]]:
            if not near >> a.forms[form][1] & 1:
                continue  # the voice does not go on to the form's second note
            chain = build_chain(ix, form, a.forms[form], i, 0, VOICE_MODE, claims)
            whole = None if chain is None or chain.distinct != 12 else _whole(ix, chain)
            if whole is not None:
                found.append(whole)
        if len(found) == 1:
            accept(a, found[0])
    return a


def take_statements_best_first(a: Assignment) -> Assignment:
    """Statements from their first notes (or from a note ending an accepted one), best-first.

    A statement that begins on notes another statement ends (an elision) takes at most ELIDE of
    them before its first free note, each link reaching at most HORIZON slices: a note with no
    free note that near after it begins no statement, and is not tried.
    """
    ix = a.ix
    owner = a.claims.owner
    free_before = [0] * (ix.sl[-1] + 2 if ix.n else 1)  # slice → free notes in earlier slices
    for i in range(ix.n):
        if owner[i] == FREE:
            free_before[ix.sl[i] + 1] += 1
    for s in range(1, len(free_before)):
        free_before[s] += free_before[s - 1]
    reach = ELIDE * HORIZON
    last = len(free_before) - 1

    def promising(i: int) -> bool:
        return owner[i] == FREE or free_before[min(last, ix.sl[i] + reach + 1)] > free_before[ix.sl[i]]

    seeds = [(f, i, 0) for i in range(ix.n) if may_start(a, i) and promising(i) for f in a.starts[ix.pc[i]]]
    return select(a, seeds, MIN_STATEMENT)


def take_fragments(a: Assignment) -> Assignment:
    """Statements cut off by the excerpt or whose opening is wrong: chains from every free note
    at the position its pitch class holds in each form (in a cut window, not from the notes of
    its cut edges: what the cut leaves there is context)."""
    ix = a.ix
    free = [i for i in range(ix.n) if a.claims.owner[i] == FREE]
    start, end = ix.cut
    if start or end:
        low, high = (EDGE if start else 0), (ix.sl[-1] - EDGE if end else ix.sl[-1])
        free = [i for i in free if low <= ix.sl[i] <= high]
    seeds = [(f, i, a.position_in[f][ix.pc[i]]) for i in free for f in range(len(a.forms))]
    return select(a, seeds, MIN_FRAGMENT)
