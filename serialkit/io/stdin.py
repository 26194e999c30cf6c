"""Scores from bytes (standard input): the format sniffed from the content, errors naming ``-``."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from serialkit.core.errors import ScoreReadError, SerialkitError
from serialkit.core.piece import Piece
from serialkit.io.safety import is_zip, max_bytes

STDIN = "-"


def sniff_format(data: bytes) -> str | None:
    """The name of the registered reader whose content sniffer accepts ``data`` (None: unknown)."""
    from serialkit.plugins import registry

    head = data[: 1 << 16]
    for entry in registry("readers"):
        sniff = entry.meta.get("sniff")
        if callable(sniff) and sniff(head):
            return entry.name
    return None


def _suffix(data: bytes, fmt: str | None) -> str:
    """The file extension a reader of ``fmt`` (or of the sniffed format) expects."""
    from serialkit.plugins import registry

    name = fmt or sniff_format(data)
    if name is None:
        return ""
    if name == "musicxml" and is_zip(data[:4]):
        return ".mxl"
    extensions = registry("readers").get(name).meta.get("extensions", ())
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


@contextlib.contextmanager
def spooled(data: bytes, name: str = STDIN, fmt: str | None = None) -> Iterator[Path]:
    """A temporary file holding ``data`` under the extension its content calls for.

    Errors raised inside name ``name`` instead of the temporary path.
    """
    with tempfile.TemporaryDirectory(prefix="serialkit-stdin-") as tmp:
        path = Path(tmp) / f"stdin{_suffix(data, fmt)}"
        path.write_bytes(data)
        try:
            yield path
        except SerialkitError as exc:
            text = str(exc).replace(os.fspath(path), name)
            if text == str(exc):
                raise
            try:
                renamed = type(exc)(text)
            except TypeError:
                renamed = SerialkitError(text)
            raise renamed from None


def read_score_bytes(data: bytes, *, name: str = STDIN, format: str | None = None,
                     limit: int | None = None) -> Piece:
    """Read a score from bytes (any format ``read_score`` reads; the content picks the reader)."""
    from serialkit.io import read_score

    with spooled(data, name, format) as path:
        piece = read_score(path, format=format, limit=limit)
    return piece
