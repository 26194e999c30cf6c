"""Single notes after the statements are chosen: each unexplained note is placed where it fills a
gap, repeats its neighbour, doubles a note, or frees a note another statement is missing; then
repeats and shared notes are re-read as the positions they are, and notes that fit two statements
are recorded with both readings."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator

from serialkit.core.analysis.chains import ELIDE, HORIZON, clusters
from serialkit.core.analysis.exchange import _exchange
from serialkit.core.analysis.fits import NearStatements, _fits
from serialkit.core.analysis.index import EventIndex
from serialkit.core.analysis.order import _crossed, _untangle
from serialkit.core.analysis.pivots import lead_in
from serialkit.core.analysis.state import Assignment, Found, Owners, owners_of


def _fill_gap(a: Assignment, owners: Owners, u: int, ambiguous: dict[int, list[tuple[int, int]]],
              near: NearStatements | None = None) -> bool:
    pc = a.ix.pc[u]
    options: list[tuple[int, int, int]] = []
    for s in _near(a, u, near):  # (``_fits`` is None for the others)
        f = a.found[s]
        p = a.position_in[f.form][pc]
        if p in f.slots:
            continue
        distance = _fits(a, f, p, u, owners)
        if distance is not None:
            options.append((distance, s, p))
    if not options:
        return False
    options.sort()
    _, s, p = options[0]
    a.found[s].slots[p] = u
    owners[u] = [(s, p)]
    if len(options) > 1:
        ambiguous[u] = [(s2, p2) for _, s2, p2 in options]
    return True


def _repeat(a: Assignment, owners: Owners, u: int) -> bool:
    """``u`` repeats the note just before it in its voice, inside a statement with no gap there."""
    ix = a.ix
    v, rank = ix.voice[u], ix.vrank[u]
    for i in range(u - 1, max(-1, u - 4 * HORIZON), -1):
        if ix.voice[i] != v:
            continue
        if ix.vrank[i] < rank - 1:
            break
        if ix.vrank[i] != rank - 1 or ix.pc[i] != ix.pc[u] or i not in owners:
            continue
        if not ix.repeat_gap_ok(i, u):
            return False
        s, p = owners[i][-1]
        f = a.found[s]
        if ((p < 11 and p + 1 not in f.slots) or (p > 0 and p - 1 not in f.slots)) \
                and not _same_label_next(a, owners, u, f.form, p):
            return False
        f.repeats.append((u, p))
        owners[u] = [(s, p)]
        return True
    return False


def _same_label_next(a: Assignment, owners: Owners, u: int, form: int, p: int) -> bool:
    """Is the next note in ``u``'s voice a note of its pitch class holding position ``p`` of a
    statement of ``form`` (``x u x`` where both ``x`` are that position: one statement read as two
    pieces meeting at ``p``, ``u`` repeats it between them)?"""
    ix = a.ix
    v, rank = ix.voice[u], ix.vrank[u]
    for j in range(u + 1, min(ix.n, u + 4 * HORIZON)):
        if ix.voice[j] != v:
            continue
        if ix.vrank[j] > rank + 1:
            return False
        if ix.vrank[j] != rank + 1 or ix.pc[j] != ix.pc[u] or j not in owners:
            continue
        if not ix.repeat_gap_ok(u, j):
            return False
        return any(a.found[t].form == form and q == p for t, q in owners[j])
    return False


def _doubling(a: Assignment, owners: Owners, u: int) -> bool:
    """``u`` doubles (at the octave or unison) a labelled note of its own voice sounding at the
    same moment: it takes that note's label."""
    ix = a.ix
    for step in (-1, 1):
        i = u + step
        while 0 <= i < ix.n and ix.sl[i] == ix.sl[u]:
            if ix.voice[i] == ix.voice[u] and ix.pc[i] == ix.pc[u] and i in owners:
                s, p = owners[i][0]
                a.found[s].repeats.append((u, p))
                owners[u] = [(s, p)]
                return True
            i += step
    return False


def _near(a: Assignment, u: int, near: NearStatements | None) -> Iterable[int]:
    """The statements note ``u`` may fit (``NearStatements``), in their order; all without ``near``."""
    return range(len(a.found)) if near is None else near.at(a.ix.sl[u])


