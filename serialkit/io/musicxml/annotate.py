"""Annotating a MusicXML tree in place (schema order) with labels and colours, and reading the
labels and colours a MusicXML file carries."""

from __future__ import annotations

import os
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

from lxml import etree

from serialkit.core.errors import ScoreWriteError
from serialkit.io.annotation import (
    DEFAULT_LABELS,
    LABEL_STYLES,
    Annotation,
    Annotations,
    lyric_lines,
    musicxml_color,
)
from serialkit.io.build import RawNote, tie_chains
from serialkit.io.musicxml.instruments import declare_instrument, declares_instruments
from serialkit.io.musicxml.read import Scan, load_tree, scan_tree

_LABEL_TEXT = re.compile(r"^(RI|[PIR])\d+:\d+(/(RI|[PIR])\d+:\d+)*$")

# The children of <note> in MusicXML 4.0 schema order.
NOTE_ORDER = {
    name: i
    for i, name in enumerate(
        "grace cue chord pitch unpitched rest duration tie instrument footnote level voice type "
        "dot accidental time-modification stem notehead notehead-text staff beam notations lyric "
        "play listen".split()
    )
}

def insert_in_order(note: etree._Element, child: etree._Element) -> etree._Element:
    """Insert ``child`` into ``note`` at its schema position: before the first child that comes
    later in the schema. The children are searched from the end (what is added — notations, a
    notehead — belongs near it), back to the last one that does not come later."""
    later = _later_sibling(note, NOTE_ORDER[child.tag])
    if later is None:
        note.append(child)
    else:
        later.addprevious(child)
    _indent_as_siblings(note, child)
    return child


def _later_sibling(note: etree._Element, rank: int) -> etree._Element | None:
    """The child a new child of schema rank ``rank`` goes before (None: it goes last)."""
    later = None  # the earliest child seen so far that comes after the new one in the schema
    existing = note[-1] if len(note) else None  # (by index and getprevious: faster than iterchildren)
    while existing is not None:
        tag = existing.tag
        if isinstance(tag, str):  # comments and processing instructions are passed over
            if NOTE_ORDER.get(tag, -1) <= rank:
                break
            later = existing
        existing = existing.getprevious()
    return later


def _new_child(note: etree._Element, tag: str) -> etree._Element:
    """A new empty ``tag`` child of ``note``, inserted as ``insert_in_order`` does, made in the
    note's document (no document of its own to create and leave)."""
    later = _later_sibling(note, NOTE_ORDER[tag])
    if later is None:
        child = etree.SubElement(note, tag)
    else:
        child = note.makeelement(tag)
        later.addprevious(child)
    _indent_as_siblings(note, child)
    return child


def _child(parent: etree._Element, tag: str) -> etree._Element | None:
    """The first ``tag`` child (``parent.find(tag)`` without the path machinery)."""
    for found in parent.iterchildren(tag):
        return found
    return None


class _Holders(dict[str, set[etree._Element]]):
    """The elements that hold a child of each tag asked for, found by one walk of the tree in C
    per tag, so that asking every note whether it has a <notehead> costs a set lookup instead of a
    child search each (those searches were a fifth of an annotation). An element given a new child
    of a tag already asked for is added by the code that adds it."""

    def __init__(self, root: etree._Element) -> None:
        super().__init__()
        self.root = root

    def __missing__(self, tag: str) -> set[etree._Element]:
        found = self[tag] = {p for c in self.root.iter(tag) if (p := c.getparent()) is not None}
        return found

    def child(self, parent: etree._Element, tag: str) -> etree._Element | None:
        """``_child(parent, tag)``, searched only in a parent known to hold one."""
        return _child(parent, tag) if parent in self[tag] else None


def _indent_as_siblings(parent: etree._Element, child: etree._Element) -> None:
    """Give a child just inserted into an indented element its siblings' line and indentation (a
    compact element stays compact), so that an edited file differs only by the lines added."""
    indent = parent.text
    if not indent or indent.strip() or "\n" not in indent or child.tail:
        return
    nxt = child.getnext()
    if nxt is not None:
        child.tail = indent
        return
    prev = child.getprevious()
    if prev is not None:  # appended: it takes the closing indentation, its predecessor the children's
        child.tail, prev.tail = prev.tail, indent


