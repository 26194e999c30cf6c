"""The incremental verifier: checks each proposed event against the notes kept so far."""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from serialkit.core.piece import Event, Tag
from serialkit.core.predicates import Limits, note_faults
from serialkit.harness.tasks import Slot, Task

# Problem codes the incremental verifier reports (the gate's codes plus WINDOW: outside the free
# time window of its voice, i.e. overlapping its own neighbours (the gate's MONO) or leaving its
# section (SPAN); GRID and DUR are the gate's own definitions, ``core.predicates.note_faults``).
TIME_CODES = frozenset({"COLL", "CROSS", "WINDOW"})
_INDEXED = True


def use_interval_index(on: bool) -> bool:
    """Switch the verifier's interval index on (default) or off (the linear scan over every kept
    note, which gives the same answers: bench/bench_harness.py times both in one run). Returns the
    previous setting."""
    global _INDEXED
    before, _INDEXED = _INDEXED, on
    return before


@dataclass(frozen=True)
class ProposedNote:
    """A proposed event bound to its scheduled slot, with the rungs that have changed it."""

    id: str
    slot: Slot
    onset: Fraction
    duration: Fraction
    midi: int
    claimed_pc: int | None = None
    claimed: str | None = None
    rungs: tuple[str, ...] = ()
    attempt: int = 1
    calls: tuple[str, ...] = ()
    until: Fraction | None = None

    @property
    def voice(self) -> str:
        """The voice id."""
        return self.slot.voice

    @property
    def end(self) -> Fraction:
        """Onset plus duration."""
        return self.onset + self.duration

    def changed(self, rung: str, **changes: Any) -> ProposedNote:
        """A copy changed by a repair rung (recorded once per rung)."""
        rungs = self.rungs if rung in self.rungs else (*self.rungs, rung)
        return replace(self, rungs=rungs, **changes)


class Trial:
    """An open ``Verifier.trial``: rolled back when it ends, unless ``keep`` was called with a true
    verdict (``kept`` says which)."""

    __slots__ = ("kept", "mark", "order")

    def __init__(self, mark: int) -> None:
        self.mark = mark
        self.kept = False
        self.order: list[str] | None = None  # the kept notes' order before the trial's first removal

    def keep(self, verdict: bool = True) -> bool:
        """Keep the trial's changes if ``verdict`` is true (the default); returns the verdict."""
        self.kept = bool(verdict)
        return self.kept


class Kept:
    """A kept note: its candidate as finally placed. Assigning ``cand`` (a repair moving the note)
    keeps the verifier's interval index up to date."""

    __slots__ = ("_cand", "_owner")

    def __init__(self, cand: ProposedNote, owner: Verifier | None = None) -> None:
        self._cand = cand
        self._owner = owner

    @property
    def cand(self) -> ProposedNote:
        """The note as currently placed."""
        return self._cand

    @cand.setter
    def cand(self, new: ProposedNote) -> None:
        old, self._cand = self._cand, new
        if self._owner is not None:
            self._owner._moved(old, new)

    def event(self) -> Event:
        """The kept note as a piece event carrying its trace tag."""
        c = self._cand
        return Event(
            id=c.id, voice=c.voice, onset=c.onset, duration=c.duration, midi=c.midi,
            section=c.slot.section, tag=Tag(c.slot.form, c.slot.position, c.slot.statement),
            claimed_pc=c.midi % 12,
        )


