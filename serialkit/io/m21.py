"""The music21 bridge: ``from_music21`` and ``to_music21`` for notebook users (via MusicXML), and
Humdrum **kern and ABC files converted to MusicXML by music21."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from serialkit.core.errors import ScoreReadError
from serialkit.core.piece import Piece
from serialkit.io.files.safety import read_bytes
from serialkit.io.musicxml.read import read_musicxml
from serialkit.io.musicxml.write import musicxml_bytes


def to_music21(piece: Piece) -> Any:
    """A music21 Score of a Piece (sounding pitches, exact durations, ties and tuplets)."""
    import music21

    return music21.converter.parseData(musicxml_bytes(piece).decode("utf-8"), format="musicxml")


def from_music21(stream: Any) -> Piece:
    """A Piece from a music21 Stream (exported to MusicXML by music21, then read by serialkit)."""
    from music21.musicxml.m21ToXml import GeneralObjectExporter

    try:
        data = GeneralObjectExporter(stream).parse()
    except Exception as exc:  # music21 raises many kinds of errors on odd streams
        raise ScoreReadError(f"music21 could not export the stream: {exc}") from exc
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "music21.musicxml"
        path.write_bytes(data)
        piece = read_musicxml(path)
    return piece.copy(metadata={"format": "music21"})


def music21_musicxml(path: Path, fmt: str) -> bytes:
    """The MusicXML music21 exports a Humdrum **kern (``fmt="kern"``) or ABC (``"abc"``) file as."""
    data = read_bytes(path)
    import music21
    from music21.musicxml.m21ToXml import GeneralObjectExporter

    name = {"kern": "Humdrum **kern", "abc": "ABC"}[fmt]
    text = data.decode("utf-8", "replace").removeprefix("\ufeff")
    try:
        stream = music21.converter.parseData(text, format="humdrum" if fmt == "kern" else "abc")
        if fmt == "abc" and isinstance(stream, music21.stream.Opus):
            scores = list(stream.scores)
            if not scores:
                raise ScoreReadError(f"{path}: the ABC file holds no tune")
            stream = scores[0]
        out = GeneralObjectExporter(stream).parse()
    except ScoreReadError:
        raise
    except Exception as exc:  # music21 raises many kinds of errors on malformed input
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        first = first if len(first) <= 160 else first[:157] + "..."
        raise ScoreReadError(f"{path}: music21 could not read it as {name}: {first}") from None
    return bytes(out)
