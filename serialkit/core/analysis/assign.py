"""Global assignment: pick consistent chains that explain the most notes, then mend the edges."""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass, field

from serialkit.core.analysis.chains import (
    ELIDE,
    FREE,
    NEW,
    TIME_MODE,
    VOICE_MODE,
    Chain,
    Claims,
    build_chain,
)
from serialkit.core.analysis.index import EventIndex

MIN_STATEMENT = 7  # distinct positions a statement needs when it starts at its first note
MIN_FRAGMENT = 4  # … and a fragment at the excerpt's edges (cut off by the excerpt)
MIN_INNER = 6  # … and a fragment inside the piece (a statement whose opening is wrong or missing)
EDGE = 12  # slices from either end of the piece that count as its edges
MIN_SCORE = 3.5
PLAIN = 0.3  # the dearest link an obvious statement may have (next note of the same voice)
SURE = 0.95  # a voice-mode chain scoring this share of its length is taken without a time-mode try


@dataclass(slots=True)
class Found:
    """An accepted statement while the assignment is being built."""

    form: int
    slots: dict[int, int]  # position → event index
    repeats: list[tuple[int, int]] = field(default_factory=list)  # (event, position)
    chain: Chain | None = None


class Assigner:
    """Greedy best-first selection over candidate chains with lazy re-evaluation."""

    def __init__(self, ix: EventIndex, forms: list[tuple[int, ...]]) -> None:
        self.ix = ix
        self.forms = forms
        self.claims = Claims(ix.n)
        self.found: list[Found] = []
        self.starts: list[list[int]] = [[] for _ in range(12)]  # pc → forms starting on it
        for f, pcs in enumerate(forms):
            self.starts[pcs[0]].append(f)
        self.position_in = [[pcs.index(p) for p in range(12)] for pcs in forms]
        self.fits_two: dict[int, list[tuple[int, int]]] = {}
        self.pivots: dict[int, tuple[int, int]] = {}  # event → the pivot reading not chosen

    # candidates -------------------------------------------------------------
    def _best(self, form: int, start: int, pos: int) -> Chain | None:
        best = build_chain(self.ix, form, self.forms[form], start, pos, VOICE_MODE, self.claims)
        if best is not None and best.distinct == 12 - pos and best.score >= SURE * (12 - pos):
            return best  # a whole statement at almost no cost: time mode cannot beat it by much
        chain = build_chain(self.ix, form, self.forms[form], start, pos, TIME_MODE, self.claims)
        if chain is not None and (best is None or chain.score > best.score):
            best = chain
        return best

    def _acceptable(self, chain: Chain, minimum: int) -> bool:
        if chain.distinct < minimum or chain.score < MIN_SCORE:
            return False
        if minimum < MIN_INNER and chain.distinct < MIN_INNER:
            sl = self.ix.sl
            last = sl[-1] if sl else 0
            return sl[chain.evs[0]] < EDGE or sl[chain.evs[-1]] > last - EDGE
        return True

    def _still_valid(self, chain: Chain) -> bool:
        head = True
        for e, p, kind in zip(chain.evs, chain.poss, chain.kinds, strict=True):
            if not self.claims.available(e, p, head):
                return False
            if kind != NEW and self.claims.owner[e] != FREE:
                return False
            if self.claims.owner[e] == FREE:
                head = False
        return True

    def select(self, seeds: Iterable[tuple[int, int, int]], minimum: int) -> None:
        """Accept chains best-first from seeds (form, start event, start position)."""
        heap: list[tuple[float, int, Chain]] = []
        counter = 0
        for form, start, pos in seeds:
            chain = self._best(form, start, pos)
            if chain is not None and self._acceptable(chain, minimum):
                heap.append((-chain.score, counter, chain))
                counter += 1
        heapq.heapify(heap)
        while heap:
            _, _, chain = heapq.heappop(heap)
            if not self._still_valid(chain):
                if not self.claims.available(chain.start, chain.start_pos, True):
                    continue
                fresh = self._best(chain.form, chain.start, chain.start_pos)
                if fresh is not None and self._acceptable(fresh, minimum):
                    heapq.heappush(heap, (-fresh.score, counter, fresh))
                    counter += 1
                continue
            self.accept(chain)

    def accept(self, chain: Chain, index: int | None = None) -> None:
        """Record a chain as statement ``index`` (default: a new one) and claim its events."""
        if index is None:
            index = len(self.found)
            self.found.append(Found(chain.form, {}))
        found = Found(chain.form, {}, [], chain)
        self.found[index] = found
        claims = self.claims
        for e, p, kind in zip(chain.evs, chain.poss, chain.kinds, strict=True):
            if kind == NEW and p not in found.slots:
                found.slots[p] = e
            else:
                found.repeats.append((e, p))
            if claims.owner[e] == FREE:
                claims.owner[e] = index
                claims.pos[e] = p
            else:
                claims.second[e] = index
                claims.second_pos[e] = p

    def release(self, index: int) -> None:
        """Give back the events of statement ``index`` (it stays in the list, empty)."""
        claims = self.claims
        found = self.found[index]
        events = list(found.slots.values()) + [e for e, _ in found.repeats]
        for e in events:
            if claims.owner[e] == index:
                claims.owner[e] = claims.second[e]
                claims.pos[e] = claims.second_pos[e]
                claims.second[e] = FREE
            elif claims.second[e] == index:
                claims.second[e] = FREE
        self.found[index] = Found(found.form, {}, [], None)

    def rebuild(self, index: int, chain: Chain) -> Chain | None:
        """The best chain for the same form and start as ``chain``, under the current claims."""
        if not self.claims.available(chain.start, chain.start_pos, True):
            return None
        return self._best(chain.form, chain.start, chain.start_pos)

    def _may_start(self, i: int) -> bool:
        """Can a statement begin at event ``i``: free, or ending an accepted one (elision)?"""
        claims = self.claims
        return claims.owner[i] == FREE or (claims.second[i] == FREE and claims.pos[i] >= 12 - ELIDE)

    def obvious(self) -> None:
        """Accept, in time order, statements no other reading can compete with: twelve
        successive notes of one voice (chords allowed) spelling exactly one form."""
        ix, claims = self.ix, self.claims
        for i in range(ix.n):
            if claims.owner[i] != FREE:
                continue
            found = []
            v = ix.voice[i]
            near = ix.sv_mask[ix.sl[i] * ix.vkey + v]
            slices = ix.voice_sl[v]
            if ix.vrank[i] + 1 < len(slices):
                near |= ix.sv_mask[slices[ix.vrank[i] + 1] * ix.vkey + v]
            for form in self.starts[ix.pc[i]]:
                if not near >> self.forms[form][1] & 1:
                    continue  # the voice does not go on to the form's second note
                chain = build_chain(ix, form, self.forms[form], i, 0, VOICE_MODE, claims)
                if chain is not None and chain.distinct == 12 and len(chain.evs) == 12 and max(chain.costs) <= PLAIN:
                    found.append(chain)
            if len(found) == 1:
                self.accept(found[0])

    # passes -----------------------------------------------------------------
    def run(self) -> None:
        """Whole statements from their first notes, then fragments, then local repairs."""
        self.statements()
        self.finish()

    def statements(self) -> None:
        """Whole statements from their first notes: the obvious ones, then best-first."""
        ix = self.ix
        self.obvious()
        seeds = [(f, i, 0) for i in range(ix.n) if self._may_start(i) for f in self.starts[ix.pc[i]]]
        self.select(seeds, MIN_STATEMENT)

    def finish(self) -> None:
        """Fragments, pairwise re-choice, rescue of unexplained stretches, local repairs."""
        ix = self.ix
        free = [i for i in range(ix.n) if self.claims.owner[i] == FREE]
        seeds = [(f, i, self.position_in[f][ix.pc[i]]) for i in free for f in range(len(self.forms))]
        self.select(seeds, MIN_FRAGMENT)
        from serialkit.core.analysis.refine import refine, rescue

        refine(self)
        rescue(self)
        self.repair()

    def repair(self) -> None:
        """Give each unexplained note a place if it fills a gap, repeats its neighbour, or frees a
        note another statement is missing."""
        from serialkit.core.analysis.mend import mend

        mend(self)
