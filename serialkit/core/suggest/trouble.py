"""Suggested corrections: where the trouble is and which changes to try.

What a correction must reduce (``_badness``: unexplained notes and statements' holes), how plain
the statements are (``readings._roughness``, ``readings._shape``), and the candidate changes: holes a note's time
fits, swaps with a neighbouring position, changes of explained notes near trouble, and suspects in
statements that hold a position twice. ``serialkit.core.suggest`` verifies and ranks them.
Standard library only.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from serialkit.core.analysis.model import Analysis, Statement
from serialkit.core.analysis.state import Sections
from serialkit.core.piece import Event, Piece
from serialkit.core.suggest.model import Edit, Suggestion, _nearest, error_model
from serialkit.core.suggest.swap import in_register

# A candidate that only extends a statement past its first or last note found is weaker than one
# that fills a hole between two notes of the statement.
_OPEN_END = 0.35


_REACH = 6
"""How many notes either side (in time order) of a trouble spot may be the wrong note."""


_TRIES = 6
"""At most this many changes of nearby notes are verified per trouble spot."""


_ECHOES = 2
"""And at most this many that make a nearby note repeat a note left unexplained there."""


@dataclass
class _Stmt:
    """A statement's found positions with their onsets and voices."""

    statement: Statement
    pcs: tuple[int, ...]
    onsets: dict[int, Fraction]
    voices: dict[int, str]
    events: dict[int, str]
    ioi: Fraction

    @property
    def missing(self) -> list[int]:
        return [p for p in range(12) if p not in self.onsets]

    def window(self, p: int) -> tuple[Fraction | None, Fraction | None, int | None, int | None]:
        """Onsets (and positions) of the nearest found positions before and after ``p``."""
        before = max((q for q in self.onsets if q < p), default=None)
        after = min((q for q in self.onsets if q > p), default=None)
        return (
            None if before is None else self.onsets[before],
            None if after is None else self.onsets[after],
            before,
            after,
        )

    def fits(self, p: int, t: Fraction) -> tuple[bool, bool]:
        """(the time ``t`` fits position ``p``, it fits between two found notes)."""
        lo, hi, before, after = self.window(p)
        if lo is not None and hi is not None:
            return lo <= t <= hi, True
        reach = self.ioi * 2
        if lo is None and hi is not None and after is not None:
            return hi - reach * (after - p) <= t <= hi, False
        if hi is None and lo is not None and before is not None:
            return lo <= t <= lo + reach * (p - before), False
        return False, False

    def neighbour_voices(self, p: int) -> set[str]:
        _lo, _hi, before, after = self.window(p)
        return {self.voices[q] for q in (before, after) if q is not None}


def _statements(analysis: Analysis, events: Mapping[str, Event]) -> list[_Stmt]:
    out = []
    for s in analysis.statements:
        pcs = analysis.row.form(s.form, analysis.convention)
        onsets: dict[int, Fraction] = {}
        voices: dict[int, str] = {}
        ids: dict[int, str] = {}
        for p, eid in enumerate(s.event_ids):
            if eid is None or eid not in events:
                continue
            onsets[p] = events[eid].onset
            voices[p] = events[eid].voice
            ids[p] = eid
        if len(onsets) < 2:
            continue
        times = sorted(onsets.values())
        span = times[-1] - times[0]
        ioi = span / (len(times) - 1) if span > 0 else Fraction(1)
        out.append(_Stmt(s, pcs, onsets, voices, ids, max(ioi, Fraction(1, 4))))
    return out


def _voice_factor(stmt: _Stmt, p: int, voice: str) -> float:
    if voice in stmt.neighbour_voices(p):
        return 1.0
    if voice in stmt.statement.voices:
        return 0.6
    return 0.3


def _fit(stmt: _Stmt, p: int, t: Fraction, voice: str, spare: int) -> float:
    """How well a note at ``t`` in ``voice`` fills position ``p`` (0: it does not)."""
    fits, inside = stmt.fits(p, t)
    if not fits:
        return 0.0
    weight = _voice_factor(stmt, p, voice) * (1.0 if inside else _OPEN_END)
    # a hole among several: the note may be meant for another of them
    weight /= max(1, spare)
    if len(stmt.onsets) == 11:
        weight *= 1.5  # it completes the statement
    return weight


