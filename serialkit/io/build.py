"""Shared reader back end: raw noteheads from any format become a Piece (ties merged, bars, meter)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from serialkit.core.errors import PieceError, ScoreReadError
from serialkit.core.events import event_problem
from serialkit.core.piece import Event, Measure, Piece, Source, TimeSignature, Voice


@dataclass(slots=True)
class RawNote:
    """One notehead as a reader found it, before ties are merged."""

    id: str
    part: str
    staff: int
    voice: str
    measure: str
    onset: Fraction
    duration: Fraction
    midi: int
    beat: Fraction
    line: int | None = None
    grace: bool = False
    tie_start: bool = False
    tie_stop: bool = False
    home: int = 0  # the voice's own staff when the note is written on another (cross-staff)
    transposition: int = 0  # sounding minus written semitones (transposing instruments)
    alter: int = 0  # the written alteration (sharps > 0, flats < 0): the score's spelling

    @property
    def key(self) -> str:
        """The voice key ``part/staff/voice`` (the voice's own staff, for cross-staff notes too)."""
        return f"{self.part}/{self.home or self.staff}/{self.voice}"


@dataclass(slots=True)
class ScoreParts:
    """What a reader collects: noteheads, explicit tie links, parts, bars and meter."""

    notes: list[RawNote] = field(default_factory=list)
    tie_links: dict[str, str] = field(default_factory=dict)
    part_names: dict[str, str | None] = field(default_factory=dict)
    measures: list[Measure] = field(default_factory=list)
    time_signatures: list[TimeSignature] = field(default_factory=list)
    pickup: Fraction = Fraction(0)
    title: str | None = None
    warnings: list[str] = field(default_factory=list)
    merged: tuple[int, list[list[RawNote]]] | None = None  # tie chains, for this many notes


def tie_chains(parts: ScoreParts) -> list[list[RawNote]]:
    """The noteheads grouped into tie chains (``_merge_ties``), computed once per reading."""
    if parts.merged is None or parts.merged[0] != len(parts.notes):
        parts.merged = (len(parts.notes), _merge_ties(parts.notes, parts.tie_links))
    return parts.merged[1]


def midi_of(step: str, alter: int, octave: int, where: str) -> int:
    """MIDI number of a spelled pitch (C4 = 60)."""
    base = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}.get(step.upper())
    if base is None:
        raise ScoreReadError(f"{where}: pitch step {step!r} is not one of C D E F G A B")
    return 12 * (octave + 1) + base + alter