def _label_fingering(note: etree._Element, label: str, holders: _Holders) -> None:
    notations = holders.child(note, "notations")
    technical = None
    if notations is None:
        notations = _new_child(note, "notations")
        holders["notations"].add(note)
    else:
        technical = _child(notations, "technical")
    if technical is None:
        technical = etree.SubElement(notations, "technical")
    etree.SubElement(technical, "fingering").text = label


def _lyric_numbers(scan: Scan, notes: list[etree._Element], holders: _Holders) -> dict[etree._Element, int]:
    """``lyric_lines`` for the notes to be labelled with lyrics: staves are (part, staff) (a
    cross-staff note's: its voice's), and the numbers of the staff's own lyrics (not serialkit's)
    are taken."""
    raw_of = {el: raw for el, raw in scan.elements}

    def staff_of(note: etree._Element, pid: str) -> tuple[str, int]:
        raw = raw_of.get(note)
        if raw is not None:
            return (raw.part, raw.home or raw.staff)
        text = (note.findtext("staff") or "1").strip()
        return (pid, int(text) if text.isdigit() else 1)

    own: dict[tuple[str, int], set[int]] = {}
    for p_index, part in enumerate(scan.root.iterfind("part")):
        pid = part.get("id") or f"P{p_index + 1}"
        for lyric in part.iter("lyric"):
            number = (lyric.get("number") or "1").strip()
            note = lyric.getparent()
            if number.isdigit() and lyric.get("name") != "serialkit" and note is not None:
                own.setdefault(staff_of(note, pid), set()).add(int(number))
    where: dict[etree._Element, tuple[tuple[str, int], str, int]] = {}
    for note in notes:
        raw = raw_of[note]
        chord = _chord_of(note, holders)
        where[note] = ((raw.part, raw.home or raw.staff), raw.voice, chord.index(note) if note in chord else 0)
    lines = lyric_lines(where.values(), own)
    return {note: lines[spot] for note, spot in where.items()}


def _label_lyric(note: etree._Element, label: str, number: int) -> None:
    lyric = etree.Element("lyric", number=str(number), name="serialkit")
    etree.SubElement(lyric, "syllabic").text = "single"
    etree.SubElement(lyric, "text").text = label
    insert_in_order(note, lyric)


def _label_words(first: etree._Element, note: etree._Element, label: str) -> None:
    """A ``<direction>`` with the label as words, just before ``first`` (the first note of the
    note's chord, so the chord stays one), on the note's staff."""
    direction = first.makeelement("direction", placement="above")  # in the score's document
    words = etree.SubElement(etree.SubElement(direction, "direction-type"), "words", {"font-size": "7"})
    words.text = label
    staff_of = _child(note, "staff")
    staff = staff_of.text if staff_of is not None else None
    if staff:
        etree.SubElement(direction, "staff").text = staff
    first.addprevious(direction)
    before = direction.getprevious()  # the note keeps its line: the direction gets the same indentation
    direction.tail = before.tail if before is not None else direction.getparent().text  # type: ignore[union-attr]


def _chord_groups(notes: list[etree._Element], holders: _Holders) -> list[list[etree._Element]]:
    """The chords (and single notes) among ``notes``, each in document order: every note of a
    part, so a note marked ``<chord/>`` joins the one before it."""
    groups: list[list[etree._Element]] = []
    for note in notes:
        if groups and note in holders["chord"] and note.getprevious() is groups[-1][-1]:
            groups[-1].append(note)
        else:
            groups.append([note])
    return groups


def _chord_of(note: etree._Element, holders: _Holders) -> list[etree._Element]:
    """The notes of the chord a note belongs to, in document order (the note alone if none)."""
    chords = holders["chord"]
    first = note
    while first in chords:
        prev = first.getprevious()
        while prev is not None and prev.tag != "note":
            prev = prev.getprevious()
        if prev is None:
            break
        first = prev
    out = [first]
    nxt = first.getnext()
    while nxt is not None and nxt.tag == "note" and nxt in chords:
        out.append(nxt)
        nxt = nxt.getnext()
    return out


def _colour(note: etree._Element, color: str, holders: _Holders) -> None:
    note.set("color", color)
    head = holders.child(note, "notehead")
    if head is None:
        head = _new_child(note, "notehead")
        head.text = "normal"
        holders["notehead"].add(note)
    head.set("color", color)


