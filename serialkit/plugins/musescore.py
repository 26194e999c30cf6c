"""Back end of the MuseScore plugin: per-note labels keyed the way MuseScore can find its notes.

MuseScore drops note ids on export, so each labelled notehead is located by (part index,
staff, voice, tick, pitch): the MuseScore plugin (``plugins/musescore/serialkit.qml``) walks
its score with a cursor and applies the label and colour of the matching entry.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, cast

from serialkit.core.errors import PluginError, RowError
from serialkit.core.piece import Event, Piece, fraction_str
from serialkit.core.rows import Convention, Row

__all__ = ["DIVISION", "NoteLabel", "form_colors", "musescore_labels", "musescore_payload",
           "unexplained_color"]

DIVISION = 480
"""MuseScore ticks per quarter note."""


def form_colors() -> dict[str, str]:
    """Notehead colour by form type, the same as ``serialkit annotate`` uses (Okabe–Ito)."""
    from serialkit.cli.annotate import FORM_COLOURS

    return dict(FORM_COLOURS)


def unexplained_color() -> str:
    """Colour of a note no row statement explains, as ``serialkit annotate`` colours it."""
    from serialkit.cli.annotate import UNEXPLAINED

    return UNEXPLAINED


SAVE_ENV = "SERIALKIT_MUSESCORE_SAVE"
ROW_ENV = "SERIALKIT_ROW"
_MUSESCORE_PART = re.compile(r"^P(\d+)$")


@dataclass(frozen=True, slots=True)
class NoteLabel:
    """One notehead's label and colour with the coordinates MuseScore matches it by."""

    id: str
    part: str
    part_index: int
    staff: int
    voice: str
    ms_voice: int
    measure: str | None
    onset: str | int
    tick: int
    midi: int
    grace: bool
    label: str | None
    color: str
    tied: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def _part_order(piece: Piece) -> dict[str, int]:
    """Part id → 0-based index: MuseScore's ``P<n>`` ids directly, else top-to-bottom order."""
    ids: list[str] = []
    for voice in piece.voices:
        part = voice.id.split("/")[0]
        if part not in ids:
            ids.append(part)
    for event in piece.events:
        source_part = event.source.part if event.source else None
        if source_part is not None and source_part not in ids:
            ids.append(source_part)
    matches = [_MUSESCORE_PART.match(p) for p in ids]
    if all(matches):
        return {p: int(m.group(1)) - 1 for p, m in zip(ids, matches, strict=True) if m}
    return {p: i for i, p in enumerate(ids)}


def _ms_voice(voice: str) -> int:
    """MuseScore voice 0–3: its MusicXML export numbers voices 1–4 on staff 1, 5–8 on staff 2…"""
    return (int(voice) - 1) % 4 if voice.isdigit() and int(voice) > 0 else 0


def _marks(piece: Piece, row: Row | None, convention: str) -> dict[str, tuple[str | None, str]]:
    """Event id → (label, colour) exactly as ``serialkit annotate`` writes them."""
    if convention not in ("relative", "absolute"):
        raise RowError(f"convention must be 'relative' or 'absolute', not {convention!r}")
    try:
        from serialkit.cli.annotate import note_annotations
        from serialkit.core.analysis import analyze
    except ImportError as exc:  # the analysis subsystem is not in this build
        raise PluginError(f"row analysis is not available: {exc}") from exc
    analysis = analyze(piece, row=row, convention=cast(Convention, convention))
    return note_annotations(analysis)


def _note(event: Event, mark: tuple[str | None, str], parts: dict[str, int]) -> NoteLabel:
    source = event.source
    part = (source.part if source else None) or event.voice.split("/")[0]
    staff = (source.staff if source else None) or 1
    voice = (source.voice if source else None) or "1"
    return NoteLabel(
        id=event.id,
        part=part,
        part_index=parts.get(part, 0),
        staff=staff,
        voice=voice,
        ms_voice=_ms_voice(voice),
        measure=source.measure if source else None,
        onset=fraction_str(event.onset),
        tick=round(event.onset * DIVISION),
        midi=event.midi,
        grace=event.grace,
        label=mark[0],
        color=mark[1],
    )


def _tie_members(piece: Piece) -> dict[str, Any]:
    """Tied continuation noteheads of a MusicXML source by id (MuseScore keeps them as notes)."""
    path = piece.metadata.get("source_path")
    if not path or piece.metadata.get("format") not in ("musicxml", "mxl"):
        return {}
    if not any(e.tied_ids for e in piece.events):
        return {}
    from serialkit.io.musicxml_read import load_tree, scan_tree

    tree, where, _ = load_tree(Path(path))
    return {raw.id: raw for _, raw in scan_tree(tree, where).elements}


def _continuations(
    event: Event, head: NoteLabel, members: dict[str, Any], parts: dict[str, int]
) -> list[NoteLabel]:
    out = []
    for member_id in event.tied_ids[1:]:
        raw = members.get(member_id)
        if raw is None:
            continue
        out.append(NoteLabel(
            id=member_id, part=raw.part, part_index=parts.get(raw.part, head.part_index),
            staff=raw.staff, voice=raw.voice, ms_voice=_ms_voice(raw.voice), measure=raw.measure,
            onset=fraction_str(raw.onset), tick=round(raw.onset * DIVISION), midi=raw.midi,
            grace=False, label=None, color=head.color, tied=True,
        ))
    return out


def musescore_labels(
    score: str | os.PathLike[str] | Piece,
    row: str | Row | None = None,
    convention: str = "relative",
) -> list[NoteLabel]:
    """Label every notehead of a score (path or Piece) for the MuseScore plugin.

    ``row`` is parsed with ``Row.parse``; None identifies the row from the score. Notes no
    row statement explains get ``label=None`` and the unexplained colour. Labels and colours
    are those ``serialkit annotate`` writes (an elided note reads ``P0:11/I3:1``). Tied
    continuation noteheads follow their first note with ``tied=True``: its colour, no label.
    """
    if isinstance(score, Piece):
        piece = score
    else:
        from serialkit.io import read_score

        piece = read_score(score)
    parsed = Row.parse(row) if row is not None and not isinstance(row, Row) else row
    marks = _marks(piece, parsed, convention)
    parts = _part_order(piece)
    missing = (None, unexplained_color())
    members = _tie_members(piece)
    notes: list[NoteLabel] = []
    for event in piece.events:
        head = _note(event, marks.get(event.id, missing), parts)
        notes.append(head)
        notes += _continuations(event, head, members, parts)
    return notes


def musescore_payload(
    score: str | os.PathLike[str], row: str | None = None, convention: str | None = None
) -> dict[str, Any]:
    """The JSON the MuseScore plugin reads: labels plus run settings taken from the environment.

    ``SERIALKIT_ROW`` supplies the row when ``row`` is None; ``SERIALKIT_MUSESCORE_SAVE``, when
    set, tells the plugin where to save the labelled score (headless runs and tests).
    """
    row = row if row is not None else (os.environ.get(ROW_ENV) or None)
    convention = convention or "relative"
    notes = musescore_labels(Path(score), row=row, convention=convention)
    heads = [n for n in notes if not n.tied]
    labelled = sum(1 for n in heads if n.label is not None)
    return {
        "ok": True,
        "score": str(score),
        "row": row,
        "convention": convention,
        "division": DIVISION,
        "save_to": os.environ.get(SAVE_ENV) or None,
        "events": len(heads),
        "labelled": labelled,
        "unexplained": len(heads) - labelled,
        "coverage": fraction_str(Fraction(labelled, len(heads))) if heads else 0,
        "notes": [n.to_dict() for n in notes],
    }
