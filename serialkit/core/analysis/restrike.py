"""A note struck again in another instrument: the last step that gives an unexplained note a place.

A statement handed between instruments may strike a note again in the instrument it moves to:
the second instrument repeats the note the first has just played, as it ends. Such a note is a
repeat of that position, not a wrong note. Where the note could be a wrong note instead — a
statement of its own voice lacks a position there, or it sits inside a statement its own voice is
carrying — it stays unexplained.
"""

from __future__ import annotations

from bisect import bisect_left

from serialkit.core.analysis.chains import HORIZON
from serialkit.core.analysis.pairs import FEW
from serialkit.core.analysis.state import Assignment, Owners


def restrike_in_another_voice(a: Assignment) -> Assignment:
    """Each note still unexplained that strikes again, in another voice, a note a statement has
    just played (``_restruck``) is a repeat of that position — in a reading nearly whole (``FEW``):
    a re-strike is a fine point of a row that fits, not a way for a poor fit to explain more."""
    owners = a.owners
    left = [u for u in range(a.ix.n) if u not in owners]
    if len(left) > FEW * a.ix.n:
        return a
    for u in left:
        _restruck(a, owners, u)
    return a


def _restruck(a: Assignment, owners: Owners, u: int) -> bool:
    """``u`` begins while a note ``x`` of its pitch class in another voice sounds, or as it ends;
    ``x`` holds a position of a statement with no gap beside it, whose next position comes no
    earlier than ``u``: ``u`` repeats it (True). Not where ``u`` may be a wrong note of its own
    voice's music (``_may_be_wrong``)."""
    ix = a.ix
    pc, sl, onset = ix.pc[u], ix.sl, ix.events[u].onset
    lsl = ix.by_pc_sl[pc]
    for i in reversed(ix.by_pc[pc][bisect_left(lsl, sl[u] - HORIZON):bisect_left(lsl, sl[u])]):
        x = ix.events[i]
        if ix.voice[i] == ix.voice[u] or len(owners.get(i, ())) != 1 or not x.onset < onset <= x.onset + x.duration:
            continue
        s, p = owners[i][0]
        f = a.found[s]
        if f.slots.get(p) != i or any(q not in f.slots for q in (p - 1, p + 1) if 0 <= q < 12) \
                or p < 11 and sl[f.slots[p + 1]] < sl[u] or _may_be_wrong(a, owners, u, s):
            continue
        f.repeats.append((u, p))
        owners[u] = [(s, p)]
        return True
    return False


def _may_be_wrong(a: Assignment, owners: Owners, u: int, s: int) -> bool:
    """Could ``u`` be a wrong note of its own voice's music rather than statement ``s`` handed on?
    A statement holding the note before or after ``u`` in its voice lacks a position (``u`` may
    be that note, mistaken), or one statement other than ``s`` holds both (``u`` interrupts it)."""
    ix = a.ix
    v, rank = ix.voice[u], ix.vrank[u]
    before: set[int] = set()
    after: set[int] = set()
    for i in range(max(0, u - 4 * HORIZON), min(ix.n, u + 4 * HORIZON)):
        if ix.voice[i] == v and abs(ix.vrank[i] - rank) == 1:
            (before if ix.vrank[i] < rank else after).update(t for t, _ in owners.get(i, ()))
    return any(len(a.found[t].slots) < 12 for t in before | after) or bool((before & after) - {s})
