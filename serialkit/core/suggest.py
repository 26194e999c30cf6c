"""Suggested corrections: for every note the analysis cannot explain, the note most likely meant.

``suggest(piece, analysis)`` looks at each unexplained note (and each tagged note a ROW finding
names) and asks which statement it most plausibly belongs to: a statement with an order position
missing where the note stands in time, or a neighbouring note it may have been swapped with. Each
candidate pitch is scored by an explicit model of how engraving and copying errors happen:

- ``accidental``: an accidental dropped or added, the note a semitone off (same letter);
- ``third``: the note written a line too high or low (a wrong clef line: three or four semitones);
- ``step``: the note a line/space off by one step (a whole tone);
- ``swap``: two neighbouring notes of a statement written in each other's place;
- ``other``: any other pitch (rare; nearest octave).

The suggested pitch stays in the note's octave region (the error model's interval, else the
nearest octave). Confidence is the candidate's share of the evidence, with a fixed share kept for
"the note is right as written" (a statement the excerpt cuts off, a free note), so a note that
nothing wants is never confidently "corrected". Standard library only; consumes the public
:class:`~serialkit.core.analysis.Analysis` result.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from serialkit.core.analysis.model import Analysis, Statement
from serialkit.core.piece import Event, Piece
from serialkit.core.rows import RowForm, pc_name, position_label

__all__ = [
    "DEFAULT_THRESHOLD",
    "MODELS",
    "Applied",
    "describe",
    "Edit",
    "NoteSuggestions",
    "RepairPlan",
    "Suggestion",
    "error_model",
    "plan_repairs",
    "suggest",
]

MODELS = ("accidental", "third", "step", "swap", "other")
"""The error models, most common first."""

# How often each kind of error happens, relative to one another (engraving and copying habits).
_PRIOR = {"accidental": 1.0, "third": 0.55, "step": 0.3, "swap": 0.8, "other": 0.05}
# The weight kept for "the note is right as written" against the candidates of one note.
_KEEP = 0.12
# A candidate that only extends a statement past its first or last note found is weaker than one
# that fills a hole between two notes of the statement.
_OPEN_END = 0.35
# A correction after which the note only repeats a position is weaker than one where it holds one.
_REPEAT = 0.5
DEFAULT_THRESHOLD = 0.6
"""The confidence a suggestion needs before ``repair`` applies it."""


@dataclass(frozen=True, slots=True)
class Edit:
    """One pitch change: the event and its MIDI pitch before and after."""

    event_id: str
    before: int
    after: int

    def to_dict(self) -> dict[str, Any]:
        """JSON form with note names."""
        return {
            "event_id": self.event_id,
            "before": self.before,
            "after": self.after,
            "before_name": _name(self.before),
            "after_name": _name(self.after),
        }


@dataclass(frozen=True, slots=True)
class Suggestion:
    """The note most likely meant, the statement it completes, and why."""

    event_id: str
    midi: int
    edits: tuple[Edit, ...]
    model: str
    confidence: float
    form: RowForm
    position: int
    statement: str | None
    reason: str

    @property
    def label(self) -> str:
        """The label the note would get: ``P0:3``."""
        return position_label(self.form, self.position)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (the check report's ``suggestions[].candidates`` entries)."""
        return {
            "event_id": self.event_id,
            "midi": self.midi,
            "name": _name(self.midi),
            "model": self.model,
            "confidence": round(self.confidence, 3),
            "statement": self.statement,
            "form": self.form.label,
            "position": self.position,
            "label": self.label,
            "edits": [e.to_dict() for e in self.edits],
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class NoteSuggestions:
    """The candidates for one reported note, best first (empty: nothing plausible)."""

    event_id: str
    midi: int
    candidates: tuple[Suggestion, ...] = field(default=())
    finding: str = "unexplained"

    @property
    def best(self) -> Suggestion | None:
        """The top candidate, or None."""
        return self.candidates[0] if self.candidates else None

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "event_id": self.event_id,
            "midi": self.midi,
            "name": _name(self.midi),
            "finding": self.finding,
            "candidates": [c.to_dict() for c in self.candidates],
        }


