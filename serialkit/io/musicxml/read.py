"""MusicXML reader (partwise, timewise, compressed .mxl) on lxml: exact time, sounding pitch."""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import cast

from lxml import etree

from serialkit.core.errors import PieceError, ScoreReadError
from serialkit.core.piece import Measure, Piece, TimeSignature
from serialkit.io.build import DAMAGE, ScoreParts, build_piece, check_parts
from serialkit.io.files.safety import is_zip, parse_xml, read_bytes, read_mxl
from serialkit.io.musicxml.walk import Pending, Scan, Walker, plus

__all__ = ["ROOTS", "Scan", "check_partwise_tree", "document_ends", "load_document", "load_source",
           "load_tree", "peek_scan", "read_musicxml", "scan_tree", "take_scan"]

ROOTS = ("score-partwise", "score-timewise")


def load_tree(path: Path, limit: int | None = None) -> tuple[etree._ElementTree, str, str | None]:
    """Parse a MusicXML or .mxl file safely: (tree, place name for messages, .mxl member)."""
    return load_document(path, limit)[:3]


def load_document(
    path: Path, limit: int | None = None
) -> tuple[etree._ElementTree, str, str | None, tuple[bytes, bytes] | None]:
    """``load_tree`` and the bytes around the root element (``document_ends``)."""
    tree, where, member, ends, _data = load_source(path, limit)
    return tree, where, member, ends


def load_source(
    path: Path, limit: int | None = None
) -> tuple[etree._ElementTree, str, str | None, tuple[bytes, bytes] | None, bytes]:
    """``load_document`` and the document's bytes (an .mxl's score member), which an edit in place
    keeps outside what it changed (``serialkit.io.splice``)."""
    data = read_bytes(path, limit)
    where = str(path)
    member = None
    if is_zip(data):
        data, member = read_mxl(data, where, limit)
        where = f"{path}!{member}"
    tree = parse_xml(data, where)
    root = tree.getroot()
    if not isinstance(root.tag, str) or etree.QName(root).localname not in ROOTS:
        name = etree.QName(root).localname if isinstance(root.tag, str) else "?"
        raise ScoreReadError(
            f"{where}:{root.sourceline or 1}: root element <{name}> is not a MusicXML score "
            "(score-partwise or score-timewise)"
        )
    return tree, where, member, document_ends(data, tree), data


def document_ends(data: bytes, tree: etree._ElementTree) -> tuple[bytes, bytes] | None:
    """The bytes of ``data`` before its root element (XML declaration, DOCTYPE, comments, as the
    file writes them) and after it (the final newline), so that a tree edited in place is written
    back with them unchanged. None when they cannot be found (an encoding that is not ASCII-based)."""
    root = tree.getroot()
    line = root.sourceline
    if not isinstance(root.tag, str) or not isinstance(line, int):
        return None
    tag = root.tag.encode("ascii", "replace")
    start = 0
    for _ in range(line - 1):
        start = data.find(b"\n", start) + 1
        if start == 0:
            return None
    opening = re.compile(rb"<" + re.escape(tag) + rb"[\s/>]").search(data, start)
    closing = data.rfind(b"</" + tag)
    end = data.find(b">", closing) + 1 if closing >= 0 else 0
    if opening is None or end <= opening.start():
        return None
    return data[: opening.start()], data[end:]


def read_musicxml(path: str | Path, limit: int | None = None) -> Piece:
    """Read a MusicXML (.musicxml, .xml) or compressed (.mxl) score into a Piece."""
    path = Path(path)
    tree, where, member, ends = load_document(path, limit)
    scan = scan_tree(tree, where)
    scan.ends = ends
    piece = _piece(scan, path, where, "mxl" if member else "musicxml")
    _remember(path, (tree, where, member, scan))
    return piece


def check_partwise_tree(tree: etree._ElementTree, path: str | Path, keep: bool = True) -> Callable[[], Piece]:
    """Check a plain (uncompressed) score-partwise file as ``read_musicxml`` reads it, from its
    tree as ``parse_xml`` parsed it (read only), raising the errors ``read_musicxml`` raises; and
    return a function that gives the Piece ``read_musicxml`` reads, built when first asked for.
    ``keep=False``: for a caller that will rarely ask for the Piece, the tree is walked without
    keeping its notes (the walk raises the same errors; where a note could fail to become an
    event, it is scanned whole for ``check_parts``' error), and scanned whole when the Piece is
    asked for (from the tree as it is then: ask before changing it)."""
    path = Path(path)
    if tree.getroot().tag != "score-partwise":
        raise ValueError("check_partwise_tree reads a score-partwise tree")
    where = str(path)
    if not keep and checked(tree, where):
        return functools.cache(lambda: _piece(scan_tree(tree, where), path, where, "musicxml"))
    scan = scan_tree(tree, where)
    try:
        check_parts(scan.parts, path)
    except PieceError as exc:
        raise ScoreReadError(f"{where}: {exc}") from None
    return functools.cache(lambda: _piece(scan, path, where, "musicxml"))


