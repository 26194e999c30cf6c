"""A repaired MuseScore file written natively: the changed notes of the source's own .mscx
re-pitched in place (``<pitch>``, ``<tpc>``, ``<tpc2>``), coloured and labelled; every other byte,
the format version and every other member of a .mscz as the source's.

A repair names its notes as its reading of the source does (``EditableScore``: MuseScore's
MusicXML export of the file); each is found in the native walk by its onset and pitch (the n-th
note at an onset and pitch of one reading is the n-th of the other)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from pathlib import Path

from serialkit.core.errors import ScoreWriteError
from serialkit.core.piece import Event, Piece
from serialkit.io.accidentals import remove_with_line
from serialkit.io.annotation import Annotation
from serialkit.io.build import RawNote
from serialkit.io.files.atomic import atomic_path
from serialkit.io.mscore.write import (
    MscoreSource,
    apply_annotations,
    begin_edit,
    edited_bytes,
    heads_of,
    load_source,
    mscore_payload,
)

__all__ = ["Change", "Speller", "repitch_mscore"]

_LETTERS = "FCGDAEB"  # the letters in tonal pitch class order: tpc 13 + i is the natural
_NATURAL = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}

Change = tuple[int, int, str]
"""A changed note: sounding MIDI pitch before and after, and the correction's model."""
Speller = Callable[[str, int, str, str], tuple[str, int, int]]
"""(event id, written MIDI pitch, written letter, model) → the (step, alter, octave) to write."""


def repitch_mscore(
    source: Path, piece: Piece, changes: Mapping[str, Change], marks: Mapping[str, Annotation],
    spell: Speller, out: Path,
) -> Path:
    """Write ``source`` (a .mscz/.mscx) to ``out`` with the notes of ``changes`` (event ids of
    ``piece``, the repair's reading of it) re-pitched and ``marks`` (fingering labels, colours)
    added; nothing is written when anything fails."""
    src = load_source(source)
    native = _native_ids(piece.events, src, (*changes, *marks), out)
    begin_edit(src, heads_of(src, [native[eid] for eid in (*changes, *marks)], out))
    raw = {note.id: note for _, note in src.walk.elements}
    pitches: dict[str, int] = {}
    for eid, (before, after, model) in changes.items():
        for nid in src.chains[native[eid]]:
            _repitch(src, raw[nid], eid, after - before, model, spell, out)
            pitches[nid] = raw[nid].midi + after - before
    apply_annotations(src, {native[eid]: ann for eid, ann in marks.items()}, "fingering")
    payload = mscore_payload(src, edited_bytes(src, out, pitches), out)
    with atomic_path(out) as tmp:
        tmp.write_bytes(payload)
    return out


def _native_ids(events: Sequence[Event], src: MscoreSource, needed: Iterable[str], out: Path) -> dict[str, str]:
    """The repair's event ids → the native reading's (by onset, pitch and rank among equals);
    ``ScoreWriteError`` when one of ``needed`` has none."""
    def keyed(pairs: Sequence[tuple[str, Fraction, int]]) -> dict[tuple[Fraction, int, int], str]:
        seen: dict[tuple[Fraction, int], int] = {}
        found: dict[tuple[Fraction, int, int], str] = {}
        for eid, onset, midi in pairs:
            k = seen[(onset, midi)] = seen.get((onset, midi), 0) + 1
            found[(onset, midi, k)] = eid
        return found

    first = {note.id: note for _, note in src.walk.elements}
    mine = keyed(sorted(((e.id, e.onset, e.midi) for e in events), key=lambda t: (t[1], -t[2])))
    theirs = keyed(sorted(((eid, first[eid].onset, first[eid].midi) for eid in src.chains),
                          key=lambda t: (t[1], -t[2])))
    found = {eid: theirs[k] for k, eid in mine.items() if k in theirs}
    lost = [eid for eid in needed if eid not in found]
    if lost:
        raise ScoreWriteError(f"{out}: note {lost[0]} of the repair is not in {src.path} as serialkit reads it")
    return found


def _repitch(src: MscoreSource, raw: RawNote, eid: str, shift: int, model: str, spell: Speller, out: Path) -> None:
    """Move one notehead by ``shift`` semitones: its sounding ``<pitch>``, its written spelling
    (``<tpc2>``, or ``<tpc>`` when it has none) as ``spell`` gives it, and its concert ``<tpc>``
    the same distance from the written one as before; an ``<Accidental>`` it showed is taken off
    (MuseScore shows what the new pitch needs)."""
    note = src.element[raw.id]
    if note.tag != "Note":
        raise ScoreWriteError(f"{out}: note {eid} is played by a measure repeat of {src.path}; "
                              "write .musicxml to repair it")
    pitch, tpc, tpc2 = note.find("pitch"), note.find("tpc"), note.find("tpc2")
    written_el = tpc2 if tpc2 is not None else tpc
    if pitch is None or written_el is None:
        raise ScoreWriteError(f"{out}: note {eid} of {src.path} has no <pitch> or <tpc> to correct")
    old_written = int(written_el.text or "14")
    step = _LETTERS[(old_written + 1) % 7]
    new_step, alter, octave = spell(eid, raw.midi - raw.transposition + shift, step, model)
    if 12 * (octave + 1) + _NATURAL[new_step] + alter != raw.midi - raw.transposition + shift:
        raise ScoreWriteError(f"{out}: the spelling of note {eid} does not sound as repaired")
    new_written = _LETTERS.index(new_step) + 13 + 7 * alter
    pitch.text = str(raw.midi + shift)
    if tpc is not None and tpc2 is not None:
        tpc.text = str(int(tpc.text or "14") - old_written + new_written)
    written_el.text = str(new_written)
    accidental = note.find("Accidental")
    if accidental is not None:
        remove_with_line(note, accidental)

