"""Pivot notes: one statement ends on a pitch class and the next begins on it, struck again.

A note that can begin the next statement is read that way, not as a repeat of the last note
(a repeat is inferred only when no statement explains the note as a new member); only a run of
three or more strikes between the two statements is a true ambiguity.
"""

from __future__ import annotations

from serialkit.core.analysis.chains import HORIZON
from serialkit.core.analysis.state import Assignment, Found, Owners


def prefer_new(a: Assignment, owners: Owners) -> None:
    """A note one statement reads as a repeat and another holds as an order position (``… x | x …``,
    the pivot between two statements) is that position: a repeat is inferred only when no
    statement explains the note as a new member. Not a repeat of a statement's last position on
    the next statement's first note when that statement strikes the note again at once
    (``x | x``, two notes: ``placing._unshare`` gives the next statement the second)."""
    for s, f in enumerate(a.found):
        for e, p in list(f.repeats):
            readings = [(t, q) for t, q in _slot_readings(a, owners, e) if t != s and q is not None]
            if readings and not (p == 11 and readings == [(readings[0][0], 0)]
                                 and _struck_again(a.found[readings[0][0]], e)):
                f.repeats.remove((e, p))
                owners[e] = [o for o in owners[e] if o != (s, p)]


def _struck_again(f: Found, e: int) -> bool:
    """Does the statement whose first note is ``e`` repeat it before its next position sounds?"""
    return any(p == 0 and r > e and f.at_once(0, r) for r, p in f.repeats)


def _slot_readings(a: Assignment, owners: Owners, e: int) -> list[tuple[int, int | None]]:
    """Each (statement, position) reading of ``e``; position None where it is only a repeat."""
    return [(t, q if a.found[t].slots.get(q) == e else None) for t, q in owners.get(e, ())]


def lead_in(a: Assignment, owners: Owners, u: int) -> bool:
    """``u`` is struck just before the note that holds its position (``x x`` where the second
    ``x`` was read as the position): ``u`` holds it and the second becomes its repeat."""
    w = _neighbour(a, u, 1)
    if w is None or a.ix.pc[w] != a.ix.pc[u] or not a.ix.repeat_gap_ok(u, w):
        return False
    held = owners.get(w, ())
    if len(held) != 1:
        return False
    s, p = held[0]
    f = a.found[s]
    if f.slots.get(p) != w or (p < 11 and p + 1 not in f.slots) or (p > 0 and p - 1 not in f.slots):
        return False
    sl = a.ix.sl
    if p > 0 and sl[f.slots[p - 1]] > sl[u]:
        return False
    f.slots[p] = u
    f.repeats.append((w, p))
    owners[u] = [(s, p)]
    return True


def uncross(a: Assignment, owners: Owners) -> None:
    """In a run of one pitch class, the statement that ends on it takes the earlier note and the
    one that begins on it the later (not the other way round, crossing in one voice)."""
    for t, g in enumerate(a.found):
        if not g.slots:
            continue
        q = min(g.slots)
        y = g.slots[q]
        run = _run(a, y)
        for x in run[run.index(y) + 1 :]:
            ends = [(s, p) for s, p in owners.get(x, ()) if s != t and a.found[s].slots.get(p) == x
                    and p == max(a.found[s].slots)]
            if not ends or len(owners.get(y, ())) != 1:
                continue
            s, p = ends[0]
            f = a.found[s]
            sl = a.ix.sl
            before = max((sl[e] for r, e in f.slots.items() if r != p), default=-1)
            after = min((sl[e] for r, e in g.slots.items() if r != q), default=a.ix.n)
            if not (before <= sl[y] and sl[x] <= after):
                continue
            f.slots[p], g.slots[q] = y, x
            owners[y], owners[x] = [(s, p)], [(t, q)]
            break


def pivot_alternatives(a: Assignment, owners: Owners) -> dict[int, tuple[int, int]]:
    """Notes inside a pivot run ``x x x`` (one statement ends on the pitch class, the next begins
    on it, three or more strikes between them): each may repeat the end of the first statement or
    belong to the start of the second. Event → the reading not chosen (statement, position)."""
    out: dict[int, tuple[int, int]] = {}
    for t, g in enumerate(a.found):
        if not g.slots:
            continue
        q = min(g.slots)
        run = _run(a, g.slots[q])
        if len(run) < 3:
            continue
        ends = [(s, p) for s, p in owners.get(run[0], ()) if s != t and a.found[s].slots.get(p) == run[0]
                and p == max(a.found[s].slots)]
        if not ends:
            continue
        s, p = ends[0]
        for e in run[1:-1]:
            chosen = owners.get(e, [])
            if not chosen:
                continue
            out[e] = (t, q) if chosen[0][0] == s else (s, p)
    return out


def _run(a: Assignment, y: int) -> list[int]:
    """The notes of ``y``'s voice, ``y`` among them, that strike its pitch class again and again
    (each following the one before closely enough to repeat it), in time order."""
    ix = a.ix
    v, pc = ix.voice[y], ix.pc[y]
    run = [y]
    for step in (-1, 1):
        u = y
        while True:
            w = _neighbour(a, u, step)
            if w is None or ix.pc[w] != pc:
                break
            first, second = (w, u) if step < 0 else (u, w)
            if not ix.repeat_gap_ok(first, second) or ix.voice[w] != v:
                break
            run.append(w)
            u = w
    return sorted(run)


def _neighbour(a: Assignment, u: int, step: int) -> int | None:
    """The single note of ``u``'s voice at the onset just before (step -1) or after (+1) it."""
    ix = a.ix
    sl, voice, vrank, n = ix.sl, ix.voice, ix.vrank, ix.n
    v, own, here = voice[u], vrank[u], sl[u]
    rank = own + step
    found = None
    i = u + step
    while 0 <= i < n and abs(sl[i] - here) <= HORIZON:
        if voice[i] == v:
            if vrank[i] == rank:
                if found is not None:
                    return None  # a chord: no plain repeat
                found = i
            elif vrank[i] != own:
                break
        i += step
    return found


def prefer_new_positions(a: Assignment) -> Assignment:
    """A note read both as a repeat and as another statement's position is that position."""
    prefer_new(a, a.owners)
    return a


def uncross_pivot_runs(a: Assignment) -> Assignment:
    """In a run of one pitch class, the ending statement takes the earlier note (see ``uncross``)."""
    uncross(a, a.owners)
    return a


def record_pivot_readings(a: Assignment) -> Assignment:
    """Notes inside a pivot run of three or more strikes: record the reading not chosen."""
    a.pivots = pivot_alternatives(a, a.owners)
    return a