def _piece(scan: Scan, path: Path, where: str, fmt: str) -> Piece:
    try:
        return build_piece(scan.parts, path, fmt)
    except PieceError as exc:
        raise ScoreReadError(f"{where}: {exc}") from None


# The last score read, kept so that annotating the file just read (check, then annotate) does
# not parse and scan it again. One entry; taken (not copied) by the annotator, which edits it.
_LAST: dict[tuple[str, int, int], tuple[etree._ElementTree, str, str | None, Scan]] = {}


def _file_key(path: Path) -> tuple[str, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (str(path.resolve()), st.st_mtime_ns, st.st_size)


def _remember(path: Path, entry: tuple[etree._ElementTree, str, str | None, Scan]) -> None:
    _LAST.clear()
    key = _file_key(path)
    if key is not None and entry[0].getroot().tag == "score-partwise":
        _LAST[key] = entry


def peek_scan(path: Path) -> Scan | None:
    """The scan of the MusicXML file just read, if unchanged, left in place for ``take_scan``."""
    key = _file_key(path)
    entry = _LAST.get(key) if key is not None else None
    return entry[3] if entry is not None else None


def take_scan(path: Path) -> tuple[etree._ElementTree, str, str | None, Scan]:
    """The parsed tree and scan of a MusicXML file: the one just read if unchanged, else fresh."""
    key = _file_key(path)
    if key is not None and key in _LAST:
        return _LAST.pop(key)
    _LAST.clear()
    tree, where, member, ends = load_document(path)
    scan = scan_tree(tree, where)
    scan.ends = ends
    return tree, where, member, scan


def _partwise(root: etree._Element) -> etree._Element:
    """The root as score-partwise (timewise scores are regrouped; sourcelines are kept)."""
    if root.tag == "score-partwise":
        return root
    out = etree.Element("score-partwise")
    for child in root:
        if child.tag != "measure":
            out.append(child)
    parts: dict[str, etree._Element] = {}
    for measure in root.iter("measure"):
        for part in measure.findall("part"):
            pid = part.get("id", "")
            target = parts.get(pid)
            if target is None:
                target = parts[pid] = etree.SubElement(out, "part", id=pid)
            m = etree.SubElement(
                target, "measure", {str(k): str(v) for k, v in measure.attrib.items()}
            )
            m.extend(list(part))
    return out


def _part_names(root: etree._Element) -> dict[str, str | None]:
    names: dict[str, str | None] = {}
    for sp in root.iterfind("part-list/score-part"):
        text = sp.findtext("part-name")
        names[sp.get("id", "")] = text.strip() if text and text.strip() else None
    return names


def _title(root: etree._Element) -> str | None:
    for path in ("work/work-title", "movement-title"):
        text = root.findtext(path)
        if text and text.strip():
            return text.strip()
    return None


def scan_tree(tree: etree._ElementTree, where: str) -> Scan:
    """Walk a MusicXML tree: noteheads with exact onsets, sounding pitch and stable ids."""
    root = _partwise(tree.getroot())
    parts = ScoreParts(part_names=_part_names(root), title=_title(root))
    walker = Walker(where, Scan(parts, root))
    walker.ours = (root.findtext("identification/encoding/software") or "").strip() == "serialkit"
    for p_index, part in enumerate(root.iterfind("part")):
        pid = part.get("id") or f"P{p_index + 1}"
        parts.part_names.setdefault(pid, None)
        walker.part(pid, part)
    _finish(parts, walker.scan, walker.pending, walker.lengths, walker.numbers, walker.meters)
    return walker.scan


def checked(tree: etree._ElementTree, where: str) -> bool:
    """Walk a score-partwise tree as ``scan_tree`` does, raising its errors, without keeping its
    notes: True when every pitched note will become an event (``check_parts`` passes), False
    when that needs the whole scan to tell (no note, or one that may not be an event). A plain
    score (``_plain``) is told True without the walk."""
    root = tree.getroot()
    walker = Walker(where, Scan(ScoreParts(), root))
    walker.records = False
    walker.ours = (root.findtext("identification/encoding/software") or "").strip() == "serialkit"
    if not walker.ours and _plain(root, where):
        return True
    for p_index, part in enumerate(root.iterfind("part")):
        walker.part(part.get("id") or f"P{p_index + 1}", part)
    return walker.sounded > 0 and not walker.doubt


#: What ``_plain`` lets each pitch text be: a step as written, an octave of 0..8 and an
#: alteration of at most two semitones (MIDI 10..121: every pitch in range).
_PLAIN_STEPS = frozenset("CDEFGAB")
_PLAIN_OCTAVES = frozenset("012345678")
_PLAIN_ALTERS = frozenset(("-2", "-1", "0", "1", "2"))
#: Every note of the walk has a duration, every pitch a step and an octave, and every <backup>
#: and <forward> a duration (counted in libxml2: no element made a Python object). A note has
#: at most one first duration and a pitch one first step and octave: the sums are equal only
#: when each count is.
_PLAIN_SHAPE = etree.XPath(
    "count(part/measure/note) + 2 * count(part/measure/note/pitch)"
    " = count(part/measure/note/duration[1]) + count(part/measure/note/pitch/step[1])"
    " + count(part/measure/note/pitch/octave[1])"
    " and not(part/measure/backup[not(duration)] or part/measure/forward[not(duration)])"
)
#: The <attributes> the walk reads, in its order (found in libxml2, not by ElementPath's generators).
_ATTRIBUTES = etree.XPath("part/measure/attributes")
_TEXT = operator.attrgetter("text")


def _digits(text: str | None) -> bool:
    """A text of ASCII digits only (what ``int`` reads, as the walk reads a duration)."""
    return text is not None and text.isascii() and text.isdigit()


def _plain(root: etree._Element, where: str) -> bool:
    """Whether ``checked``'s walk of a score (not serialkit's own) would raise nothing and find
    every pitched note an event, told without walking its notes one by one: every <step>,
    <octave>, <alter>, <duration> and <staff> of the document (those the walk reads among them)
    holds a text the walk reads without error or doubt (durations of digits: no onset or duration
    is negative; pitches in MIDI's range), every note and pitch has the children the walk needs,
    every <attributes> reads as the walk reads it (same errors) without a transposition, and a
    pitched note sounds. False: the walk must tell (it raises the error, or finds the doubt)."""
    if not set(map(_TEXT, root.iter("step"))) <= _PLAIN_STEPS:
        return False
    if not set(map(_TEXT, root.iter("octave"))) <= _PLAIN_OCTAVES:
        return False
    if not set(map(_TEXT, root.iter("alter"))) <= _PLAIN_ALTERS:
        return False
    if not all(map(_digits, set(map(_TEXT, root.iter("duration"))))):
        return False
    if not all(not text or _digits(text) for text in set(map(_TEXT, root.iter("staff")))):
        return False
    if not _PLAIN_SHAPE(root):
        return False
    reader = Walker(where, Scan(ScoreParts(), root))  # its state is thrown away
    try:
        for attributes in cast(list[etree._Element], _ATTRIBUTES(root)):
            reader.attributes(attributes, 0)
    except (ScoreReadError, *DAMAGE):
        return False
    return not reader.transpose and any(map(_sounds, root.iterfind("part/measure/note")))


def _sounds(note: etree._Element) -> bool:
    """A pitched note the walk counts as sounding (its one duration not zero), not a cue note
    (``any`` over the notes stops at the first)."""
    return (note.find("pitch") is not None and note.find("cue") is None and note.find("grace") is None
            and len(note.findall("duration")) == 1 and int(note.findtext("duration") or 0) > 0)


def _finish(
    parts: ScoreParts,
    scan: Scan,
    pending: list[Pending],
    lengths: list[Fraction],
    numbers: list[str],
    meters: dict[int, tuple[int, int]],
) -> None:
    """Place measures on the global timeline and give each notehead its absolute onset."""
    meter = (4, 4)
    onsets: list[Fraction] = []
    t = Fraction(0)
    for i, length in enumerate(lengths):
        if i in meters:
            meter = meters[i]
            parts.time_signatures.append(TimeSignature(meter[0], meter[1], i))
        bar = Fraction(4 * meter[0], meter[1])
        if length == 0:
            length = bar
        if i == 0 and length < bar:
            parts.pickup = length
        onsets.append(t)
        parts.measures.append(Measure(numbers[i], t, length))
        t += length
    notes, elements = parts.notes, scan.elements
    for element, note, index in pending:
        note.onset = plus(note.onset, onsets[index])
        notes.append(note)
        elements.append((element, note))
