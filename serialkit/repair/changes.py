"""The changes a repair makes, one entry per note: the planned pitch corrections, the timing
rungs' edits merged in, the held-back suggestions, and each note's name as the score writes it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING

from serialkit.core.notenames import NoteNames
from serialkit.core.piece import Event, Piece, fraction_str
from serialkit.core.suggest import Applied, Edit, Suggestion
from serialkit.repair.result import Change

if TYPE_CHECKING:
    from serialkit.io.repitch import EditableScore
    from serialkit.repair.timing import TimingEdit

__all__ = ["held_changes", "held_note", "pitch_changes", "with_timing", "written_names"]


def held_changes(piece: Piece, held: Sequence[Suggestion]) -> tuple[Change, ...]:
    """The held-back suggestions as the changes they would make (the suggested note's own edit)."""
    events = {e.id: e for e in piece.events}
    locator = piece.locator()
    names = NoteNames(piece)
    return tuple(
        Change(s.event_id, locator.describe(events[s.event_id]), events[s.event_id].midi, s.midi,
               s.label, s.statement, s.model, s.confidence,
               names.reason(s.reason, s.event_id, s.midi, s.model,
                            next((e.event_id for e in s.edits if e.event_id != s.event_id), None)))
        for s in held if s.event_id in events
    )


def held_note(changed: int, held: int, threshold: float, dry_run: bool) -> str:
    """Why suggestions were not applied: ``0 notes changed: 3 suggestions below --threshold 0.6; …``."""
    what = f"{held} suggestion{'s' if held != 1 else ''} below --threshold {threshold:g}"
    head = f"0 notes changed: {what}" if not changed else f"{what} not applied"
    return head + ("; listed below (held)" if dry_run else "; use --dry-run to see them")


def pitch_changes(piece: Piece, applied: Sequence[Applied], labels: Mapping[str, str | None]) -> tuple[Change, ...]:
    """One entry per changed note; a swap's or chain's other note is labelled as the repaired
    score's check reads it (``labels``), else by the note it goes with."""
    events = {e.id: e for e in piece.events}
    locator = piece.locator()
    names = NoteNames(piece)
    out: dict[str, Change] = {}
    for a in applied:
        s = a.suggestion
        other = next((e.event_id for e in s.edits if e.event_id != s.event_id), None)
        reason = names.reason(s.reason, s.event_id, s.midi, s.model, other)  # notes as the score shows them
        for edit in s.edits:
            first = out.get(edit.event_id)
            before = first.before if first is not None else edit.before
            event: Event = events[edit.event_id]
            out[edit.event_id] = Change(
                edit.event_id, locator.describe(event), before, edit.after,
                s.label if edit.event_id == s.event_id else labels.get(edit.event_id) or (
                    f"swap with {names.place(s.event_id)}" if s.model == "swap" else
                    f"changed with {names.place(s.event_id)}"),
                s.statement, s.model, s.confidence,
                reason if edit.event_id == s.event_id else _other_reason(names, s, edit, labels, reason),
            )
    return tuple(c for c in out.values() if c.before != c.after)


def _other_reason(names: NoteNames, s: Suggestion, edit: Edit, labels: Mapping[str, str | None],
                  reason: str) -> str:
    """Why a swap's (or chain's) other note changed, in its own words: ``swapped with the Ab4 at
    bar 4, beat 7/2: E4 → Ab4 reads as I2:8`` (the note named as it stood and as it is written
    now), then the correction's own reason."""
    how = "swapped with" if s.model == "swap" else "changed with"
    now = names.name(edit.event_id, edit.after, s.model)
    label = labels.get(edit.event_id)
    reads = f" reads as {label}" if label else ""
    return (f"{how} {names.place(s.event_id)}: {names.name(edit.event_id)} → {now}{reads} "
            f"(the correction of that note: {reason})")


def with_timing(piece: Piece, changes: Sequence[Change], edits: Sequence[TimingEdit],
                 repaired: Piece) -> tuple[Change, ...]:
    """The pitch changes with the timing rungs' edits merged in: one entry per changed note."""
    if not edits:
        return tuple(changes)
    events = {e.id: e for e in piece.events}
    midi = {e.id: e.midi for e in repaired.events}
    locator = piece.locator()

    def at(onset: Fraction) -> str:
        bar, beat = locator.locate(onset)
        return f"bar {bar}, beat {fraction_str(beat)}"

    out = {c.event_id: c for c in changes}
    for edit in edits:
        time = ((edit.onset[0], edit.duration[0], at(edit.onset[0])),
                (edit.onset[1], edit.duration[1], at(edit.onset[1])))
        pitch = out.get(edit.event_id)
        if pitch is None:
            event = events[edit.event_id]
            out[edit.event_id] = Change(edit.event_id, locator.describe(event), event.midi, midi[edit.event_id],
                                        edit.code, None, None, None, edit.reason, edit.rung, time, (edit.rung,))
        else:
            out[edit.event_id] = replace(pitch, reason=f"{pitch.reason}; {edit.reason}", rung=edit.rung,
                                         time=time, rungs=(*pitch.rungs, edit.rung))
    return tuple(out.values())


def written_names(score: EditableScore, changes: Sequence[Change]) -> dict[str, tuple[str, str]]:
    """Each change's note as the score writes it, before and after (``_write_score`` spells the
    new pitch the same way, ``NoteNames.spell``: its letter, the model, the notes around it): its
    staff's transposition and the letter the score gives it. A piece without spelling (JSON) is named as it sounds."""
    names = NoteNames(score.piece, habit=score.habit)
    return {c.event_id: (names.name(c.event_id), names.name(c.event_id, c.after, c.model or "other"))
            for c in changes if c.event_id in names.events}
