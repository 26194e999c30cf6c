"""Adapters between files and the core piece model: ``read_score`` and the ``write_*`` verbs."""

from __future__ import annotations

import contextlib
import inspect
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from serialkit.core.errors import ScoreReadError, ScoreWriteError
from serialkit.core.piece import Piece
from serialkit.io.safety import max_bytes

if TYPE_CHECKING:
    from serialkit.plugins import Entry

__all__ = [
    "Annotation",
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
    "sniff_format",
    "spooled_score",
    "score_format",
    "to_music21",
    "validate_musicxml",
    "write_annotated_musicxml",
    "write_annotated_score",
    "write_mei",
    "write_midi",
    "write_musicxml",
    "write_score",
]

_HEAD = 1 << 16


def _head(path: Path, limit: int | None) -> bytes:
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise ScoreReadError(f"{path}: is not a regular file")
        cap = max_bytes(limit)
        if size > cap:
            raise ScoreReadError(f"{path}: file is {size} bytes, over the limit of {cap} bytes")
        with path.open("rb") as fh:
            return fh.read(_HEAD)
    except FileNotFoundError:
        raise ScoreReadError(f"{path}: no such file") from None
    except OSError as exc:
        raise ScoreReadError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _reader_for(path: Path, head: bytes, fmt: str | None) -> Entry:
    from serialkit.plugins import registry

    readers = registry("readers")
    if fmt is not None:
        return readers.get(fmt)
    suffix = path.suffix.lower()
    sniffed = [e for e in readers if callable(e.meta.get("sniff")) and e.meta["sniff"](head)]
    for entry in sniffed:
        if suffix in entry.meta.get("extensions", ()):
            return entry
    if sniffed:
        return sniffed[0]
    from serialkit.io.sniff import not_a_score

    known = ", ".join(ext for e in readers for ext in e.meta.get("extensions", ()))
    raise not_a_score(str(path), head, known=f"readers know {known}")


def score_format(path: str | os.PathLike[str]) -> str:
    """The name of the reader that would read this file (by content, then extension)."""
    p = Path(path)
    return _reader_for(p, _head(p, None), None).name


def read_score(
    path: str | os.PathLike[str], *, format: str | None = None, limit: int | None = None
) -> Piece:
    """Read any supported score (MusicXML, .mxl, MEI, MIDI, JSON piece) into a Piece.

    The reader is chosen from the ``readers`` registry by content sniffing, then extension;
    ``format`` forces a reader by name, ``limit`` caps the (uncompressed) size in bytes.
    """
    p = Path(path)
    entry = _reader_for(p, _head(p, limit), format)
    fn = entry.obj
    if limit is not None and "limit" in inspect.signature(fn).parameters:
        piece = fn(p, limit=limit)
    else:
        piece = fn(p)
    if not isinstance(piece, Piece):
        raise ScoreReadError(f"{p}: reader {entry.name!r} returned {type(piece).__name__}, not a Piece")
    if not piece.events and piece.blueprint is None:  # an empty candidate is judged, not refused
        raise ScoreReadError(f"{p}: the score contains no notes")
    return piece


def sniff_format(data: bytes) -> str:
    """The name of the reader for a score given as bytes, judged by content alone (``musicxml``,
    ``mei``, ``musescore``, ``midi``, ``kern``, ``abc``, ``json`` or a plugin reader's name)."""
    from serialkit.io.sniff import sniff_format as sniff

    return sniff(data)


@contextlib.contextmanager
def spooled_score(
    data: bytes, *, name: str = "-", format: str | None = None, limit: int | None = None
) -> Iterator[Path]:
    """A temporary file holding a score given as bytes (standard input), named with the suffix of
    its sniffed (or given) format, removed afterwards. Use it where a library call wants a path
    (``annotate_score``); ``read_score_bytes`` reads one directly. ``name`` is the name errors use.
    """
    from serialkit.plugins import registry

    cap = max_bytes(limit)
    if len(data) > cap:
        raise ScoreReadError(f"{name}: input is {len(data)} bytes, over the limit of {cap} bytes")
    if not data.strip():
        raise ScoreReadError(f"{name}: empty input")
    try:
        fmt = format or sniff_format(data)
    except ScoreReadError as exc:
        raise ScoreReadError(str(exc).replace("-:1:", f"{name}:1:", 1)) from None
    extensions = registry("readers").get(fmt).meta.get("extensions", ())
    suffix = extensions[0] if extensions else ""
    with tempfile.TemporaryDirectory(prefix="serialkit-stdin-") as tmp:
        path = Path(tmp) / f"stdin{suffix}"
        path.write_bytes(data)
        yield path


def read_score_bytes(
    data: bytes, *, name: str = "-", format: str | None = None, limit: int | None = None
) -> Piece:
    """Read a score given as bytes (e.g. standard input), its format sniffed from the content.

    Errors name ``name`` (default ``-``) in place of any file. The piece's metadata keeps
    ``source_path`` = ``name``.
    """
    with spooled_score(data, name=name, format=format, limit=limit) as path:
        try:
            piece = read_score(path, format=format, limit=limit)
        except ScoreReadError as exc:
            raise ScoreReadError(str(exc).replace(str(path), name)) from None
    metadata = dict(piece.metadata or {})
    metadata["source_path"] = name
    return piece.copy(metadata=metadata)


FORMAT_ALIASES = {"mxl": "musicxml"}
"""Output format names that are another writer's: ``mxl`` is compressed MusicXML (the MusicXML
writer compresses when the file name ends in ``.mxl``)."""


def write_score(piece: Piece, out_path: str | os.PathLike[str], *, format: str | None = None) -> Path:
    """Write a Piece in the format its extension names (or ``format``), atomically."""
    from serialkit.plugins import registry

    out = Path(out_path)
    writers = registry("writers")
    if format is not None:
        entry = writers.get(FORMAT_ALIASES.get(format, format))
    else:
        suffix = out.suffix.lower()
        matches = [e for e in writers if suffix in e.meta.get("extensions", ())]
        if not matches:
            known = ", ".join(x for e in writers for x in e.meta.get("extensions", ()))
            raise ScoreWriteError(f"{out}: unknown output format {suffix or '(none)'!r} (known: {known})")
        entry = matches[0]
    entry.obj(piece, out)
    return out


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
        from serialkit.io.annotate import write_annotated_musicxml

        write_annotated_musicxml(src, {}, out)
    else:
        write_score(piece, out, format=out_format)
    return piece


def __getattr__(name: str) -> Any:
    """Lazy re-exports, so ``import serialkit.io`` stays light."""
    if name in ("load_piece", "save_piece"):
        from serialkit.io import jsonio

        return getattr(jsonio, name)
    if name == "read_musicxml":
        from serialkit.io.musicxml_read import read_musicxml

        return read_musicxml
    if name == "read_mei":
        from serialkit.io.mei_read import read_mei

        return read_mei
    if name in ("write_annotated_musicxml", "Annotation", "read_annotations"):
        from serialkit.io import annotate

        return getattr(annotate, name)
    if name == "write_annotated_score":
        from serialkit.io.annotated import write_annotated_score

        return write_annotated_score
    if name in ("write_musicxml", "write_mei", "write_midi"):
        from serialkit.io import writers

        return getattr(writers, name)
    if name in ("validate_musicxml", "is_valid_musicxml"):
        from serialkit.io import validate

        return getattr(validate, name)
    if name in ("from_music21", "to_music21"):
        from serialkit.io import m21

        return getattr(m21, name)
    raise AttributeError(f"module 'serialkit.io' has no attribute {name!r}")
