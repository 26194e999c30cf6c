"""Result values of row-form inference: statements found, ambiguities, the whole analysis."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from serialkit.core.piece import Piece, Tag
from serialkit.core.rows import Convention, Row, RowForm, position_label

if TYPE_CHECKING:
    from serialkit.core.analysis.identify import Identification


SCRAP = 3
"""An incomplete statement with fewer notes of its own than this explains nothing
(``Analysis.scraps``)."""


@dataclass(frozen=True, slots=True)
class Statement:
    """One row statement found in the score: its form and the event holding each order position."""

    id: str
    form: RowForm
    event_ids: tuple[str | None, ...]
    voices: tuple[str, ...]
    complete: bool
    aliases: tuple[RowForm, ...] = ()
    repeats: tuple[str, ...] = ()
    elided: tuple[str, ...] = ()

    @property
    def found(self) -> int:
        """How many of the 12 order positions have a note."""
        return sum(1 for e in self.event_ids if e is not None)

    def positions(self) -> list[int]:
        """The order positions the statement states (own notes and borrowed ones), in order."""
        return [k for k, e in enumerate(self.event_ids) if e is not None]

    def holes(self) -> int:
        """Positions missing between the first and the last the statement states (-1: it states
        none, or it is cut short at an end)."""
        found = self.positions()
        if not found or found[0] != 0 or found[-1] != 11:
            return -1
        return 12 - len(found)

    def own_positions(self) -> list[int]:
        """The order positions held by the statement's own notes (not borrowed from another)."""
        return [k for k, e in enumerate(self.event_ids) if e is not None and e not in self.elided]

    @property
    def members(self) -> tuple[str, ...]:
        """Every event of the statement: one per position found, then repeated notes."""
        return tuple(e for e in self.event_ids if e is not None) + self.repeats

    def to_dict(self) -> dict[str, Any]:
        """JSON form (the check report's ``statements`` entries, plus aliases and repeats)."""
        return {
            "id": self.id,
            "form": self.form.label,
            "aliases": [a.label for a in self.aliases],
            "event_ids": list(self.event_ids),
            "repeats": list(self.repeats),
            "elided": list(self.elided),
            "voices": list(self.voices),
            "complete": self.complete,
        }


