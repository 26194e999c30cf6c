"""The chain steps: whole statements (the obvious ones, then best-first), then fragments."""

from __future__ import annotations

from serialkit.core.analysis.chains import (
    ELIDE,
    FREE,
    HORIZON,
    NEW,
    OSC,
    REP,
    REPEAT,
    VOICE_MODE,
    Chain,
    build_chain,
    ends_trill,
)
from serialkit.core.analysis.index import EventIndex
from serialkit.core.analysis.selection import (
    EDGE,
    MIN_FRAGMENT,
    MIN_STATEMENT,
    accept,
    may_start,
    release,
    select,
)
from serialkit.core.analysis.state import Assignment

PLAIN = 0.3  # the dearest link an obvious statement may have (next note of the same voice)


def _whole(ix: EventIndex, chain: Chain) -> tuple[Chain, Chain] | None:
    """The chain up to its statement of position 11 if its new positions are 0–11 in order, each
    link the next onset of the same voice leaving at most one chord note behind, and every other
    link a plain repeated note or the return of a two-note tremolo, with nothing between; and the
    same with the repeats and tremolo returns that follow position 11 (its tail: notes the next
    statement may begin on, given to this one only if no other statement takes them,
    ``give_obvious_statements_their_tails``). None if the chain is not such a statement."""
    evs, poss, kinds, costs = chain.evs, chain.poss, chain.kinds, chain.costs
    voice, vrank = ix.voice, ix.vrank
    expect = 0
    twelve = end = 0
    for k, e in enumerate(evs):
        kind = kinds[k]
        if twelve and kind == NEW:
            break
        if kind == NEW:
            if poss[k] != expect:
                return None
            expect += 1
        if k:
            before = evs[k - 1]
            dear = PLAIN if kind == NEW else PLAIN + REPEAT  # (a repeat costs REPEAT more)
            if voice[before] != voice[e] or vrank[e] - vrank[before] > 1 or costs[k] > dear:
                if twelve:
                    break
                return None
        if expect == 12:
            twelve = twelve or k + 1
            end = k + 1
    if not twelve:
        return None
    while kinds[end - 1] == OSC:
        end -= 1  # a tremolo's return that no repeat of the other note confirms
    return _cut(chain, twelve), _cut(chain, end)


def _cut(chain: Chain, end: int) -> Chain:
    """A statement's chain, from its first note (position 0), cut after link ``end - 1``."""
    if end == len(chain.evs):
        return chain
    costs = chain.costs[:end]
    return Chain(chain.form, chain.mode, chain.start, 0, chain.evs[:end], chain.poss[:end], chain.kinds[:end],
                 costs, sum(1.0 - c for c in costs), 12, 0)


def take_obvious_statements(a: Assignment) -> Assignment:
    """Accept, in time order, statements no other reading can compete with: twelve successive
    notes of one voice (chords, repeated notes and two-note tremolos allowed) spelling exactly
    one form, up to its position 11 (what follows, its tail, waits: ``a.tails``, until the
    statements taken best-first have begun on what they begin on)."""
    ix, claims = a.ix, a.claims
    pending: set[int] = set()  # the notes of the tails read so far
    for i in range(ix.n):
        if claims.owner[i] != FREE:
            continue
        found = []
        v = ix.voice[i]
        near = ix.sv_mask[ix.sl[i] * ix.vkey + v]
        slices = ix.voice_sl[v]
        repeated = 0
        if ix.vrank[i] + 1 < len(slices):
            after = ix.sv_mask[slices[ix.vrank[i] + 1] * ix.vkey + v]
            near |= after
            repeated = after >> ix.pc[i] & 1  # the note struck again: the second note may come later
        for form in a.starts[ix.pc[i]]:
            if not repeated and not near >> a.forms[form][1] & 1:
                continue  # the voice does not go on to the form's second note
            chain = build_chain(ix, form, a.forms[form], i, 0, VOICE_MODE, claims)
            whole = None if chain is None or chain.distinct != 12 else _whole(ix, chain)
            if whole is not None:
                found.append(whole)
        if len(found) == 1:
            statement, with_tail = found[0]
            if _opens_again(ix, i, statement, pending):
                # a tremolo the statement before may end with, going on as this one's opening: of
                # two readings alike, the statement begins on the later pair (``select``'s rule)
                continue
            if with_tail is not statement:
                a.tails[len(a.found)] = with_tail
                pending.update(with_tail.evs[len(statement.evs):])
            accept(a, statement)
    return a


def _opens_again(ix: EventIndex, i: int, statement: Chain, pending: set[int]) -> bool:
    """Is the opening pair of a statement read from ``i`` struck again later in its opening, where
    the earlier notes may end the statement before? When ``i`` is in an obvious statement's tail
    (``pending``): any return to position 0. When the voice sounded before ``i``: a return after the
    second note struck twice in a row (``x y y … x y``: the repeated ``y`` ends the statement
    before, this one opens on the later ``x y``); a plain tremolo on the opening pair is this
    statement's own."""
    kinds, poss = statement.kinds, statement.poss
    if i in pending:
        return any(p == 0 and k == OSC for p, k in zip(poss, kinds, strict=True))
    doubled = False
    for k in range(2, len(kinds) if ix.vrank[i] else 0):
        if kinds[k] == NEW:
            break
        if kinds[k] == REP and poss[k] == 1 and poss[k - 1] == 1:
            doubled = True
        elif doubled and kinds[k] == OSC and poss[k] == 0:
            return True
    return False


def give_obvious_statements_their_tails(a: Assignment) -> Assignment:
    """Give each obvious statement the repeats and tremolo returns after its position 11 that no
    other statement took (up to the first one taken: a statement that begins there keeps its
    opening)."""
    claims = a.claims
    for index, chain in a.tails.items():
        tail = _tail(a, index, chain)
        start = end = len(chain.evs) - len(tail)
        while end < len(chain.evs) and claims.owner[chain.evs[end]] == FREE:
            end += 1
        if end < len(chain.evs) and ends_trill(chain, end) and claims.repeat_available(chain.evs[end], chain.poss[end]):
            end += 1  # a tremolo on the last pair ends on the next statement's first note (elided)
        while end > start and chain.kinds[end - 1] == OSC:
            end -= 1
        if end > start:
            release(a, index)
            accept(a, _cut(chain, end), index)
    a.tails.clear()
    return a


def _tail(a: Assignment, index: int, chain: Chain) -> list[int]:
    """The notes of ``chain`` (``a.tails[index]``) after those of obvious statement ``index``."""
    statement = a.found[index].chain
    assert statement is not None  # (an accepted statement keeps its chain)
    return chain.evs[len(statement.evs):]


def take_statements_best_first(a: Assignment) -> Assignment:
    """Statements from their first notes (or from a note ending an accepted one), best-first.

    A statement that begins on notes another statement ends (an elision) takes at most ELIDE of
    them before its first free note, each link reaching at most HORIZON slices: a note with no
    free note that near after it begins no statement, and is not tried (the repeats after an
    obvious statement, its tail, count as its: a statement may begin on them, not run into them).
    """
    ix = a.ix
    owner = a.claims.owner
    tails = {e for index, chain in a.tails.items() for e in _tail(a, index, chain)}
    free_before = [0] * (ix.sl[-1] + 2 if ix.n else 1)  # slice → free notes in earlier slices
    for i in range(ix.n):
        if owner[i] == FREE and i not in tails:
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