def _badness(analysis: Analysis, piece: Piece, holes: Sequence[_Hole] | None = None) -> int:
    """Unexplained notes plus twice the holes in statements and the statements cut short beside
    a repeated edge note (a wrong note read as a repeat, ``Analysis.edge_repeats``): what a
    correction must reduce (``_spots`` weighed).

    Unexplained notes the analysis could read where they stand (``_read_elsewhere``) do not
    count. A hole (``_trouble_holes``) is stronger evidence of a wrong note than a note nothing
    explains, which may be free. ``holes``: the analysis's ``_trouble_holes``, when known."""
    return sum(w for _lo, _hi, w in _spots(analysis, piece, holes))


def _spots(analysis: Analysis, piece: Piece, holes: Sequence[_Hole] | None = None) -> list[tuple[Fraction, Fraction, int]]:
    """Where the trouble ``_badness`` counts is: (from, to, weight) in time per unexplained note
    (1), hole (2), statement cut short beside a repeated edge note (2) and two statements that
    take each other's voice's note of one pitch class (2), and a position borrowed from a note
    sounding out of the statement's order (2, where the position belongs)."""
    events = {e.id: e for e in piece.events}
    holes = _trouble_holes(analysis, events) if holes is None else holes
    elsewhere = _read_elsewhere(analysis, events, holes)
    out = [(events[e].onset, events[e].onset, 1) for e in analysis.unexplained if e in events and e not in elsewhere]
    out += [(h.lo, h.hi, 2) for h in holes]
    for r in analysis.edge_repeats(piece):
        times = sorted(events[e].onset for e in (r.edge, r.repeat) if e in events)
        if times:
            out.append((times[0], times[-1], 2))
    for _a, _b, x, y in analysis.exchanges(piece):
        lo, hi = sorted((events[x].onset, events[y].onset))
        out.append((lo, hi, 2))
    for b in analysis.borrowed_out_of_time(piece):
        t = events[b.note].onset
        out.append((b.lo if b.lo is not None else t, b.hi if b.hi is not None else t, 2))
    return out


@dataclass(frozen=True, slots=True)
class _Hole:
    """A position a statement is missing where the piece could have held it: the time span it
    falls in, the pitch class it wants, and the notes around it."""

    lo: Fraction
    hi: Fraction
    want: int
    voices: frozenset[str]
    around: frozenset[str]
    members: frozenset[str]
    past_own: bool = False
    """A hole between two notes of the statement where the notes on one side are only borrowed
    from another statement (elided): its own notes stop short of the hole, as at an open end."""


def _trouble_holes(analysis: Analysis, events: Mapping[str, Event]) -> list[_Hole]:
    """Every hole in a statement: a position missing between two found notes, or before the
    first / after the last found note when the piece goes on long enough there to have held it
    (a statement an excerpt cuts off at its start or end has no hole) — or, the piece too short
    there, when an unexplained note sounds right beside the statement's first or last own note in
    its voice: the position next to that note (missing, or borrowed from a neighbouring
    statement), which the unexplained note may be, miswritten (a wrong first or last note)."""
    if not events:
        return []
    sections = Sections(events.values())
    _loose_beside = _loose_beside_in(analysis, events)
    out: list[_Hole] = []
    for s in analysis.statements:
        found = [(p, events[e]) for p, e in enumerate(s.event_ids) if e is not None and e in events]
        if len(found) < 2:
            continue
        pcs = analysis.row.form(s.form, analysis.convention)
        members = frozenset(e.id for _p, e in found)

        def hole(p: int, lo: Fraction, hi: Fraction, *near: Event, past_own: bool = False) -> _Hole:
            return _Hole(lo, hi, pcs[p], frozenset(e.voice for e in near),  # noqa: B023
                         frozenset(e.id for e in near), members, past_own)  # noqa: B023

        held = [p for p, e in found if e.id not in s.elided]  # the positions of its own notes
        for (p, a), (q, b) in zip(found, found[1:], strict=False):
            past_own = bool(held) and (q > held[-1] or p < held[0])
            out += [hole(k, a.onset, b.onset, a, b, past_own=past_own) for k in range(p + 1, q)]
        (first, a), (last, b) = found[0], found[-1]
        ioi = edge_step(first, a.onset, last, b.onset)
        room_before, room_after = edge_room(first, a.onset, last, b.onset, *sections.span(a.onset, b.onset))
        if room_before:
            out += [hole(k, a.onset - 2 * ioi * first, a.onset, a) for k in range(first)]
        else:  # the statement's first own note (a position before it missing, or borrowed)
            k, own = next(((p, e) for p, e in found if e.id not in s.elided), (0, a))
            if k and (u := _loose_beside(own, -1, ioi)) is not None:
                out.append(hole(k - 1, u.onset, own.onset, own))
        if room_after:
            out += [hole(k, b.onset, b.onset + 2 * ioi * (11 - last), b) for k in range(last + 1, 12)]
        else:
            k, own = next(((p, e) for p, e in reversed(found) if e.id not in s.elided), (11, b))
            if k < 11 and (u := _loose_beside(own, 1, ioi)) is not None:
                out.append(hole(k + 1, own.onset, u.onset, own))
    return out