def _holding_pc(a: Assignment, u: int, near: NearStatements | None) -> Iterator[tuple[int, Found, int, int]]:
    """Each statement near ``u`` (``_near``) that holds the position of ``u``'s pitch class: the
    statement, its ``Found``, the position and the note holding it (what the trades exchange)."""
    pc = a.ix.pc[u]
    for s in _near(a, u, near):
        f = a.found[s]
        p = a.position_in[f.form][pc]
        x = f.slots.get(p)
        if x is not None:
            yield s, f, p, x


def _trade(a: Assignment, owners: Owners, u: int, near: NearStatements | None = None) -> bool:
    """``u`` takes the place of a note ``x`` of the same pitch class that another statement
    needs, or that two statements share (an elision that was really two notes). ``x`` may sound
    between ``u`` and the rest of the statement when another statement takes it (a statement
    ending on another stream's note, its own sounding a little later)."""
    pc = a.ix.pc[u]
    for s, f, p, x in _holding_pc(a, u, near):  # (``u`` fits no other: ``fits`` and ``moving`` ask ``_fits``)
        if len(owners.get(x, ())) == 0:
            continue
        shared = len(owners[x]) > 1 and (_between(a, f, p, x, u) or not _aligned(a, owners[x]))
        del f.slots[p]
        fits = _fits(a, f, p, u, owners if shared else None)  # a shared note: only free notes are nearer
        moving = fits is None and len(owners[x]) == 1 and _fits(a, f, p, u, owners) is not None
        f.slots[p] = x
        if fits is None and not moving:
            continue  # (``moving``: only held notes are nearer — ``x`` itself, if it can go elsewhere)
        if len(owners[x]) > 1:
            f.slots[p] = u
            owners[x] = [o for o in owners[x] if o[0] != s]
            owners[u] = [(s, p)]
            return True
        for t in _near(a, x, near):
            g = a.found[t]
            if t == s:
                continue
            q = a.position_in[g.form][pc]
            if q in g.slots or _fits(a, g, q, x) is None:
                continue
            f.slots[p] = u
            g.slots[q] = x
            owners[u] = [(s, p)]
            owners[x] = [(t, q)]
            return True
    return False


def _aligned(a: Assignment, held: list[tuple[int, int]]) -> bool:
    """Is a note two statements hold an elision: one's last notes are the other's first, in order
    (ending at position p, opening at q: the ending statement's positions from p - q on are the
    opening one's from 0)? A note held at the end of one and inside the opening of another that
    does not begin with the first's notes is two notes' worth of pitch class, shared by mistake."""
    if len(held) != 2:
        return True
    (s, p), (t, q) = sorted(held, key=lambda o: -o[1])
    f, g = a.found[s].slots, a.found[t].slots
    return all(f.get(p - q + r) == g.get(r) for r in range(q) if r in g and p - q + r in f)


def _between(a: Assignment, f: Found, p: int, x: int, u: int) -> bool:
    """Does ``u`` sound between ``x`` (at position ``p`` of ``f``) and the rest of ``f``: nearer
    the statement than the note it would take over?"""
    sl = a.ix.sl
    others = [sl[e] for q, e in f.slots.items() if q != p]
    if not others:
        return False
    if p > max(q for q in f.slots if q != p):
        return max(others) <= sl[u] <= sl[x]
    if p < min(q for q in f.slots if q != p):
        return sl[x] <= sl[u] <= min(others)
    return False


def _trade_repeat(a: Assignment, owners: Owners, u: int, near: NearStatements | None = None) -> bool:
    """``a a | b a``: a statement took a repeat of another statement's note ``a`` as its own
    position, leaving the later ``a`` unexplained. The later ``a`` (``u``) holds the position and
    the repeats go back to the note they repeat."""
    ix = a.ix
    pc = ix.pc[u]
    for s, f, p, x in _holding_pc(a, u, near):  # (the trade asks ``_fits`` of ``u``)
        if x >= u or len(owners.get(x, ())) != 1:
            continue
        before = _previous_in_voice(ix, x)
        if before is None or ix.pc[before] != pc or not owners.get(before) or not ix.repeat_gap_ok(before, x):
            continue
        t, q = owners[before][0]
        if t == s:
            continue
        del f.slots[p]
        if _fits(a, f, p, u) is None:
            f.slots[p] = x
            continue
        f.slots[p] = u
        moved = [x] + [r for r, rp in f.repeats if rp == p and r < u]
        f.repeats[:] = [(r, rp) for r, rp in f.repeats if not (rp == p and r < u)]
        for r in moved:
            a.found[t].repeats.append((r, q))
            owners[r] = [(t, q)]
        owners[u] = [(s, p)]
        return True
    return _trade_restruck(a, owners, u, near)