def _name(midi: int) -> str:
    return f"{pc_name(midi)}{midi // 12 - 1}"


def error_model(before: int, after: int) -> str:
    """Which error model explains writing ``before`` where ``after`` was meant (same octave)."""
    d = abs(after - before)
    if d == 1:
        return "accidental"
    if d in (3, 4):
        return "third"
    if d == 2:
        return "step"
    return "other"


def _nearest(midi: int, pc: int) -> int:
    """The pitch of class ``pc`` in ``midi``'s octave region, by error model: ±1, ±3/±4, ±2,
    else the nearest (a tritone goes down)."""
    up = (pc - midi) % 12
    if up == 0:
        return midi
    for step in (1, 3, 4, 2):
        if up == step:
            return _clamp(midi + step)
        if up == 12 - step:
            return _clamp(midi - step)
    return _clamp(midi + up if up < 6 else midi - (12 - up))


def _clamp(midi: int) -> int:
    while midi > 127:
        midi -= 12
    while midi < 0:
        midi += 12
    return midi


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


_Key = tuple[tuple[str, int], ...]


@dataclass
class _Cand:
    """A candidate correction before it is verified: the pitch changes and the model."""

    note: str
    edits: dict[str, int]
    model: str
    local: float = 0.0
    weight: float = 0.0
    form: RowForm | None = None
    position: int = 0
    statement: str | None = None
    reason: str = ""
    suspect: bool = False
    """A change of a note nothing reports, tried because its statement holds a doubled position."""

    @property
    def key(self) -> _Key:
        return tuple(sorted(self.edits.items()))


def _badness(analysis: Analysis, piece: Piece) -> int:
    """Unexplained notes plus twice the holes in statements: what a correction must reduce.

    Unexplained notes the analysis could read where they stand (``_read_elsewhere``) do not
    count. A hole (``_trouble_holes``) is stronger evidence of a wrong note than a note nothing
    explains, which may be free."""
    events = {e.id: e for e in piece.events}
    loose = len(analysis.unexplained) - len(_read_elsewhere(analysis, events))
    return loose + 2 * len(_trouble_holes(analysis, events))


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


def _trouble_holes(analysis: Analysis, events: Mapping[str, Event]) -> list[_Hole]:
    """Every hole in a statement: a position missing between two found notes, or before the
    first / after the last found note when the piece goes on long enough there to have held it
    (a statement an excerpt cuts off at its start or end has no hole)."""
    if not events:
        return []
    start = min(e.onset for e in events.values())
    end = max(e.onset for e in events.values())
    out: list[_Hole] = []
    for s in analysis.statements:
        found = [(p, events[e]) for p, e in enumerate(s.event_ids) if e is not None and e in events]
        if len(found) < 2:
            continue
        pcs = analysis.row.form(s.form, analysis.convention)
        members = frozenset(e.id for _p, e in found)

        def hole(p: int, lo: Fraction, hi: Fraction, *near: Event) -> _Hole:
            return _Hole(lo, hi, pcs[p], frozenset(e.voice for e in near),  # noqa: B023
                         frozenset(e.id for e in near), members)  # noqa: B023

        for (p, a), (q, b) in zip(found, found[1:], strict=False):
            out += [hole(k, a.onset, b.onset, a, b) for k in range(p + 1, q)]
        (first, a), (last, b) = found[0], found[-1]
        ioi = max((b.onset - a.onset) / max(1, last - first), Fraction(1, 4))
        if first and a.onset - start >= 4 * ioi * first:
            out += [hole(k, a.onset - 2 * ioi * first, a.onset, a) for k in range(first)]
        if last < 11 and end - b.onset >= 4 * ioi * (11 - last):
            out += [hole(k, b.onset, b.onset + 2 * ioi * (11 - last), b) for k in range(last + 1, 12)]
    return out


