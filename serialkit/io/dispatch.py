"""Reading and writing by format: the reader a file's content (then extension) calls for, the
writer its extension names, and scores given as bytes (standard input) spooled to a file."""

from __future__ import annotations

import contextlib
import inspect
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from lxml import etree

from serialkit.core.errors import ScoreReadError, ScoreWriteError, SerialkitError
from serialkit.core.piece import Piece
from serialkit.io.files.safety import is_zip, max_bytes
from serialkit.io.musicxml.read import check_partwise_tree, read_musicxml
from serialkit.io.sniff import not_a_score
from serialkit.plugins import Entry, registry

__all__ = [
    "FORMAT_ALIASES",
    "STDIN",
    "check_score",
    "read_score",
    "read_score_bytes",
    "read_stdin_bytes",
    "score_format",
    "sniff_format",
    "spool_suffix",
    "spooled_score",
    "write_score",
]

STDIN = "-"
"""The name standard input goes by, on the command line and in errors."""

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


def _sniffed(head: bytes) -> list[Entry]:
    """The registered readers whose content sniffer accepts ``head``, in registry order."""
    return [e for e in registry("readers") if callable(e.meta.get("sniff")) and e.meta["sniff"](head)]


def _reader_for(path: Path, head: bytes, fmt: str | None) -> Entry:
    readers = registry("readers")
    if fmt is not None:
        return readers.get(fmt)
    suffix = path.suffix.lower()
    sniffed = _sniffed(head)
    for entry in sniffed:
        if suffix in entry.meta.get("extensions", ()):
            return entry
    if sniffed:
        return sniffed[0]
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


def check_score(path: str | os.PathLike[str], *, parsed: etree._ElementTree | None = None,
                keep: bool = True) -> Callable[[], Piece]:
    """Refuse a score ``read_score`` refuses, with its error, and return a function that gives the
    Piece ``read_score`` reads. ``parsed``: the file's XML as ``parse_xml`` parsed it, for a caller
    that has parsed it already; a plain (not compressed) score-partwise file the MusicXML reader
    reads is then checked from it (left unchanged), and its Piece built only when asked for
    (``keep=False``: for a caller that will rarely ask, its notes are not kept from the check:
    ``check_partwise_tree``)."""
    p = Path(path)
    head = _head(p, None)
    fn = _reader_for(p, head, None).obj
    if parsed is not None and fn is read_musicxml and not is_zip(head) and parsed.getroot().tag == "score-partwise":
        return check_partwise_tree(parsed, p, keep)
    piece = read_score(p)
    return lambda: piece


def sniff_format(data: bytes) -> str:
    """The name of the reader for a score given as bytes, judged by content alone (``musicxml``,
    ``mei``, ``musescore``, ``midi``, ``kern``, ``abc``, ``json`` or a plugin reader's name).

    Raises ScoreReadError naming what the bytes look like when no reader claims them.
    """
    head = data[:_HEAD]
    sniffed = _sniffed(head)
    if not sniffed:
        raise not_a_score(STDIN, head)
    return sniffed[0].name


def spool_suffix(data: bytes, fmt: str | None = None) -> str:
    """The file extension a score given as bytes calls for: that of the reader ``fmt`` names, or
    of the one its content calls for (``.mxl`` for a compressed MusicXML); empty when unknown."""
    if fmt is None:
        sniffed = _sniffed(data[:_HEAD])
        if not sniffed:
            return ""
        fmt = sniffed[0].name
    if fmt == "musicxml" and is_zip(data[:4]):
        return ".mxl"
    extensions = registry("readers").get(fmt).meta.get("extensions", ())
    return str(extensions[0]) if extensions else ""


def read_stdin_bytes(limit: int | None = None) -> bytes:
    """All of standard input, refusing more than the score size limit."""
    cap = max_bytes(limit)
    data = sys.stdin.buffer.read(cap + 1)
    if len(data) > cap:
        raise ScoreReadError(f"{STDIN}: standard input is over the limit of {cap} bytes")
    if not data:
        raise ScoreReadError(f"{STDIN}: standard input is empty")
    return data


def _renamed(exc: SerialkitError, path: Path, name: str) -> SerialkitError | None:
    """``exc`` with the temporary ``path`` replaced by ``name`` in its message (None: not named)."""
    text = str(exc).replace(os.fspath(path), name)
    if text == str(exc):
        return None
    try:
        return type(exc)(text)
    except TypeError:
        return SerialkitError(text)


@contextlib.contextmanager
def spooled_score(
    data: bytes, *, name: str = STDIN, format: str | None = None, limit: int | None = None
) -> Iterator[Path]:
    """A temporary file holding a score given as bytes (standard input), named with the suffix of
    its given (or sniffed) format, removed afterwards. Use it where a library call wants a path
    (``annotate_score``); ``read_score_bytes`` reads one directly.

    Errors raised inside name ``name`` in place of the temporary file.
    """
    cap = max_bytes(limit)
    if len(data) > cap:
        raise ScoreReadError(f"{name}: input is {len(data)} bytes, over the limit of {cap} bytes")
    if not data.strip():
        raise ScoreReadError(f"{name}: empty input")
    with tempfile.TemporaryDirectory(prefix="serialkit-stdin-") as tmp:
        path = Path(tmp) / f"stdin{spool_suffix(data, format)}"
        path.write_bytes(data)
        try:
            yield path
        except SerialkitError as exc:
            renamed = _renamed(exc, path, name)
            if renamed is None:
                raise
            raise renamed from None


def read_score_bytes(
    data: bytes, *, name: str = STDIN, format: str | None = None, limit: int | None = None
) -> Piece:
    """Read a score given as bytes (e.g. standard input), its format sniffed from the content.

    Errors name ``name`` (default ``-``) in place of any file. The piece's metadata keeps
    ``source_path`` = ``name``.
    """
    with spooled_score(data, name=name, format=format, limit=limit) as path:
        piece = read_score(path, format=format, limit=limit)
    metadata = dict(piece.metadata or {})
    metadata["source_path"] = name
    return piece.copy(metadata=metadata)


FORMAT_ALIASES = {"mxl": "musicxml"}
"""Output format names that are another writer's: ``mxl`` is compressed MusicXML (the MusicXML
writer compresses when the file name ends in ``.mxl``)."""


def write_score(piece: Piece, out_path: str | os.PathLike[str], *, format: str | None = None) -> Path:
    """Write a Piece in the format its extension names (or ``format``), atomically."""
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
