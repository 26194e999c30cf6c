"""Adapters between files and the core piece model: ``read_score`` and the ``write_*`` verbs.

The public surface of ``serialkit.io``; each name lives in the module that does the work
(``dispatch`` for reading and writing by format, ``annotate`` for annotated copies, a package
per format: ``musicxml``, ``mei``, ``midi``, ``mscore``).
"""

from __future__ import annotations

from serialkit.io.annotate import write_annotated_musicxml, write_annotated_score
from serialkit.io.annotation import Annotation
from serialkit.io.convert import convert_score
from serialkit.io.dispatch import (
    check_score,
    read_score,
    read_score_bytes,
    score_format,
    sniff_format,
    spooled_score,
    write_score,
)
from serialkit.io.jsonio import load_piece, save_piece
from serialkit.io.m21 import from_music21, to_music21
from serialkit.io.mei.read import read_mei
from serialkit.io.mei.write import write_mei
from serialkit.io.midi.write import write_midi
from serialkit.io.musicxml.annotate import read_annotations
from serialkit.io.musicxml.read import read_musicxml
from serialkit.io.musicxml.validate import is_valid_musicxml, validate_musicxml
from serialkit.io.musicxml.write import write_musicxml

__all__ = [
    "Annotation",
    "check_score",
    "convert_score",
    "from_music21",
    "is_valid_musicxml",
    "load_piece",
    "read_annotations",
    "read_mei",
    "read_musicxml",
    "read_score",
    "read_score_bytes",
    "save_piece",
    "score_format",
    "sniff_format",
    "spooled_score",
    "to_music21",
    "validate_musicxml",
    "write_annotated_musicxml",
    "write_annotated_score",
    "write_mei",
    "write_midi",
    "write_musicxml",
    "write_score",
]