def _read_elsewhere(analysis: Analysis, events: Mapping[str, Event]) -> set[str]:
    """Unexplained notes that are right as written: the analysis could read them where they
    stand, with the pitch class of a statement's position, but chose another note for it.

    The statement is complete, and either the position's neighbours in it are in the note's
    voice and sound around it while the position went to a repeated note of another voice, or the
    position's note is in the note's voice and only that position's and its neighbours' pitch
    classes come between them, before the statement begins or after it ends (a repeat or
    tremolo the statement did not take in). Such a note
    is a reading the analysis did not choose, not a wrong note: it is not reported, nor counted
    as trouble (a correction that only moves the analysis elsewhere is no correction)."""
    loose = {e: events[e] for e in analysis.unexplained if e in events}
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


def suggest(
    piece: Piece,
    analysis: Analysis,
    findings: Iterable[Any] = (),
    limit: int = 3,
    window: int = 96,
    whole: int = 400,
    max_notes: int | None = None,
    budget: int | None = None,
    suspects: bool = True,
) -> tuple[NoteSuggestions, ...]:
    """Suggested corrections, best first per note, for every unexplained note, every tagged note
    a ROW or ORDER finding names (``findings``: Violation records or their dicts), and every note
    standing where a statement has a hole.

    ``analysis`` is ``analyze(piece, row)`` of the piece's bare notes. Every candidate is verified
    by analysing the piece again with the change made (a piece longer than ``whole`` notes: the
    ``window`` notes either side of the change): a
    candidate is kept only when the changed notes are then explained and fewer notes are
    unexplained or missing; its weight is the error model's prior times the improvement.
    ``max_notes``: suggest for at most this many reported notes (the first in score order);
    ``budget``: verify at most this many candidates (each is one analysis), those a statement's
    hole supports first, then by the error model's prior.

    ``suspects``: also try notes nothing reports whose statement holds a position twice (a wrong
    note the analysis absorbs as a repeat or doubling, so the piece passes): the pitch classes of
    the doubled position's neighbours and of positions the statement borrows from another
    (elided) are tried on both notes of the doubled position. Such a change is kept only when
    nothing gets worse and the statements become plainer (fewer repeats, borrowed notes, order
    inversions and voice jumps); it is reported with ``finding="suspect"`` at no more than a
    third of the confidence, and ``plan_repairs`` never applies it (Webern's own repeats and
    doublings are music).
    """
    from serialkit.core.analysis import analyze

    events = {e.id: e for e in piece.events}
    stmts = _statements(analysis, events)
    elsewhere = _read_elsewhere(analysis, events)
    reported: dict[str, str] = {
        eid: "unexplained" for eid in analysis.unexplained if eid in events and eid not in elsewhere
    }
    for v in findings:
        code = v["code"] if isinstance(v, Mapping) else v.code
        ids: Sequence[str] = v["event_ids"] if isinstance(v, Mapping) else v.event_ids
        if code not in ("ROW", "ORDER"):
            continue
        for eid in ids:
            if eid in events and eid not in reported:
                reported[eid] = code
    if max_notes is not None and len(reported) > max_notes:
        reported = dict(list(reported.items())[:max_notes])
    order = sorted(piece.events, key=lambda e: (e.onset, e.voice, e.midi, e.id))
    index = {e.id: i for i, e in enumerate(order)}
    onsets = [e.onset for e in order]
    by_voice: dict[str, list[Event]] = piece.by_voice()
    cands: dict[str, dict[_Key, _Cand]] = {}

    def add(c: _Cand) -> None:
        if any(not 0 <= m <= 127 or m == events[e].midi for e, m in c.edits.items()):
            return
        bucket = cands.setdefault(c.note, {})
        old = bucket.get(c.key)
        if old is None or c.local > old.local:
            bucket[c.key] = c

    for eid in reported:
        event = events[eid]
        for weight, s in _candidates(event, stmts, events, analysis, piece):
            add(_Cand(eid, {e.event_id: e.after for e in s.edits}, s.model, weight))
        for shift in (1, -1, 3, -3, 4, -4):
            midi = event.midi + shift
            add(_Cand(eid, {eid: midi}, error_model(event.midi, midi)))
        voice = by_voice.get(event.voice, [])
        k = next((i for i, e in enumerate(voice) if e.id == eid), -1)
        for j in (k - 1, k + 1):
            if 0 <= j < len(voice) and k >= 0:
                other = voice[j]
                if other.onset != event.onset and other.pc != event.pc:
                    add(_Cand(eid, {eid: _nearest(event.midi, other.pc),
                                    other.id: _nearest(other.midi, event.pc)}, "swap"))
    for h in _trouble_holes(analysis, events):
        for e in order[bisect.bisect_left(onsets, h.lo):bisect.bisect_right(onsets, h.hi)]:
            midi = _nearest(e.midi, h.want)
            model = error_model(e.midi, midi)
            if e.pc == h.want or model == "other":
                continue
            strength = 0.0 if e.id in h.members else 1.0 if e.voice in h.voices else 0.3
            add(_Cand(e.id, {e.id: midi}, model, strength))
    for eid, midi in _nearby(analysis, events, order, index, onsets, reported, cands):
        add(_Cand(eid, {eid: midi}, error_model(events[eid].midi, midi)))
    if suspects:
        taken = set(cands)
        for eid, midi in _doubled(analysis, events, reported):
            if eid not in taken:
                add(_Cand(eid, {eid: midi}, error_model(events[eid].midi, midi), suspect=True))
    before_cache: dict[tuple[int, int], int] = {(0, len(order)): _badness(analysis, piece)}
    rough_cache: dict[tuple[int, int], int] = {(0, len(order)): _roughness(analysis, piece)}
    shape_cache: dict[tuple[int, int], int] = {(0, len(order)): _shape(analysis)}
    verified: dict[str, list[_Cand]] = {}
    queue = sorted(
        (c for bucket in cands.values() for c in bucket.values()),
        key=lambda c: (c.local <= 0, -_PRIOR[c.model] * (1.0 + c.local), index[c.note], c.key),
    )
    if budget is not None:
        queue = queue[:budget]
    for c in queue:
        note = c.note
        ixs = [index[e] for e in c.edits]
        if len(order) <= whole:  # row passing is learnt from the whole piece: analyse it all
            lo_i, hi_i = 0, len(order)
        else:
            lo_i, hi_i = max(0, min(ixs) - window), min(len(order), max(ixs) + window + 1)
        sub = piece.with_events(order[lo_i:hi_i])
        if (lo_i, hi_i) not in before_cache:
            here = analyze(sub, analysis.row, analysis.convention)
            before_cache[(lo_i, hi_i)] = _badness(here, sub)
            rough_cache[(lo_i, hi_i)] = _roughness(here, sub)
            shape_cache[(lo_i, hi_i)] = _shape(here)
        changed = sub.with_events(
            e.copy(midi=c.edits[e.id]) if e.id in c.edits else e for e in sub.events
        )
        after = analyze(changed, analysis.row, analysis.convention)
        gain = before_cache[(lo_i, hi_i)] - _badness(after, changed)
        tag = after.tags.get(note)
        if tag is None or any(after.tags.get(e) is None for e in c.edits):
            continue
        plainer = rough_cache[(lo_i, hi_i)] + shape_cache[(lo_i, hi_i)] - _roughness(after, changed) - _shape(after)
        if gain < 0 or gain == 0 and not (c.suspect and plainer > 0):
            continue
        c.form, c.position = tag.form, tag.position
        c.statement = _statement_of(analysis, after, tag.statement)
        holds = any(note in s.event_ids for s in after.statements if s.id == tag.statement)
        c.weight = (_PRIOR[c.model] * 4.0 ** min(gain, 200) * (1.0 + c.local) * (1.0 if holds else _REPEAT)
                    * _ROUGH ** (_roughness(after, changed) - rough_cache[(lo_i, hi_i)]))
        if gain == 0:  # a suspect: never more than a third of the confidence
            c.weight = min(c.weight * 2.0 ** plainer, _KEEP_WEIGHT / 2)
        c.reason = _reason(c, events[note], gain)
        verified.setdefault(note, []).append(c)
    rivals = _rivals(verified, index)
    out = []
    for eid in [e.id for e in piece.events if e.id in reported or e.id in verified]:
        found = sorted(verified.get(eid, []), key=lambda c: (-c.weight, c.key))
        total = sum(c.weight for c in found) + _KEEP_WEIGHT + rivals.get(eid, 0.0)
        chosen = tuple(_suggestion(c, events, c.weight / total) for c in found[:limit])
        finding = reported.get(eid, "suspect" if all(c.suspect for c in found) else "hole")
        out.append(NoteSuggestions(eid, events[eid].midi, chosen, finding))
    return tuple(out)


