"""Time predicates of a task-bound candidate: SPAN, GRID, DUR and MONO.

A generation task declares the time its notes may take: the piece's length (bars × meter), each
section's span, the onset grid, the shortest and longest note, and voices that each play one note
at a time. These are the task's limits, not its schedule, so both release modes enforce them:

* ``SPAN``: a note sounds outside the piece (before 0 or past its end) or outside the span of the
  section it belongs to (its ``section``; a note without one belongs where its onset falls);
* ``GRID``: an onset off the task's grid (measured from the start of the piece);
* ``DUR``: a duration below the task's shortest or above its longest note;
* ``MONO``: two notes of one voice sound together (a monophonic voice plays a chord or overlaps
  itself); touching (one ends where the next starts) is fine.

The harness's incremental verifier uses the same definitions (:func:`note_faults` and the free
window it keeps per voice), so a note it keeps is a note the gate accepts.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from serialkit.core.piece import Event, Piece
from serialkit.core.predicates.columns import Columns
from serialkit.core.predicates.records import Violation

__all__ = ["TIME_CODES", "Limits", "check_time", "note_faults"]

TIME_CODES: tuple[str, ...] = ("SPAN", "GRID", "DUR", "MONO")
"""The time predicates, in report order."""


@dataclass(frozen=True, slots=True)
class Limits:
    """A task's time limits. ``length``: the piece's end in quarter notes (None: the end of the
    last section). ``grid``, ``min_duration``, ``max_duration``: None where undeclared.
    ``monophonic``: every voice plays one note at a time."""

    length: Fraction | None = None
    grid: Fraction | None = None
    min_duration: Fraction | None = None
    max_duration: Fraction | None = None
    monophonic: bool = True


def _q(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def note_faults(onset: Fraction, duration: Fraction, limits: Limits) -> dict[str, str]:
    """The GRID and DUR faults of one note: code → why (empty when the note is within the limits)."""
    out: dict[str, str] = {}
    if limits.grid is not None and limits.grid > 0 and onset % limits.grid != 0:
        out["GRID"] = f"onset {_q(onset)} is off the grid of {_q(limits.grid)} quarter notes"
    if limits.min_duration is not None and duration < limits.min_duration:
        out["DUR"] = f"duration {_q(duration)} is below the shortest note allowed ({_q(limits.min_duration)})"
    elif limits.max_duration is not None and duration > limits.max_duration:
        out["DUR"] = f"duration {_q(duration)} is above the longest note allowed ({_q(limits.max_duration)})"
    return out


def check_time(piece: Piece | Columns, limits: Limits) -> list[Violation]:
    """SPAN, GRID, DUR and MONO violations, in that order, each naming voice, bar and beat."""
    cols = piece if isinstance(piece, Columns) else Columns(piece)
    the_piece = cols.piece
    spans = {s.id: (s.start, s.end) for s in the_piece.sections}
    end = limits.length
    if end is None and the_piece.sections:
        end = max(s.end for s in the_piece.sections)
    found: dict[str, list[Violation]] = {code: [] for code in TIME_CODES}
    for i in cols.order:
        e = cols.events[i]
        stop = e.onset + e.duration
        if e.onset < 0 or (end is not None and stop > end):
            found["SPAN"].append(Violation(
                "SPAN", (e.id,), f"the note sounds {_q(e.onset)}–{_q(stop)}, outside the piece (0–{_q(Fraction(end or 0))})"
                if end is not None else f"the note starts at {_q(e.onset)}, before the piece", cols.where(i)))
        else:
            section = e.section if e.section is not None else the_piece.section_of(e.onset)
            span = spans.get(section) if section is not None else None
            if span is not None and (e.onset < span[0] or stop > span[1]):
                found["SPAN"].append(Violation(
                    "SPAN", (e.id,), f"the note sounds {_q(e.onset)}–{_q(stop)}, outside section {section} "
                    f"({_q(span[0])}–{_q(span[1])})", cols.where(i)))
        for code, why in note_faults(e.onset, e.duration, limits).items():
            found[code].append(Violation(code, (e.id,), why, cols.where(i)))
    if limits.monophonic:
        found["MONO"] = _own_overlaps(cols)
    return [v for code in TIME_CODES for v in found[code]]


def _own_overlaps(cols: Columns) -> list[Violation]:
    """MONO: per voice in onset order, each note against the latest-ending earlier note."""
    by_voice: dict[str, list[int]] = {}
    for i in cols.order:
        by_voice.setdefault(cols.events[i].voice, []).append(i)
    out: list[Violation] = []
    for indices in by_voice.values():
        indices.sort(key=lambda k: (cols.events[k].onset, cols.events[k].id))
        held: Event | None = None
        for k in indices:
            e = cols.events[k]
            if held is not None and held.onset + held.duration > e.onset and e.duration > 0:
                what = "at the same onset as" if held.onset == e.onset else "while still sounding"
                out.append(Violation(
                    "MONO", (held.id, e.id),
                    f"{cols.locator.voice_name(e)} plays one note at a time, but this note starts {what} "
                    f"{held.id} ({_q(held.onset)}–{_q(held.onset + held.duration)})", cols.where(k)))
            if held is None or e.onset + e.duration > held.onset + held.duration:
                held = e
    return out
