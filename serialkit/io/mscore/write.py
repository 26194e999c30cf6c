"""Annotated MuseScore files written natively: the source's own .mscx edited in place.

Each event's ``<Note>`` is found by the reader's own walk (``mscore.read.walk_mscore``), so the
writer and the reader cannot disagree on ids. A label is MuseScore staff text (``<StaffText>``
before the ``<Chord>``, in its ``<voice>``), a ``<Fingering>`` in the ``<Note>`` or a ``<Lyrics>``
in the ``<Chord>``; a colour is ``<color r= g= b= a=/>`` in every notehead of the event. Only the
voices that get a label or colour are written anew (``splice.Snapshot``); every other byte of the
score, its format version, and every other member of a .mscz archive are the source's.
"""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lxml import etree

from serialkit.core.errors import ScoreWriteError
from serialkit.io.annotation import (
    DEFAULT_LABELS,
    LABEL_STYLES,
    Annotations,
    lyric_lines,
    musicxml_color,
)
from serialkit.io.build import RawNote, tie_chains
from serialkit.io.files.atomic import atomic_path
from serialkit.io.mscore.read import GRACES, Walk, load_mscore, mscore_file, walk_mscore

__all__ = [
    "MscoreSource", "annotate_source", "apply_annotations", "begin_edit", "edited_bytes", "heads_of",
    "load_source", "mscore_payload", "write_annotated_mscore",
]

_CONTAINER = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<container>\n  <rootfiles>\n'
    '    <rootfile full-path="{name}"/>\n  </rootfiles>\n</container>\n'
)


@dataclass(slots=True)
class MscoreSource:
    """A MuseScore source read for editing: its .mscx bytes, the walk of its parsed tree, and the
    .mscz archive it came in (None for a .mscx file) with the score's member name."""

    path: Path
    data: bytes
    walk: Walk
    archive: bytes | None = None
    member: str = ""
    element: dict[str, Any] = field(default_factory=dict)
    """Notehead id → its ``<Note>`` (or, for a note a measure repeat plays, the repeat element)."""
    chains: dict[str, list[str]] = field(default_factory=dict)
    """Event id → the ids of its noteheads, first to last (an untied note: itself)."""
    snapshot: Any = None
    """The voices an edit touches as they were (``splice.Snapshot``), set by :func:`begin_edit`."""


def load_source(path: Path) -> MscoreSource:
    """Read a .mscx or .mscz file for editing (``ScoreReadError`` when it cannot be read)."""
    data, archive, member = mscore_file(path)
    walk = walk_mscore(load_mscore(path, data), path)
    src = MscoreSource(path, data, walk, archive, member)
    src.element = {raw_note.id: el for el, raw_note in walk.elements}
    src.chains = {chain[0].id: [n.id for n in chain] for chain in tie_chains(walk.parts)}
    return src


def write_annotated_mscore(
    source: str | os.PathLike[str],
    annotations: Annotations,
    out_path: str | os.PathLike[str],
    labels: str = DEFAULT_LABELS,
) -> Path:
    """Copy a MuseScore source to ``out_path`` (.mscz or .mscx) with per-note labels and colours;
    nothing is written when anything fails."""
    if labels not in LABEL_STYLES:
        raise ScoreWriteError(f"label carrier {labels!r} is not one of {', '.join(LABEL_STYLES)}")
    out = Path(out_path)
    src = load_source(Path(source))
    annotate_source(src, annotations, labels, out)
    payload = mscore_payload(src, edited_bytes(src, out), out)
    with atomic_path(out) as tmp:
        tmp.write_bytes(payload)
    return out


def annotate_source(src: MscoreSource, annotations: Annotations, labels: str, out: Path) -> None:
    """Label and colour the annotated events in ``src``'s tree (a snapshot of the voices it
    touches is kept on ``src`` for :func:`edited_bytes`)."""
    begin_edit(src, heads_of(src, annotations, out))
    apply_annotations(src, annotations, labels)


def heads_of(src: MscoreSource, event_ids: Iterable[str], out: Path) -> list[Any]:
    """The elements of every notehead of the events named (``ScoreWriteError`` for an id the
    score does not hold)."""
    ids = list(event_ids)
    missing = [k for k in ids if k not in src.chains]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise ScoreWriteError(f"{out}: annotations name notes that are not in {src.path}: {shown}")
    return [src.element[nid] for eid in ids for nid in src.chains[eid]]


