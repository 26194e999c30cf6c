"""Edit an XML document's own bytes: the elements an edit touched are written anew, every other
byte is the source's.

lxml writes a parsed document back in its own way — ``<chord />`` as ``<chord/>``, attributes in
double quotes, characters for the source's character references — so a file re-serialised after
one note was changed differs from its source on dozens of lines. Here the source's bytes are
kept and only what changed is spliced in: :class:`Edits` says what changes, by element (counted
in document order of start tags), and :func:`splice` makes the new document. ``mei.annotate``
plans attribute and child edits; :class:`Snapshot` finds, for a tree edited in place
(``serialkit repair`` of MusicXML), the elements whose serialisation changed, and has each
written anew — and within it, only its changed lines.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape

from lxml import etree

__all__ = ["Edits", "Snapshot", "declared_encoding", "splice"]


@dataclass(slots=True)
class Edits:
    """What an edit changes in a document, by element (document order of start tags): attributes
    to set, children (markup) to append, and whole elements to write anew."""

    attrs: dict[int, dict[str, str | None]] = field(default_factory=dict)
    """Attributes to set (None: to take off), by element."""
    children: dict[int, list[bytes]] = field(default_factory=dict)
    replace: dict[int, tuple[bytes, bytes]] = field(default_factory=dict)
    """Elements written anew: the element as lxml wrote it before the edit and after it (the
    source's lines that the edit left as they were are kept, see :func:`_merged`)."""
    removed: set[int] = field(default_factory=set)
    """Self-closing elements taken out, by element."""

    def set(self, index: int, name: str, value: str) -> None:
        self.attrs.setdefault(index, {})[name] = value

    def drop(self, index: int, name: str) -> None:
        """Take the attribute ``name`` off (with the space before it)."""
        self.attrs.setdefault(index, {})[name] = None

    def add(self, index: int, markup: bytes) -> None:
        self.children.setdefault(index, []).append(markup)

    def remove(self, index: int) -> None:
        """Take the element (self-closing: an ``<accid/>`` left saying nothing) out, with the
        line's indentation before it when it stands alone on its line."""
        self.removed.add(index)


_TOKEN = re.compile(
    rb"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<!DOCTYPE(?:[^\[>]|\[.*?\])*>"
    rb"|</([^\s>]+)\s*>"
    rb"|<([^\s/>!?]+)((?:\s+[^\s=/>]+\s*=\s*(?:\"[^\"]*\"|'[^']*'))*)(\s*)(/?)>",
    re.S,
)


def splice(data: bytes, edits: Edits) -> bytes:
    """The document's bytes with the edits made and every other byte as it was (ValueError when
    an element to write anew is not the source's element of that index)."""
    out: list[tuple[int, int, bytes]] = []  # (start, end, replacement), in order
    stack: list[tuple[int, int]] = []  # (element index, start of its start tag)
    index = -1
    for m in _TOKEN.finditer(data):
        if m.group(2) is not None:  # a start tag
            index += 1
            if index in edits.removed and m.group(5):
                start = m.start()
                line = data.rfind(b"\n", 0, start)
                if line >= 0 and not data[line + 1:start].strip() and data[m.end():m.end() + 1] in (b"\n", b"\r"):
                    start = line  # the whole line: its newline and indentation
                out.append((start, m.end(), b""))
                continue
            anew = edits.replace.get(index)
            if anew is not None and m.group(5):
                out.append((m.start(), m.end(), _merged(data[m.start():m.end()], *anew)))
                continue
            attrs = edits.attrs.get(index)
            kids = edits.children.get(index)
            if attrs:
                out.extend(_set_attrs(data, m, attrs))
            if m.group(5):  # self-closing
                if kids:
                    indent = _indent_before(data, m.start())
                    inner = b"".join(indent + b"    " + k for k in kids) + indent
                    out.append((m.start(4), m.end(), b">" + inner + b"</" + m.group(2) + b">"))
            else:
                stack.append((index, m.start()))
        elif m.group(1) is not None:  # an end tag
            opened, at = stack.pop()
            anew = edits.replace.get(opened)
            if anew is not None:  # (no edit inside it is planned: it is written whole)
                out = [edit for edit in out if edit[0] < at]
                out.append((at, m.end(), _merged(data[at:m.end()], *anew)))
                continue
            kids = edits.children.get(opened)
            if kids:
                indent = _indent_before(data, at)
                pos = m.start()
                ws = data[:pos]
                trail = len(ws) - len(ws.rstrip())
                inner = b"".join(indent + b"    " + k for k in kids)
                out.append((pos - trail, pos - trail, inner))
    out.sort(key=lambda t: (t[0], t[1]))
    pieces = []
    cursor = 0
    for start, end, text in out:
        pieces.append(data[cursor:start])
        pieces.append(text)
        cursor = end
    pieces.append(data[cursor:])
    return b"".join(pieces)


def _indent_before(data: bytes, pos: int) -> bytes:
    """The newline and indentation in front of the tag at ``pos`` (a newline alone if none)."""
    line_start = data.rfind(b"\n", 0, pos)
    lead = data[line_start + 1:pos] if line_start >= 0 else b""
    return b"\n" + (lead if not lead.strip() else b"")


def _set_attrs(data: bytes, m: re.Match[bytes], attrs: dict[str, str | None]) -> list[tuple[int, int, bytes]]:
    out = []
    block_start, block_end = m.start(3), m.end(3)
    block = data[block_start:block_end]
    for name, value in attrs.items():
        found = re.search(rb"(\s" + re.escape(name.encode()) + rb"\s*=\s*)(\"[^\"]*\"|'[^']*')", block)
        if value is None:  # taken off, with the space before it
            if found:
                out.append((block_start + found.start(), block_start + found.end(), b""))
            continue
        quoted = b'"' + escape(value, {'"': "&quot;"}).encode() + b'"'
        if found:
            out.append((block_start + found.start(2), block_start + found.end(2), quoted))
        else:
            out.append((block_end, block_end, b" " + name.encode() + b"=" + quoted))
    return out




def _merged(source: bytes, was: bytes, now: bytes) -> bytes:
    """An element written anew (``now``, as lxml writes it) with the source's own bytes on every
    line the edit left as it was: ``was`` (lxml's writing of it before the edit) matched line by
    line with ``source``, when they have as many lines (else ``now`` whole)."""
    name = _NAME.match(was)
    if name is None or not source.startswith(name.group(0)):
        raise ValueError(f"element {name.group(0)[1:] if name else was[:20]!r} is not where the source has it")
    own, old, new = source.split(b"\n"), was.split(b"\n"), now.split(b"\n")
    if b"\r\n" in source:  # a file with CRLF line ends (the parser read them as LF) keeps them
        new = [line + b"\r" for line in new[:-1]] + new[-1:]
        old = [line + b"\r" for line in old[:-1]] + old[-1:]
    if len(own) != len(old):
        return b"\n".join(new)
    lines: list[bytes] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        lines.extend(own[i1:i2] if tag == "equal" else new[j1:j2])
    return b"\n".join(lines)


class Snapshot:
    """Some elements of a parsed document as they were, so that after the tree is edited in place
    the document can be written as its source bytes (``data``, those the tree was parsed from)
    with only the elements whose writing changed written anew (:meth:`write`). The elements
    snapshotted must hold every edit: nothing outside them may change."""

    def __init__(self, data: bytes, tree: etree._ElementTree, elements: Iterable[Any]) -> None:
        self.data = data
        self.order = {el: i for i, el in enumerate(tree.getroot().iter(tag=etree.Element))}
        self.before = {el: _written(el) for el in elements}

    def write(self) -> bytes | None:
        """The edited document in the source's bytes, or None when the source cannot be matched
        to the tree (an encoding other than UTF-8, an element not found where the source has it):
        the caller then writes the tree whole. (A repair reads what it wrote back and checks it.)"""
        if declared_encoding(self.data) not in ("utf-8", "utf8", "us-ascii", "ascii"):
            return None
        edits = Edits()
        for el, was in self.before.items():
            now = _written(el)
            if now != was and el in self.order:
                edits.replace[self.order[el]] = (was, now)
        try:
            return splice(self.data, edits)
        except ValueError:  # an element not where the source has it: the tree is written whole
            return None


_NAME = re.compile(rb"<[^\s/>]+(?=[\s/>])")


def _written(el: Any) -> bytes:
    return bytes(etree.tostring(el, encoding="UTF-8", xml_declaration=False, with_tail=False))


_DECL = re.compile(rb"^(\xef\xbb\xbf)?\s*<\?xml[^>]*\?>")


def declared_encoding(data: bytes) -> str:
    """The encoding an XML document declares (UTF-8 when it declares none)."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "utf-16"
    match = _DECL.match(data)
    if match:
        enc = re.search(rb"encoding\s*=\s*[\"']([^\"']+)", match.group(0))
        if enc:
            return enc.group(1).decode("ascii", "replace").lower()
    return "utf-8"
