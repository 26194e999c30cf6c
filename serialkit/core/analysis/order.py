"""Time order between statements: two statements that hold the same pitch classes at their
boundary (an invariant segment sounding twice, one chord after the other) take the notes in time
order — the ending statement the earlier notes, the beginning one the later."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from serialkit.core.analysis.chains import ELIDE, HORIZON
from serialkit.core.analysis.index import EventIndex
from serialkit.core.analysis.state import Assignment, Found


def _free_twins(a: Assignment, x: int, step: int, bound: int) -> list[int]:
    """The nearest notes of ``x``'s pitch class after it (``step`` 1) or before it (-1), not past
    slice ``bound``, that no statement holds as a position: those of the nearest slice holding one."""
    ix, owners = a.ix, a.owners
    pc = ix.pc[x]
    lst, lsl = ix.by_pc[pc], ix.by_pc_sl[pc]
    idx = bisect_right(lsl, ix.sl[x]) if step > 0 else bisect_left(lsl, ix.sl[x]) - 1
    twins: list[int] = []
    while 0 <= idx < len(lst):
        if (lsl[idx] - bound) * step > 0 or (twins and (lsl[idx] - ix.sl[twins[0]]) * step > 0):
            break
        y = lst[idx]
        if all(a.found[r].slots.get(k) != y for r, k in owners.get(y, ())):
            twins.append(y)
        idx += step
    return twins


def _later_twin(a: Assignment, x: int, t: int, q: int) -> int | None:
    """A later note of ``x``'s pitch class that no statement holds as a position, sounding before
    the rest of statement ``t`` (which begins at position ``q`` on ``x``): the note ``t`` should
    begin on instead of sharing ``x`` — in the voice ``t`` goes on in, if one is."""
    ix, owners = a.ix, a.owners
    rest = sorted((r, e) for r, e in a.found[t].slots.items() if r > q and len(owners.get(e, ())) == 1)
    after = ix.sl[rest[0][1]] if rest else ix.sl[x] + HORIZON  # the rest of ``t``, past shared notes
    twins = _free_twins(a, x, 1, after)
    if not twins:
        return None
    going_on = [y for y in twins if rest and ix.voice[y] == ix.voice[rest[0][1]]]
    return (going_on or twins)[0]


def _earlier_twin(a: Assignment, x: int, s: int, p: int) -> int | None:
    """An earlier note of ``x``'s pitch class that no statement holds as a position, sounding
    after the rest of statement ``s`` (which ends at position ``p`` on ``x``): the note ``s``
    should end on instead of sharing ``x`` — in the voice ``s`` comes from, if one is. Not a
    note of another voice that another statement repeats (its voice's own music, not ``s``'s end)."""
    ix, owners = a.ix, a.owners
    rest = sorted((r, e) for r, e in a.found[s].slots.items() if r < p and len(owners.get(e, ())) == 1)
    if not rest:
        return None
    before = ix.sl[rest[-1][1]]  # the rest of ``s``, before shared notes
    twins = [y for y in _free_twins(a, x, -1, before) if y not in owners or ix.voice[y] == ix.voice[rest[-1][1]]]
    if not twins:
        return None
    coming = [y for y in twins if ix.voice[y] == ix.voice[rest[-1][1]]]
    return (coming or twins)[0]


def _hand_back_repeats(a: Assignment, x: int, s: int, p: int, t: int) -> None:
    """Repeats ``t`` read of its first note that strike ``x`` again in ``x``'s own voice repeat
    the end of ``s`` (the voice that ended ``s`` repeats its note while ``t`` begins elsewhere)."""
    ix = a.ix
    g, f = a.found[t], a.found[s]
    for e, k in list(g.repeats):
        if ix.pc[e] == ix.pc[x] and ix.voice[e] == ix.voice[x] and ix.vrank[e] == ix.vrank[x] + 1:
            g.repeats.remove((e, k))
            f.repeats.append((e, p))
            a.owners[e] = [(s, p)]


def split_shared_chords(a: Assignment) -> Assignment:
    """A note shared by two statements (an elision: it ends one and begins the next) whose pitch
    class sounds again before the second statement goes on is two notes, not one: the second
    statement begins on the later one (a chord of an invariant segment struck twice; a pivot that
    moves to another voice while the first repeats it). When no later one sounds, an earlier free
    note of the pitch class after the rest of the first statement is its end (two chords of the
    same pitch classes, ``x y | x y``: the first statement ends on the first chord's ``y``)."""
    owners = a.owners
    for x in sorted(e for e, held in owners.items() if len(held) == 2):
        if len(owners[x]) != 2:  # an earlier split handed the note back to one statement
            continue
        (s, p), (t, q) = sorted(owners[x], key=lambda o: -o[1])
        f, g = a.found[s], a.found[t]
        if f.slots.get(p) != x or g.slots.get(q) != x or p < q:
            continue
        y = _later_twin(a, x, t, q)
        if y is None:  # the first statement may end on an earlier one instead
            z = _earlier_twin(a, x, s, p)
            if z is not None:
                for r, _ in owners.get(z, ()):
                    a.found[r].repeats[:] = [(e, j) for e, j in a.found[r].repeats if e != z]
                f.slots[p] = z
                owners[x] = [(t, q)]
                owners[z] = [(s, p)]
            continue
        for r, _ in owners.get(y, ()):
            a.found[r].repeats[:] = [(e, j) for e, j in a.found[r].repeats if e != y]
        g.slots[q] = y
        owners[x] = [(s, p)]
        owners[y] = [(t, q)]
        _hand_back_repeats(a, x, s, p, t)
    return a


def _voicing(ix: EventIndex, f: Found, g: Found) -> int:
    """Voices ``f`` and ``g`` use, plus changes of voice between their successive positions."""
    voice = ix.voice
    count = 0
    for h in (f, g):
        held = [voice[e] for _, e in sorted(h.slots.items())]
        count += len(set(held)) + sum(1 for u, w in zip(held, held[1:], strict=False) if u != w)
    return count


def _disorder(ix: EventIndex, f: Found, g: Found) -> tuple[int, int]:
    """(notes out of order inside ``f`` and ``g``, notes of ``f`` sounding after notes of ``g``)."""
    sl = ix.sl
    inside = 0
    for h in (f, g):
        held = [sl[e] for _, e in sorted(h.slots.items())]
        for i, x in enumerate(held):
            inside += sum(1 for o in held[i + 1 :] if o < x)
    later = [sl[e] for e in g.slots.values()]
    crossing = sum(1 for e in f.slots.values() for y in later if sl[e] > y)
    return inside, crossing


def _crossed(a: Assignment, f: Found, g: Found) -> list[tuple[int, int]]:
    """Positions (in ``f``, in ``g``) holding one pitch class where ``f``'s note sounds later."""
    ix, owners = a.ix, a.owners
    sl, pc = ix.sl, ix.pc
    where = {pc[e]: q for q, e in g.slots.items()}
    out = []
    for p, x in f.slots.items():
        q = where.get(pc[x])
        if q is not None:
            y = g.slots[q]
            if sl[x] > sl[y] and len(owners.get(x, ())) == 1 and len(owners.get(y, ())) == 1:
                out.append((p, q))
    return out


def _slices_by_pc(ix: EventIndex, f: Found) -> list[int]:
    """Per pitch class, the slice of ``f``'s note (-1 where it has none)."""
    out = [-1] * 12
    for e in f.slots.values():
        out[ix.pc[e]] = ix.sl[e]
    return out


def _swap(f: Found, g: Found, pairs: list[tuple[int, int]]) -> None:
    for p, q in pairs:
        f.slots[p], g.slots[q] = g.slots[q], f.slots[p]


def _junction(f: Found, g: Found, pairs: list[tuple[int, int]]) -> bool:
    """Is every crossed note at the junction of ``f``'s end and ``g``'s opening, with ``g``'s
    positions before it missing or borrowed from ``f`` (an elision) — and, crossed at ``g``'s
    first position, with ``f`` missing a later position or borrowing it from ``g`` (its end read
    through ``g``'s opening, its own last note left over)? There the order alone decides: the
    ending statement takes the earlier note, whichever voice it is in."""
    mine, theirs = set(f.slots.values()), set(g.slots.values())
    return all(p >= 12 - ELIDE and q < ELIDE and (q > 0 or any(f.slots.get(r, -1) in theirs or r not in f.slots
                                                            for r in range(p + 1, 12)))
               and all(r not in g.slots or g.slots[r] in mine for r in range(q))
               for p, q in pairs)


def _untangle(a: Assignment, s: int, t: int) -> None:
    f, g = a.found[s], a.found[t]
    pairs = _crossed(a, f, g)
    if not pairs:
        return
    voices = _voicing(a.ix, f, g)
    _swap(f, g, pairs)
    if not _junction(f, g, pairs) and _voicing(a.ix, f, g) > voices:
        _swap(f, g, pairs)  # more voices or more changes of voice: back
        return
    _swap(f, g, pairs)
    before = _disorder(a.ix, f, g)
    _swap(f, g, pairs)
    after = _disorder(a.ix, f, g)
    if after[0] > before[0] or after[1] >= before[1]:
        _swap(f, g, pairs)  # no better: back
        return
    for p, q in pairs:
        a.owners[f.slots[p]], a.owners[g.slots[q]] = [(s, p)], [(t, q)]
        _carry_repeats(a, s, p, t, q)
        _carry_repeats(a, t, q, s, p)


def _carry_repeats(a: Assignment, s: int, p: int, t: int, q: int) -> None:
    """Statement ``s``'s repeats of position ``p`` that sound before its note there (swapped for
    a later one) and after statement ``t``'s note at ``q`` (the one ``s`` held before) re-strike
    that note: they go with it, as ``t``'s repeats of ``q``. Left behind, a re-strike would repeat
    a position before it sounds (positions must advance: an ORDER finding on correct music)."""
    f, g = a.found[s], a.found[t]
    sl, claims = a.ix.sl, a.claims
    lo, hi = sl[g.slots[q]], sl[f.slots[p]]
    moving = [(e, r) for e, r in f.repeats if r == p and lo <= sl[e] < hi]
    for e, r in moving:
        f.repeats.remove((e, r))
        g.repeats.append((e, q))
        a.owners[e] = [(t, q) if x == (s, p) else x for x in a.owners.get(e, [])]
        if claims.owner[e] == s and claims.pos[e] == p:
            claims.owner[e], claims.pos[e] = t, q
        elif claims.second[e] == s and claims.second_pos[e] == p:
            claims.second[e], claims.second_pos[e] = t, q


def put_statements_in_time_order(a: Assignment) -> Assignment:
    """Two overlapping statements holding the same pitch classes out of time order — the one that
    begins first holding the later notes (an invariant segment struck twice, read crossed) —
    swap those notes when that leaves no note more out of order inside either statement, no more
    changes of voice, and fewer notes of the earlier statement sounding after notes of the later
    (at a junction, :func:`_junction`, the voices do not count)."""
    ix = a.ix
    sl = ix.sl
    live = [(min(sl[e] for e in f.slots.values()), max(sl[e] for e in f.slots.values()), s)
            for s, f in enumerate(a.found) if f.slots]
    live.sort()
    at = {s: _slices_by_pc(ix, a.found[s]) for _, _, s in live}
    for i, (_, end, s) in enumerate(live):
        mine = at[s]
        for begin, _, t in live[i + 1 :]:
            if begin > end:
                break
            theirs = at[t]
            if any(x > y >= 0 for x, y in zip(mine, theirs, strict=True)):
                _untangle(a, s, t)
                mine, at[t] = _slices_by_pc(ix, a.found[s]), _slices_by_pc(ix, a.found[t])
    return a
