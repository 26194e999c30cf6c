"""The music21 bridge for notebook users: ``from_music21`` and ``to_music21`` (via MusicXML)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from serialkit.core.errors import ScoreReadError
from serialkit.core.piece import Piece
from serialkit.io.musicxml_write import musicxml_bytes


def to_music21(piece: Piece) -> Any:
    """A music21 Score of a Piece (sounding pitches, exact durations, ties and tuplets)."""
    import music21

    return music21.converter.parseData(musicxml_bytes(piece).decode("utf-8"), format="musicxml")


def from_music21(stream: Any) -> Piece:
    """A Piece from a music21 Stream (exported to MusicXML by music21, then read by serialkit)."""
    from music21.musicxml.m21ToXml import GeneralObjectExporter

    from serialkit.io.musicxml_read import read_musicxml

    try:
        data = GeneralObjectExporter(stream).parse()
    except Exception as exc:  # music21 raises many kinds of errors on odd streams
        raise ScoreReadError(f"music21 could not export the stream: {exc}") from exc
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "music21.musicxml"
        path.write_bytes(data)
        piece = read_musicxml(path)
    return piece.copy(metadata={"format": "music21"})