def _trade_restruck(a: Assignment, owners: Owners, u: int, near: NearStatements | None = None) -> bool:
    """``a a`` struck again at once in one voice, the first ``a`` (``x``) taken by a statement
    that has ``u`` of its pitch class unexplained beside its other notes, the second (``y``)
    holding the position in another statement: the first strike is the other statement's note
    and the second its repeat (``_trade_repeat`` the other way round), so ``u`` holds the
    position."""
    ix = a.ix
    pc = ix.pc[u]
    for s, f, p, x in _holding_pc(a, u, near):  # (the trade asks ``_fits`` of ``u``)
        if owners.get(x) != [(s, p)] or ix.next_sl[x] < 0 or not ix.repeat_ok[x]:
            continue
        y = ix.next_of.get((ix.next_sl[x] * ix.vkey + ix.voice[x]) * 12 + pc, -1)
        held = owners.get(y, ()) if y >= 0 else ()
        if len(held) != 1 or held[0][0] == s:
            continue
        t, q = held[0]
        g = a.found[t]
        if g.slots.get(q) != y:
            continue
        del f.slots[p], g.slots[q]
        if _fits(a, f, p, u) is None or _fits(a, g, q, x) is None:
            f.slots[p], g.slots[q] = x, y
            continue
        f.slots[p], g.slots[q] = u, x
        g.repeats.append((y, q))
        owners[u], owners[x], owners[y] = [(s, p)], [(t, q)], [(t, q)]
        return True
    return False


def _previous_in_voice(ix: EventIndex, x: int) -> int | None:
    """The note at the onset just before ``x``'s in ``x``'s voice (the last one of that onset)."""
    v, rank = ix.voice[x], ix.vrank[x]
    for i in range(x - 1, max(-1, x - 4 * HORIZON), -1):
        if ix.voice[i] == v:
            if ix.vrank[i] == rank - 1:
                return i
            if ix.vrank[i] < rank - 1:
                return None
    return None


def _release_repeats(a: Assignment, owners: Owners) -> None:
    """A note read as a repeat that another statement is missing belongs to that statement
    (``x y | x y`` is two statements, not a tremolo). Repeated until nothing moves: a statement
    that took the later repeat may now reach back to the earlier one (a note of the pitch class
    between them that holds another statement's position is no nearer candidate for its
    opening)."""
    holding = _holding(a)
    near = NearStatements(a)
    for _ in range(3):
        moved = False
        moves = sorted((e, s, p) for s, f in enumerate(a.found) for e, p in f.repeats)
        for e, s, p in moves:
            pc = a.ix.pc[e]
            for t in near.at(a.ix.sl[e]):
                g = a.found[t]
                q = a.position_in[g.form][pc]
                if t == s or q in g.slots or not g.slots:
                    continue
                if _fits(a, g, q, e, holding if q < min(g.slots) else None) is None:
                    continue
                a.found[s].repeats.remove((e, p))
                g.slots[q] = e
                near.took(t, e)
                owners[e] = holding[e] = [(t, q)]
                moved = True
                break
        if not moved:
            break


def _holding(a: Assignment) -> Owners:
    """Every note holding a position of a statement (not its repeats)."""
    return {e: [(s, p)] for s, f in enumerate(a.found) for p, e in f.slots.items()}


