"""Content sniffing: which format a file's first bytes say it is."""

from __future__ import annotations

import re

from serialkit.io.safety import ascii_view, is_zip

_ROOT = re.compile(rb"<(?!\?|!)([A-Za-z_][\w.\-]*:)?([A-Za-z_][\w.\-]*)")


def root_name(head: bytes) -> str | None:
    """The local name of the first element in an XML prefix, skipping prolog and comments."""
    text = re.sub(rb"<!--.*?-->", b"", ascii_view(head), flags=re.S)
    text = re.sub(rb"<!DOCTYPE[^>\[]*(\[.*?\])?\s*>", b"", text, flags=re.S)
    match = _ROOT.search(text)
    return match.group(2).decode("ascii", "replace") if match else None


def is_musicxml(head: bytes) -> bool:
    """MusicXML (partwise or timewise) or a ZIP archive (compressed MusicXML)."""
    return is_zip(head) or root_name(head) in ("score-partwise", "score-timewise")


def is_mei(head: bytes) -> bool:
    """An MEI document."""
    return root_name(head) in ("mei", "meiCorpus") or (
        b"music-encoding.org/ns/mei" in ascii_view(head) and root_name(head) == "music"
    )


def is_json(head: bytes) -> bool:
    """A JSON object."""
    return head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{"
