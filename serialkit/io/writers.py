"""The write verbs: MusicXML, MEI, MIDI and JSON pieces."""

from __future__ import annotations

import os
from pathlib import Path

from serialkit.core.piece import Piece
from serialkit.io.mei_write import write_mei
from serialkit.io.midi import write_midi
from serialkit.io.musicxml_write import write_musicxml

__all__ = ["write_json", "write_mei", "write_midi", "write_musicxml"]


def write_json(piece: Piece, out_path: str | os.PathLike[str]) -> Path:
    """Write a JSON piece (the predicates engineer's ``save_piece``)."""
    from serialkit.io.jsonio import save_piece

    save_piece(piece, out_path)
    return Path(out_path)
