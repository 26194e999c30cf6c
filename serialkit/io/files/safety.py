"""Safe loading of score files: size limits, no entities, no network, confined .mxl archives."""

from __future__ import annotations

import io
import os
import re
import zipfile
from pathlib import Path, PurePosixPath

from lxml import etree

from serialkit.core.errors import ScoreReadError

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
"""Largest score (uncompressed) read by default; override with SERIALKIT_MAX_SCORE_BYTES."""

_CHUNK = 1 << 16
_ENTITY = re.compile(rb"<!ENTITY", re.IGNORECASE)


def max_bytes(limit: int | None = None) -> int:
    """The size limit in force: an explicit value, the environment, or the default."""
    if limit is not None:
        return limit
    env = os.environ.get("SERIALKIT_MAX_SCORE_BYTES")
    if env:
        try:
            return int(env)
        except ValueError:
            raise ScoreReadError(
                f"SERIALKIT_MAX_SCORE_BYTES={env!r} is not a whole number of bytes"
            ) from None
    return DEFAULT_MAX_BYTES


def read_bytes(path: Path, limit: int | None = None) -> bytes:
    """The file's bytes, refusing files over the size limit."""
    cap = max_bytes(limit)
    try:
        size = path.stat().st_size
        if size > cap:
            raise ScoreReadError(f"{path}: file is {size} bytes, over the limit of {cap} bytes")
        return path.read_bytes()
    except FileNotFoundError:
        raise ScoreReadError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ScoreReadError(f"{path}: is a directory, not a score file") from None
    except OSError as exc:
        raise ScoreReadError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        huge_tree=False,
        load_dtd=False,
        dtd_validation=False,
        remove_blank_text=False,
    )


def _line_of(data: bytes, pos: int) -> int:
    return data.count(b"\n", 0, pos) + 1


def ascii_view(data: bytes) -> bytes:
    """The bytes with UTF-16 decoded to UTF-8, so that markup can be searched (Finale writes UTF-16)."""
    head = data[:4]
    encoding = None
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        encoding = "utf-16"
    elif len(head) >= 2 and head[0] == 0 and head[1] != 0:
        encoding = "utf-16-be"
    elif len(head) >= 2 and head[1] == 0 and head[0] != 0:
        encoding = "utf-16-le"
    if encoding is None:
        return data
    try:
        return data.decode(encoding, errors="replace").encode("utf-8")
    except LookupError:  # pragma: no cover - codecs always present
        return data


def _doctype_at(data: bytes, within: int = 1 << 20) -> int:
    """Where ``<!DOCTYPE`` (any case) starts in the first ``within`` bytes, or -1: each ``<!`` is
    found by ``bytes.find`` (a score has a few: its DOCTYPE, comments), which passes over a
    score's megabytes many times faster than a case-blind regular expression."""
    find = data.find
    at = find(b"<!", 0, within)
    while at >= 0:
        if data[at + 2:at + 9].upper() == b"DOCTYPE" and at + 9 <= within:
            return at
        at = find(b"<!", at + 2, within)
    return -1


def refuse_entities(data: bytes, where: str) -> None:
    """Refuse documents whose DOCTYPE declares entities (XXE, billion laughs)."""
    data = ascii_view(data)
    doctype = _doctype_at(data)
    if doctype < 0:
        return
    entity = _ENTITY.search(data, doctype)
    if entity is not None:
        raise ScoreReadError(
            f"{where}:{_line_of(data, entity.start())}: the document declares an entity "
            "(<!ENTITY ...>); entity declarations are refused for safety (XXE / entity expansion)"
        )


def parse_xml(data: bytes, where: str) -> etree._ElementTree:
    """Parse XML safely; errors name the file and line."""
    refuse_entities(data, where)
    try:
        root = etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as exc:
        line = exc.lineno if exc.lineno else "?"
        msg = exc.msg if hasattr(exc, "msg") and exc.msg else str(exc)
        msg = re.sub(r",? line \d+, column (\d+)$", r" (column \1)", msg)  # lxml repeats the place
        raise ScoreReadError(f"{where}:{line}: not well-formed XML: {msg}") from None
    if root is None:
        raise ScoreReadError(f"{where}:1: empty document")
    return root.getroottree()


def is_zip(data: bytes) -> bool:
    """True for a ZIP archive (compressed MusicXML)."""
    return data[:4] == b"PK\x03\x04"


def _member_name_ok(name: str) -> bool:
    if not name or name.startswith("/") or "\\" in name or ":" in name.split("/")[0]:
        return False
    return ".." not in PurePosixPath(name).parts


def read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, where: str, budget: int) -> bytes:
    if info.file_size > budget:
        raise ScoreReadError(
            f"{where}: member {info.filename!r} declares {info.file_size} bytes uncompressed, "
            f"over the limit of {budget} bytes (zip bomb?)"
        )
    out = io.BytesIO()
    with zf.open(info) as fh:
        while True:
            chunk = fh.read(_CHUNK)
            if not chunk:
                break
            out.write(chunk)
            if out.tell() > budget:
                raise ScoreReadError(
                    f"{where}: member {info.filename!r} expands past the limit of {budget} "
                    "bytes (zip bomb?)"
                )
    return out.getvalue()


def mxl_rootfile(zf: zipfile.ZipFile, where: str, limit: int | None = None) -> str:
    """The archive path of the score in an .mxl, from META-INF/container.xml (or the first .xml)."""
    names = zf.namelist()
    for name in names:
        if not _member_name_ok(name):
            raise ScoreReadError(
                f"{where}: archive member {name!r} points outside the archive; refused"
            )
    if "META-INF/container.xml" in names:
        info = zf.getinfo("META-INF/container.xml")
        data = read_member(zf, info, where, max_bytes(limit))
        tree = parse_xml(data, f"{where}!META-INF/container.xml")
        for el in tree.iter("{*}rootfile", "rootfile"):
            full = el.get("full-path")
            media = el.get("media-type")
            if full and (media is None or "musicxml" in media or media.endswith("xml")):
                if not _member_name_ok(full):
                    raise ScoreReadError(
                        f"{where}: container.xml names {full!r}, outside the archive; refused"
                    )
                if full not in names:
                    raise ScoreReadError(
                        f"{where}: container.xml names {full!r}, which is not in the archive"
                    )
                return full
        raise ScoreReadError(f"{where}: META-INF/container.xml names no rootfile")
    candidates = [n for n in names if n.endswith((".xml", ".musicxml")) and "/" not in n]
    if not candidates:
        raise ScoreReadError(f"{where}: compressed MusicXML without META-INF/container.xml or score")
    return candidates[0]


def read_mxl(data: bytes, where: str, limit: int | None = None) -> tuple[bytes, str]:
    """The score bytes inside a compressed .mxl and their archive path."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise ScoreReadError(f"{where}: not a readable .mxl archive: {exc}") from None
    with zf:
        root = mxl_rootfile(zf, where, limit)
        try:
            return read_member(zf, zf.getinfo(root), where, max_bytes(limit)), root
        except (zipfile.BadZipFile, zlib_error()) as exc:
            raise ScoreReadError(f"{where}: archive member {root!r} is corrupt: {exc}") from None


def zlib_error() -> type[Exception]:
    """The zlib error class (corrupt deflate streams)."""
    import zlib

    return zlib.error