def _unshare(a: Assignment, owners: Owners) -> None:
    """``x | x`` across a boundary is two notes: a statement that shares ``x`` with the one
    before it and repeats it at once takes the repeat as its own note instead (not a repeat
    after the next position: ``x | x y x y``, a tremolo, keeps the shared note)."""
    for s, f in enumerate(a.found):
        for e, p in sorted(f.repeats):
            x = f.slots.get(p)
            if x is None or len(owners.get(x, ())) < 2 or (e, p) not in f.repeats or not f.at_once(p, e):
                continue
            f.repeats.remove((e, p))
            f.slots[p] = e
            for t, g in enumerate(a.found):
                if t != s:
                    g.repeats[:] = [(r, q) for r, q in g.repeats if r != e]
            owners[x] = [o for o in owners[x] if o[0] != s]
            owners[e] = [(s, p)]


def _shift_slots(a: Assignment, owners: Owners) -> None:
    """``a x a a b`` where ``x`` holds b's position too early: the two unexplained ``a`` after it
    repeat the previous note, so the later ``b`` holds the position and ``x`` is the wrong note."""
    ix = a.ix
    for s, f in enumerate(a.found):
        for p in sorted(f.slots):
            x = f.slots[p]
            if p == 0 or len(owners.get(x, ())) != 1:
                continue
            after = f.slots.get(p + 1)
            limit = ix.sl[after] if after is not None else ix.sl[x] + HORIZON
            between: list[int] = []
            later = -1
            i = x + 1
            while i < ix.n and ix.sl[i] <= limit:
                if ix.voice[i] == ix.voice[x]:
                    if i in owners:
                        break
                    if ix.pc[i] == ix.pc[x]:
                        later = i
                        break
                    between.append(i)
                i += 1
            before = a.forms[f.form][p - 1]
            if later < 0 or len(between) < 2 or any(ix.pc[b] != before for b in between):
                continue
            f.slots[p] = later
            owners[later] = [(s, p)]
            del owners[x]
            for b in between:
                f.repeats.append((b, p - 1))
                owners[b] = [(s, p - 1)]


def _alternatives(a: Assignment, owners: Owners, ambiguous: dict[int, list[tuple[int, int]]]) -> None:
    """A note one statement holds that would also fill a gap in another statement (or extend it
    at an end) fits two statements: record both readings, the chosen one first."""
    ix = a.ix
    for t, g in enumerate(a.found):
        if not g.slots or len(g.slots) == 12:
            continue
        lo = min(ix.sl[e] for e in g.slots.values()) - HORIZON
        hi = max(ix.sl[e] for e in g.slots.values()) + HORIZON
        for q in range(12):
            if q in g.slots:
                continue
            pc = a.forms[g.form][q]
            lst, lsl = ix.by_pc[pc], ix.by_pc_sl[pc]
            for idx in range(bisect_left(lsl, lo), bisect_right(lsl, hi)):
                e = lst[idx]
                held = owners.get(e)
                if not held or e in ambiguous or any(s == t for s, _ in held):
                    continue
                if _fits(a, g, q, e) is not None:
                    ambiguous[e] = [held[0], (t, q)]


def index_owners(a: Assignment) -> Assignment:
    """Record every reading of every note (``owners``) for the single-note steps."""
    a.owners = owners_of(a.found)
    return a


def split_shared_repeats(a: Assignment) -> Assignment:
    """``x | x`` across a boundary is two notes (see ``_unshare``)."""
    _unshare(a, a.owners)
    return a


def give_repeats_to_statements_missing_them(a: Assignment) -> Assignment:
    """A repeat that another statement is missing belongs to it (see ``_release_repeats``), and
    a tremolo's first pair ends the statement before it when that one stops one short
    (``_tremolo_after_end``)."""
    _release_repeats(a, a.owners)
    _tremolo_after_end(a, a.owners)
    return a


