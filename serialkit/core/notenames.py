"""Notes named as the score writes them, and placed where a reader finds them.

A piece's pitches are sounding MIDI numbers (the analysis hears the row). What a reader of the
score sees is the written note: a transposing part's staff is written a step, a fifth… away, and
the score spells each note with its own letter (Bb, not A#). Reports name notes that way —
``C5``, not ``A#4``, for a clarinet in Bb's written C — and say ``sounding`` where they show the
sounding pitch. :class:`NoteNames` names a piece's notes (its readers record each note's written
alteration and its staff's transposition in ``Event.source``; a piece without them — a JSON
piece, MIDI — is named as it sounds, sharps for black keys) and places them (``the Ab4 at bar 4,
beat 7/2``), and :func:`spell` spells a corrected pitch as a copyist would: a semitone error keeps
the letter, a third moves it a line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from serialkit.core.spelling import pc_name

__all__ = ["NoteNames", "habit_of", "pitch_name", "sounding_name", "spell", "written_spelling"]

_NATURAL = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}
_LETTERS = "CDEFGAB"
_ODD = {("E", 1), ("B", 1), ("F", -1), ("C", -1)}
_STEP_OF = {v: k for k, v in _NATURAL.items()}


def pitch_name(step: str, alter: int, octave: int) -> str:
    """``Eb4``, ``F#5``, ``C4``: a written pitch as messages name it."""
    return f"{step}{'#' * alter if alter > 0 else 'b' * -alter}{octave}"


def sounding_name(midi: int) -> str:
    """A sounding MIDI pitch's name (sharps for black keys): ``A#4``."""
    return f"{pc_name(midi)}{midi // 12 - 1}"


def spell(target: int, step: str, model: str, habit: int,
          near: Mapping[int, tuple[str, int]] | None = None) -> tuple[str, int, int]:
    """(step, alter, octave) for the written MIDI pitch ``target`` of a note written with the
    letter ``step``: a semitone error (``accidental``) keeps the letter (the accidental was
    dropped or added), a third moves the letter by two (a line); else the spelling the notes
    around it give that pitch class (``near``: written pitch class → letter and alteration, the
    nearest note's; a swap's notes trade places as written, Db5 and Ab4 stay Db5 and Ab4), else a
    natural, else the habit of the notes around it (``habit`` > 0 sharps, < 0 flats)."""
    options = []
    for letter in _LETTERS:
        for octave in range(-1, 10):
            alter = target - (12 * (octave + 1) + _NATURAL[letter])
            if -1 <= alter <= 1:
                options.append((letter, alter, octave))
    index = _LETTERS.index(step) if step in _LETTERS else 0
    seen = (near or {}).get(target % 12)

    def rank(opt: tuple[str, int, int]) -> tuple[int, int, int, int]:
        letter, alter, _ = opt
        distance = (_LETTERS.index(letter) - index) % 7
        preferred = (model == "accidental" and distance == 0) or (model == "third" and distance in (2, 5))
        odd = (letter, alter) in _ODD
        usual = seen is not None and seen == (letter, alter)
        wrong_way = alter != 0 and habit != 0 and (alter > 0) != (habit > 0)
        if model == "swap":  # the written notes move: an E#4 swapped stays an E#4
            return (0 if usual else 1, int(odd), int(alter != 0) + int(wrong_way), 0)
        return (0 if preferred and not odd else 1, int(odd), 0 if usual else 1, int(alter != 0) + int(wrong_way))

    letter, alter, octave = min(options, key=rank)
    return letter, alter, octave


def habit_of(alters: Iterable[int | None]) -> int:
    """A score's habit in accidentals: > 0 when its notes are spelt with more sharps than flats."""
    return sum((a > 0) - (a < 0) for a in alters if a)


def written_spelling(event: Any, habit: int = 0) -> tuple[str, int, int] | None:
    """The note as its score writes it (step, alter, octave), or None when its reader did not say.
    A note whose pitch changed since it was read (a correction tried or made) is spelt from the
    letter it was read with (:func:`spell`)."""
    src = event.source
    if src is None or src.alter is None or src.written is None:
        return None
    natural = src.written - src.alter
    step = _STEP_OF.get(natural % 12)
    if step is None:  # an alteration that leaves no natural note (a microtone rounded): by sound
        return None
    now = event.midi - src.transposition
    if now != src.written:
        return spell(now, step, "other", habit)
    return step, src.alter, natural // 12 - 1


