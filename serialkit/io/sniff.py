"""Content sniffing: which format a file's first bytes say it is."""

from __future__ import annotations

import re

from serialkit.core.errors import ScoreReadError
from serialkit.io.files.safety import ascii_view, is_zip

_ROOT = re.compile(rb"<(?!\?|!)([A-Za-z_][\w.\-]*:)?([A-Za-z_][\w.\-]*)")
_BOM = b"\xef\xbb\xbf"


#: The last head ``root_name`` read and its answer: the readers' sniffers ask of one head in
#: turn (MusicXML, MEI, MuseScore), and the head is the file's first 64 KiB.
#: (One tuple, replaced whole: read at once by threads that sniff at once.)
_LAST_ROOT: list[tuple[object, str | None]] = [(object(), None)]


def root_name(head: bytes) -> str | None:
    """The local name of the first element in an XML prefix, skipping prolog and comments."""
    last = _LAST_ROOT[0]
    if last[0] is head:
        return last[1]
    name = _root_name(head)
    _LAST_ROOT[0] = (head, name)
    return name


def _root_name(head: bytes) -> str | None:
    text = ascii_view(head)
    if b"<!--" in text:  # (each pattern starts with what is looked for: none there, no change)
        text = re.sub(rb"<!--.*?-->", b"", text, flags=re.S)
    if b"<!DOCTYPE" in text:
        text = re.sub(rb"<!DOCTYPE[^>\[]*(\[.*?\])?\s*>", b"", text, flags=re.S)
    match = _ROOT.search(text)
    return match.group(2).decode("ascii", "replace") if match else None


def is_mscz(head: bytes) -> bool:
    """A compressed MuseScore file: a ZIP archive whose members include a ``.mscx`` score."""
    return is_zip(head) and b".mscx" in head


def is_mscx(head: bytes) -> bool:
    """An uncompressed MuseScore file (root element ``<museScore>``)."""
    return root_name(head) == "museScore"


def is_musescore(head: bytes) -> bool:
    """A MuseScore file, compressed (.mscz) or not (.mscx)."""
    return is_mscz(head) or is_mscx(head)


def is_musicxml(head: bytes) -> bool:
    """MusicXML (partwise or timewise) or a ZIP archive (compressed MusicXML) that is not MuseScore's."""
    if is_zip(head):
        return not is_mscz(head)
    return root_name(head) in ("score-partwise", "score-timewise")


def is_mei(head: bytes) -> bool:
    """An MEI document."""
    return root_name(head) in ("mei", "meiCorpus") or (
        b"music-encoding.org/ns/mei" in ascii_view(head) and root_name(head) == "music"
    )


def is_json(head: bytes) -> bool:
    """A JSON object."""
    return head.lstrip(_BOM + b" \t\r\n")[:1] == b"{"


_LAST_LINES: list[tuple[object, tuple[bytes, ...]]] = [(object(), ())]


def _text_lines(head: bytes) -> tuple[bytes, ...]:
    """The lines of a text head (none for binary content; the last head's, as kept, when the
    kern and ABC sniffers ask of the same head in turn)."""
    last = _LAST_LINES[0]
    if last[0] is head:
        return last[1]
    lines = () if b"\x00" in head[:4096] else tuple(head.removeprefix(_BOM).splitlines())
    _LAST_LINES[0] = (head, lines)
    return lines


def is_kern(head: bytes) -> bool:
    """A Humdrum file with at least one ``**kern`` spine (comments and reference records first)."""
    for line in _text_lines(head):
        if not line.strip() or line.startswith(b"!"):
            continue
        return line.startswith(b"**") and b"**kern" in line.split(b"\t")
    return False


_ABC_FIELD = re.compile(rb"^[A-Za-z]:")


def is_abc(head: bytes) -> bool:
    """An ABC tune: an ``X:`` reference line among header fields, and a ``K:`` key field."""
    lines = [ln.strip() for ln in _text_lines(head)]
    fields = [ln for ln in lines if _ABC_FIELD.match(ln)]
    return any(ln.startswith(b"X:") for ln in fields) and any(ln.startswith(b"K:") for ln in fields)


SCORE_KINDS = "MusicXML, MEI, MuseScore, MIDI, Humdrum **kern, ABC or JSON-piece"
"""What the readers read, as the error for a file that is none of them names them."""


def content_of(head: bytes) -> str:
    """What a file that is no score is, in a few words, from its first bytes: ``the file is
    empty``, ``binary content``, ``its root element is <html>``, ``text, not XML``."""
    text = ascii_view(head)  # UTF-16 markup read as such
    body = text.removeprefix(_BOM)
    if not body.strip():
        return "the file is empty"
    if body.lstrip()[:1] == b"<" and (root := root_name(head)):
        return f"its root element is <{root}>"
    sample = body[:4096]
    try:
        chars = sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(sample) - 4:  # not a character cut off at the end of the sample
            return "binary content"
        chars = sample[:exc.start].decode("utf-8")
    if any(ord(c) < 32 and c not in "\t\n\r\f" for c in chars):  # control characters: not text
        return "binary content"
    return "text, not XML"


def not_a_score(where: str, head: bytes, kinds: str = SCORE_KINDS, known: str | None = None) -> ScoreReadError:
    """The one error for a file that is not a score (every command, every reader): ``FILE:1: not
    a KINDS file (what it is; readers know EXTENSIONS)``."""
    hint = f"; {known}" if known else ""
    return ScoreReadError(f"{where}:1: not a {kinds} file ({content_of(head)}{hint})")