def _seeding(holes: Sequence[_Hole], analysis: Analysis, events: Mapping[str, Event]) -> list[_Hole]:
    """The holes a wrong note may have left: ``holes`` but for a statement's open end cut off —
    two positions or more missing past its first or last note (where the piece goes on) with
    fewer unexplained notes sounding there than positions missing. A change of one note fills
    at most one of them and leaves the statement short there, nothing sounding that could be
    the rest (``_Reading.left_short``): ``verify`` keeps such a change below half the confidence
    at best, a statement cut off (the end of a copy or a section), not a wrong note. Such holes
    seed no candidates; an unexplained note there is still reported and tried as any other."""
    ends: dict[tuple[frozenset[str], frozenset[str]], list[_Hole]] = {}
    for h in holes:
        if len(h.around) == 1 and not h.past_own:
            ends.setdefault((h.members, h.around), []).append(h)
    loose = [events[e].onset for e in analysis.unexplained if e in events]
    cut: set[int] = set()
    for group in ends.values():
        lo, hi = min(h.lo for h in group), max(h.hi for h in group)
        if len(group) >= 2 and sum(1 for t in loose if lo <= t <= hi) < len(group):
            cut.update(id(h) for h in group)
    return [h for h in holes if id(h) not in cut]


def edge_step(first: int, a: Fraction, last: int, b: Fraction) -> Fraction:
    """A statement's time per position: from its first found position ``first`` (onset ``a``) to
    its last ``last`` (onset ``b``), at least a sixteenth."""
    return max((b - a) / max(1, last - first), Fraction(1, 4))


def edge_room(first: int, a: Fraction, last: int, b: Fraction, start: Fraction, end: Fraction) -> tuple[bool, bool]:
    """(the positions before the first found one, the positions after the last found one) are
    missing where the piece goes on long enough to have held them: the piece (first onset
    ``start``, last ``end``) has four of the statement's steps (``edge_step``) per missing
    position before ``a`` (after ``b``). A statement an excerpt cuts off at its start or end has
    no room there. The one rule for a statement's open ends (``_trouble_holes`` and the check's
    ``shapes.stops_short``)."""
    ioi = edge_step(first, a, last, b)
    return (bool(first) and a - start >= 4 * ioi * first,
            last < 11 and end - b >= 4 * ioi * (11 - last))


