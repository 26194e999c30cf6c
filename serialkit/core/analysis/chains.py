"""Chain search: follow one row form forward through time-ordered events, scoring each link.

A chain starts at one event as some order position of a form and repeatedly takes the event that
best continues it: the next position (or one or two further when notes are missing), a repeated
note, or the return note of a two-note tremolo. Simultaneities are unordered sets, so a chord that
holds adjacent positions is read in any vertical order. Two search modes score locality
differently — *voice* mode prefers the next note of the same voice (rows within one voice), *time*
mode prefers the nearest note in any voice (rows passed between instruments) — and the better chain
wins. Passing a row to a voice the statement has not used costs extra, and so (once learnt from a
first reading, ``EventIndex.strange``) does a pass between voices that never pass rows to each
other. A link waiting far longer than the chain's own pace ends it (``PACE``: a statement the music
cuts off does not take its end from later music). A chain is trimmed to its best-scoring stretch,
so far-fetched links at either end fall off.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from serialkit.core.analysis.index import EventIndex

# Final: the compiled build reads these as constants, not from the module's namespace at each use.
NEW: Final = 0
REP: Final = 1
OSC: Final = 2
VOICE_MODE: Final = 0
TIME_MODE: Final = 1
MAX_SKIP: Final = 2  # at most this many missing positions between two found ones
HORIZON: Final = 24  # slices ahead that a link may reach
MAX_LINK: Final = 1.6  # a link dearer than this ends the chain
ELIDE: Final = 3  # up to this many notes may end one statement and begin the next
S_DEL: Final = 1.0  # a missing position with nothing sounding in its place
S_SUB: Final = 0.45  # a missing position where another note stands in its place (a wrong note)
LEAVE: Final = 0.3  # per note of a chord left behind when the chain moves on
REPEAT: Final = 0.3  # a repeated note explains a note but proves less than a new position
CHORD: Final = 0.08  # bonus per following position that sounds in the candidate's chord
NEW_VOICE: Final = 0.25  # a voice the statement has not used yet (statements keep to their instruments)
FREE: Final = -1
ABORT_AFTER: Final = 4  # a chain whose first links cost more than ABORT_COST is not a statement start
ABORT_COST: Final = 1.5
PACE: Final = 8  # a link waiting more than PACE times the chain's mean wait so far ends the chain
PACE_AFTER: Final = 6  # ... once the chain has moved on in time this many times (its pace known)


class Claims:
    """Which accepted statement owns each event, at which position, and a second (elided) owner."""

    __slots__ = ("owner", "pos", "second", "second_pos")

    def __init__(self, n: int) -> None:
        self.owner = [FREE] * n
        self.pos = [0] * n
        self.second = [FREE] * n
        self.second_pos = [0] * n

    def available(self, i: int, position: int, head: bool) -> bool:
        """May a chain take event ``i`` at ``position``? Free events yes; owned ones only as an
        elision (the tail of one statement is the head of the next)."""
        if self.owner[i] == FREE:
            return True
        if self.second[i] != FREE:
            return False
        op = self.pos[i]
        if head and position < ELIDE and op >= 12 - ELIDE:
            return True
        return position >= 12 - ELIDE and op < ELIDE

    def repeat_available(self, i: int, position: int) -> bool:
        """May a chain take event ``i`` as a repeat of ``position``? Free events yes; an owned
        one only as a repeat of the last position that begins the next statement (a tremolo on
        the last two positions whose last note is the next statement's first, elided)."""
        return self.owner[i] == FREE or (position == 11 and self.second[i] == FREE and self.pos[i] < ELIDE)


@dataclass(slots=True)
class Chain:
    """A candidate statement: events, their positions, link kinds and link costs."""

    form: int
    mode: int
    start: int
    start_pos: int
    evs: list[int]
    poss: list[int]
    kinds: list[int]
    costs: list[float]
    score: float = 0.0
    distinct: int = 0
    skips: int = 0

    def positions(self) -> dict[int, int]:
        """Order position → event index (first event holding it)."""
        out: dict[int, int] = {}
        for e, p, k in zip(self.evs, self.poss, self.kinds, strict=True):
            if k == NEW:
                out.setdefault(p, e)
        return out


_SUBST: Final = S_DEL - S_SUB  # what a missing position saves when another note stands in its place
_CHORDS: Final = 2 * CHORD  # the most a link gains from the chord it lands in
_LATE: Final = 12 - ELIDE  # from this position on a statement may end on notes the next one begins with



def clusters(slices: list[int]) -> list[tuple[int, int]]:
    """Spans of ascending ``slices``, those within HORIZON slices of each other together (where
    unexplained notes lie, each span one stretch of trouble)."""
    spans: list[tuple[int, int]] = []
    for s in slices:
        if spans and s - spans[-1][1] <= HORIZON:
            spans[-1] = (spans[-1][0], s)
        else:
            spans.append((s, s))
    return spans


def _first_at(values: list[int], x: int) -> int:
    """``bisect_left(values, x)`` (the first index whose value is at least ``x``), as a plain loop
    the compiled build runs without a call out."""
    lo, hi = 0, len(values)
    while lo < hi:
        mid = (lo + hi) // 2
        if values[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


_Ctx = tuple[list[int], list[int], list[int], "list[list[float]] | None", dict[int, int], int, list[int],
             list[int], list[int], list[list[int]], list[list[int]], list[int]]
"""What each link's search reads (``build_chain`` looks it up once per chain): slice, voice and
voice rank per event, voice-passing costs, chord masks, the key stride, the claims' owner, second
owner and position per event, the events and their slices per pitch class, the held slices."""


def _next_position(ctx: _Ctx, pcs: tuple[int, ...], k: int, last: int, leave: float, head: bool,
                   taken: set[int], used: set[int], voice_mode: bool, reads: list[int]) -> tuple[float, int, int]:
    """The cheapest link from ``last`` (at position ``k``) to a later position: (cost, event or -1,
    position). Up to MAX_SKIP positions may be missing; the first three candidates of each pitch
    class within HORIZON slices are tried, and the first of ``last``'s own voice; a scan ends once
    no later candidate can be cheaper than the best (costs grow with the slices). ``ctx``: the
    index's and claims' columns (``build_chain``); ``reads``: told each note whose claims are read."""
    sl, voice, vrank, strange, sv_mask, vkey, owner, second, opos, by_pc, by_pc_sl, held = ctx
    per_slice, across = (0.02, 0.6) if voice_mode else (0.1, 0.05)  # the least a slice between costs
    cost, best, pos = MAX_LINK, -1, k
    last_sl, last_voice, last_vrank, hold = sl[last], voice[last], vrank[last], held[last]  # hold: see _wait
    reach, free, passing = last_sl + HORIZON + hold, last_sl + 1 + hold, strange[last] if strange is not None else None
    for j in range(k + 1, min(k + 2 + MAX_SKIP, 12)):
        skip = j - k - 1
        if (base := S_DEL * skip) - _SUBST - _CHORDS >= cost:
            break
        floor = (base - _SUBST - (0.35 if voice_mode else 0.0) if skip else 0.0) - _CHORDS + leave
        lst, lsl = by_pc[pcs[j]], by_pc_sl[pcs[j]]
        nxt, nxt2 = (pcs[j + 1] if j < 11 else -1), (pcs[j + 2] if j < 10 else -1)
        early, late, seen, own = head and j < ELIDE, j >= _LATE, 0, False
        for idx in range(_first_at(lsl, last_sl), len(lst)):
            c_sl = lsl[idx]
            if c_sl > reach or c_sl > last_sl and floor + per_slice * (c_sl - free if c_sl > free else 0) - 1e-9 >= cost:
                break  # beyond reach, or every later candidate costs at least the best
            c_voice = voice[c := lst[idx]]
            if seen >= 3 and c_voice != last_voice or c in taken or hold and c_voice != last_voice and c_sl > reach - hold:
                continue  # past the first three, or past a held note: only the chain's own voice
            reads.append(c)
            if owner[c] != FREE and (second[c] != FREE or not (  # an owned note only as an elision
                    early and opos[c] >= _LATE or late and opos[c] < ELIDE)):
                continue
            between, gap = c_sl - last_sl - 1 if c_sl > last_sl else 0, 0
            if c_voice == last_voice:
                between = c_sl - free if c_sl > free else 0  # a wait pays from free on: not a held note's slices
                gap = vrank[c] - last_vrank - 1 if vrank[c] > last_vrank else 0
                c_cost = 0.35 * gap + 0.02 * between if voice_mode else 0.1 * between + 0.15 * gap
            else:
                c_cost = across + 0.1 * between
                if c_voice not in used:
                    c_cost += NEW_VOICE
                if passing is not None:
                    c_cost += passing[c_voice]
            if c_sl != last_sl:
                c_cost += leave
            if nxt >= 0 and sv_mask[c_sl * vkey + c_voice] >> nxt & 1:
                c_cost -= CHORD
                if nxt2 >= 0 and sv_mask[c_sl * vkey + c_voice] >> nxt2 & 1:
                    c_cost -= CHORD
            if skip:
                if gap or (not voice_mode and between):
                    c_cost += base - _SUBST
                    c_cost -= 0.35 if voice_mode else 0.0
                else:
                    c_cost += base
            if c_cost < cost:
                cost, best, pos = c_cost, c, j
            seen, own = seen + 1, own or c_voice == last_voice
            if seen >= 3 and own:
                break
    return cost, best, pos


_Next = tuple[list[int], list[bool], dict[int, int], list[int]]
"""What a repeat link reads (``build_chain`` looks it up once per chain): per event its voice's
next slice and whether a repeat may come then, the first note of each (slice, voice, pitch class)
key, and per event its pitch class."""


def _repeat_link(ix: EventIndex, nctx: _Next, claims: Claims, pcs: tuple[int, ...], k: int, last: int,
                 leave: float, taken: set[int], voice_mode: bool, reads: list[int],
                 best: tuple[float, int, int, int], trill: bool = False) -> tuple[float, int, int, int]:
    """A repeated note or a tremolo's return note (the very next note of ``last``'s voice), if
    cheaper than ``best`` (cost, event, position, kind). ``reads``: see ``_next_position``. A
    note another statement holds is taken only as the last position's repeat that begins the
    next statement, ending a tremolo (``trill``: ``last`` is its return; the last two positions
    alternating, the last note shared, elided)."""
    next_sl, repeat_ok, next_of, pcl = nctx
    nxt, last_sl = next_sl[last], ix.sl[last]
    if nxt < 0 or nxt - last_sl > HORIZON or not repeat_ok[last]:
        return best
    between = nxt - last_sl - 1
    cost = REPEAT + (0.02 * between if voice_mode else 0.1 * between) + leave
    if cost >= best[0]:
        return best
    key = (nxt * ix.vkey + ix.voice[last]) * 12
    for c, pos, kind in ((next_of.get(key + pcs[k], -1), k, REP),  # the same note again
                         (next_of.get(key + pcs[k - 1], -1) if k > 0 and pcl[last] == pcs[k] else -1,
                          k - 1, OSC)):  # the return note of a two-note tremolo
        if c >= 0 and c not in taken:
            reads.append(c)
            if claims.owner[c] == FREE or trill and kind == REP and claims.repeat_available(c, pos):
                return (cost, c, pos, kind)
    return best


def _wait(ix: EventIndex, last: int, best: int) -> int:
    """How long the chain waits from ``last`` for ``best`` (ticks): from its onset, or, a note held
    while the other voices move on (``ix.held``), from its end when its own voice goes on: its own
    voice's next note is reached from there, HORIZON slices past its end, the slices it sounds
    through free (``_next_position``)."""
    onsets, sl = ix.slice_ticks, ix.sl
    if ix.held[last] and ix.voice[best] == ix.voice[last]:
        return max(0, onsets[sl[best]] - ix.held_end[last])
    return onsets[sl[best]] - onsets[sl[last]]


def build_chain(ix: EventIndex, form_index: int, pcs: tuple[int, ...], start: int, start_pos: int, mode: int,
                claims: Claims, abort: bool = True, least: int = 0, reached: list[int] | None = None) -> Chain | None:
    """Follow form ``pcs`` from event ``start`` at ``start_pos``, taking the cheapest link each
    time (``_next_position``, ``_repeat_link``) until none is cheaper than MAX_LINK; then tidy
    and trim the chain. None if it dies at once (or, with ``abort``, its opening is too dear);
    ``SHORT`` if it reached fewer than ``least`` notes (not tidied and trimmed: a caller that
    only wants a chain of so many notes is spared the work). ``reached``: told every note whose
    claims the search read (the search is a function of their claims, the index and the
    voice-passing costs alone)."""
    sl, voice, pcl, sv_count, vkey, owner, held = ix.sl, ix.voice, ix.pc, ix.sv_count, ix.vkey, claims.owner, ix.held
    ctx: _Ctx = (sl, voice, ix.vrank, ix.strange, ix.sv_mask, vkey, owner, claims.second, claims.pos, ix.by_pc,
                 ix.by_pc_sl, held)  # what each link's search reads, looked up once per chain (typed: ``_Ctx``)
    nctx: _Next = (ix.next_sl, ix.repeat_ok, ix.next_of, pcl)
    evs, poss, kinds, costs = [start], [start_pos], [NEW], [0.0]
    taken, used = {start}, {voice[start]}
    taken_sv = {sl[start] * vkey + voice[start]: 1}
    k, last, total, last_kind = start_pos, start, 0.0, NEW
    head = owner[start] != FREE
    reads = reached if reached is not None else []
    reads.append(start)
    voice_mode = mode == VOICE_MODE
    onsets = ix.slice_ticks
    waits, first, plain = 0, onsets[sl[start]], False
    while True:
        last_key = sl[last] * vkey + voice[last]
        leave = LEAVE * (sv_count[last_key] - taken_sv.get(last_key, 0))
        cost, best, pos = _next_position(ctx, pcs, k, last, leave, head, taken, used, voice_mode, reads)
        kind = NEW
        if pcl[last] == pcs[k] or last_kind == OSC:
            cost, best, pos, kind = _repeat_link(ix, nctx, claims, pcs, k, last, leave, taken, voice_mode, reads,
                                                 (cost, best, pos, kind), last_kind == OSC and not plain)
        if best < 0:
            break
        wait = _wait(ix, last, best) if held[last] else onsets[sl[best]] - onsets[sl[last]]
        if kind == NEW and waits >= PACE_AFTER and wait * waits > PACE * (onsets[sl[last]] - first):
            break  # a statement keeps its pace: a far later note belongs to other music
        if wait and kind == NEW:
            waits += 1
        evs.append(best)
        poss.append(pos)
        kinds.append(kind)
        costs.append(cost)
        taken.add(best)
        used.add(voice[best])
        key = sl[best] * vkey + voice[best]
        taken_sv[key] = taken_sv.get(key, 0) + 1
        total += cost
        head = head and owner[best] != FREE
        plain = kind != NEW and (plain or kind == REP and last_kind != OSC)  # see ``ends_trill``
        last, last_kind, k = best, kind, pos if kind == NEW else k
        if abort and len(evs) <= ABORT_AFTER and total > ABORT_COST:
            return None
        if kind != NEW and owner[best] != FREE:
            break  # the next statement's first note, repeating the last position: the chain ends there
    if len(evs) < least:
        return SHORT
    chain = Chain(form_index, mode, start, start_pos, evs, poss, kinds, costs)
    _tidy(chain)
    _trim(chain)
    return chain if chain.evs else None


def ends_trill(chain: Chain, k: int) -> bool:
    """Is link ``k`` of ``chain`` a repeat confirming a tremolo's return, with no plain repeat (a
    position struck twice in a row) since the chain's last new position? Only such a repeat may be
    another statement's first note (``build_chain`` keeps the same test as it goes: ``plain``)."""
    kinds, poss = chain.kinds, chain.poss
    if kinds[k] != REP or kinds[k - 1] != OSC:
        return False
    for j in range(k - 1, 0, -1):
        if kinds[j] == NEW:
            break
        if kinds[j] == REP and poss[j] == poss[j - 1]:
            return False
    return True


SHORT = Chain(-1, VOICE_MODE, -1, 0, [], [], [], [])
"""What ``build_chain`` returns for a chain that reached fewer notes than its caller wants."""


def _tidy(chain: Chain) -> None:
    """Drop tremolo returns that are not confirmed and repeats that touch a missing position."""
    if OSC not in chain.kinds and REP not in chain.kinds:
        return  # only new positions: nothing to drop
    keep = [True] * len(chain.evs)
    n = len(chain.evs)
    for i in range(n):
        kind = chain.kinds[i]
        if kind == OSC and (i + 1 >= n or chain.kinds[i + 1] != REP):
            keep[i] = False
        if kind != NEW:
            continue
        skipped = i > 0 and chain.poss[i] - _previous_position(chain, i) > 1
        if not skipped:
            continue
        # a repeat right before or right after a gap in the row reads better as a wrong note
        j = i - 1
        while j > 0 and chain.kinds[j] != NEW:
            keep[j] = False
            j -= 1
        j = i + 1
        while j < n and chain.kinds[j] != NEW:
            keep[j] = False
            j += 1
    if all(keep):
        return
    chain.evs = [v for v, ok in zip(chain.evs, keep, strict=True) if ok]
    chain.poss = [v for v, ok in zip(chain.poss, keep, strict=True) if ok]
    chain.kinds = [v for v, ok in zip(chain.kinds, keep, strict=True) if ok]
    chain.costs = [v for v, ok in zip(chain.costs, keep, strict=True) if ok]


def _previous_position(chain: Chain, i: int) -> int:
    for j in range(i - 1, -1, -1):
        if chain.kinds[j] == NEW:
            return chain.poss[j]
    return chain.poss[i] - 1


def _trim(chain: Chain) -> None:
    """Keep the best-scoring contiguous stretch of the chain (gain 1 - link cost per event)."""
    best = 0.0
    best_span = (0, -1)
    current = 0.0
    begin = 0
    for i, cost in enumerate(chain.costs):
        gain = 1.0 - cost
        if i == 0 or current + gain < 1.0:
            current = 1.0
            begin = i
        else:
            current += gain
        if current > best:
            best = current
            best_span = (begin, i)
    a, b = best_span
    if a or b != len(chain.costs) - 1:
        chain.evs, chain.poss = chain.evs[a : b + 1], chain.poss[a : b + 1]
        chain.kinds, chain.costs = chain.kinds[a : b + 1], chain.costs[a : b + 1]
    if chain.costs:
        chain.costs[0] = 0.0
    while chain.kinds and chain.kinds[0] != NEW:
        chain.evs.pop(0)
        chain.poss.pop(0)
        chain.kinds.pop(0)
        chain.costs.pop(0)
    chain.score = sum(1.0 - c for c in chain.costs)
    news = [p for p, k in zip(chain.poss, chain.kinds, strict=True) if k == NEW]
    chain.distinct = len(news)
    chain.skips = (news[-1] - news[0] + 1 - len(news)) if news else 0


# ---- a compiled build (serialkit.core.native) stops here ----
from serialkit.core import native as _native  # noqa: E402

NATIVE = _native.load(__name__, globals())
"""Whether the compiled build of this module runs (``serialkit.core.native``)."""
