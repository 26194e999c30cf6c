"""Two statements that took each other's notes of one pitch class: they exchange them, and a note
left unexplained between them fills its gap (a placing step, ``placing._place``); or, with no note
unexplained, when each then keeps its own voice and time order (``give_back_exchanged_notes``)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from serialkit.core.analysis.chains import HORIZON
from serialkit.core.analysis.fits import _fits
from serialkit.core.analysis.state import Assignment, Found, Owners


def _exchange(a: Assignment, owners: Owners, u: int) -> bool:
    """``u`` would fill a statement's gap but for a neighbour ``x`` on the wrong side of it in time,
    whose pitch class another statement holds in a note ``y`` on the right side: the two statements
    took each other's notes of that pitch class (two streams reading one pitch class each, the
    nearer note across the voices taken). They exchange ``x`` and ``y`` when each then fits its
    statement in time order, and ``u`` fills the gap."""
    ix = a.ix
    sl = ix.sl
    for s, f in enumerate(a.found):
        p = a.position_in[f.form][ix.pc[u]]
        if p in f.slots or not f.slots:
            continue
        below = [q for q in f.slots if q < p]
        above = [q for q in f.slots if q > p]
        for q, later in ((max(below, default=-1), True), (min(above, default=12), False)):
            x = f.slots.get(q)  # the neighbour before the gap sounding after u, or after it before
            if x is None or owners.get(x) != [(s, q)] or not (sl[x] > sl[u] if later else sl[x] < sl[u]):
                continue
            for y in _exchanged(a, owners, s, x, u):
                t, r = owners[y][0]
                g = a.found[t]
                f.slots[q], g.slots[r] = y, x
                if _fits(a, f, p, u) is not None and _in_order(a, f) and _in_order(a, g):
                    f.slots[p] = u
                    owners[u], owners[x], owners[y] = [(s, p)], [(t, r)], [(s, q)]
                    return True
                f.slots[q], g.slots[r] = x, y
    return False


def _exchanged(a: Assignment, owners: Owners, s: int, x: int, u: int) -> list[int]:
    """The notes of ``x``'s pitch class within HORIZON slices of ``u`` that another statement
    holds as a position (alone)."""
    ix = a.ix
    pc, sl = ix.pc[x], ix.sl
    lsl = ix.by_pc_sl[pc]
    out = []
    for y in ix.by_pc[pc][bisect_left(lsl, sl[u] - HORIZON):bisect_right(lsl, sl[u] + HORIZON)]:
        held = owners.get(y, ())
        if y != x and len(held) == 1 and held[0][0] != s and a.found[held[0][0]].slots.get(held[0][1]) == y:
            out.append(y)
    return out


def _in_order(a: Assignment, f: Found) -> bool:
    """Are the positions of ``f`` in time order (slices never fall)?"""
    sl = a.ix.sl
    at = [sl[f.slots[q]] for q in sorted(f.slots)]
    return all(b >= c for b, c in zip(at[1:], at, strict=False))


def _stray(a: Assignment, owners: Owners, f: Found, s: int) -> tuple[int, int, int, int] | None:
    """Statement ``s`` (``f``) in one voice but for one note of another voice, repeating none of its
    positions: (its voice, the other voice, the position, the note). Notes it shares with another
    statement (elided) do not count: a statement handed on may begin in the voice that ended the
    one before."""
    ix = a.ix
    own = [(q, e) for q, e in sorted(f.slots.items()) if owners.get(e) == [(s, q)]]
    voices: dict[int, list[tuple[int, int]]] = {}
    for q, e in own:
        voices.setdefault(ix.voice[e], []).append((q, e))
    if len(voices) != 2 or f.repeats:
        return None
    (home, mine), (away, stray) = sorted(voices.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    if len(stray) != 1 or len(mine) < 3:
        return None
    return home, away, stray[0][0], stray[0][1]


def give_back_exchanged_notes(a: Assignment) -> Assignment:
    """Two statements, each in one voice but for one note of the other's voice of one pitch class
    (two streams sounding that pitch class near one another, each taking the other's note):
    they exchange the two notes when each then keeps its own voice and its positions in time
    order. Where that would put one of them out of order, the crossing stays (a swap of two notes
    of a voice, written in each other's place, reads that way: ``Analysis.exchanges`` reports it)."""
    ix, owners = a.ix, a.owners
    strays: dict[tuple[int, int, int], list[tuple[int, int, int]]] = {}
    for s, f in enumerate(a.found):
        found = _stray(a, owners, f, s)
        if found is not None:
            home, away, q, x = found
            strays.setdefault((home, away, ix.pc[x]), []).append((s, q, x))
    for (home, away, pc), ours in sorted(strays.items()):
        for s, q, x in ours:
            for t, r, y in strays.get((away, home, pc), []):
                f, g = a.found[s], a.found[t]
                if s == t or f.slots.get(q) != x or g.slots.get(r) != y or abs(ix.sl[x] - ix.sl[y]) > HORIZON:
                    continue
                f.slots[q], g.slots[r] = y, x
                if _in_order(a, f) and _in_order(a, g):
                    owners[x], owners[y] = [(t, r)], [(s, q)]
                    break
                f.slots[q], g.slots[r] = x, y
    return a