def _tremolo_after_end(a: Assignment, owners: Owners) -> None:
    """``x x y x y`` in one voice where a statement stops at ``x`` one position short of ``y``
    and the next statement opens ``x y`` read from the first pair, the second pair its tremolo
    returns: the first pair ends the first statement (``x`` its repeat, ``y`` its last position)
    and the next opens on the second pair, keeping its notes in time order."""
    ix = a.ix
    sl, pc, voice = ix.sl, ix.pc, ix.voice
    ending: dict[tuple[int, int], list[int]] = {}  # (voice, pc of the next position) → statements
    for s, f in enumerate(a.found):
        if f.slots and max(f.slots) < 11 and max(f.slots) + 1 not in f.slots:
            last = f.slots[max(f.slots)]
            want = a.forms[f.form][max(f.slots) + 1]
            ending.setdefault((voice[last], want), []).append(s)
    for t, g in enumerate(a.found):
        x0, y0 = g.slots.get(0), g.slots.get(1)
        if x0 is None or y0 is None or voice[x0] != voice[y0] or sl[x0] >= sl[y0]:
            continue
        later = sorted((sl[e], p, e) for e, p in g.repeats if p in (0, 1) and sl[e] > sl[y0])
        x1 = next((e for _, p, e in later if p == 0), None)
        y1 = next((e for _, p, e in later if p == 1 and x1 is not None and sl[e] > sl[x1]), None)
        if x1 is None or y1 is None or 2 in g.slots and sl[g.slots[2]] <= sl[y1]:
            continue
        for s in ending.get((voice[y0], pc[y0]), ()):
            f = a.found[s]
            end = max(f.slots)
            last = f.slots[end]
            if s == t or pc[last] != pc[x0] or ix.vrank[x0] != ix.vrank[last] + 1 or end + 1 in f.slots:
                continue  # the first pair follows the statement's last note at once
            early = [(e, p) for e, p in g.repeats if p == 0 and sl[e] < sl[y0]]
            g.repeats[:] = [(e, p) for e, p in g.repeats if (e, p) not in early and e not in (x1, y1)]
            g.slots[0], g.slots[1] = x1, y1
            f.slots[end + 1] = y0
            f.repeats.extend((e, end) for e, _ in [(x0, 0), *early])
            for e in (x0, *(e for e, _ in early)):
                owners[e] = [(s, end)]
            owners[y0], owners[x1], owners[y1] = [(s, end + 1)], [(t, 0)], [(t, 1)]
            break


def _own_opening(a: Assignment, owners: Owners, u: int) -> bool:
    """``u | x``: a statement begins on ``x``, a note of ``u``'s pitch class it shares with the end
    of another (an elision), and ``u`` sounds shortly before, before the rest of that statement
    and no farther from its next note than the statement's longest link: it begins on ``u``, its
    own note, and ``x`` ends the other alone."""
    ix = a.ix
    pc, sl = ix.pc[u], ix.sl
    lst, lsl = ix.by_pc[pc], ix.by_pc_sl[pc]
    for x in lst[bisect_right(lsl, sl[u]):bisect_right(lsl, sl[u] + HORIZON)]:
        held = owners.get(x, ())
        if len(held) != 2:
            continue
        (s, p), (t, q) = sorted(held, key=lambda o: -o[1])
        f, g = a.found[s], a.found[t]
        if q != 0 or f.slots.get(p) != x or g.slots.get(0) != x or p < 12 - ELIDE or len(g.slots) < 2:
            continue
        at = [sl[g.slots[r]] for r in sorted(g.slots)]
        if at[1] <= sl[u] or at[1] - sl[u] > max((b - c for b, c in zip(at[2:], at[1:], strict=False)), default=0):
            continue  # ``u`` sounds before the rest, no farther from it than the statement's longest link
        g.slots[0] = u
        owners[x] = [(s, p)]
        owners[u] = [(t, 0)]
        return True
    return False


def _place(a: Assignment, owners: Owners, u: int, near: NearStatements | None = None) -> bool:
    """One unexplained note placed, if any of the ways fits (``near``: the statements near each
    note, as they were when the last note was placed)."""
    return (
        _fill_gap(a, owners, u, a.fits_two, near)
        or _repeat(a, owners, u)
        or lead_in(a, owners, u)
        or _doubling(a, owners, u)
        or _trade(a, owners, u, near)
        or _exchange(a, owners, u)
        or _trade_repeat(a, owners, u, near)
        or _own_opening(a, owners, u)
    )