def _loose_beside_in(analysis: Analysis, events: Mapping[str, Event]) -> Callable[[Event, int, Fraction], Event | None]:
    """``_loose_beside(edge, side, ioi)``: the unexplained note right before (``side`` -1) or
    after (1) ``edge`` in its voice, within two of the statement's steps ``ioi``; else None."""
    loose = [events[e] for e in analysis.unexplained if e in events]
    lines: dict[str, list[Event]] = {}
    if loose:
        for e in sorted(events.values(), key=lambda e: (e.onset, e.id)):
            lines.setdefault(e.voice, []).append(e)
    place = {e.id: k for line in lines.values() for k, e in enumerate(line)}
    ids = {e.id for e in loose}

    def beside(edge: Event, side: int, ioi: Fraction) -> Event | None:
        if not ids or edge.id not in place:
            return None
        line, k = lines[edge.voice], place[edge.id] + side
        if not 0 <= k < len(line) or line[k].id not in ids or abs(line[k].onset - edge.onset) > 2 * ioi:
            return None
        return line[k]
    return beside


def _read_elsewhere(analysis: Analysis, events: Mapping[str, Event], holes: Sequence[_Hole] | None = None) -> set[str]:
    """Unexplained notes that are right as written: the analysis could read them where they
    stand, with the pitch class of a statement's position, but chose another note for it.

    The statement is complete, and either the position's neighbours in it are in the note's
    voice and sound around it while the position went to a repeated note of another voice, or the
    position's note is in the note's voice and only that position's and its neighbours' pitch
    classes come between them, before the statement begins or after it ends (a repeat or
    tremolo the statement did not take in). Such a note
    is a reading the analysis did not choose, not a wrong note: it is not reported, nor counted
    as trouble (a correction that only moves the analysis elsewhere is no correction). A note
    standing in a statement's hole (``holes``: the analysis's ``_trouble_holes``, when known) may
    be the note missing there, miswritten: it is never read elsewhere."""
    holes = _trouble_holes(analysis, events) if holes is None else holes
    loose = {e: events[e] for e in analysis.unexplained
             if e in events and not any(h.lo <= events[e].onset <= h.hi for h in holes)}
    if not loose:
        return set()
    lines: dict[str, list[str]] = {}
    for e in sorted(events.values(), key=lambda e: (e.onset, e.id)):
        lines.setdefault(e.voice, []).append(e.id)
    place = {eid: (k, line) for line in lines.values() for k, eid in enumerate(line)}

    def _repeated(eid: str) -> bool:  # the note repeats its voice's note before or after it
        k, line = place[eid]
        return any(events[line[j]].pc == events[eid].pc for j in (k - 1, k + 1) if 0 <= j < len(line))
    out: set[str] = set()
    for s in analysis.statements:
        if s.found < 12:  # a statement with a hole: the note may be the one missing, miswritten
            continue
        ids = s.event_ids
        pcs = analysis.row.form(s.form, analysis.convention)
        members = set(s.members) | loose.keys()
        for p, h in enumerate(ids):
            if h is None or h not in events:
                continue
            holder = events[h]
            near = [events[q] for q in (ids[p - 1] if p else None, ids[p + 1] if p < 11 else None)
                    if q is not None and q in events]
            tremolo = {pcs[q] for q in (p - 1, p, p + 1) if 0 <= q < 12}
            for u in loose.values():
                if u.id in out or u.pc != pcs[p]:
                    continue
                if holder.voice == u.voice:  # a repeat or tremolo of the position, outside the span
                    if events[ids[0]].onset <= u.onset <= events[ids[11]].onset:  # type: ignore[index]
                        continue
                    (i, line), (j, _) = place[u.id], place[h]
                    between = line[min(i, j) + 1:max(i, j)]
                    if all(x in members and events[x].pc in tremolo for x in between):
                        out.add(u.id)
                elif near and all(n.voice == u.voice for n in near) and all(
                        (n.onset <= u.onset) == (ids.index(n.id) < p) for n in near) and _repeated(h):
                    out.add(u.id)
    return out


