"""Last readings for notes still unexplained: a tremolo's stray notes and a boundary note two
statements could hold.

A two-note tremolo ``a b a b a`` between adjacent positions of a statement is followed by the
chain only while each return is confirmed; when the note that would confirm the last return is
taken by the next statement (``… b a | b b …``: the next statement begins on the same pitch
class and strikes it again), or the tremolo opens a statement whose first note another statement
holds as a repeat, the tremolo's inner notes stay unexplained. And a statement may lack a
position whose note the next statement holds as its first note while a repeat of that note could
begin it just as well. Each move here is kept only when it explains a note or fills a hole and
leaves no statement with a new hole.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from serialkit.core.analysis.fits import _fits
from serialkit.core.analysis.index import EventIndex
from serialkit.core.analysis.pivots import _neighbour
from serialkit.core.analysis.state import Assignment, Owners


def _holder(a: Assignment, owners: Owners, e: int) -> tuple[int, int] | None:
    """The single (statement, position) holding ``e``; None if unexplained or shared."""
    held = owners.get(e, ())
    return held[0] if len(held) == 1 else None


def _freeable(a: Assignment, owners: Owners, w: int) -> tuple[int, int, int] | None:
    """``w`` holds position q of statement t and a repeat ``r`` of it (struck later) could hold
    that position as well: (t, q, r), so ``w`` can go to another statement without leaving t a
    hole. None otherwise."""
    held = _holder(a, owners, w)
    if held is None:
        return None
    t, q = held
    g = a.found[t]
    if g.slots.get(q) != w:
        return None
    for r, p in sorted(g.repeats):
        if p != q or r < w:
            continue
        del g.slots[q]
        fits = _fits(a, g, q, r, owners)
        g.slots[q] = w
        if fits is not None:
            return t, q, r
    return None


def _hand_over(a: Assignment, owners: Owners, w: int, to: tuple[int, int], slot: bool,
               free: tuple[int, int, int]) -> None:
    """Statement ``free[0]`` lets ``w`` go (its repeat ``free[2]`` holds the position instead);
    ``to`` takes ``w`` as its slot or as a repeat."""
    t, q, r = free
    g = a.found[t]
    g.slots[q] = r
    g.repeats.remove((r, q))
    owners[r] = [(t, q)]
    s, p = to
    if slot:
        a.found[s].slots[p] = w
    else:
        a.found[s].repeats.append((w, p))
    owners[w] = [(s, p)]


def _take(a: Assignment, owners: Owners, s: int, p: int, anchor: int, other: int) -> bool:
    """Statement ``s`` takes ``other`` as a repeat of position ``p`` (or has it already): it is
    unexplained, held by another statement only as a repeat, or a first note that statement can
    replace by its own later repeat, or the last note of another statement that ``s`` begins with
    (shared: an elision, ``other`` before ``anchor``). False when it belongs to another statement."""
    now = owners.get(other, ())
    if any(t == s for t, _ in now):
        return True
    if len(now) > 1:
        return False
    if now:
        t, q = now[0]
        g = a.found[t]
        if g.slots.get(q) == other and q == 11 and p == 0 and other < anchor:
            a.found[s].repeats.append((other, p))  # ``_earliest_first`` makes it the first note
            owners[other] = [*now, (s, p)]
            return True
        if g.slots.get(q) == other:
            free = _freeable(a, owners, other) if other > anchor else None
            if free is None or free[0] == s:
                return False
            _hand_over(a, owners, other, (s, p), False, free)
            return True
        g.repeats.remove((other, q))
    a.found[s].repeats.append((other, p))
    owners[other] = [(s, p)]
    return True


def _earliest_first(a: Assignment, owners: Owners, s: int, positions: tuple[int, ...]) -> None:
    """The earliest note of each position holds it; later ones are its repeats."""
    f = a.found[s]
    for p in positions:
        x = f.slots.get(p)
        if x is None or len(owners.get(x, ())) != 1:
            continue
        first = min((e for e, q in f.repeats if q == p), default=x)
        if first < x:
            f.repeats.remove((first, p))
            f.repeats.append((x, p))
            f.slots[p] = first


def _tremolo(a: Assignment, owners: Owners, u: int) -> bool:
    """``u`` is the inner note of a two-note tremolo ``x u y`` in one voice: ``x`` and ``y``
    strike one pitch class, ``u`` the neighbouring position of the same statement. One of ``x``
    and ``y`` anchors the statement; the statement takes the other (see ``_take``) and ``u`` as
    repeats."""
    ix = a.ix
    x, y = _neighbour(a, u, -1), _neighbour(a, u, 1)
    if x is None or y is None or ix.pc[x] != ix.pc[y] or ix.pc[x] == ix.pc[u]:
        return False
    if not (ix.repeat_gap_ok(x, u) and ix.repeat_gap_ok(u, y)):
        return False
    for anchor, other in ((x, y), (y, x)):
        held = _holder(a, owners, anchor)
        if held is None:
            continue
        s, p = held
        f = a.found[s]
        q = a.position_in[f.form][ix.pc[u]]
        if abs(q - p) != 1 or q not in f.slots or not _take(a, owners, s, p, anchor, other):
            continue
        f.repeats.append((u, q))
        owners[u] = [(s, q)]
        _earliest_first(a, owners, s, (p, q))
        return True
    return False


def _repeat_home(a: Assignment, owners: Owners, x: int, s: int) -> tuple[int, int] | None:
    """A statement other than ``s`` that can hold ``x`` as a repeat in ``x``'s own voice: the
    note before it strikes the same pitch class, or ``x`` is the inner note of a tremolo of two
    adjacent positions. (statement, position) or None."""
    ix = a.ix
    y, z = _neighbour(a, x, -1), _neighbour(a, x, 1)
    if y is None or not ix.repeat_gap_ok(y, x):
        return None
    held = _holder(a, owners, y)
    if held is None or held[0] == s:
        return None
    t, p = held
    g = a.found[t]
    if ix.pc[y] == ix.pc[x]:
        return t, p
    q = a.position_in[g.form][ix.pc[x]]
    if z is None or ix.pc[z] != ix.pc[y] or abs(q - p) != 1 or q not in g.slots:
        return None
    return (t, q) if any(r == t for r, _ in owners.get(z, ())) else None


def _return(a: Assignment, owners: Owners, u: int) -> bool:
    """A statement holds, in another voice, a note ``x`` of ``u``'s pitch class that its own voice
    reads as a repeat, while ``u`` sounds in the statement's voice and fits the position: ``u``
    holds it and ``x`` becomes that repeat."""
    ix = a.ix
    for s, f in enumerate(a.found):
        p = a.position_in[f.form][ix.pc[u]]
        x = f.slots.get(p)
        if x is None or ix.voice[x] == ix.voice[u] or _holder(a, owners, x) != (s, p):
            continue
        near = [f.slots[k] for k in (p - 1, p + 1) if k in f.slots]
        if not any(ix.voice[e] == ix.voice[u] for e in near):
            continue
        del f.slots[p]
        fits = _fits(a, f, p, u, owners)
        f.slots[p] = x
        home = _repeat_home(a, owners, x, s) if fits is not None else None
        if home is None:
            continue
        f.slots[p] = u
        owners[u] = [(s, p)]
        a.found[home[0]].repeats.append((x, home[1]))
        owners[x] = [home]
        return True
    return False


def _tremolo_run(a: Assignment, owners: Owners, u: int) -> bool:
    """``u`` is in a run of unexplained notes in one voice between a note statement ``s`` holds
    (position ``p`` or a repeat of it) and the note holding ``s``'s next position, the run going
    from position ``p - 1`` back to ``p``, every note of it striking one of the two, and ``s``
    already holding returns of a tremolo there (``a b a b | a a a b c``): the run is more of
    that tremolo's returns."""
    ix = a.ix
    run = [u]
    x = _neighbour(a, u, -1)
    while x is not None and x not in owners:
        run.insert(0, x)
        x = _neighbour(a, x, -1)
    y = _neighbour(a, run[-1], 1)
    while y is not None and y not in owners:
        run.append(y)
        y = _neighbour(a, y, 1)
    if x is None or y is None:
        return False
    held, after = _holder(a, owners, x), _holder(a, owners, y)
    if held is None or after is None or held[0] != after[0]:
        return False
    s, p = held
    f = a.found[s]
    if after[1] != p + 1 or f.slots.get(p + 1) != y or p - 1 not in f.slots:
        return False
    b, c = a.forms[f.form][p], a.forms[f.form][p - 1]
    where = {b: p, c: p - 1}
    notes = [x, *run, y]
    if not (ix.pc[x] == ix.pc[run[-1]] == b and ix.pc[run[0]] == c) or any(ix.pc[e] not in where for e in run):
        return False  # ``b | a … b | c``: the run goes on from ``b`` and comes back to it before ``c``
    if not any(q == p - 1 for _, q in f.repeats) or not all(
            ix.repeat_gap_ok(e, w) for e, w in zip(notes, notes[1:], strict=False)):
        return False  # the statement has a tremolo there already, and the run is as close
    for e in run:
        f.repeats.append((e, where[ix.pc[e]]))
        owners[e] = [(s, where[ix.pc[e]])]
    return True