def apply_annotations(src: MscoreSource, annotations: Annotations, labels: str) -> None:
    """Add the labels (carried as ``labels``) and colours to the tree, inside the voices
    :func:`begin_edit` snapshotted."""
    raw_of = {el: raw for el, raw in src.walk.elements if el.tag == "Note"}
    order = {raw.id: i for i, (_, raw) in enumerate(src.walk.elements)}
    words: dict[Any, list[tuple[int, str]]] = {}  # chord (or measure repeat) -> its staff texts
    lyrics: list[tuple[Any, str]] = []
    for eid, ann in annotations.items():
        ids = src.chains[eid]
        first = src.element[ids[0]]
        carrier = _carrier(first, labels) if ann.label else None
        if carrier == "fingering":
            _add_fingering(first, ann.label or "")
        elif carrier == "lyric":
            lyrics.append((first, ann.label or ""))
        elif carrier == "words":
            where = first if first.tag != "Note" else first.getparent()
            words.setdefault(where, []).append((order[ids[0]], ann.label or ""))
        if ann.color:
            rgba = _rgba(ann.color)
            for nid in ids:
                if src.element[nid].tag == "Note":
                    _set_color(src.element[nid], rgba)
    _add_lyrics(src, lyrics, raw_of)
    for chord, texts in words.items():
        for _, text in sorted(texts):  # in the order of the chord's notes
            _add_staff_text(chord, text)


def begin_edit(src: MscoreSource, heads: Iterable[Any]) -> None:
    """Snapshot the voices holding ``heads`` (``<Note>`` or measure-repeat elements): every edit
    that follows must stay inside them."""
    from serialkit.io.splice import Snapshot

    voices = {el.getparent().getparent() if el.tag == "Note" else el.getparent() for el in heads}
    src.snapshot = Snapshot(src.data, src.walk.root.getroottree(), voices)


def _carrier(first: Any, labels: str) -> str:
    """What carries the label of a note whose first notehead is ``first``: ``labels``, but staff
    text (``words``) for a note a measure repeat plays (no ``<Note>``) and a grace note's lyric."""
    if first.tag != "Note" or (labels == "lyric" and _is_grace(first.getparent())):
        return "words"
    return labels


def _is_grace(chord: Any) -> bool:
    return any(chord.find(tag) is not None for tag in GRACES)


def _rgba(value: str) -> tuple[int, int, int, int]:
    """A colour (``#RRGGBB``, ``#AARRGGBB`` or a name) as red, green, blue and alpha 0-255."""
    digits = musicxml_color(value)[1:]
    alpha = int(digits[:2], 16) if len(digits) == 8 else 255
    digits = digits[-6:]
    return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16), alpha


def _child_indent(parent: Any) -> str:
    """The whitespace before a child of ``parent`` (MuseScore: two spaces deeper than it)."""
    text = parent.text or ""
    return text if not text.strip() else ""


def _new_block(tag: str, parts: list[tuple[str, str]], indent: str) -> Any:
    """``<tag>`` holding text children (``parts``: tag, text), indented as MuseScore writes it:
    children two spaces deeper, the closing tag at the children's depth."""
    block = etree.Element(tag)
    inner = indent + "  " if indent else ""  # a compact element stays compact
    block.text = inner
    for name, text in parts:
        child = etree.SubElement(block, name)
        child.text = text
        child.tail = inner
    return block


def _insert_before(parent: Any, before: Any | None, block: Any) -> None:
    """Insert ``block`` into ``parent`` before ``before`` (None: last), on a line of its own."""
    indent = _child_indent(parent)
    if before is None:
        last = parent[-1] if len(parent) else None
        if last is None:
            parent.text, block.tail = indent, parent.text or ""
            parent.append(block)
            return
        block.tail, last.tail = last.tail, indent
        parent.append(block)
        return
    prev = before.getprevious()
    block.tail = prev.tail if prev is not None else parent.text
    before.addprevious(block)


def _add_staff_text(chord: Any, text: str) -> None:
    """A ``<StaffText>`` with ``text`` just before ``chord`` in its voice."""
    voice = chord.getparent()
    block = _new_block("StaffText", [("text", text)], _child_indent(voice))
    _insert_before(voice, chord, block)


def _add_fingering(note: Any, text: str) -> None:
    """A ``<Fingering>`` with ``text`` in ``note``, before its ``<pitch>``."""
    block = _new_block("Fingering", [("text", text)], _child_indent(note))
    _insert_before(note, note.find("pitch"), block)