def _candidates(
    event: Event,
    stmts: list[_Stmt],
    events: Mapping[str, Event],
    analysis: Analysis,
    piece: Piece,
) -> list[tuple[float, Suggestion]]:
    """Candidates from the statements around the note: the holes its time fits, the neighbours
    it may be swapped with, and (a tagged note) its own form's pitch; with their local fit."""
    out: list[tuple[float, Suggestion]] = []
    t, x = event.onset, event.pc
    tag = event.tag if event.tag is not None else analysis.tags.get(event.id)
    for st in stmts:
        holes = [p for p in st.missing if st.fits(p, t)[0]]
        for p in holes:
            want = st.pcs[p]
            fit = _fit(st, p, t, event.voice, len(holes))
            if fit <= 0 or want == x:
                continue
            after = _nearest(event.midi, want)
            model = error_model(event.midi, after)
            out.append((
                fit,
                Suggestion(event.id, after, (Edit(event.id, event.midi, after),), model, 0.0,
                           st.statement.form, p, st.statement.id, ""),
            ))
        out += _swaps(event, st, events)
    if tag is not None:  # a tagged note a finding names: its own form wants another pitch
        want = analysis.row.form(tag.form, analysis.convention)[tag.position]
        if want != x:
            after = _nearest(event.midi, want)
            out.append((
                1.0,
                Suggestion(event.id, after, (Edit(event.id, event.midi, after),),
                           error_model(event.midi, after), 0.0, tag.form, tag.position,
                           tag.statement, ""),
            ))
    return out


def _swaps(event: Event, st: _Stmt, events: Mapping[str, Event]) -> list[tuple[float, Suggestion]]:
    """The note has the pitch class of a position of ``st`` and stands near the note holding a
    neighbouring position: the two notes were written in each other's place. The position it
    names is missing from ``st`` (its time must then keep the statement in order), or held by
    another note (a chord or a doubling took it: the two notes must be close in time)."""
    out: list[tuple[float, Suggestion]] = []
    x = event.pc
    for p in range(12):
        if st.pcs[p] != x or st.events.get(p) == event.id:
            continue
        held = p in st.events
        for q in (p - 1, p + 1):
            if not 0 <= q < 12 or q not in st.events:
                continue
            other = events[st.events[q]]
            if other.id == event.id or other.pc == x or other.onset == event.onset:
                continue
            near = abs(event.onset - other.onset) <= st.ioi * 2
            if held and not near:  # a chord: near when within the span of the positions around
                around = [st.onsets[k] for k in range(min(p, q) - 1, max(p, q) + 2) if k in st.onsets]
                if abs(event.onset - other.onset) > max(around) - min(around):
                    continue
            if not held:
                if not near and not st.fits(q, event.onset)[0]:
                    continue  # the note would hold ``q`` far from the statement's other notes
                onsets = dict(st.onsets)
                onsets[q] = event.onset
                onsets[p] = other.onset
                ordered = [onsets[k] for k in sorted(onsets)]
                if any(a > b for a, b in zip(ordered, ordered[1:], strict=False)):
                    continue
            fit = (1.0 if event.voice == other.voice else 0.5) * (1.0 if near else 0.4) * (0.5 if held else 1.0)
            pair = in_register(event, other)  # and the written notes exchanged: ``swap``
            mine, theirs = pair[event.id], pair[other.id]
            out.append((
                fit,
                Suggestion(event.id, mine,
                           (Edit(event.id, event.midi, mine), Edit(other.id, other.midi, theirs)),
                           "swap", 0.0, st.statement.form, q, st.statement.id, ""),
            ))
    return out


