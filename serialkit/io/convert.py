"""Converting a score file to another format, keeping what the formats allow."""

from __future__ import annotations

import os
from pathlib import Path

from serialkit.core.piece import Piece
from serialkit.io.annotate import write_annotated_musicxml
from serialkit.io.dispatch import FORMAT_ALIASES, read_score, write_score

__all__ = ["convert_score"]


def convert_score(
    source: str | os.PathLike[str], out_path: str | os.PathLike[str], *,
    in_format: str | None = None, out_format: str | None = None,
) -> Piece:
    """Convert a score file, keeping what the formats allow: MEI → MusicXML goes through the
    engraving-faithful converter (clefs, transposition, dynamics, slurs, … kept); MuseScore,
    **kern and ABC → MusicXML write the MusicXML their reader read; anything else is rebuilt
    from the piece model. Returns the piece read."""
    src, out = Path(source), Path(out_path)
    out_format = FORMAT_ALIASES.get(out_format or "", out_format)
    piece = read_score(src, format=in_format)
    fmt = in_format or piece.metadata.get("format")
    target = out_format or ("musicxml" if out.suffix.lower() in (".musicxml", ".xml", ".mxl") else None)
    if target == "musicxml" and fmt in ("mei", "musescore", "kern", "abc"):
        write_annotated_musicxml(src, {}, out)
    else:
        write_score(piece, out, format=out_format)
    return piece