def _fill_hole(a: Assignment, owners: Owners, s: int, p: int) -> bool:
    """Statement ``s`` lacks position ``p`` between two it states; the note of that pitch class
    the next statement holds as a position it can hold by a repeat instead fills the hole."""
    f = a.found[s]
    pc = a.forms[f.form][p]
    for w in a.ix.by_pc[pc]:
        if _fits(a, f, p, w) is None:
            continue
        free = _freeable(a, owners, w)
        if free is not None and free[0] != s:
            _hand_over(a, owners, w, (s, p), True, free)
            return True
    return False


def _tremolo_across_elision(a: Assignment, owners: Owners, s: int, t: int) -> None:
    """Statement ``t`` begins on the note ending statement ``s`` (shared, ``x``) and alternates
    its first two positions after it in the same voice, ``x y x y … x y``, where ``s`` ends on
    the same pair the other way round (``y x``: its positions 10 and 11). The tremolo ends ``s``
    and ``t`` begins on its last pair: ``s`` takes the notes up to the last ``x`` as repeats of
    its positions 10 and 11, that ``x`` is shared (``s``'s repeat, ``t``'s first note) and the
    ``y`` after it is ``t``'s position 1 — the same notes explained, ``t``'s positions in time
    order (read from the first pair, ``t`` would sound its position 0 after its position 1)."""
    ix = a.ix
    f, g = a.found[s], a.found[t]
    x, y = g.slots.get(0), g.slots.get(1)
    if x is None or y is None or f.slots.get(11) != x or 10 not in f.slots or ix.pc[f.slots[10]] != ix.pc[y]:
        return
    run = sorted([y, *(e for e, p in g.repeats if p in (0, 1))])
    line = [x]
    for e in run:  # the alternation, note by note in the voice
        if ix.voice[e] != ix.voice[x] or ix.vrank[e] != ix.vrank[line[-1]] + 1 or ix.pc[e] != ix.pc[line[-2] if len(line) > 1 else y]:
            break
        line.append(e)
    if len(line) < 4 or ix.pc[line[-1]] != ix.pc[y]:
        return  # no return to ``x`` with a ``y`` after it
    *moved, last_x, new_y = line[1:]
    g.repeats[:] = [(e, p) for e, p in g.repeats if e not in line]
    for e in (*moved, last_x):
        p = 10 if ix.pc[e] == ix.pc[y] else 11
        f.repeats.append((e, p))
        owners[e] = [(s, p)]
    g.slots[0], g.slots[1] = last_x, new_y
    owners[x] = [(s, 11)]
    owners[last_x].append((t, 0))
    owners[new_y] = [(t, 1)]


