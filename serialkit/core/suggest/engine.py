"""Suggested corrections: for every note the analysis cannot explain, the note most likely meant.

``suggest(piece, analysis)`` looks at each unexplained note (and each tagged note a ROW finding
names) and asks which statement it most plausibly belongs to: a statement with an order position
missing where the note stands in time, or a neighbouring note it may have been swapped with. Each
candidate pitch is scored by an explicit model of how engraving and copying errors happen:

- ``accidental``: an accidental dropped or added, the note a semitone off (same letter);
- ``third``: the note written a line too high or low (a wrong clef line: three or four semitones);
- ``step``: the note a line/space off by one step (a whole tone);
- ``swap``: two neighbouring notes of a statement written in each other's place (both models: the
  written notes exchanged, octave and all, and the pitch classes exchanged with each note kept in
  its register; the piece's register habit chooses, ``swap``);
- ``other``: any other pitch (rare; nearest octave).

The suggested pitch stays in the note's octave region (the error model's interval, else the
nearest octave). Confidence is the candidate's share of the evidence, with a fixed share kept for
"the note is right as written" (a statement the excerpt cuts off, a free note), so a note that
nothing wants is never confidently "corrected". Standard library only; consumes the public
:class:`~serialkit.core.analysis.Analysis` result.

This module verifies and ranks candidates and plans repairs (the package docstring names the
others).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from serialkit.core.analysis.model import Analysis
from serialkit.core.piece import Event, Piece
from serialkit.core.rows import RowForm, pc_name
from serialkit.core.suggest.after import (
    _breaks_whole,
    _clamp,
    _neighbours,
    _restruck,
    _rivals,
    _statement_of,
)
from serialkit.core.suggest.model import (
    _MODEL_TEXT,
    Edit,
    NoteSuggestions,
    Suggestion,
    _name,
    _nearest,
    error_model,
)
from serialkit.core.suggest.partners import (
    _chains,
    _hole_swaps,
    _loose_partners,
    _swap_partners,
    _trades,
)
from serialkit.core.suggest.readings import Readings
from serialkit.core.suggest.swap import Habit, in_register, written
from serialkit.core.suggest.trouble import (
    _REACH,
    _candidates,
    _doubled,
    _doubled_in_holes,
    _named_notes,
    _nearby,
    _nothing_reported,
    _read_elsewhere,
    _seeding,
    _statements,
)
from serialkit.core.suggest.windows import aligned, statement_spans

# How often each kind of error happens, relative to one another (engraving and copying habits).
_PRIOR = {"accidental": 1.0, "third": 0.55, "step": 0.3, "swap": 0.8, "other": 0.05}

# A correction after which the note only repeats a position is weaker than one where it holds one.
_REPEAT = 0.5

_REREAD = 2
"""A change that frees no unexplained note can only fill holes: one per note it changes (trouble 2
each, ``trouble._spots``). When the trouble goes down by more than those holes and this, the rest
is other notes read anew — statements stitched another way round the change — and such a change,
or one that leaves more notes unexplained, is never confident: correct notes of hand-offs were
changed for 4-12 fewer missing notes. The price: an absorbed wrong note whose correction re-reads
many notes without freeing one (two of bench_suggest's held-out plants, 8 and 18) is left
reported, not repaired."""

_ROUGH = 0.5
"""The weight kept per order inversion or voice jump a correction adds to the statements (and
gained per one it removes)."""


_DISPLACE = 0.25
"""The weight kept per note that held a position and is only a repeat after the change (its
position taken by the changed note): a wrong note's correction gives positions back."""


_SHORT = 0.5
"""The weight kept per position a correction leaves the statements lacking or holding twice
(``_short`` plus ``_shape``), up to ``_SHORT_CAP`` of them (and gained per one it gives back): of
two corrections that explain the same notes, the one that completes the statement is meant — the
other takes a correct note off its place, as a wrong note read as a repeat of its neighbour then
lets the statement stop short of the correct note's position."""

_SHORT_CAP = 2


_KEEP_WEIGHT = 4.0
"""The weight of "the note is right as written": a candidate that only halves the trouble
(one note fewer unexplained) at the likeliest prior never gets past half the confidence."""


_SHIFTS = (1, -1, 3, -3, 4, -4)
"""The pitch changes tried on a reported note whatever the statements want: an accidental, a third
(and ``_STEPS``), and on the notes of a statement read round a wrong note."""

_STEPS = (2, -2)
"""A step (a whole tone), tried on a reported note only: a wrong first or last note of a statement
written a second off (D for C) is otherwise left "nothing plausible"."""

_WIDE = 0.5
"""The prior kept by a change the wide pass tries: trouble that no likely correction clears (a
note a third off whose statement then reads as another form; a wrong note two positions from
where the statements look for it) gets every note near it tried at ``_SHIFTS`` and swapped with
its voice's next note, each kept only when nothing read before becomes unexplained and the trouble
goes, not moves."""

_GRID = 12
"""A screen's window starts and ends on a multiple of this many notes (in time order): changes
near one another share the window, and its reading without the change."""

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
    twin: dict[str, int] | None = None
    """A swap's other model: the written notes exchanged (``edits`` keeps each note's register)."""
    exchanged: bool = False
    """A swap that exchanges the written notes (``twin`` of another)."""
    also: float = 1.0
    """The prior of the further notes a correction changes beside its own (a chain of two wrong
    notes side by side: each is an error of its own)."""
    member: bool = False
    """A change of notes that hold positions of a statement with a hole near it (the statement
    may have been read round a wrong note; a hole's border swapped with the wanted pitch class):
    kept only when it leaves no note unexplained that was read before and the trouble goes, not
    moves."""
    crowd: int = 0
    """For the wide pass: how many of the trouble spots it looks round lie near the note (an
    absorbed wrong note sits among the correct notes it leaves unexplained): tried first."""
    clears: frozenset[str] = frozenset()
    """The reported notes the change leaves explained (its own changed notes among them)."""
    cut: tuple[int, ...] = ()
    """The pitch classes the changed note's statement still lacks beside it with nothing there
    that could be them (``_Reading.left_short``), or the one it fills past the statement's own
    notes (``_Reading.past_own``): it only stretches a statement cut off there."""
    borrowed: bool = False
    """``cut`` is a hole past the statement's own notes, the notes beyond it borrowed from another."""
    restruck: str | None = None
    """The neighbour the changed note re-strikes as written, which holds a position after the
    change while the change explains nothing of its own (``after._restruck``)."""
    reread: bool = False
    """Most of the trouble the change clears is other notes read anew (``_REREAD``)."""
    broken: str | None = None
    """The whole statement a changed note held a position of, left broken (``_breaks_whole``)."""

    @property
    def key(self) -> _Key:
        return tuple(sorted(self.edits.items()))


def suggest(
    piece: Piece,
    analysis: Analysis,
    findings: Iterable[Any] = (),
    limit: int = 3,
    window: int = 96,
    whole: int = 400,
    screen: int = 48,
    max_notes: int | None = None,
    budget: int | None = None,
    wide: int | None = None,
    suspects: bool = True,
    readings: Readings | None = None,
) -> tuple[NoteSuggestions, ...]:
    """Suggested corrections, best first per note, for every unexplained note, every tagged note
    a ROW or ORDER finding names (``findings``: Violation records or their dicts), every note
    standing where a statement has a hole, and both notes of a statement's edge position sounded
    twice where the statement stops short beside it (``Analysis.edge_repeats``), and both notes two
    statements take from each other's voice (``Analysis.exchanges``), and the notes sounding where a
    statement's position belongs when it borrows that position out of time
    (``Analysis.borrowed_out_of_time``), and the own notes of a scrap of a row form
    (``Analysis.scraps``).

    ``analysis`` is ``analyze(piece, row)`` of the piece's bare notes. Every candidate is verified
    by analysing the piece again with the change made (a piece longer than ``whole`` notes: the
    ``window`` notes either side of the change): a
    candidate is kept only when the changed notes are then explained and fewer notes are
    unexplained or missing; its weight is the error model's prior times the improvement. Before
    that, a candidate is screened on the ``screen`` notes either side of the change alone: one
    whose changed notes stay unexplained there (four in five do), or after which there is no less
    trouble there, is not analysed further.
    ``max_notes``: suggest for at most this many reported notes (the first in score order; the
    others are listed without candidates and ``complete`` False, as are the notes some of whose
    candidates ``budget`` or ``wide`` left unverified);
    ``budget``: verify at most this many candidates (each is one analysis), those a statement's
    hole supports first, then by the error model's prior.

    Trouble that no verified candidate clears with at least the weight of "right as written" (a
    wrong note the analysis absorbs, leaving correct notes around it unexplained) then gets the
    **wide pass**: every note near it is tried at ``_SHIFTS`` and swapped with its voice's next
    note (an unexplained note: with any note near it); ``wide``: verify at most this many of those
    (None: what ``budget`` leaves, or all). A note some of whose own candidates ``budget`` left
    unverified gets no wide pass: no likely correction is known not to clear it, and the wide
    pass's changes are less likely than those.

    ``suspects``: also try notes nothing reports whose statement holds a position twice (a wrong
    note the analysis absorbs as a repeat or doubling, so the piece passes): the pitch classes of
    the doubled position's neighbours and of positions the statement borrows from another
    (elided) are tried on both notes of the doubled position. Such a change is kept only when
    nothing gets worse and the statements become plainer (fewer repeats, borrowed notes, order
    inversions and voice jumps); it is reported with ``finding="suspect"`` at no more than a
    third of the confidence, and ``plan_repairs`` never applies it (Webern's own repeats and
    doublings are music).

    ``readings``: analyses already made (see :class:`Readings`), shared with other calls on the
    same piece; suggesting makes no analysis it finds there.
    """
    events = {e.id: e for e in piece.events}
    named = _named_notes(findings, events)
    readings = readings if readings is not None else Readings()
    row, convention = analysis.row, analysis.convention
    start = readings.read(piece, row, convention, analysis)
    all_holes = start.holes  # the piece's holes, found once
    if not suspects and _nothing_reported(piece, analysis, named, events, all_holes):
        return ()  # nothing to suggest (and nothing to measure it by)
    stmts = _statements(analysis, events)
    elsewhere = _read_elsewhere(analysis, events, all_holes)
    reported: dict[str, str] = {
        eid: "unexplained" for eid in analysis.unexplained if eid in events and eid not in elsewhere
    }
    for eid, code in named:
        reported.setdefault(eid, code)
    for r in analysis.edge_repeats(piece):  # a wrong note read as a repeat at a statement's end (check: ROW)
        for eid in (r.edge, r.repeat):
            reported.setdefault(eid, "ROW")
    for _a, _b, x, y in analysis.exchanges(piece):  # two statements crossing voices (check: ROW)
        for eid in (x, y):
            reported.setdefault(eid, "ROW")
    for _s, own in analysis.scraps():  # a wrong note read as a scrap of a row form (check: ROW)
        for eid in own:
            if eid in events:
                reported.setdefault(eid, "ROW")
    borrowed = analysis.borrowed_out_of_time(piece)  # its own note never sounds (check: ROW)
    for b in borrowed:
        for eid in b.inside:
            reported.setdefault(eid, "ROW")
    skipped: dict[str, str] = {}  # reported notes past ``max_notes``: none of their candidates tried
    if max_notes is not None and len(reported) > max_notes:
        skipped = dict(list(reported.items())[max_notes:])
        reported = dict(list(reported.items())[:max_notes])
    order = sorted(piece.events, key=lambda e: (e.onset, e.voice, e.midi, e.id))
    index = {e.id: i for i, e in enumerate(order)}
    onsets = [e.onset for e in order]
    spans = statement_spans(analysis, events)
    by_voice: dict[str, list[Event]] = piece.by_voice()
    place = {x.id: k for voice in by_voice.values() for k, x in enumerate(voice)}
    cands: dict[str, dict[_Key, _Cand]] = {}

    def add(c: _Cand) -> None:
        if any(not 0 <= m <= 127 or m == events[e].midi for e, m in c.edits.items()):
            return
        if c.model == "swap":
            c.twin = written(c.edits, events)
        bucket = cands.setdefault(c.note, {})
        old = bucket.get(c.key)
        if old is None or c.local > old.local:
            bucket[c.key] = c

    for eid in reported:
        event = events[eid]
        for weight, s in _candidates(event, stmts, events, analysis, piece):
            add(_Cand(eid, {e.event_id: e.after for e in s.edits}, s.model, weight))
        for shift in (*_SHIFTS, *_STEPS):
            midi = event.midi + shift
            add(_Cand(eid, {eid: midi}, error_model(event.midi, midi)))
        for other in _swap_partners(by_voice.get(event.voice, []), event):
            add(_Cand(eid, in_register(event, other), "swap"))
        if reported[eid] == "unexplained":  # two notes nothing explains, each written in the other's place
            for other in _loose_partners(by_voice.get(event.voice, []), event, reported):
                add(_Cand(eid, in_register(event, other), "swap"))
    for b in borrowed:  # a note where the borrowed position belongs may be its own note, written wrong
        want = analysis.row.form(b.statement.form, analysis.convention)[b.position]
        for eid in b.inside:
            midi = _nearest(events[eid].midi, want)
            if events[eid].pc != want and error_model(events[eid].midi, midi) != "other":
                add(_Cand(eid, {eid: midi}, error_model(events[eid].midi, midi), 1.0))
    holes = _seeding(all_holes, analysis, events)  # not the open ends cut off
    for h in holes:  # the wanted pitch class sounds just outside the hole: written in another's place
        for eid, other in _hole_swaps(h, order, index, onsets, events):
            add(_Cand(eid, in_register(events[eid], other), "swap", member=True))
    for eid, edits, models in _chains(reported, analysis, events, by_voice, holes):
        add(_Cand(eid, edits, models[0], 0.5, also=_PRIOR[models[1]]))
    for eid, midi in _doubled_in_holes(analysis, events, holes):  # a wrong note read as a repeat
        if eid not in reported:
            add(_Cand(eid, {eid: midi}, error_model(events[eid].midi, midi)))
    for h in holes:
        for e in order[bisect.bisect_left(onsets, h.lo):bisect.bisect_right(onsets, h.hi)]:
            if e.id in h.members and e.id not in reported:  # the statement read round a wrong note:
                for shift in _SHIFTS:  # it may be the note (another form fits once it is right)
                    add(_Cand(e.id, {e.id: e.midi + shift}, error_model(e.midi, e.midi + shift), member=True))
            midi = _nearest(e.midi, h.want)
            model = error_model(e.midi, midi)
            if e.pc == h.want or model == "other":
                continue
            strength = 0.0 if e.id in h.members else 1.0 if e.voice in h.voices else 0.3
            add(_Cand(e.id, {e.id: midi}, model, strength))
    for eid, midi in _nearby(analysis, events, order, index, onsets, reported, cands, holes):
        add(_Cand(eid, {eid: midi}, error_model(events[eid].midi, midi)))
    if suspects:
        taken = set(cands)
        for eid, midi in _doubled(analysis, events, reported):
            if eid not in taken:
                add(_Cand(eid, {eid: midi}, error_model(events[eid].midi, midi), suspect=True))
    verified: dict[str, list[_Cand]] = {}
    long = len(order) > whole  # windows of a long piece: their cut edges are context (``analyze(cut=)``)

    def cut(lo_i: int, hi_i: int) -> tuple[bool, bool]:
        return (long and lo_i > 0, long and hi_i < len(order))

    habit: Habit | None = None
    tried: set[_Key] = set()

    def _screened(edits: Mapping[str, int], ixs: list[int], suspect: bool = False) -> bool:
        """Do the changed notes read in the ``screen`` notes either side of the change (a window
        on ``_GRID``), and is there less trouble there with the change made (in the window, or
        within ``2 * _REACH`` notes of the change, as ``verify`` asks of a change after which the
        trouble only moved)? A change that fails either is not analysed further (most candidates
        end here); a ``suspect`` change, kept for plainer statements alone, is only asked the
        first."""
        lo_i, hi_i = max(0, min(ixs) - screen) // _GRID * _GRID, min(len(order), -(-(max(ixs) + screen + 1) // _GRID) * _GRID)
        if hi_i - lo_i >= min(len(order), whole) * 0.6:
            return True  # the screen would be most of what the verification reads
        near = [e.copy(midi=edits[e.id]) if e.id in edits else e for e in order[lo_i:hi_i]]
        edges = (lo_i > 0, hi_i < len(order))  # a screen is a window of any piece: its cut edges are context
        after = readings.read(piece.with_events(near), row, convention, cut=edges)
        if not all(after.analysis.tags.get(e) is not None for e in edits):
            return False
        if suspect:
            return True
        before = readings.read(piece.with_events(order[lo_i:hi_i]), row, convention, cut=edges)
        if before.badness > after.badness:
            return True
        lo, hi = onsets[max(0, min(ixs) - 2 * _REACH)], onsets[min(len(order) - 1, max(ixs) + 2 * _REACH)]
        return before.near(lo, hi) > after.near(lo, hi)

    def verify(c: _Cand) -> None:
        """Analyse the piece with ``c`` made; keep it (in ``verified``) when it explains more."""
        nonlocal habit
        note = c.note
        tried.add(c.key)
        if c.twin is not None:
            tried.add(tuple(sorted(c.twin.items())))
        ixs = [index[e] for e in c.edits]
        if not _screened(c.edits, ixs, c.suspect):
            return
        edges = (False, False)
        sub = piece  # row passing is learnt from the whole piece: analyse it all
        if len(order) > whole:
            lo_i, hi_i = aligned(spans, onsets, max(0, min(ixs) - window),
                                  min(len(order), max(ixs) + window + 1), window // 2)
            sub, edges = piece.with_events(order[lo_i:hi_i]), cut(lo_i, hi_i)
        changed = sub.with_events(
            e.copy(midi=c.edits[e.id]) if e.id in c.edits else e for e in sub.events
        )
        reading = readings.read(changed, row, convention, cut=edges)
        after = reading.analysis
        tag = after.tags.get(note)
        if tag is None or any(after.tags.get(e) is None for e in c.edits):
            return  # (the window without the change is read only for a change that reads)
        before = start if sub is piece else readings.read(sub, row, convention, cut=edges)
        gain = before.badness - reading.badness
        if c.model == "swap" and not _neighbours(after, c.edits):
            return  # a swap puts two neighbouring notes of a statement back in their places
        trade = _trades(c.edits, before.analysis, after, index)
        if trade == "hole":
            return
        plainer = before.roughness + before.shape - reading.roughness - reading.shape
        moved = False
        if gain == 0 and not c.suspect:  # the trouble may only have moved away from the change
            ixs = [index[e] for e in c.edits]
            lo, hi = onsets[max(0, min(ixs) - 2 * _REACH)], onsets[min(len(order) - 1, max(ixs) + 2 * _REACH)]
            gain = before.near(lo, hi) - reading.near(lo, hi)
            moved = gain > 0
        if gain < 0 or gain == 0 and not (c.suspect and plainer > 0):
            return
        if c.member and (moved or not set(after.unexplained) <= set(before.analysis.unexplained)):
            return
        c.form, c.position = tag.form, tag.position
        c.statement = _statement_of(analysis, after, tag.statement)
        home = next((s for s in after.statements if s.id == tag.statement), None)
        holds = home is not None and note in home.event_ids
        if home is not None and not holds and home.found < 12:
            return  # it only becomes a repeat in a statement still short of notes: nothing explained
        if not before.analysis.unexplained and any(note in h.members for h in reading.holes):
            return  # every note was read: filling one hole of a statement still missing others only moves holes
        displaced = sum(1 for e in before.held - reading.held if e not in c.edits and after.tags.get(e) is not None)
        c.weight = (_PRIOR[c.model] * c.also * 4.0 ** min(gain, 200) * (1.0 + c.local) * (1.0 if holds else _REPEAT)
                    * _ROUGH ** (reading.roughness - before.roughness) * _DISPLACE ** displaced
                    * _SHORT ** _clamp(reading.short + reading.shape - before.short - before.shape, _SHORT_CAP))
        if c.suspect:  # never more than a third of the confidence
            c.weight = min(c.weight * 2.0 ** max(plainer, 0), _KEEP_WEIGHT / 2)
        if moved:  # as much trouble is left elsewhere: never confident (a repair needs less trouble)
            c.weight = min(c.weight, _KEEP_WEIGHT / 2)
        c.cut = reading.left_short(note) if holds else ()
        if holds and not c.cut and home is not None and before.past_own(
                c.edits[note] % 12, events[note].onset, frozenset(home.members)):
            c.cut, c.borrowed = (c.edits[note] % 12,), True  # it fills a hole past the statement's own notes
        freed = len(before.analysis.unexplained) - len(after.unexplained)
        c.reread = not moved and (freed < 0 or freed == 0 and gain - 2 * len(c.edits) > _REREAD)
        c.restruck = _restruck(note, c.edits[note] % 12, by_voice[events[note].voice], place[note], events,
                               before.analysis, after, home, reading.held,
                               order[max(0, index[note] - 2 * _REACH):index[note] + 2 * _REACH + 1])
        c.broken = None if home is None or home.found == 12 else _breaks_whole(before.analysis, after, c.edits)
        if c.cut or c.restruck or c.reread or c.broken:  # it stays short / repeats a neighbour as written /
            c.weight = min(c.weight, _KEEP_WEIGHT / 2)  # re-reads others / breaks a whole statement
        if trade == "borrowed":  # its statement now borrows the pitch class from far off: doubtful
            c.weight = min(c.weight * _DISPLACE, _KEEP_WEIGHT / 2)
        c.clears = frozenset(
            r for r in reported
            if r in c.edits or r in before.analysis.unexplained and after.tags.get(r) is not None
        )
        c.reason = _reason(c, events[note], gain, moved)
        verified.setdefault(note, []).append(c)
        if c.twin is not None:  # the analysis reads pitch classes: the other exchange reads alike
            habit = habit or Habit(events)
            mine, theirs = habit.factors(c.edits, c.twin)
            twin = replace(c, edits=c.twin, weight=c.weight * theirs, twin=None, exchanged=True)
            c.weight *= mine
            twin.reason = _reason(twin, events[note], gain, moved)
            verified[note].append(twin)

    queue = _ranked(cands, index)
    untried: set[str] = set()  # reported notes some of whose candidates the budget left unverified
    if budget is not None:
        untried.update(c.note for c in queue[budget:] if c.note in reported)
        queue = queue[:budget]
    for c in queue:
        verify(c)
    left = wide if wide is not None else None if budget is None else budget - len(queue)
    if left is None or left > 0:  # trouble no likely correction clears: every note near it tried
        cands = {}
        spots = [r for r in _unserved(reported, verified, index) if r not in untried]
        origin: dict[_Key, set[str]] = {}  # the spots each change is tried round
        for eid in spots:
            for changed_id, edits, model in _wider(events[eid], reported[eid], order, index, by_voice, place):
                key = tuple(sorted(edits.items()))
                if key not in tried:
                    add(_Cand(changed_id, edits, model, also=_WIDE, member=True))
                    origin.setdefault(key, set()).add(eid)
        for bucket in cands.values():
            for c in bucket.values():
                c.crowd = sum(1 for r in spots if abs(index[r] - index[c.note]) <= _REACH)
        more = _ranked(cands, index)
        if left is not None:
            untried.update(r for c in more[left:] for r in origin.get(c.key, ()))
            more = more[:left]
        for c in more:
            verify(c)
    rivals = _rivals(verified, index)
    out = []
    untried.update(skipped)
    for eid in [e.id for e in piece.events if e.id in reported or e.id in verified or e.id in skipped]:
        once: dict[_Key, _Cand] = {}
        for c in verified.get(eid, []):  # a swap's twin may be another candidate's change too
            if c.key not in once or c.weight > once[c.key].weight:
                once[c.key] = c
        found = sorted(once.values(), key=lambda c: (-c.weight, c.key))
        total = sum(c.weight for c in found) + _KEEP_WEIGHT + rivals.get(eid, 0.0)
        chosen = tuple(_suggestion(c, events, c.weight / total) for c in found[:limit])
        finding = reported.get(eid) or skipped.get(eid) or ("suspect" if all(c.suspect for c in found) else "hole")
        out.append(NoteSuggestions(eid, events[eid].midi, chosen, finding, complete=eid not in untried))
    return tuple(out)


def _ranked(cands: Mapping[str, Mapping[_Key, _Cand]], index: Mapping[str, int]) -> list[_Cand]:
    """The candidates in the order they are verified: those a statement supports first, then by
    the error model's prior."""
    return sorted(
        (c for bucket in cands.values() for c in bucket.values()),
        key=lambda c: (c.local <= 0, -c.crowd, -_PRIOR[c.model] * c.also * (1.0 + c.local), index[c.note], c.key),
    )


def _unserved(reported: Mapping[str, str], verified: Mapping[str, list[_Cand]],
              index: Mapping[str, int]) -> list[str]:
    """The reported notes that no kept correction clears with at least the weight of "right as
    written" (in score order)."""
    served = {r for cs in verified.values() for c in cs if c.weight >= _KEEP_WEIGHT for r in c.clears}
    return sorted((r for r in reported if r not in served), key=lambda r: index[r])


def _wider(event: Event, finding: str, order: Sequence[Event], index: Mapping[str, int],
           by_voice: Mapping[str, list[Event]], place: Mapping[str, int]) -> Iterator[tuple[str, dict[str, int], str]]:
    """The changes the wide pass tries round a reported note nothing clears: every note within
    ``_REACH`` (in time order) moved by ``_SHIFTS`` and swapped (each in its register) with its
    voice's next note of another pitch class; an unexplained note swapped with any note within
    ``2 * _REACH``. ``place``: each note's index in its voice. Yields (changed note, edits, model)."""
    i = index[event.id]
    for e in order[max(0, i - _REACH):i + _REACH + 1]:
        for shift in _SHIFTS:
            yield e.id, {e.id: e.midi + shift}, error_model(e.midi, e.midi + shift)
        voice = by_voice.get(e.voice, [])
        nxt = next((x for x in voice[place[e.id] + 1:] if x.pc != e.pc), None)
        if nxt is not None:
            yield e.id, in_register(e, nxt), "swap"
    if finding == "unexplained":
        for e in order[max(0, i - 2 * _REACH):i + 2 * _REACH + 1]:
            if e.id != event.id and e.pc != event.pc:
                yield event.id, in_register(event, e), "swap"


def _reason(c: _Cand, event: Event, gain: int, moved: bool = False) -> str:
    assert c.form is not None
    where = f"{c.form.label}:{c.position}" + (f" of {c.statement}" if c.statement else "")
    after = c.edits[event.id]
    if len(c.edits) > 1 and c.model != "swap":
        other = next(e for e in c.edits if e != event.id)
        what = (f"{_name(event.midi)} → {_name(after)} reads as {where}, and {other} → {_name(c.edits[other])} "
                f"fills the position beside it; two wrong notes side by side")
    elif c.model == "swap":
        other = next(e for e in c.edits if e != event.id)
        how = "the written notes exchanged" if c.exchanged else "each in its register"
        what = f"swapped with {other}: {_name(event.midi)} → {_name(after)} reads as {where}; {how}"
    else:
        what = f"{_name(event.midi)} → {_name(after)} reads as {where}; {_MODEL_TEXT[c.model]}"
    if moved:
        return f"{what} ({gain} fewer unexplained or missing notes around it, as many more elsewhere)"
    if c.cut and c.borrowed:
        return (f"{what} ({gain} fewer unexplained or missing notes; its statement's own notes stop "
                f"short of it, the notes beyond only borrowed from another statement, no note there: "
                f"cut off, not completed)")
    if c.cut:
        return (f"{what} ({gain} fewer unexplained or missing notes; its statement still lacks "
                f"{', '.join(map(pc_name, c.cut))} beside it, no note there: cut off, not completed)")
    if c.reread:
        return (f"{what} ({gain} fewer unexplained or missing notes, most of them other notes read anew "
                f"round it: a re-reading, not a correction)")
    if c.broken is not None:
        return (f"{what} ({gain} fewer unexplained or missing notes, but it takes a note of the whole "
                f"statement {c.broken}, which is then no longer whole: a re-reading, not a correction)")
    if c.restruck is not None:
        return (f"{what} ({gain} fewer unexplained or missing notes; as written it re-strikes {c.restruck}, "
                f"which holds its position then: the notes read anew need no change)")
    return f"{what} ({gain} fewer unexplained or missing notes)"


def _suggestion(c: _Cand, events: Mapping[str, Event], confidence: float) -> Suggestion:
    assert c.form is not None
    edits = tuple(Edit(e, events[e].midi, m) for e, m in sorted(c.edits.items(), key=lambda x: x[0] != c.note))
    return Suggestion(c.note, c.edits[c.note], edits, c.model, confidence, c.form, c.position,
                      c.statement, c.reason)