def annotate_tree(
    tree: etree._ElementTree,
    where: str,
    annotations: Annotations,
    label_style: str = DEFAULT_LABELS,
    scan: Scan | None = None,
    declare: bool = True,
    every_id: bool = True,
) -> etree._Element:
    """Apply annotations to a parsed MusicXML tree; returns the (partwise) root to write.
    ``declare``: give parts that declare no instrument a ``<score-instrument>`` (an annotated copy
    does; a repair, which changes only the notes it corrects, does not). ``every_id``: write the
    id the reader gave every note that has none (an annotated copy, every note labelled), or only
    the annotated notes' (a repair: reading the copy back gives the others the same ids, and a
    diff against the source shows only the changed notes)."""
    if label_style not in LABEL_STYLES:
        raise ScoreWriteError(f"label style {label_style!r} is not one of {', '.join(LABEL_STYLES)}")
    if scan is None:
        scan = scan_tree(tree, where)
    element = {raw.id: el for el, raw in scan.elements}
    members = {  # a tied note's first id -> the ids of its noteheads (any other id: itself)
        chain[0].id: [n.id for n in chain] for chain in tie_chains(scan.parts) if len(chain) > 1
    }
    named = scan.assigned if every_id else {n for e in annotations for n in members.get(e, [e])} & scan.assigned
    for el, raw in scan.elements:
        if raw.id in named:
            el.set("id", raw.id)
    missing = [k for k in annotations if k not in element]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise ScoreWriteError(f"{where}: annotations name notes that are not in the score: {shown}")
    words: dict[etree._Element, str] = {}
    holders = _Holders(scan.root)
    lines: dict[etree._Element, int] = {}
    if label_style == "lyric":
        lines = _lyric_numbers(scan, [
            note for event_id, ann in annotations.items()
            if ann.label and (note := element[members.get(event_id, [event_id])[0]]) not in holders["grace"]
        ], holders)
    colours: dict[str, str] = {}  # a score uses a few colours: each is checked once
    for event_id, ann in annotations.items():
        ids = members.get(event_id, [event_id])
        color = None
        if ann.color:
            color = colours.get(ann.color)
            if color is None:
                color = colours[ann.color] = musicxml_color(ann.color)
        note = element[ids[0]]
        if ann.label:
            if label_style == "fingering":
                _label_fingering(note, ann.label, holders)
            elif label_style == "words" or note in holders["grace"]:
                words[note] = ann.label  # lyrics never align with grace notes (LilyPond, MuseScore)
            else:
                _label_lyric(note, ann.label, lines[note])
        if color:
            for nid in ids:
                _colour(element[nid], color, holders)
    if words:
        for group in _chord_groups(list(scan.root.iter("note")), holders):
            for member in group:  # in document order, so reading back pairs them again
                label = words.get(member)
                if label is not None:
                    _label_words(group[0], member, label)
    if declare and not declares_instruments(scan.root):
        for index, sp in enumerate(scan.root.iterfind("part-list/score-part")):
            if sp.find("score-instrument") is None:
                declare_instrument(sp, sp.get("id", f"P{index + 1}"), sp.findtext("part-name"), index)
    return scan.root


def serialize(root: etree._Element, tree: etree._ElementTree, ends: tuple[bytes, bytes] | None = None) -> bytes:
    """The document's bytes. With ``ends`` (``Scan.ends``: the source's bytes around its root) the
    XML declaration, DOCTYPE, comments and final newline are the source's, byte for byte, and
    the layout is the source's; otherwise a document serialkit built (from MEI, a MuseScore,
    **kern or ABC score's MusicXML, a piece) rebuilt from the parsed document (partwise only),
    indented two spaces an element a line — so that a later error's line number finds its
    place — and ending with a newline."""
    same = root is tree.getroot()
    if same and ends is not None:
        body = etree.tostring(root, encoding=tree.docinfo.encoding or "UTF-8", xml_declaration=False)
        return ends[0] + (body if isinstance(body, bytes) else body.encode()) + ends[1]
    etree.indent(root, space="  ")
    options: dict[str, Any] = {"xml_declaration": True, "encoding": "UTF-8"}
    doctype = getattr(tree.docinfo, "doctype", None) if same else None
    if doctype:
        options["doctype"] = doctype
    if same and tree.docinfo.standalone is not None:
        options["standalone"] = tree.docinfo.standalone
    return bytes(etree.tostring(root.getroottree() if same else root, **options)).rstrip(b"\n") + b"\n"