@dataclass(frozen=True, slots=True)
class Ambiguity:
    """An event with more than one label; ``candidates`` lists every label, chosen first.

    Either the note has more than one reading (it ends one statement and begins another, is a
    pivot, fits two statements): an *ambiguity* as ``check`` and ``render`` count them; or it has
    one reading that a symmetric row names twice (``P0:3`` is also ``R6:3``): ``one_reading``,
    listed so that every label of the note is known, not counted as an ambiguity."""

    event_id: str
    candidates: tuple[Tag, ...]
    reason: str

    @property
    def one_reading(self) -> bool:
        """True when every candidate is the same statement's same position (a symmetric row's
        other names for it): one reading, not an ambiguity."""
        return len({(t.statement, t.position) for t in self.candidates}) == 1

    def to_dict(self) -> dict[str, Any]:
        """JSON form: candidate labels like ``P0:3``."""
        return {
            "event_id": self.event_id,
            "candidates": [position_label(t.form, t.position) for t in self.candidates],
            "statements": [t.statement for t in self.candidates],
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class EdgeRepeat:
    """A statement cut short at an end whose edge position sounds twice (``Analysis.edge_repeats``):
    the doubled position, the missing position beside it, the edge note and its repeat."""

    statement: Statement
    position: int
    missing: int
    edge: str
    repeat: str
    of: Statement | None = None
    """The statement whose position sounds twice when it is not ``statement`` itself: a wrong
    note read as a repeat of the neighbouring statement's edge note (``position`` is then that
    statement's position; ``statement`` lacks ``missing`` beside it)."""


@dataclass(frozen=True, slots=True)
class Borrowed:
    """A statement borrowing a position from a note sounding out of its order
    (``Analysis.borrowed_out_of_time``): the position, the borrowed note, where the position
    belongs in time (``lo``, ``hi``; None: open) and the statement's notes sounding there."""

    statement: Statement
    position: int
    note: str
    lo: Fraction | None
    hi: Fraction | None
    inside: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Analysis:
    """The inferred tag of every event (None = unexplained), statements, coverage, ambiguities."""

    row: Row
    convention: Convention
    tags: Mapping[str, Tag | None]
    statements: tuple[Statement, ...]
    unexplained: tuple[str, ...]
    ambiguities: tuple[Ambiguity, ...]
    seconds: float = 0.0
    notes: tuple[str, ...] = field(default=())
    identification: Identification | None = None  # how the row was found, when it was not given

    @property
    def coverage(self) -> Fraction:
        """The share of events that carry a tag (1 for an empty piece)."""
        total = len(self.tags)
        if total == 0:
            return Fraction(1)
        return Fraction(total - len(self.unexplained), total)

    @property
    def complete_share(self) -> Fraction:
        """The share of explained notes that lie in complete statements (0 when none is explained):
        low when the row is read only in fragments, as a wrong row or non-serial music is. A
        statement lacking a single position between two it states counts as complete: that is
        the hole one wrong note leaves, not a fragment (a short exercise with a wrong note in each
        statement is still twelve-tone writing)."""
        explained = sum(s.found for s in self.statements)
        whole = sum(s.found for s in self.statements if s.complete or s.holes() == 1)
        return Fraction(whole, explained) if explained else Fraction(0)

    def edge_repeats(self, piece: Piece | None = None) -> list[EdgeRepeat]:
        """Statements cut short at an end whose edge note sounds twice. A wrong note that happens
        to repeat its neighbour (a piece's last note written as the one before it) is read as a
        repeat, which real scores allow, and leaves its statement one position short at that end:
        the repeat stands where the missing position would.

        With the ``piece`` (for the notes' voices and times), also a statement cut short at an end
        whose neighbouring note in its voice belongs to another statement's position that sounds
        twice: a statement's first note written as the previous statement's last pitch reads as a
        repeat of it (``EdgeRepeat.of``). Not when the doubled pitch class is the missing one (the
        note is then merely read as the other statement's: correct music)."""
        out = []
        shared, repeated = self._shared_and_repeated()
        onset = {e.id: e.onset for e in piece.events} if piece is not None else None
        for s in self.statements:
            found = s.own_positions()
            if not found or len(found) == 12 or not s.repeats:
                continue
            struck = self._repeats_by_position(s)
            for k, missing in ((found[-1], found[-1] + 1), (found[0], found[0] - 1)):
                edge = s.event_ids[k]
                again = struck.get(k, [])
                if not (0 <= missing < 12 and again and edge is not None):
                    continue
                if missing in struck:
                    continue  # its own tremolo returns to the position: it sounds, shared at the edge
                if _habitual(s.event_ids[missing], again, shared, repeated):
                    continue
                if onset is not None and _not_a_pair(s, found, missing > k, [edge, *again], struck, onset):
                    continue
                out.append(EdgeRepeat(s, k, missing, edge, again[0]))
        if piece is not None:
            out += self._crossed_edges(piece, {(r.statement.id, r.missing) for r in out}, shared, repeated)
        return out

    def _repeats_by_position(self, s: Statement) -> dict[int, list[str]]:
        """The statement's repeated notes by the position each repeats (in ``s.repeats``' order)."""
        out: dict[int, list[str]] = {}
        for r in s.repeats:
            if (tag := self.tags.get(r)) is not None:
                out.setdefault(tag.position, []).append(r)
        return out

    def _shared_and_repeated(self) -> tuple[set[str], set[str]]:
        """The notes two statements share (elisions) and the notes repeating a position."""
        return ({e for s in self.statements for e in s.elided}, {e for s in self.statements for e in s.repeats})

    def _crossed_edges(self, piece: Piece, seen: set[tuple[str, int]], shared: set[str],
                       repeated: set[str]) -> list[EdgeRepeat]:
        """``edge_repeats``' second kind: the doubled position belongs to the neighbouring statement."""
        doubled: dict[str, tuple[Statement, int, list[str]]] = {}  # note -> (statement, position, its notes)
        for s in self.statements:
            notes = {k: [e] for k, e in enumerate(s.event_ids) if e is not None and e not in s.elided}
            for k, reps in self._repeats_by_position(s).items():
                notes.setdefault(k, []).extend(reps)
            for k, ids in notes.items():
                if len(ids) > 1:
                    for e in ids:
                        doubled[e] = (s, k, ids)
        if not doubled:
            return []
        voices = piece.by_voice()
        onsets = {v: [e.onset for e in line] for v, line in voices.items()}  # sorted, as the lines are
        at = {e.id: (e.voice, e.onset) for e in piece.events}
        out = []
        for s in self.statements:
            found = s.own_positions()
            if not found or len(found) == 12:
                continue
            for k, missing, later in ((found[-1], found[-1] + 1, True), (found[0], found[0] - 1, False)):
                edge = s.event_ids[k]
                if not 0 <= missing < 12 or edge is None or (s.id, missing) in seen or edge not in at:
                    continue
                voice, onset = at[edge]
                line, times = voices.get(voice, []), onsets.get(voice, [])
                if later:  # the notes of the voice's next onset after the edge note, or of the one before
                    lo = bisect.bisect_right(times, onset)
                    hi = bisect.bisect_right(times, times[lo]) if lo < len(times) else lo
                else:
                    hi = bisect.bisect_left(times, onset)
                    lo = bisect.bisect_left(times, times[hi - 1]) if hi else hi
                for near in line[lo:hi]:
                    held = doubled.get(near.id)
                    if held is not None and held[0] is not s:
                        other, p, ids = held
                        if self.row.form(other.form, self.convention)[p] == self.row.form(s.form, self.convention)[missing]:
                            continue  # the note sounds the missing pitch class: read elsewhere, not wrong
                        slot = other.event_ids[p] or ids[0]
                        twin = near.id if near.id != slot else next(i for i in ids if i != slot)
                        if not _habitual(s.event_ids[missing], ids, shared, repeated):
                            out.append(EdgeRepeat(s, p, missing, slot, twin, other))
                        break
        return out

    def borrowed_out_of_time(self, piece: Piece) -> list[Borrowed]:
        """Statements that borrow a position from another statement's note sounding out of their
        order — before a note held at an earlier position, or after one at a later position. A
        shared note (an elision) joins two statements where they meet; borrowed out of time, it
        only covers for the statement's own note of that pitch class, which never sounds: the note
        written where it belongs is likely wrong (read as a repeat). Not when an unexplained note
        sounds where the position belongs (that note is the wrong one, and reported as such)."""
        if not any(s.elided for s in self.statements):  # the usual reading: nothing borrowed, nothing to sort
            return []
        events = {e.id: e for e in piece.events}
        loose = set(self.unexplained)
        order = sorted(piece.events, key=lambda e: (e.onset, e.voice, e.midi, e.id))
        onsets = [e.onset for e in order]
        out = []
        for s in self.statements:
            if not s.elided:
                continue
            own = [(k, events[e].onset) for k, e in enumerate(s.event_ids)
                   if e is not None and e not in s.elided and e in events]
            voices = {events[x].voice for x in s.event_ids if x is not None and x in events and x not in s.elided}
            for k, e in enumerate(s.event_ids):
                if e is None or e not in s.elided or e not in events:
                    continue
                t = events[e].onset
                if not any(j < k and u > t or j > k and u < t for j, u in own):
                    continue
                # where the position belongs: after the note before it, up to the second note after
                # it (the wrong note may have taken the next position, pushing its note to a repeat)
                lo = max((u for j, u in own if j < k), default=None)
                later = sorted(u for j, u in own if j > k)
                hi = later[1] if len(later) > 1 else later[0] if later else None
                span = order[0 if lo is None else bisect.bisect_right(onsets, lo):
                             len(order) if hi is None else bisect.bisect_right(onsets, hi)]
                window = [x.id for x in span if x.voice in voices and x.id != e]
                if any(x in loose for x in window):
                    continue
                members = set(s.members)
                if lo is not None:  # a chord where the position's note became a second note of one pitch class
                    chord = [x for x in order[bisect.bisect_left(onsets, lo):bisect.bisect_right(onsets, lo)]
                             if x.voice in voices]
                    twice = {x.pc for x in chord if sum(1 for y in chord if y.pc == x.pc) > 1}
                    window = [x.id for x in chord if x.pc in twice] + window
                out.append(Borrowed(s, k, e, lo, hi, tuple(x for x in window if x in members)))
        return out

    def scraps(self) -> list[tuple[Statement, tuple[str, ...]]]:
        """Incomplete statements with fewer than ``SCRAP`` notes of their own (the rest, if any,
        borrowed from a neighbouring statement), each with its own notes. A scrap is how the
        analysis absorbs a wrong note that happens to fit some form somewhere — a statement's
        first note written as its second can read as a three-note "statement" made of the previous
        statement's last two notes and it — and is not a statement of the row."""
        out = []
        for s in self.statements:
            own = tuple(e for k in s.own_positions() if (e := s.event_ids[k]) is not None)
            if not s.complete and own and len(own) < SCRAP:
                out.append((s, own))
        return out

    def exchanges(self, piece: Piece) -> list[tuple[Statement, Statement, str, str]]:
        """Two statements, each in one voice but for one note, that take each other's voice's note
        of one pitch class: (first statement, second, the note the first takes from the second's
        voice, the note the second takes from the first's). Read in their own voices one of them
        would be out of order; the analysis crossed the voices to cover a wrong note (two notes of
        a voice written in each other's place beside a beat where both voices sound that pitch
        class). The two notes sound within two of the statements' mean steps of each other and hold
        inner positions (a statement's first or last note taken from the other voice is a hand-over
        between the voices, as where one voice's statement ends on the pitch class the other's
        begins with)."""
        voice_of = {e.id: (e.voice, e.pc) for e in piece.events}
        onset = {e.id: e.onset for e in piece.events}
        strays: dict[tuple[str, str, int], list[tuple[Statement, str]]] = {}
        for s in self.statements:
            homes: dict[str, list[str]] = {}
            for e in s.event_ids:
                if e is not None and e not in s.elided and e in voice_of:
                    homes.setdefault(voice_of[e][0], []).append(e)
            if len(homes) != 2:
                continue
            (home, mine), (away, stray) = sorted(homes.items(), key=lambda kv: (-len(kv[1]), kv[0]))
            if len(stray) == 1 and len(mine) >= 3 and s.event_ids.index(stray[0]) not in (0, 11):  # an edge: a hand-over
                strays.setdefault((home, away, voice_of[stray[0]][1]), []).append((s, stray[0]))
        def step(s: Statement) -> Fraction:
            times = sorted(onset[e] for e in s.event_ids if e is not None and e in onset)
            return (times[-1] - times[0]) / max(1, len(times) - 1)

        out = []
        for (home, away, pc), ours in strays.items():
            for a, x in ours:
                for b, y in strays.get((away, home, pc), []):
                    if a.id < b.id and abs(onset[x] - onset[y]) <= 2 * max(step(a), step(b)):
                        out.append((a, b, x, y))
        return out

    def label(self, event_id: str) -> str | None:
        """The printed label of one event (``P0:3``) or None when unexplained."""
        tag = self.tags.get(event_id)
        return None if tag is None else position_label(tag.form, tag.position)

    def labels(self) -> dict[str, str | None]:
        """Event id → printed label or None."""
        return {eid: self.label(eid) for eid in self.tags}

    def tagged(self, piece: Piece) -> Piece:
        """The piece with the inferred tags written into its events (None where unexplained)."""
        return piece.copy(row=self.row, convention=self.convention).with_tags(self.tags)

    def to_dict(self) -> dict[str, Any]:
        """JSON form, using the same keys as the check report."""
        return {
            "row": list(self.row.pcs),
            "row_names": self.row.names(),
            "convention": self.convention,
            "coverage": float(self.coverage),
            "coverage_exact": f"{self.coverage.numerator}/{self.coverage.denominator}",
            "events": len(self.tags),
            "labels": self.labels(),
            "unexplained": list(self.unexplained),
            "ambiguities": [a.to_dict() for a in self.ambiguities],
            "statements": [s.to_dict() for s in self.statements],
            "notes": list(self.notes),
            "identification": None if self.identification is None else self.identification.to_dict(),
        }


def _not_a_pair(s: Statement, found: list[int], later: bool, notes: list[str],
                struck: Mapping[int, list[str]], onset: Mapping[str, Fraction]) -> bool:
    """Is the statement's edge position (its ``notes``) not struck as one pair on the missing
    end's side of the statement's next position (``later``: the missing end is after the edge, the
    next position the one before it, its last strike; else its first)? A wrong note written as its
    neighbour leaves two notes side by side where the missing position would stand (``y | x x z``);
    once there, the other returns are a tremolo's (``y | x z x z``, ``x y x y | z``), and three or
    more strikes in a row are the piece's repeated notes (``y | x x x z``): a wrong note makes a
    pair. ``struck``: the statement's repeats by position."""
    if len(found) < 2:
        return False
    k = found[-2] if later else found[1]
    strikes = [s.event_ids[k], *struck.get(k, ())]
    inner = [e for e in strikes if e is not None and e in onset]
    if not inner or any(e not in onset for e in notes):
        return False
    last = max(onset[e] for e in inner) if later else min(onset[e] for e in inner)
    return sum(1 for e in notes if (onset[e] > last if later else onset[e] < last)) != 2


def _habitual(borrowed: str | None, doubled: Iterable[str], shared: set[str], repeated: set[str]) -> bool:
    """Is a statement's missing end position held by a note it shares with its neighbour
    (``borrowed``), beside a doubled position (``doubled``), in a piece that elsewhere both shares
    notes between statements and repeats notes? Then the shape is the piece's habit — a repeat
    before or after an elision — not a wrong note (a wrong note in a piece of neither habit reads
    alike and is still reported: ``edge_repeats``)."""
    return borrowed is not None and bool(shared - {borrowed}) and bool(repeated - set(doubled))