def _rivals(verified: Mapping[str, list[_Cand]], index: Mapping[str, int]) -> dict[str, float]:
    """Per note, the weight of better corrections of other notes nearby (within ``2 * _REACH``
    notes in time order): one wrong note leaves trouble that a change of several notes around it
    can ease, and only the best of them is the wrong note. A note whose best correction is beaten
    by another note's shares its confidence with it; the best keeps its own."""
    best = {n: max(c.weight for c in cs) for n, cs in verified.items() if cs}
    out: dict[str, float] = {}
    for n, w in best.items():
        mine = {e for c in verified[n] for e in c.edits}
        out[n] = sum(
            v for m, v in best.items()
            if v > w and m not in mine and abs(index[m] - index[n]) <= 2 * _REACH
        )
    return out


_REACH = 6
"""How many notes either side (in time order) of a trouble spot may be the wrong note."""
_TRIES = 6
"""At most this many changes of nearby notes are verified per trouble spot."""


def _nearby(
    analysis: Analysis,
    events: Mapping[str, Event],
    order: Sequence[Event],
    index: Mapping[str, int],
    onsets: Sequence[Fraction],
    reported: Mapping[str, str],
    cands: Mapping[str, object],
) -> list[tuple[str, int]]:
    """Changes (event id, pitch) to explained notes near trouble (an unexplained note, a hole in a
    statement) that have no candidate yet: a wrong note the analysis absorbs (it reads as another
    position, a repeat, another statement) leaves the trouble beside it, not on it.

    A wrong note leaves its pitch class once too often around it and the one it replaced once too
    rarely: among the notes near each trouble spot, a semitone or third change from a pitch class
    more common there to a rarer one is tried, the largest imbalance and nearest note first."""
    spans = {(index[e], index[e]) for e in analysis.unexplained if e in index}
    for h in _trouble_holes(analysis, events):
        first = bisect.bisect_left(onsets, h.lo)
        spans.add((first, max(first, bisect.bisect_right(onsets, h.hi) - 1)))
    out: dict[tuple[str, int], None] = {}
    for lo_i, hi_i in sorted(spans):
        count = [0] * 12
        for e in order[max(0, lo_i - 2 * _REACH): hi_i + 2 * _REACH + 1]:
            count[e.pc] += 1
        tries = []
        for i in range(max(0, lo_i - _REACH), min(len(order), hi_i + _REACH + 1)):
            e = order[i]
            if e.id in reported or e.id in cands or analysis.tags.get(e.id) is None:
                continue
            for shift in (1, -1, 3, -3, 4, -4):
                excess = count[e.pc] - count[(e.pc + shift) % 12]
                if excess > 0 and 0 <= e.midi + shift <= 127:
                    distance = max(lo_i - i, i - hi_i, 0)
                    tries.append((-excess, distance, abs(shift), e.id, e.midi + shift))
        for *_rank, eid, midi in sorted(tries)[:_TRIES]:
            out[(eid, midi)] = None
    return list(out)


