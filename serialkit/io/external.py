"""Scores read through other programs: MuseScore (.mscz, .mscx) and music21 (Humdrum **kern, ABC).

Each is turned into MusicXML first (MuseScore's own export, or music21's), then read by
serialkit's MusicXML reader; the same MusicXML is what annotating such a score edits, so the
note ids the reader assigns are the ids the annotator finds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from serialkit.core.errors import ScoreReadError
from serialkit.core.piece import Piece
from serialkit.io.safety import read_bytes

__all__ = [
    "MUSESCORE_PROGRAMS", "VIA_MUSICXML", "musescore_program", "read_abc", "read_kern",
    "read_musescore", "via_musicxml",
]

MUSESCORE_PROGRAMS = ("mscore3", "musescore3", "mscore", "musescore", "mscore4portable")
VIA_MUSICXML = ("musescore", "kern", "abc")
"""Reader names whose scores are read (and annotated) through a MusicXML conversion."""

_CACHE: dict[tuple[str, str, int, int], bytes] = {}


def musescore_program() -> str | None:
    """The MuseScore executable on PATH (``SERIALKIT_MUSESCORE`` overrides), or None."""
    env = os.environ.get("SERIALKIT_MUSESCORE")
    if env:
        return shutil.which(env) or (env if Path(env).is_file() else None)
    for name in MUSESCORE_PROGRAMS:
        found = shutil.which(name)
        if found:
            return found
    return None


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
        data = _musescore_export(p)
    elif fmt in ("kern", "abc"):
        data = _music21_export(p, fmt)
    else:
        raise ScoreReadError(f"{p}: {fmt} scores are not read through MusicXML")
    if key is not None:
        if len(_CACHE) > 8:
            _CACHE.clear()
        _CACHE[key] = data
    return data


def _musescore_export(path: Path) -> bytes:
    head = read_bytes(path)[:4]  # size limit and a clear error for a missing file
    exe = musescore_program()
    if exe is None:
        raise ScoreReadError(
            f"{path}: reading MuseScore files needs MuseScore 3 (Debian package musescore3; "
            "none of mscore3, musescore3, mscore found on PATH)"
        )
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    with tempfile.TemporaryDirectory(prefix="serialkit-mscore-") as tmp:
        src = Path(tmp) / ("score.mscz" if head == b"PK\x03\x04" else "score.mscx")
        shutil.copyfile(path, src)
        out = Path(tmp) / "score.musicxml"
        try:
            proc = subprocess.run(
                [exe, "-o", str(out), str(src)], env=env, capture_output=True, text=True,
                timeout=300, stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            raise ScoreReadError(f"{path}: MuseScore did not finish converting it within 300 s") from None
        except OSError as exc:
            raise ScoreReadError(f"{path}: cannot run MuseScore ({exe}): {exc}") from None
        if proc.returncode != 0 or not out.is_file():
            message = "\n".join(part.strip() for part in (proc.stdout, proc.stderr) if part and part.strip())
            why = message or f"exit status {proc.returncode}"
            raise ScoreReadError(f"{path}: MuseScore could not read it (exit status {proc.returncode}):\n{why}")
        return out.read_bytes()


def _music21_export(path: Path, fmt: str) -> bytes:
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


def _read_via(path: str | os.PathLike[str], fmt: str) -> Piece:
    from serialkit.io.musicxml_read import read_musicxml

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


def read_musescore(path: str | os.PathLike[str]) -> Piece:
    """Read a MuseScore 3.x/4.x file (.mscz, .mscx) with serialkit's own reader (no MuseScore needed)."""
    from serialkit.io.mscore_read import read_mscore

    return read_mscore(path)


def read_kern(path: str | os.PathLike[str]) -> Piece:
    """Read a Humdrum **kern file through music21."""
    return _read_via(path, "kern")


def read_abc(path: str | os.PathLike[str]) -> Piece:
    """Read an ABC tune (the first of a tune book) through music21."""
    return _read_via(path, "abc")