def _nearby(
    analysis: Analysis,
    events: Mapping[str, Event],
    order: Sequence[Event],
    index: Mapping[str, int],
    onsets: Sequence[Fraction],
    reported: Mapping[str, str],
    cands: Mapping[str, object],
    holes: Sequence[_Hole] | None = None,
) -> list[tuple[str, int]]:
    """Changes (event id, pitch) to explained notes near trouble (an unexplained note, a hole in a
    statement) that have no candidate yet: a wrong note the analysis absorbs (it reads as another
    position, a repeat, another statement) leaves the trouble beside it, not on it.

    A wrong note leaves its pitch class once too often around it and the one it replaced once too
    rarely: among the notes near each trouble spot, a semitone or third change from a pitch class
    more common there to a rarer one is tried, the largest imbalance and nearest note first. A
    wrong note that was a repeat can take the note it repeated out of its statement with it: a
    semitone or third change that makes a note of the voice repeat (same pitch) an unexplained
    note near it is tried too, the nearest first; and a wrong note the analysis reads as a repeat
    of a position (it leaves no hole: the position it copies is held) is tried first among the
    repeats near the trouble (its smallest change each), the nearest first, whatever other
    imbalance is larger. ``holes``: the holes to look round (default: every ``_trouble_holes``)."""
    repeats = {r for st in analysis.statements for r in st.repeats}
    spans = {(index[e], index[e]) for e in analysis.unexplained if e in index}
    for h in _trouble_holes(analysis, events) if holes is None else holes:
        first = bisect.bisect_left(onsets, h.lo)
        spans.add((first, max(first, bisect.bisect_right(onsets, h.hi) - 1)))
    out: dict[tuple[str, int], None] = {}
    for lo_i, hi_i in sorted(spans):
        count = [0] * 12
        for e in order[max(0, lo_i - 2 * _REACH): hi_i + 2 * _REACH + 1]:
            count[e.pc] += 1
        tries = []
        window = order[max(0, lo_i - _REACH):hi_i + _REACH + 1]
        loose = {(u.voice, u.midi) for u in window if u.id in reported}
        echoes = []
        again = []
        for i in range(max(0, lo_i - _REACH), min(len(order), hi_i + _REACH + 1)):
            e = order[i]
            if e.id in reported or e.id in cands or analysis.tags.get(e.id) is None:
                continue
            for shift in (1, -1, 3, -3, 4, -4):
                if (e.voice, e.midi + shift) in loose:
                    echoes.append((max(lo_i - i, i - hi_i, 0), abs(shift), e.id, e.midi + shift))
                excess = count[e.pc] - count[(e.pc + shift) % 12]
                if excess > 0 and 0 <= e.midi + shift <= 127:
                    distance = max(lo_i - i, i - hi_i, 0)
                    tries.append((-excess, distance, abs(shift), e.id, e.midi + shift))
                    if e.id in repeats:
                        again.append((distance, abs(shift), -excess, e.id, e.midi + shift))
        again = [a for k, a in enumerate(sorted(again)) if all(b[3] != a[3] for b in sorted(again)[:k])]
        for *_rank, eid, midi in sorted(tries)[:_TRIES] + sorted(echoes)[:_ECHOES] + sorted(again)[:_ECHOES]:
            out[(eid, midi)] = None
    return list(out)


def _doubled(analysis: Analysis, events: Mapping[str, Event], reported: Mapping[str, str]) -> list[tuple[str, int]]:
    """Suspect changes (event id, pitch): in a statement holding a position twice (a repeat), each
    of the two notes may be a wrong note that copies its position's pitch class, meant for another
    position, by the error models (a semitone, a third, a step).

    The position it was meant for must still have been found somewhere (else a hole would show):
    only positions the statement borrows from another (elided) or holds out of its line
    (``_out_of_line``) are tried, and only on a note whose time fits the position (between the
    notes holding the positions around it). A statement that only repeats notes along a plain
    line is music: nothing in it is suspect."""
    out: dict[tuple[str, int], None] = {}
    for s in analysis.statements:
        if not s.repeats:
            continue
        odd = {p for p, e in enumerate(s.event_ids) if e is not None and e in s.elided} | _out_of_line(s, events)
        if not odd:
            continue
        pcs = analysis.row.form(s.form, analysis.convention)
        for r in s.repeats:
            if r not in events or events[r].pc not in pcs:
                continue
            p = pcs.index(events[r].pc)
            for eid in (r, s.event_ids[p]):
                if eid is None or eid not in events or eid in reported:
                    continue
                e = events[eid]
                for q in sorted(odd - {p}):
                    if pcs[q] == e.pc or not _fits_between(s, q, e, events):
                        continue
                    midi = _nearest(e.midi, pcs[q])
                    if error_model(e.midi, midi) != "other":
                        out[(eid, midi)] = None
    return list(out)