_ROUGH = 0.5


def _shape(analysis: Analysis) -> int:
    """Notes statements hold twice: repeats of a position and notes borrowed from another
    statement (elided)."""
    return sum(len(s.repeats) + len(s.elided) for s in analysis.statements)


def _doubled(analysis: Analysis, events: Mapping[str, Event], reported: Mapping[str, str]) -> list[tuple[str, int]]:
    """Suspect changes (event id, pitch): in a statement holding a position twice (a repeat), each
    of the two notes may be a wrong note that copies its position's pitch class; tried with the
    pitch classes of the neighbouring positions and of positions the statement borrows, by the
    error models (a semitone, a third, a step)."""
    out: dict[tuple[str, int], None] = {}
    for s in analysis.statements:
        if not s.repeats:
            continue
        pcs = analysis.row.form(s.form, analysis.convention)
        borrowed = [p for p, e in enumerate(s.event_ids) if e is not None and e in s.elided]
        for r in s.repeats:
            if r not in events or events[r].pc not in pcs:
                continue
            p = pcs.index(events[r].pc)
            for eid in (r, s.event_ids[p]):
                if eid is None or eid not in events or eid in reported:
                    continue
                e = events[eid]
                for q in sorted({p - 1, p + 1, *borrowed} - {p}):
                    if 0 <= q < 12 and pcs[q] != e.pc:
                        midi = _nearest(e.midi, pcs[q])
                        if error_model(e.midi, midi) != "other":
                            out[(eid, midi)] = None
    return list(out)
