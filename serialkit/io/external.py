"""Scores read through a MusicXML conversion by another program: MuseScore (.mscz, .mscx, whose
export annotating a MuseScore file goes through) and music21 (Humdrum **kern, ABC).

Each is turned into MusicXML first (MuseScore's own export, or music21's), then read by
serialkit's MusicXML reader; the same MusicXML is what annotating such a score edits, so the
note ids the reader assigns are the ids the annotator finds.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from serialkit.core.errors import ScoreReadError
from serialkit.core.piece import Piece
from serialkit.io.m21 import music21_musicxml
from serialkit.io.mscore.program import musescore_musicxml
from serialkit.io.musicxml.read import read_musicxml

__all__ = ["VIA_MUSICXML", "read_abc", "read_kern", "read_via", "via_musicxml"]

VIA_MUSICXML = ("musescore", "kern", "abc")
"""Reader names whose scores are read (and annotated) through a MusicXML conversion."""

_CACHE: dict[tuple[str, str, int, int], bytes] = {}


def _key(path: Path, fmt: str) -> tuple[str, str, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (fmt, str(path.resolve()), st.st_mtime_ns, st.st_size)


def via_musicxml(path: str | os.PathLike[str], fmt: str) -> bytes:
    """The MusicXML bytes a MuseScore, **kern or ABC file converts to (cached per file version)."""
    p = Path(path)
    key = _key(p, fmt)
    if key is not None and key in _CACHE:
        return _CACHE[key]
    if fmt == "musescore":
        data = musescore_musicxml(p)
    elif fmt in ("kern", "abc"):
        data = music21_musicxml(p, fmt)
    else:
        raise ScoreReadError(f"{p}: {fmt} scores are not read through MusicXML")
    if key is not None:
        if len(_CACHE) > 8:
            _CACHE.clear()
        _CACHE[key] = data
    return data


def read_via(path: str | os.PathLike[str], fmt: str) -> Piece:
    """The piece of a MuseScore, **kern or ABC file, read from the MusicXML it converts to."""
    p = Path(path)
    data = via_musicxml(p, fmt)
    with tempfile.TemporaryDirectory(prefix="serialkit-via-") as tmp:
        xml = Path(tmp) / "score.musicxml"
        xml.write_bytes(data)
        try:
            piece = read_musicxml(xml)
        except ScoreReadError as exc:
            raise ScoreReadError(str(exc).replace(str(xml), f"{p} (as MusicXML)")) from None
    metadata = dict(piece.metadata or {})
    metadata.update(source_path=str(p), format=fmt)
    return piece.copy(metadata=metadata)


def read_kern(path: str | os.PathLike[str]) -> Piece:
    """Read a Humdrum **kern file through music21."""
    return read_via(path, "kern")


def read_abc(path: str | os.PathLike[str]) -> Piece:
    """Read an ABC tune (the first of a tune book) through music21."""
    return read_via(path, "abc")