def _doubled_in_holes(analysis: Analysis, events: Mapping[str, Event], holes: Sequence[_Hole]) -> list[tuple[str, int]]:
    """Changes (event id, pitch) of the notes of a statement with a hole (``holes``:
    ``_trouble_holes``) that hold a position twice — the note holding it and its repeat — to a
    pitch class one of its holes wants, by the error models. A wrong note can turn a statement into
    another form's reading that takes it as a position the row's next note repeats (Webern's
    Op. 27 with its pickup G#3 written A3 reads as P6 from the A, the A4 after it a repeat, P6
    lacking its G# and C# far off): either of the two may be the wrong note, though the holes
    the misreading leaves lie elsewhere."""
    wants: dict[frozenset[str], set[int]] = {}
    for h in holes:
        wants.setdefault(h.members, set()).add(h.want)
    out: dict[tuple[str, int], None] = {}
    for s in analysis.statements:
        want = wants.get(frozenset(e for e in s.event_ids if e is not None and e in events)) if s.repeats else None
        if not want:
            continue
        for r in s.repeats:
            tag = analysis.tags.get(r)
            if tag is None or tag.statement != s.id:
                continue
            for eid in (s.event_ids[tag.position], r):
                if eid is None or eid not in events:
                    continue
                e = events[eid]
                for pc in sorted(want - {e.pc}):
                    midi = _nearest(e.midi, pc)
                    if error_model(e.midi, midi) != "other":
                        out[(eid, midi)] = None
    return list(out)


def _fits_between(s: Statement, q: int, e: Event, events: Mapping[str, Event]) -> bool:
    """The note's time lies between the notes holding the nearest positions before and after
    ``q`` in the statement (either end open)."""
    ids = s.event_ids
    before = next((events[x].onset for x in reversed(ids[:q]) if x is not None and x in events and x != e.id), None)
    after = next((events[x].onset for x in ids[q + 1:] if x is not None and x in events and x != e.id), None)
    return (before is None or before <= e.onset) and (after is None or e.onset <= after)


def _out_of_line(s: Statement, events: Mapping[str, Event]) -> set[int]:
    """The positions ``_rough`` finds out of the statement's line: either side of an order
    inversion, a position in another voice than both its neighbours (which share one), and a first
    or last position in another voice than the line it starts or ends."""
    found = [(p, events[e]) for p, e in enumerate(s.event_ids) if e is not None and e in events]
    out: set[int] = set()
    for (p, a), (q, b) in zip(found, found[1:], strict=False):
        if a.onset > b.onset:
            out |= {p, q}
    for (_, a), (q, b), (_, c) in zip(found, found[1:], found[2:], strict=False):
        if a.voice == c.voice != b.voice:
            out.add(q)
    if len(found) > 2:
        if found[0][1].voice != found[1][1].voice == found[2][1].voice:
            out.add(found[0][0])
        if found[-1][1].voice != found[-2][1].voice == found[-3][1].voice:
            out.add(found[-1][0])
    return out


def _named_notes(findings: Iterable[Any], events: Mapping[str, Event]) -> list[tuple[str, str]]:
    """The notes of the piece the ROW and ORDER findings name (Violation records or their dicts),
    each with its finding's code, in the findings' order."""
    out = []
    for v in findings:
        code = v["code"] if isinstance(v, Mapping) else v.code
        ids: Sequence[str] = v["event_ids"] if isinstance(v, Mapping) else v.event_ids
        if code in ("ROW", "ORDER"):
            out += [(eid, code) for eid in ids if eid in events]
    return out


def _nothing_reported(piece: Piece, analysis: Analysis, named: Sequence[tuple[str, str]],
                      events: Mapping[str, Event], holes: Sequence[_Hole]) -> bool:
    """Is there nothing ``suggest`` would try a change for (suspects aside): no unexplained note,
    no note a ROW or ORDER finding names (``named``), no note of an edge repeat, an exchange, a
    scrap or a borrowed position, and no hole in a statement (``holes``: ``_trouble_holes``)? (A
    correct piece: its suggestions are none.)"""
    return not (analysis.unexplained or named or analysis.edge_repeats(piece) or analysis.exchanges(piece)
                or analysis.borrowed_out_of_time(piece)
                or any(eid in events for _s, own in analysis.scraps() for eid in own)
                or bool(holes))