@dataclass
class Verifier:
    """The kept notes of a run, indexed for the checks a new event needs: by pitch class, by schedule
    order per voice, and by onset per voice (an interval index: the notes of other voices that
    overlap a span are found in O(log n) plus the notes that start in reach of it)."""

    task: Task
    kept: dict[str, Kept] = field(default_factory=dict)
    _by_pc: dict[int, set[str]] = field(default_factory=dict)
    _order: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)
    crossing_ids: set[str] = field(default_factory=set)
    indexed: bool | None = None  # None: the module default (``use_interval_index``)
    _journal: list[tuple[Any, ...]] = field(default_factory=list, repr=False)
    _trials: list[Trial] = field(default_factory=list, repr=False)
    _undoing: bool = False

    def __post_init__(self) -> None:
        if self.indexed is None:
            self.indexed = _INDEXED
        self._voice_index = {v: i for i, v in enumerate(self.task.voice_ids)}
        self._section_index = {s.id: i for i, s in enumerate(self.task.sections)}
        self.crossing_budget = int(self.task.max_crossing_share * len(self.task.all_slots()))
        self._starts: dict[str, list[tuple[Fraction, str]]] = {v: [] for v in self.task.voice_ids}
        self._longest = Fraction(0)
        tex = self.task.texture
        self.limits = Limits(self.task.length, tex.grid, tex.min_duration, tex.max_duration)

    # bookkeeping ---------------------------------------------------------
    def _key(self, slot: Slot) -> tuple[int, int]:
        return self._section_index[slot.section], slot.index

    def add(self, cand: ProposedNote) -> None:
        """Keep a candidate (the notes it crosses are counted against the crossing budget)."""
        self._insert(cand)
        self._log(("add", cand.id))
        cross = self._crossing(cand)
        if cross:
            new = {cand.id, *(o.id for o in cross)} - self.crossing_ids
            self.crossing_ids |= new
            self._log(("cross", new))

    def _insert(self, cand: ProposedNote) -> None:
        self.kept[cand.id] = Kept(cand, self)
        self._by_pc.setdefault(cand.midi % 12, set()).add(cand.id)
        bisect.insort(self._order.setdefault(cand.voice, []), (*self._key(cand.slot), cand.id))
        self._index_add(cand)

    def _index_add(self, cand: ProposedNote) -> None:
        bisect.insort(self._starts.setdefault(cand.voice, []), (cand.onset, cand.id))
        self._longest = max(self._longest, cand.duration)

    def _index_remove(self, cand: ProposedNote) -> None:
        starts = self._starts[cand.voice]
        i = bisect.bisect_left(starts, (cand.onset, cand.id))
        if i < len(starts) and starts[i] == (cand.onset, cand.id):
            del starts[i]

    def _moved(self, old: ProposedNote, new: ProposedNote) -> None:
        """A kept note was changed in place (a repair): log it, update the indexes."""
        self._log(("move", old))
        if old.onset != new.onset:
            self._index_remove(old)
            self._index_add(new)
        else:
            self._longest = max(self._longest, new.duration)
        if old.midi % 12 != new.midi % 12:
            self._by_pc.get(old.midi % 12, set()).discard(old.id)
            self._by_pc.setdefault(new.midi % 12, set()).add(new.id)

    def voice_order(self, voice: str) -> list[str]:
        """Ids of a voice's kept notes in schedule order."""
        return [k[2] for k in self._order.get(voice, [])]

    def remove(self, event_id: str) -> None:
        """Forget a kept note."""
        order = None
        for trial in self._trials:  # a rolled-back trial gives the kept notes back in their order
            if trial.order is None:
                trial.order = order = order or list(self.kept)
        cand = self._extract(event_id)
        self._log(("remove", cand))
        if event_id in self.crossing_ids:
            self.crossing_ids.discard(event_id)
            self._log(("uncross", event_id))

    def _extract(self, event_id: str) -> ProposedNote:
        kept = self.kept.pop(event_id)
        kept._owner = None
        cand = kept.cand
        self._by_pc.get(cand.midi % 12, set()).discard(event_id)
        self._order[cand.voice].remove((*self._key(cand.slot), event_id))
        self._index_remove(cand)
        return cand

    # trials ------------------------------------------------------------------
    @contextmanager
    def trial(self) -> Iterator[Trial]:
        """A trial on the kept notes, the ladder's one keep-or-roll-back mechanism: every change made
        inside it (a note kept, removed or moved, crossings counted) is logged, and when the block
        ends without ``trial.keep()`` they are undone in reverse order. Trials
        nest: a kept inner trial stays undoable by the one around it. The log exists only while a
        trial is open. An exception (an endpoint failure, Ctrl-C) ends the run: nothing is rolled
        back then, since a change it interrupted half-way could not be undone."""
        trial = Trial(len(self._journal))
        self._trials.append(trial)
        try:
            yield trial
        except BaseException:
            self._trials.clear()
            self._journal.clear()
            raise
        self._trials.pop()
        if not trial.kept:
            self._rollback(trial)
        if not self._trials:
            self._journal.clear()

    def _log(self, entry: tuple[Any, ...]) -> None:
        if self._trials and not self._undoing:
            self._journal.append(entry)

    def _rollback(self, trial: Trial) -> None:
        entries, self._journal[trial.mark:] = self._journal[trial.mark:], []
        self._undoing = True  # undoing logs nothing
        try:
            for kind, what in reversed(entries):
                if kind == "add":
                    self._extract(what)
                elif kind == "remove":
                    self._insert(what)
                elif kind == "move":
                    self.kept[what.id].cand = what
                elif kind == "cross":
                    self.crossing_ids -= what
                else:  # "uncross"
                    self.crossing_ids.add(what)
        finally:
            self._undoing = False
        if trial.order is not None:
            self.kept = {k: self.kept[k] for k in trial.order if k in self.kept}

    def filled(self, slot: Slot) -> bool:
        """True if a note is kept for this slot."""
        order = self._order.get(slot.voice, [])
        i = bisect.bisect_left(order, (*self._key(slot), ""))
        return i < len(order) and order[i][:2] == self._key(slot)

    def shorten(self, event_id: str, end: Fraction, rung: str) -> None:
        """Cut a kept note's tail so it ends at ``end``."""
        kept = self.kept[event_id]
        kept.cand = kept.cand.changed(rung, duration=end - kept.cand.onset)

    def window(self, slot: Slot) -> tuple[Fraction, Fraction]:
        """The free time window of a slot: after its kept predecessor, before its kept successor."""
        sec = self.task.section(slot.section)
        order = self._order.get(slot.voice, [])
        i = bisect.bisect_left(order, (*self._key(slot), ""))
        lo, hi = sec.start, sec.end
        if i > 0:
            lo = max(lo, self.kept[order[i - 1][2]].cand.end)
        j = i + 1 if i < len(order) and order[i][:2] == self._key(slot) else i
        if j < len(order):
            hi = min(hi, self.kept[order[j][2]].cand.onset)
        return lo, hi

    def free(self, cand: ProposedNote) -> tuple[Fraction, Fraction]:
        """A candidate's free window: its slot's window, ending before the voice's next proposed note."""
        lo, hi = self.window(cand.slot)
        if cand.until is not None and cand.until > lo:
            hi = min(hi, cand.until)
        return lo, hi

    def neighbours(self, slot: Slot) -> tuple[str | None, str | None]:
        """Ids of the kept notes before and after a slot in its voice."""
        order = self._order.get(slot.voice, [])
        i = bisect.bisect_left(order, (*self._key(slot), ""))
        j = i + 1 if i < len(order) and order[i][:2] == self._key(slot) else i
        return (order[i - 1][2] if i > 0 else None, order[j][2] if j < len(order) else None)

    def notes(self) -> list[ProposedNote]:
        """The kept notes in score order (voice, then schedule), whatever order they were kept in."""
        return [self.kept[k[2]].cand for v in self.task.voice_ids for k in self._order.get(v, [])]

    def events(self) -> list[Event]:
        """The kept notes as events, in voice and slot order."""
        return [self.kept[c.id].event() for c in self.notes()]

    def sounding(self, voice: str, onset: Fraction, end: Fraction) -> list[ProposedNote]:
        """The kept notes of ``voice`` that overlap [onset, end): the interval index — the notes that
        start before ``end`` and no earlier than ``onset`` minus the longest kept duration."""
        starts = self._starts.get(voice, [])
        first = bisect.bisect_left(starts, (onset - self._longest, ""))
        last = bisect.bisect_left(starts, (end, ""))
        out = []
        for _start, eid in starts[first:last]:
            other = self.kept[eid].cand
            if other.end > onset and other.duration > 0:
                out.append(other)
        return out

    # checks ----------------------------------------------------------------
    def _overlapping(self, cand: ProposedNote, pc: int | None = None) -> list[ProposedNote]:
        """Kept notes of other voices overlapping ``cand`` (of pitch class ``pc`` when given), in
        voice order, then onset."""
        if self.indexed:
            return [o for v in self.task.voice_ids if v != cand.voice
                    for o in self.sounding(v, cand.onset, cand.end)
                    if o.id != cand.id and (pc is None or o.midi % 12 == pc)]
        ids = self._by_pc.get(pc, set()) if pc is not None else self.kept
        out = []
        for eid in ids:
            other = self.kept[eid].cand
            if other.voice == cand.voice or eid == cand.id:
                continue
            if min(other.end, cand.end) - max(other.onset, cand.onset) > 0:
                out.append(other)
        return sorted(out, key=lambda o: (self._voice_index[o.voice], o.onset, o.id))

    def collisions(self, cand: ProposedNote) -> list[ProposedNote]:
        """Kept notes of other voices sounding the same pitch class for longer than the tolerance."""
        tol = self.task.tolerance
        return [
            o for o in self._overlapping(cand, cand.midi % 12)
            if min(o.end, cand.end) - max(o.onset, cand.onset) > tol
        ]

    def crossing(self, cand: ProposedNote) -> list[ProposedNote]:
        """Kept notes of other voices that this note would cross."""
        return self._crossing(cand)

    def _crossing(self, cand: ProposedNote) -> list[ProposedNote]:
        mine = self._voice_index[cand.voice]
        out = []
        for other in self._overlapping(cand):
            theirs = self._voice_index[other.voice]
            if (theirs < mine and other.midi < cand.midi) or (theirs > mine and other.midi > cand.midi):
                out.append(other)
        return out

    def problems(self, cand: ProposedNote, crossing_ok: bool = False) -> dict[str, list[ProposedNote]]:
        """Problem code → the kept notes involved (empty list for single-note problems)."""
        found: dict[str, list[ProposedNote]] = {}
        voice = self.task.voice(cand.voice)
        assert voice.low is not None and voice.high is not None
        if not voice.low <= cand.midi <= voice.high:
            found["RANGE"] = []
        if cand.midi % 12 != cand.slot.pc:
            found["ROW"] = []
        if cand.claimed_pc is not None and cand.claimed_pc != cand.midi % 12:
            found["PC"] = []
        lo, hi = self.free(cand)
        if cand.onset < lo or cand.end > hi or cand.duration <= 0:
            found["WINDOW"] = []
        for code in note_faults(cand.onset, cand.duration, self.limits):
            found[code] = []
        coll = self.collisions(cand)
        if coll:
            found["COLL"] = coll
        cross = self._crossing(cand)
        within = len(self.crossing_ids | {cand.id} | {o.id for o in cross}) <= self.crossing_budget
        if cross and not (crossing_ok and within):
            found["CROSS"] = cross
        return found