def _merge_ties(notes: Sequence[RawNote], links: Mapping[str, str]) -> list[list[RawNote]]:
    """Group noteheads into tie chains; each chain becomes one Event."""
    linked_targets = {end: start for start, end in links.items()}
    chains: list[list[RawNote]] = []
    tied: list[RawNote] = []
    for note in notes:
        if note.tie_start or note.tie_stop or note.id in links or note.id in linked_targets:
            tied.append(note)
        else:
            chains.append([note])
    if not tied:
        return chains
    scale = math.lcm(1, *{n.onset.denominator for n in tied})  # integer keys: exact, and fast to compare
    tied.sort(key=lambda n: (n.onset.numerator * (scale // n.onset.denominator), n.grace is False))
    chain_of: dict[str, list[RawNote]] = {}
    # open chains waiting for a continuation, by (part, midi)
    open_: dict[tuple[str, int], list[list[RawNote]]] = {}
    for note in tied:
        chain: list[RawNote] | None = None
        if not note.grace:
            start = linked_targets.get(note.id)
            if start is not None and start in chain_of:
                chain = chain_of[start]
            elif note.tie_stop:
                chain = _find_open(open_.get((note.part, note.midi), []), note)
        if chain is not None and chain[-1].midi == note.midi:
            bucket = open_.get((note.part, note.midi), [])
            for k, candidate in enumerate(bucket):
                if candidate is chain:
                    del bucket[k]
                    break
            chain.append(note)
        else:
            chain = [note]
            chains.append(chain)
        chain_of[note.id] = chain
        if not note.grace and (note.tie_start or note.id in links):
            open_.setdefault((note.part, note.midi), []).append(chain)
    return chains


def _find_open(candidates: list[list[RawNote]], note: RawNote) -> list[RawNote] | None:
    """The open chain a tie-stop note continues: same voice and touching first."""
    best: list[RawNote] | None = None
    best_rank: tuple[int, int] | None = None
    for chain in candidates:
        last = chain[-1]
        end = last.onset + last.duration
        if end > note.onset:
            continue
        rank = (0 if last.key == note.key else 1, 0 if end == note.onset else 1)
        if best_rank is None or rank < best_rank:
            best, best_rank = chain, rank
    return best


def _check_notes(parts: ScoreParts, path: Path) -> None:
    """Refuse a score without notes, or with a note id twice."""
    if not parts.notes:
        raise ScoreReadError(f"{path}: the score contains no notes")
    seen: set[str] = set()
    for note in parts.notes:
        if note.id in seen:
            raise ScoreReadError(f"{path}:{note.line or '?'}: note id {note.id!r} appears twice")
        seen.add(note.id)


def _duration(chain: list[RawNote]) -> Fraction:
    """A tie chain's sounding length."""
    return chain[0].duration if len(chain) == 1 else sum((n.duration for n in chain), Fraction(0))


def check_parts(parts: ScoreParts, path: Path) -> None:
    """Raise what ``build_piece`` raises for what a reader collected (the same errors, checked in
    the same order: ``ScoreReadError``, or the ``PieceError`` of the first event it could not
    make), without building the Piece: for a caller that asks only whether a score reads."""
    _check_notes(parts, path)
    for chain in tie_chains(parts):
        first = chain[0]
        problem = event_problem(first.id, first.onset, _duration(chain), _clamp(first, path), first.grace)
        if problem is not None:
            raise PieceError(problem)


def build_piece(parts: ScoreParts, path: Path, fmt: str) -> Piece:
    """Turn what a reader collected into a Piece; refuses a score without notes."""
    _check_notes(parts, path)
    events: list[Event] = []
    for chain in tie_chains(parts):
        first = chain[0]
        duration = _duration(chain)
        source = Source(first.part, first.measure, first.staff, first.voice, first.beat, first.line,
                        first.alter, first.transposition, first.midi - first.transposition)
        events.append(
            Event(
                id=first.id,
                voice=first.key,
                onset=first.onset,
                duration=duration,
                midi=_clamp(first, path),
                source=source,
                grace=first.grace,
                tied_ids=tuple(n.id for n in chain) if len(chain) > 1 else (),
            )
        )
    voice_keys: dict[str, tuple[int, int, str]] = {}
    part_index = {p: i for i, p in enumerate(parts.part_names)}
    for note in parts.notes:
        key = note.key
        if key not in voice_keys:  # the first note of each voice places it
            voice_keys[key] = (part_index.get(note.part, len(part_index)), note.home or note.staff, note.voice)
    ordered = sorted(voice_keys, key=lambda k: _voice_sort(voice_keys[k]))
    rank = {k: i for i, k in enumerate(ordered)}
    voices = tuple(Voice(k, parts.part_names.get(k.split("/")[0])) for k in ordered)
    # integer sort keys on a common grid: exact like Fractions, and far faster to compare
    scale = math.lcm(1, *{e.onset.denominator for e in events})
    events.sort(
        key=lambda e: (
            e.onset.numerator * (scale // e.onset.denominator), rank[e.voice], not e.grace, -e.midi
        )
    )
    metadata: dict[str, Any] = {"source_path": str(path), "format": fmt}
    if parts.warnings:
        metadata["warnings"] = list(parts.warnings)
    return Piece(
        events=tuple(events),
        voices=voices,
        time_signatures=tuple(parts.time_signatures) or (TimeSignature(4, 4),),
        measures=tuple(parts.measures),
        pickup=parts.pickup,
        title=parts.title,
        metadata=metadata,
    )


def _voice_sort(key: tuple[int, int, str]) -> tuple[int, int, int, str]:
    part, staff, voice = key
    return (part, staff, int(voice) if voice.isdigit() else 1 << 30, voice)


def _clamp(note: RawNote, path: Path) -> int:
    if not 0 <= note.midi <= 127:
        raise ScoreReadError(
            f"{path}:{note.line or '?'}: note {note.id} sounds at MIDI {note.midi}, outside 0..127"
        )
    return note.midi


DAMAGE = (ValueError, ArithmeticError, TypeError, IndexError, KeyError)
"""What malformed values raise inside a reader; turned into a ScoreReadError naming file and line."""


def damaged(where: str, el: Any, exc: Exception) -> ScoreReadError:
    """The error for a malformed value met while reading element ``el``."""
    line = line_of(el)
    name = getattr(el, "tag", "?")
    name = name.rsplit("}", 1)[-1] if isinstance(name, str) else "?"
    return ScoreReadError(f"{where}:{line or '?'}: cannot read <{name}>: {exc}")


def line_of(el: Any) -> int | None:
    """The source line of an lxml element (None when unknown)."""
    line = getattr(el, "sourceline", None)
    return line if isinstance(line, int) else None


def safe_id(text: str) -> str:
    """A string usable inside an XML ID (letters, digits, ``-``, ``_``, ``.``)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text) or "x"


_NCNAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_PLAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-")
ESCAPE_PREFIX = "sk_"


def encode_id(event_id: str) -> str:
    """An XML ID (NCName) for an event id: verbatim when possible, else reversibly escaped."""
    ok = (
        event_id[:1] in _NCNAME_START
        and all(c in _PLAIN or c == "_" for c in event_id)
        and not event_id.startswith(ESCAPE_PREFIX)
    )
    if ok:
        return event_id
    return ESCAPE_PREFIX + "".join(c if c in _PLAIN else f"_{ord(c):x}_" for c in event_id)


def decode_id(xml_id: str) -> str:
    """The event id ``encode_id`` escaped (ids without the prefix are returned unchanged)."""
    if not xml_id.startswith(ESCAPE_PREFIX):
        return xml_id
    out: list[str] = []
    text = xml_id[len(ESCAPE_PREFIX):]
    i = 0
    while i < len(text):
        c = text[i]
        if c == "_":
            end = text.index("_", i + 1)
            out.append(chr(int(text[i + 1 : end], 16)))
            i = end + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)