"""Per order inversion or voice jump in the statement a correction makes the note part of."""


def _roughness(analysis: Analysis, piece: Piece) -> int:
    """How far the statements are from plain lines: neighbouring positions found out of time
    order, and positions held in a voice that neither neighbouring position is in, or the first or
    last position in another voice than the line it starts or ends (a note of another voice, or
    another statement's, taken for it)."""
    events = {e.id: e for e in piece.events}
    out = 0
    for s in analysis.statements:
        found = [events[e] for e in s.event_ids if e is not None and e in events]
        out += sum(1 for a, b in zip(found, found[1:], strict=False) if a.onset > b.onset)
        out += sum(1 for a, b, c in zip(found, found[1:], found[2:], strict=False) if a.voice == c.voice != b.voice)
        if len(found) > 2:  # the first or last position in another voice than the line it starts or ends
            out += (found[0].voice != found[1].voice == found[2].voice) + (found[-1].voice != found[-2].voice == found[-3].voice)
    return out


_KEEP_WEIGHT = 4.0
"""The weight of "the note is right as written": a candidate that only halves the trouble
(one note fewer unexplained) at the likeliest prior never gets past half the confidence."""


def _statement_of(analysis: Analysis, local: Analysis, sid: str | None) -> str | None:
    """The statement of the whole analysis that a statement of a local re-analysis continues."""
    if sid is None:
        return None
    mine = next((s for s in local.statements if s.id == sid), None)
    if mine is None:
        return None
    members = set(mine.members)
    best, most = None, 0
    for s in analysis.statements:
        shared = len(members & set(s.members))
        if shared > most and analysis.row.form(s.form, analysis.convention) == local.row.form(
            mine.form, local.convention
        ):
            best, most = s.id, shared
    return best


def _reason(c: _Cand, event: Event, gain: int) -> str:
    assert c.form is not None
    where = f"{c.form.label}:{c.position}" + (f" of {c.statement}" if c.statement else "")
    after = c.edits[event.id]
    if c.model == "swap":
        other = next(e for e in c.edits if e != event.id)
        what = f"swapped with {other}: {_name(event.midi)} → {_name(after)} reads as {where}"
    else:
        what = f"{_name(event.midi)} → {_name(after)} reads as {where}; {_MODEL_TEXT[c.model]}"
    return f"{what} ({gain} fewer unexplained or missing notes)"


def _suggestion(c: _Cand, events: Mapping[str, Event], confidence: float) -> Suggestion:
    assert c.form is not None
    edits = tuple(Edit(e, events[e].midi, m) for e, m in sorted(c.edits.items(), key=lambda x: x[0] != c.note))
    return Suggestion(c.note, c.edits[c.note], edits, c.model, confidence, c.form, c.position,
                      c.statement, c.reason)


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
                onsets = dict(st.onsets)
                onsets[q] = event.onset
                onsets[p] = other.onset
                ordered = [onsets[k] for k in sorted(onsets)]
                if any(a > b for a, b in zip(ordered, ordered[1:], strict=False)):
                    continue
            fit = (1.0 if event.voice == other.voice else 0.5) * (1.0 if near else 0.4) * (0.5 if held else 1.0)
            mine = _nearest(event.midi, other.pc)
            theirs = _nearest(other.midi, x)
            out.append((
                fit,
                Suggestion(event.id, mine,
                           (Edit(event.id, event.midi, mine), Edit(other.id, other.midi, theirs)),
                           "swap", 0.0, st.statement.form, q, st.statement.id, ""),
            ))
    return out