def notehead_annotations(path: str | os.PathLike[str]) -> list[tuple[RawNote, Annotation]]:
    """Every pitched notehead of a MusicXML file with the label and colour it carries: its
    fingerings and lyrics, and label-like words (``P0:3``) standing at its part, staff and onset
    (one per note of a chord, in order; all on the first note when the counts differ)."""
    tree, where, _ = load_tree(Path(path))
    scan = scan_tree(tree, where)
    places = _words_by_place(scan)
    at_place: dict[tuple[str, int, Fraction], list[etree._Element]] = {}
    own: dict[etree._Element, list[str]] = {}
    for el, raw in scan.elements:
        texts = [f.text or "" for f in el.iterfind("notations/technical/fingering")]
        texts += [t.text or "" for t in el.iterfind("lyric/text")]
        own[el] = texts
        if not raw.tie_stop and not any(_LABEL_TEXT.match(t) for t in texts):
            # words label the notes nothing else labels (never a tied continuation)
            at_place.setdefault((raw.part, raw.staff, raw.onset), []).append(el)
    out = []
    for el, raw in scan.elements:
        texts = list(own[el])
        key = (raw.part, raw.staff, raw.onset)
        words, notes = places.get(key, []), at_place.get(key, [])
        if el in notes and len(words) == len(notes):
            texts += [words[notes.index(el)]]
        elif words and notes and el is notes[0]:
            texts += words
        head = el.find("notehead")
        color = head.get("color") if head is not None and head.get("color") else el.get("color")
        out.append((raw, Annotation(" ".join(texts) or None, color)))
    return out


def _words_by_place(scan: Scan) -> dict[tuple[str, int, Fraction], list[str]]:
    """Label-like words of every direction, by (part, staff, onset), in document order.

    A direction standing right before a note takes that note's onset (exact even where an
    exporter rounded tuplet durations); otherwise the counted position, snapped to the nearest
    note of the staff within a 64th."""
    onset_of = {el: raw.onset for el, raw in scan.elements}
    heard: dict[tuple[str, int], list[Fraction]] = {}
    for _el, raw in scan.elements:
        heard.setdefault((raw.part, raw.staff), []).append(raw.onset)
    onsets = [m.onset for m in scan.parts.measures]
    out: dict[tuple[str, int, Fraction], list[str]] = {}
    for p_index, part in enumerate(scan.root.iterfind("part")):
        pid = part.get("id") or f"P{p_index + 1}"
        div = 1
        for m_index, measure in enumerate(part.iterfind("measure")):
            start = onsets[m_index] if m_index < len(onsets) else Fraction(0)
            cursor = Fraction(0)
            for child in measure:
                tag = child.tag
                if tag == "attributes":
                    text = child.findtext("divisions")
                    if text and text.strip().isdigit() and int(text) > 0:
                        div = int(text)
                elif tag == "note":
                    if child.find("grace") is not None:
                        continue
                    dur = Fraction(int(child.findtext("duration") or 0), div)
                    if child.find("chord") is not None:
                        continue
                    cursor += dur
                elif tag in ("backup", "forward"):
                    dur = Fraction(int(child.findtext("duration") or 0), div)
                    cursor += dur if tag == "forward" else -dur
                elif tag == "direction":
                    texts = [(w.text or "").strip() for w in child.iterfind("direction-type/words")]
                    texts = [t for t in texts if _LABEL_TEXT.match(t)]
                    if not texts:
                        continue
                    staff = int(child.findtext("staff") or 1)
                    nxt = child.getnext()
                    while nxt is not None and nxt.tag == "direction":
                        nxt = nxt.getnext()
                    if nxt is not None and nxt in onset_of and child.find("offset") is None:
                        when = onset_of[nxt]
                    else:
                        offset = child.findtext("offset")
                        shift = offset.strip() if offset else ""
                        when = start + cursor + (Fraction(int(shift), div) if shift.lstrip("-").isdigit() else 0)
                        near = min(heard.get((pid, staff), []), key=lambda t: abs(t - when), default=None)
                        if near is not None and abs(near - when) <= Fraction(1, 16):
                            when = near
                    out.setdefault((pid, staff, when), []).extend(texts)
    return out


def read_annotations(path: str | os.PathLike[str]) -> dict[str, Annotation]:
    """Note id → the label (fingering, lyric or words) and notehead colour a MusicXML file carries."""
    return {raw.id: ann for raw, ann in notehead_annotations(path)}