def place_unexplained_notes(a: Assignment) -> Assignment:
    """Give each unexplained note a place — a gap it fills, a repeat of its neighbour, a lead-in to
    its own position, a doubling, or a trade with a note another statement needs — in up to three
    rounds, until nothing changes. A statement that grew may then reach a repeat another holds
    (``_reach_repeats``), and the notes are placed once more."""
    owners = a.owners
    ends = {t: (min(g.slots), max(g.slots)) for t, g in enumerate(a.found) if g.slots}
    for again in range(2):
        placed = False
        for _ in range(3):
            changed = False
            near = NearStatements(a)  # asked only where a note may fit: the work follows the trouble
            for u in range(a.ix.n):
                if u not in owners and _place(a, owners, u, near):
                    changed = placed = True
                    near = NearStatements(a)  # (a placing moves notes between statements)
            if not changed:
                break
        if again or not placed or not _reach_repeats(a, owners, ends):
            break
    return a


def _reach_repeats(a: Assignment, owners: Owners, ends: dict[int, tuple[int, int]]) -> bool:
    """A statement whose first (or last) position moved while notes were placed may now reach a
    note of its next position out that another statement reads as a repeat (``_release_repeats``
    again, for the statements that grew): it takes it. True if one moved."""
    ix = a.ix
    sl = ix.sl
    holding: Owners | None = None
    moved = False
    for t, g in enumerate(a.found):
        if not g.slots or t not in ends:
            continue
        lo, hi = min(g.slots), max(g.slots)
        for q, edge, grew in ((lo - 1, sl[g.slots[lo]], lo < ends[t][0]), (hi + 1, sl[g.slots[hi]], hi > ends[t][1])):
            if not grew or not 0 <= q < 12:
                continue
            pc = a.forms[g.form][q]
            lsl = ix.by_pc_sl[pc]
            span = (edge - HORIZON, edge) if q < lo else (edge, edge + HORIZON)
            for e in ix.by_pc[pc][bisect_left(lsl, span[0]):bisect_right(lsl, span[1])]:
                held = owners.get(e, ())
                if len(held) != 1 or held[0][0] == t or a.found[held[0][0]].slots.get(held[0][1]) == e:
                    continue  # unexplained, shared, this statement's, or a position: not a repeat
                if holding is None:
                    holding = _holding(a)
                if _fits(a, g, q, e, holding if q < lo else None) is None:
                    continue
                s, p = held[0]
                a.found[s].repeats.remove((e, p))
                g.slots[q] = e
                owners[e] = holding[e] = [(t, q)]
                moved = True
                break
    return moved


def untangle_beside_unexplained(a: Assignment) -> Assignment:
    """A note placed beside the trouble may have crossed a neighbour's end (``y | x y'``: the
    statement opening on ``y``'s pitch class took the earlier ``y``, the ending one the later
    ``y'``, and the opening's first notes ``x`` sound between, unexplained). Where notes stay
    unexplained, the statements sounding within HORIZON slices of them are put in time order
    (as ``put_statements_in_time_order`` does), and if that moved a note the notes are placed
    again. The work is local: only where trouble is."""
    ix, owners, sl = a.ix, a.owners, a.ix.sl
    trouble = clusters([sl[u] for u in range(ix.n) if u not in owners])
    if not trouble:
        return a
    live = sorted((min(sl[e] for e in f.slots.values()), max(sl[e] for e in f.slots.values()), s)
                  for s, f in enumerate(a.found) if f.slots)
    changed = False
    for lo, hi in trouble:
        near = [(b, e, s) for b, e, s in live if b <= hi + HORIZON and e >= lo - HORIZON]
        for i, (_, end, s) in enumerate(near):
            for begin, _, t in near[i + 1 :]:
                if begin > end:
                    break
                if _crossed(a, a.found[s], a.found[t]):
                    before = (dict(a.found[s].slots), dict(a.found[t].slots))
                    _untangle(a, s, t)
                    changed = changed or before != (a.found[s].slots, a.found[t].slots)
    return place_unexplained_notes(a) if changed else a


def move_early_positions_later(a: Assignment) -> Assignment:
    """``a x a a b``: a position taken too early moves to the later note (see ``_shift_slots``)."""
    _shift_slots(a, a.owners)
    return a


def record_notes_fitting_two_statements(a: Assignment) -> Assignment:
    """A note one statement holds that would also fill another's gap: record both readings."""
    _alternatives(a, a.owners, a.fits_two)
    return a