_MODEL_TEXT = {
    "accidental": "a dropped or added accidental (a semitone)",
    "third": "a note a line off (a third; a wrong clef line)",
    "step": "a note a step off (a whole tone)",
    "swap": "two notes written in each other's place",
    "other": "no common copying error explains it",
}


@dataclass(frozen=True, slots=True)
class Applied:
    """One correction a repair made: the suggestion and the notes unexplained before and after."""

    suggestion: Suggestion
    unexplained_before: int
    unexplained_after: int


@dataclass(frozen=True, slots=True)
class RepairPlan:
    """What ``plan_repairs`` did: the corrected piece, the corrections applied in order, and the
    suggestions it held back (each still-reported note's best, below the threshold). Unpacks as
    ``piece, applied``."""

    piece: Piece
    applied: tuple[Applied, ...]
    held: tuple[Suggestion, ...] = ()

    def __iter__(self) -> Iterator[Any]:
        return iter((self.piece, self.applied))


def plan_repairs(
    piece: Piece,
    row: Any,
    convention: Any = "relative",
    threshold: float = DEFAULT_THRESHOLD,
    max_edits: int = 64,
    only: Iterable[str] | None = None,
) -> RepairPlan:
    """Apply the most confident suggestion, analyse again, and repeat while one reaches
    ``threshold`` and each change leaves fewer notes unexplained or missing.

    One correction at a time: a wrong note can leave correct notes around it unexplained, and
    those must not be "corrected" once the wrong note is put right. ``only``: the notes (event
    ids) that may change. Returns the corrected piece (tags not written), what was applied, and
    the suggestions below ``threshold`` that were left.
    """
    from serialkit.core.analysis import analyze

    allowed = None if only is None else set(only)
    if allowed is not None and not allowed:
        return RepairPlan(piece, ())
    current = piece
    analysis = analyze(current, row, convention)
    applied: list[Applied] = []
    tried: set[tuple[tuple[str, int], ...]] = set()
    held: list[Suggestion] = []
    while len(applied) < max_edits:
        best: Suggestion | None = None
        held = []
        for note in suggest(current, analysis, suspects=False):
            for cand in note.candidates[:1]:
                key = tuple((e.event_id, e.after) for e in cand.edits)
                if key in tried or (allowed is not None and any(e.event_id not in allowed for e in cand.edits)):
                    continue
                if cand.confidence < threshold:
                    held.append(cand)
                elif best is None or cand.confidence > best.confidence:
                    best = cand
        if best is None:
            break
        tried.add(tuple((e.event_id, e.after) for e in best.edits))
        changes = {e.event_id: e.after for e in best.edits}
        changed = current.with_events(
            e.copy(midi=changes[e.id]) if e.id in changes else e for e in current.events
        )
        after = analyze(changed, row, convention)
        if _badness(after, changed) >= _badness(analysis, current):
            continue
        applied.append(Applied(best, len(analysis.unexplained), len(after.unexplained)))
        current, analysis = changed, after
    return RepairPlan(current, tuple(applied), tuple(held))


def describe(candidate: Mapping[str, Any]) -> str:
    """One line for a candidate's JSON form: ``D#3 (P5:7 of S11; accidental, 82%)``; a swap
    names the other note too."""
    where = str(candidate["label"]) + (f" of {candidate['statement']}" if candidate.get("statement") else "")
    pitch = str(candidate["name"])
    if candidate["model"] == "swap":
        other = next(e for e in candidate["edits"] if e["event_id"] != candidate["event_id"])
        pitch = f"{pitch}, and {other['after_name']} for {other['before_name']} ({other['event_id']})"
    return f"{pitch} ({where}; {candidate['model']}, {float(candidate['confidence']):.0%})"
