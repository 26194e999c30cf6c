"""Every notehead of a score with where it sits: part, measure, staff, voice, onset, pitch.

A Piece has one Event per tie chain; notation programs see one notehead per written note. This
module gives the noteheads back (tied continuations included) so that labels can be matched to
notes in programs that drop note ids on export (MuseScore), by (part, staff, voice, onset, pitch).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from serialkit.core.errors import ScoreReadError
from serialkit.core.piece import Event, Piece
from serialkit.core.timeline import Locator
from serialkit.io.build import RawNote, ScoreParts, _merge_ties
from serialkit.io.dispatch import score_format
from serialkit.io.external import VIA_MUSICXML, via_musicxml
from serialkit.io.files.safety import parse_xml
from serialkit.io.mei.read import scan_mei
from serialkit.io.musicxml.read import load_tree, peek_scan, scan_tree

__all__ = ["Notehead", "piece_noteheads", "read_noteheads"]


@dataclass(frozen=True, slots=True)
class Notehead:
    """One written notehead: the event it belongs to and its place in the score."""

    id: str
    event_id: str
    part: str
    part_index: int
    staff: int
    voice: str
    measure: str | None
    onset: Fraction
    midi: int
    written_midi: int
    grace: bool = False
    tied: bool = False

    def tick(self, division: int = 480) -> int:
        """The onset in ticks of ``division`` per quarter note (MuseScore: 480)."""
        return round(self.onset * division)


def _scan(path: Path, fmt: str) -> ScoreParts | None:
    if fmt in ("musicxml", "mxl"):
        cached = peek_scan(path)  # the file read_score just read: no second parse
        if cached is not None:
            return cached.parts
        tree, where, _ = load_tree(path)
        return scan_tree(tree, where).parts
    if fmt == "mei":
        return scan_mei(path)
    if fmt in VIA_MUSICXML:
        where = f"{path} (as MusicXML)"
        return scan_tree(parse_xml(via_musicxml(path, fmt), where), where).parts
    return None


def _from_parts(parts: ScoreParts) -> list[Notehead]:
    index = {p: i for i, p in enumerate(parts.part_names)}
    out = []
    for chain in _merge_ties(parts.notes, parts.tie_links):
        head = chain[0]
        for k, raw in enumerate(chain):
            out.append(_head(raw, head.id, index.get(raw.part, len(index)), tied=k > 0))
    return out


def _head(raw: RawNote, event_id: str, part_index: int, tied: bool) -> Notehead:
    return Notehead(
        id=raw.id, event_id=event_id, part=raw.part, part_index=part_index, staff=raw.staff,
        voice=raw.voice, measure=raw.measure, onset=raw.onset, midi=raw.midi,
        written_midi=raw.midi - raw.transposition, grace=raw.grace, tied=tied,
    )


def read_noteheads(path: str | os.PathLike[str]) -> list[Notehead]:
    """Every pitched notehead of a MusicXML, .mxl or MEI file, tie by tie, in event order."""
    p = Path(path)
    fmt = score_format(p)
    parts = _scan(p, fmt)
    if parts is None:
        raise ScoreReadError(
            f"{p}: noteheads can be read from MusicXML, .mxl, MEI, MuseScore, **kern and ABC, not {fmt}"
        )
    return _from_parts(parts)


def _event_head(locator: Locator, event: Event, parts: dict[str, int]) -> Notehead:
    source = event.source
    part = (source.part if source else None) or event.voice.split("/")[0]
    return Notehead(
        id=event.id, event_id=event.id, part=part, part_index=parts.setdefault(part, len(parts)),
        staff=(source.staff if source else None) or 1, voice=(source.voice if source else None) or "1",
        measure=source.measure if source and source.measure else locator.locate(event.onset)[0],
        onset=event.onset, midi=event.midi,
        written_midi=event.midi, grace=event.grace,
    )


def piece_noteheads(piece: Piece) -> list[Notehead]:
    """The noteheads of a piece read from a score file: from the file (ties included) when it
    still holds exactly the piece's notes, else one notehead per event, in the piece's order."""
    path = piece.metadata.get("source_path") if piece.metadata else None
    fmt = piece.metadata.get("format") if piece.metadata else None
    found: list[Notehead] = []
    if path and fmt and Path(str(path)).is_file():
        try:
            parts = _scan(Path(str(path)), str(fmt))
        except ScoreReadError:
            parts = None
        found = _from_parts(parts) if parts is not None else []
    events = {e.id: e for e in piece.events}
    heads = {n.event_id: n for n in found if not n.tied}
    if found and set(heads) == set(events) and all(
        heads[i].onset == e.onset and heads[i].midi == e.midi for i, e in events.items()
    ):
        order = {e.id: k for k, e in enumerate(piece.events)}
        return sorted(found, key=lambda n: (order[n.event_id], n.tied, n.onset))
    part_order: dict[str, int] = {}
    for voice in piece.voices:
        part_order.setdefault(voice.id.split("/")[0], len(part_order))
    locator = piece.locator()
    return [_event_head(locator, e, part_order) for e in piece.events]