class NoteNames:
    """Names and places for one piece's notes (``piece``: a ``Piece``)."""

    def __init__(self, piece: Any, habit: int | None = None) -> None:
        self.piece = piece
        self.events = {e.id: e for e in piece.events}
        self.habit = habit_of(e.source.alter for e in piece.events if e.source is not None) if habit is None else habit
        self._locator: Any = None
        self._parts: dict[Any, list[Any]] | None = None
        self._index: dict[str, int] = {}

    @property
    def locator(self) -> Any:
        if self._locator is None:
            self._locator = self.piece.locator()
        return self._locator

    NEAR = 6
    """How many notes of its part on either side (by onset) say how a rewritten note is spelt."""

    def around(self, event_id: str) -> tuple[int, dict[int, tuple[str, int]]]:
        """The spelling habit of the notes around a note (the :data:`NEAR` nearest by onset on
        either side, in its part, on staves of its transposition, as written; the score's own
        habit when they spell no black key) and, per written pitch class, the letter and
        alteration the nearest of them gives it: what :func:`spell` follows for a rewritten note."""
        event = self.events.get(event_id)
        if event is None or event.source is None:
            return self.habit, {}
        if self._parts is None:
            parts: dict[Any, list[Any]] = {}
            for e in sorted(self.piece.events, key=lambda e: e.onset):
                if e.source is not None and e.source.alter is not None and e.source.written is not None:
                    parts.setdefault(e.source.part, []).append(e)
            self._parts = parts
            self._index = {e.id: i for notes in parts.values() for i, e in enumerate(notes)}
        notes = self._parts.get(event.source.part, [])
        at = self._index.get(event_id)
        if at is None:
            return self.habit, {}
        window = [e for e in notes[max(0, at - self.NEAR):at + self.NEAR + 1]
                  if e.id != event_id and e.source.transposition == event.source.transposition
                  and e.midi - e.source.transposition == e.source.written]  # (a note not rewritten)
        window.sort(key=lambda e: abs(e.onset - event.onset))
        near: dict[int, tuple[str, int]] = {}
        for e in window:
            written = written_spelling(e)
            if written is not None:
                near.setdefault(e.source.written % 12, (written[0], written[1]))
        habit = habit_of(e.source.alter for e in window)
        return habit or self.habit, near

    def spell(self, event_id: str, target: int, step: str, model: str = "other") -> tuple[str, int, int]:
        """:func:`spell` for a note of this piece rewritten to the written pitch ``target``
        (``step``: its letter as written), following the spelling of the notes around it."""
        habit, near = self.around(event_id)
        return spell(target, step, model, habit, near)

    def transposition(self, event_id: str) -> int:
        """Sounding minus written semitones of a note's staff (0 when not known)."""
        event = self.events.get(event_id)
        return 0 if event is None or event.source is None else event.source.transposition

    def name(self, event_id: str, midi: int | None = None, model: str = "other") -> str:
        """The note as the score writes it (``C5``); with ``midi``, as it would be written to sound
        ``midi`` (a correction, spelt by :func:`spell` with the error ``model``). A note its reader
        did not spell is named as it sounds."""
        event = self.events.get(event_id)
        if event is None:
            return sounding_name(midi or 0)
        written = written_spelling(event, self.habit)
        if written is None:
            return sounding_name(event.midi if midi is None else midi)
        if midi is None or midi == event.midi:
            return pitch_name(*written)
        target = midi - event.source.transposition
        return pitch_name(*self.spell(event_id, target, written[0], model))

    def sounding(self, event_id: str, midi: int | None = None) -> str | None:
        """``sounding A#4``-style name of the pitch a transposing part's note sounds (``midi``: a
        corrected one), or None when the note sounds as written."""
        if not self.transposition(event_id):
            return None
        event = self.events[event_id]
        return sounding_name(event.midi if midi is None else midi)

    def shown(self, event_id: str) -> str:
        """``C5 (sounding A#4)`` for a transposing part's note, ``C5`` otherwise: what messages say."""
        sounding = self.sounding(event_id)
        return self.name(event_id) + (f" (sounding {sounding})" if sounding else "")

    def at(self, event_id: str) -> str:
        """``bar 4, beat 7/2``: where the note starts."""
        bar, beat = self.locator.locate(self.events[event_id].onset)
        return f"bar {bar}, beat {_beat(beat)}"

    def place(self, event_id: str, midi: int | None = None) -> str:
        """``the Ab4 at bar 4, beat 7/2`` (``midi``: the note as it stood at that pitch)."""
        return f"the {self.name(event_id, midi)} at {self.at(event_id)}"

    def after(self, event_id: str) -> str:
        """A place between notes: ``Flute, bar 3, after the E4 at beat 2 (line 57)`` — where a
        note that is missing would stand (after the note before it)."""
        event = self.events[event_id]
        bar, beat = self.locator.locate(event.onset)
        line = event.source.line if event.source is not None else None
        return (f"{self.locator.voice_name(event)}, bar {bar}, after the {self.name(event_id)} at beat {_beat(beat)}"
                + (f" (line {line})" if line is not None else ""))

    def reason(self, text: str, event_id: str, after: int, model: str, other: str | None = None) -> str:
        """A suggestion's ``reason`` (``A#4 → G4 reads as …``, ``swapped with n19: …``, in
        sounding names and ids) with the notes named as written and the swapped note placed."""
        event = self.events.get(event_id)
        if event is None:
            return text
        sounded = f"{sounding_name(event.midi)} → {sounding_name(after)} "
        written = f"{self.name(event_id)} → {self.name(event_id, after, model)} "
        if other is not None and text.startswith(f"swapped with {other}: {sounded}"):
            rest = text[len(f"swapped with {other}: {sounded}"):]
            return f"swapped with {self.place(other)}: {written}{rest}"
        if other is not None:  # two wrong notes side by side: the other note placed
            text = text.replace(f", and {other} → ", f", and {self.place(other)} → ")
        if text.startswith(sounded):
            return written + text[len(sounded):]
        return text

    def suggestions(self, notes: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """A report's ``suggestions`` (``NoteSuggestions.to_dict()`` each) with every ``name`` as
        written and the sounding name beside it (``sounding``, ``before_sounding``,
        ``after_sounding``), the note's place (``location``: voice, bar, beat, as findings are placed)
        and each edit's (``at``), and reasons naming notes as written."""
        out = []
        for note in notes:
            eid = str(note["event_id"])
            known = eid in self.events
            entry = dict(note, name=self.name(eid), sounding=sounding_name(int(note["midi"])),
                         at=self.at(eid) if known else None,
                         location=self.locator.describe(self.events[eid]) if known else None)
            entry["candidates"] = [self._candidate(c) for c in note.get("candidates") or ()]
            out.append(entry)
        return out

    def _candidate(self, c: Mapping[str, Any]) -> dict[str, Any]:
        eid, model = str(c["event_id"]), str(c["model"])
        edits = []
        for e in c.get("edits") or ():
            who = str(e["event_id"])
            how = model if who == eid or model != "swap" else "swap"
            edits.append(dict(e, before_name=self.name(who), after_name=self.name(who, int(e["after"]), how),
                              before_sounding=sounding_name(int(e["before"])),
                              after_sounding=sounding_name(int(e["after"])),
                              at=self.at(who) if who in self.events else None))
        other = next((str(e["event_id"]) for e in edits if e["event_id"] != eid), None)
        return dict(c, name=self.name(eid, int(c["midi"]), model), sounding=sounding_name(int(c["midi"])),
                    edits=edits,
                    reason=self.reason(str(c.get("reason") or ""), eid, int(c["midi"]), model, other))


def _beat(beat: Fraction) -> str:
    return str(beat.numerator) if beat.denominator == 1 else f"{beat.numerator}/{beat.denominator}"