def _adjacent(ix: EventIndex, x: int, y: int) -> bool:
    """Does neither ``x``'s voice nor ``y``'s sound between them (``x`` before ``y``)? One line
    going on from ``x`` to ``y``, or handed over there: an elision joins two statements where one
    ends and the next goes on, not across other notes of either line."""
    lo, hi = ix.sl[x], ix.sl[y]
    for v in {ix.voice[x], ix.voice[y]}:
        slices = ix.voice_sl[v]
        if bisect_right(slices, lo) < bisect_left(slices, hi):
            return False
    return True


def _share_opening(a: Assignment, owners: Owners, t: int) -> None:
    """Statement ``t`` states position 1 but not position 0, and a note of position 0's pitch
    class ends another statement just before it (its position 11, shared with no one): that note
    begins ``t`` as well (an elision; the statement handed to another instrument on the shared
    note, which stays in the first one's voice), where neither voice sounds between the two
    (``_adjacent``). Of two such notes, the one whose voice passes rows to ``t``'s as the piece
    does, then the later."""
    g = a.found[t]
    if 0 in g.slots or 1 not in g.slots:
        return
    ix, y = a.ix, g.slots[1]
    best: tuple[float, int] | None = None  # (the pass's cost, minus the note)
    for x in ix.by_pc[a.forms[g.form][0]]:
        held = owners.get(x, ())
        if len(held) != 1 or held[0][1] != 11 or held[0][0] == t or a.found[held[0][0]].slots.get(11) != x:
            continue
        if x >= y or not _adjacent(ix, x, y) or _fits(a, g, 0, x, owners) is None:
            continue
        cost = 0.0 if ix.strange is None else ix.strange[x][ix.voice[y]]
        if best is None or (cost, -x) < best:
            best = (cost, -x)
    if best is not None:
        x = -best[1]
        g.slots[0] = x
        owners[x] = [*owners[x], (t, 0)]


def read_tremolos_and_boundaries(a: Assignment) -> Assignment:
    """A tremolo on two statements' shared pair ends the first (``_tremolo_across_elision``); a
    statement found from its position 1 on begins on the note ending another just before
    (``_share_opening``); unexplained inner notes of a tremolo join its statement (see
    ``_tremolo``, ``_return``, ``_tremolo_run``), and a hole is filled by a note the next statement
    can spare (see ``_fill_hole``), up to three rounds."""
    owners = a.owners
    ends = {f.slots[11]: s for s, f in enumerate(a.found) if 11 in f.slots}
    for t, g in enumerate(a.found):
        s = ends.get(g.slots.get(0, -1))
        if s is not None and s != t:
            _tremolo_across_elision(a, owners, s, t)
    for t in range(len(a.found)):
        _share_opening(a, owners, t)
    for s, f in enumerate(a.found):
        if len(f.slots) < 2:
            continue
        lo, hi = min(f.slots), max(f.slots)
        for p in range(lo + 1, hi):
            if p not in f.slots:
                _fill_hole(a, owners, s, p)
    for _ in range(3):
        changed = False
        for u in range(a.ix.n):
            if u not in owners and (_tremolo(a, owners, u) or _return(a, owners, u)
                                    or _tremolo_run(a, owners, u)):
                changed = True
        if not changed:
            break
    return a