def _set_color(note: Any, rgba: tuple[int, int, int, int]) -> None:
    """The notehead's ``<color>``, set or added as the note's first child."""
    names = ("r", "g", "b", "a")
    color = note.find("color")
    if color is None:
        color = etree.Element("color")
        _insert_before(note, note[0] if len(note) else None, color)
    for name, value in zip(names, rgba, strict=True):
        color.set(name, str(value))


def _add_lyrics(src: MscoreSource, labelled: list[tuple[Any, str]], raw_of: dict[Any, RawNote]) -> None:
    """A ``<Lyrics>`` per label in its note's chord, before the chord's notes: each voice of a
    staff, and each note of a chord, on a line of its own past the staff's own lyrics."""
    if not labelled:
        return
    spots: list[tuple[tuple[tuple[str, int], str, int], Any, str]] = []
    for note, text in labelled:
        raw, chord = raw_of[note], note.getparent()
        spots.append((((raw.part, raw.staff), raw.voice, chord.findall("Note").index(note)), chord, text))
    lines = lyric_lines((spot for spot, _, _ in spots), _own_lyric_lines(src))
    for spot, chord, text in spots:
        number = lines[spot]
        parts = ([("no", str(number - 1))] if number > 1 else []) + [("text", text)]
        block = _new_block("Lyrics", parts, _child_indent(chord))
        _insert_before(chord, chord.find("Note"), block)


def _own_lyric_lines(src: MscoreSource) -> dict[tuple[str, int], set[int]]:
    """The lyric lines (1 up) the score's own lyrics use, by (part, staff)."""
    own: dict[tuple[str, int], set[int]] = {}
    for el, raw in src.walk.elements:
        if el.tag != "Note":
            continue
        for lyric in el.getparent().iterfind("Lyrics"):
            number = (lyric.findtext("no") or "0").strip()
            if number.isdigit():
                own.setdefault((raw.part, raw.staff), set()).add(int(number) + 1)
    return own


def edited_bytes(src: MscoreSource, out: Path, pitches: dict[str, int] | None = None) -> bytes:
    """The edited score's .mscx bytes (the source's, but for the voices edited), checked to read
    back as the same noteheads (``pitches``: notehead id → the MIDI pitch an edit gave it)."""
    data = src.snapshot.write() if src.snapshot is not None else src.data
    if data is None:
        data = etree.tostring(src.walk.root.getroottree(), xml_declaration=True, encoding="UTF-8")
    _check_same_notes(src, data, out, pitches or {})
    return data


def _check_same_notes(src: MscoreSource, data: bytes, out: Path, pitches: dict[str, int]) -> None:
    """Refuse (``ScoreWriteError``) an edit after which the score reads as other notes."""
    from serialkit.core.errors import ScoreReadError

    try:
        again = walk_mscore(load_mscore(out, data), out)
    except ScoreReadError as exc:
        raise ScoreWriteError(f"{out}: the edited score does not read back: {exc}") from None
    want = [(n.id, n.onset, pitches.get(n.id, n.midi)) for _, n in src.walk.elements]
    if [(n.id, n.onset, n.midi) for _, n in again.elements] != want:
        raise ScoreWriteError(f"{out}: the edited score reads back as other notes than {src.path}; nothing written")


def mscore_payload(src: MscoreSource, data: bytes, out: Path) -> bytes:
    """The file to write: the .mscx bytes, or a .mscz archive holding them in the source's member
    (a .mscz source's other members unchanged)."""
    if out.suffix.lower() == ".mscx":
        return data
    if out.suffix.lower() != ".mscz":
        raise ScoreWriteError(f"{out}: a MuseScore file is written as .mscz or .mscx")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zout:
        if src.archive is None:
            name = src.path.with_suffix(".mscx").name
            zout.writestr("META-INF/container.xml", _CONTAINER.format(name=name))
            zout.writestr(name, data)
        else:
            _copy_members(src, data, zout, out)
    return buffer.getvalue()


def _copy_members(src: MscoreSource, data: bytes, zout: zipfile.ZipFile, out: Path) -> None:
    """Every member of the source archive into ``zout``, the score's replaced by ``data``; a
    container naming the score is added when the archive has none."""
    assert src.archive is not None
    try:
        with zipfile.ZipFile(io.BytesIO(src.archive)) as zin:
            names = zin.namelist()
            if "META-INF/container.xml" not in names:
                zout.writestr("META-INF/container.xml", _CONTAINER.format(name=src.member))
            for info in zin.infolist():
                zout.writestr(info, data if info.filename == src.member else zin.read(info))
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise ScoreWriteError(f"{out}: cannot copy the members of {src.path}: {exc}") from None

