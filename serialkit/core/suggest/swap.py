"""Suggested corrections: two notes written in each other's place, and which exchange was meant.

A swap has two models. A copyist who exchanges two note names keeps each note in its register
(the pitch classes are exchanged, each note moving by the error models' nearest interval); an
engraver who exchanges two written notes moves them whole, octave and all (the written pitches are
exchanged). The analysis reads pitch classes, so both corrections explain the statement alike:
the register habit decides between them — how many other notes of the voice (then of the piece)
are written at the pitches each correction gives (a voice that keeps a pitch class in one
register, as Webern's and the synthetic families' do, says which octave was meant). With no habit to go by, the
exchange of the written notes is preferred (what "written in each other's place" means), but only
just. Standard library only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from serialkit.core.piece import Event
from serialkit.core.suggest.model import _nearest

_OFF_HABIT = 0.25
"""The weight kept by the exchange whose pitches the piece writes less often (per note fewer)."""

_NO_HABIT = 0.8
"""The weight kept by the register-keeping exchange when the habit does not decide."""


def in_register(a: Event, b: Event) -> dict[str, int]:
    """The copyist's swap, put right: each note takes the other's pitch class in its own register."""
    return {a.id: _nearest(a.midi, b.pc), b.id: _nearest(b.midi, a.pc)}


def written(edits: Mapping[str, int], events: Mapping[str, Event]) -> dict[str, int] | None:
    """The engraver's swap, put right: the two written notes exchanged — or None when that is the
    same change as ``edits`` (a register-keeping exchange of two notes) or ``edits`` is no swap."""
    if len(edits) != 2:
        return None
    a, b = (events[e] for e in edits)
    out = {a.id: b.midi, b.id: a.midi}
    return None if out == dict(edits) else out


class Habit:
    """How often the piece writes each pitch (MIDI number), in each voice and in all."""

    def __init__(self, events: Mapping[str, Event]) -> None:
        self.events = events
        self.count = Counter(e.midi for e in events.values())
        self.voiced = Counter((e.voice, e.midi) for e in events.values())

    def support(self, edits: Mapping[str, int]) -> tuple[int, int]:
        """Notes other than the changed ones written at the pitches ``edits`` gives: in the changed
        note's voice, and in the whole piece."""
        def others(eid: str, midi: int, voiced: bool) -> int:
            return sum(1 for e in edits if self.events[e].midi == midi
                       and (not voiced or self.events[e].voice == self.events[eid].voice))
        voice = sum(self.voiced[(self.events[e].voice, m)] - others(e, m, True) for e, m in edits.items())
        whole = sum(self.count[m] - others(e, m, False) for e, m in edits.items())
        return voice, whole

    def factors(self, in_register: Mapping[str, int], written: Mapping[str, int]) -> tuple[float, float]:
        """The weights kept by the two exchanges of one pair of notes: (in register, written). The
        voice's habit decides first, the piece's when the voice's is even."""
        mine, theirs = self.support(in_register), self.support(written)
        k = 0 if mine[0] != theirs[0] else 1
        if mine[k] > theirs[k]:
            return 1.0, _OFF_HABIT ** min(mine[k] - theirs[k], 2)
        if theirs[k] > mine[k]:
            return _OFF_HABIT ** min(theirs[k] - mine[k], 2), 1.0
        return _NO_HABIT, 1.0
