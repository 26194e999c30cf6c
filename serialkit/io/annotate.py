"""Annotated MusicXML: edit the source tree in place (schema order) with labels and colours."""

from __future__ import annotations

import io
import os
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lxml import etree

from serialkit.core.errors import ScoreWriteError
from serialkit.io._build import RawNote, tie_chains
from serialkit.io.atomic import atomic_path
from serialkit.io.musicxml_read import Scan, load_tree, scan_tree, take_scan
from serialkit.io.safety import max_bytes, read_member

LABEL_STYLES = ("fingering", "lyric")

# The children of <note> in MusicXML 4.0 schema order.
NOTE_ORDER = {
    name: i
    for i, name in enumerate(
        "grace cue chord pitch unpitched rest duration tie instrument footnote level voice type "
        "dot accidental time-modification stem notehead notehead-text staff beam notations lyric "
        "play listen".split()
    )
}

_NAMED = {
    "red": "#FF0000", "blue": "#0000FF", "green": "#008000", "black": "#000000",
    "orange": "#FF8C00", "purple": "#800080", "gray": "#808080", "grey": "#808080",
    "magenta": "#FF00FF", "teal": "#008080", "brown": "#8B4513",
}
_HEX = re.compile(r"^#?([0-9A-Fa-f]{6}|[0-9A-Fa-f]{8}|[0-9A-Fa-f]{3})$")


@dataclass(frozen=True, slots=True)
class Annotation:
    """What to add to one note: a label (``P0:3``) and a colour (``#RRGGBB`` or a name)."""

    label: str | None = None
    color: str | None = None


def musicxml_color(value: str) -> str:
    """A colour as MusicXML wants it (``#RRGGBB`` / ``#AARRGGBB``, upper case)."""
    text = value.strip()
    if text.lower() in _NAMED:
        return _NAMED[text.lower()]
    match = _HEX.match(text)
    if match is None:
        raise ScoreWriteError(f"colour {value!r} is not #RRGGBB, #AARRGGBB or a known name")
    digits = match.group(1).upper()
    if len(digits) == 3:
        digits = "".join(c * 2 for c in digits)
    return "#" + digits


def insert_in_order(note: etree._Element, child: etree._Element) -> etree._Element:
    """Insert ``child`` into ``note`` at its schema position: before the first child that comes
    later in the schema. The children are searched from the end (what is added — notations, a
    notehead — belongs near it), back to the last one that does not come later."""
    rank = NOTE_ORDER[child.tag]
    later = None  # the earliest child seen so far that comes after ``child`` in the schema
    for existing in note.iterchildren(reversed=True):
        tag = existing.tag
        if not isinstance(tag, str):
            continue
        if NOTE_ORDER.get(tag, -1) <= rank:
            break
        later = existing
    if later is None:
        note.append(child)
    else:
        later.addprevious(child)
    return child


def _ensure(note: etree._Element, tag: str) -> etree._Element:
    found = note.find(tag)
    return found if found is not None else insert_in_order(note, etree.Element(tag))


def _label_fingering(note: etree._Element, label: str) -> None:
    notations = _ensure(note, "notations")
    technical = notations.find("technical")
    if technical is None:
        technical = etree.SubElement(notations, "technical")
    etree.SubElement(technical, "fingering").text = label


def _label_lyric(note: etree._Element, label: str) -> None:
    numbers = [int(n) for ly in note.iterfind("lyric") if (n := ly.get("number", "")).isdigit()]
    lyric = etree.Element("lyric", number=str(max(numbers, default=0) + 1), name="serialkit")
    etree.SubElement(lyric, "syllabic").text = "single"
    etree.SubElement(lyric, "text").text = label
    insert_in_order(note, lyric)


def _colour(note: etree._Element, color: str) -> None:
    note.set("color", color)
    head = note.find("notehead")
    if head is None:
        head = etree.Element("notehead")
        head.text = "normal"
        insert_in_order(note, head)
    head.set("color", color)


def annotate_tree(
    tree: etree._ElementTree,
    where: str,
    annotations: Mapping[str, Annotation],
    label_style: str = "fingering",
    scan: Scan | None = None,
) -> etree._Element:
    """Apply annotations to a parsed MusicXML tree; returns the (partwise) root to write."""
    if label_style not in LABEL_STYLES:
        raise ScoreWriteError(f"label style {label_style!r} is not one of {', '.join(LABEL_STYLES)}")
    if scan is None:
        scan = scan_tree(tree, where)
    element = {}
    for el, raw in scan.elements:
        element[raw.id] = el
        if raw.id in scan.assigned:
            el.set("id", raw.id)
    members: dict[str, list[str]] = {}
    for chain in tie_chains(scan.parts):
        ids = [n.id for n in chain]
        for nid in ids:
            members[nid] = ids if nid == ids[0] else [nid]
    missing = [k for k in annotations if k not in element]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise ScoreWriteError(f"{where}: annotations name notes that are not in the score: {shown}")
    label_fn = _label_fingering if label_style == "fingering" else _label_lyric
    colours: dict[str, str] = {}  # a score uses a few colours: each is checked once
    for event_id, ann in annotations.items():
        ids = members.get(event_id, [event_id])
        color = None
        if ann.color:
            color = colours.get(ann.color)
            if color is None:
                color = colours[ann.color] = musicxml_color(ann.color)
        if ann.label:
            label_fn(element[ids[0]], ann.label)
        if color:
            for nid in ids:
                _colour(element[nid], color)
    return scan.root


def serialize(root: etree._Element, tree: etree._ElementTree) -> bytes:
    """The document's bytes, keeping its XML declaration and DOCTYPE (partwise only)."""
    same = root is tree.getroot()
    options: dict[str, Any] = {"xml_declaration": True, "encoding": "UTF-8"}
    doctype = getattr(tree.docinfo, "doctype", None) if same else None
    if doctype:
        options["doctype"] = doctype
    if same and tree.docinfo.standalone is not None:
        options["standalone"] = tree.docinfo.standalone
    return bytes(etree.tostring(root.getroottree() if same else root, **options))


def write_annotated_musicxml(
    source_path: str | os.PathLike[str],
    annotations: Mapping[str, Annotation],
    out_path: str | os.PathLike[str],
    label_style: str = "fingering",
) -> Path:
    """Copy a MusicXML/.mxl score to ``out_path`` with per-note labels and colours added.

    ``annotations`` maps event ids (note ids, as ``read_score`` reports them) to an Annotation;
    a tied event's colour goes on every tied notehead, its label on the first. Notes that had no
    id get the deterministic id ``read_score`` gave them. The output is ``.mxl`` when
    ``out_path`` ends so, else plain MusicXML. A source in another format (MEI, JSON piece) is
    first written as MusicXML with ``write_musicxml`` (note ids = event ids). Nothing is written
    when anything fails.
    """
    source, out = Path(source_path), Path(out_path)
    tree, where, member, scan = _source_tree(source)
    root = annotate_tree(tree, where, annotations, label_style, scan)
    data = serialize(root, tree)
    if out.suffix.lower() == ".mxl":
        payload = _mxl_bytes(source if member else None, member, data)
    else:
        payload = data
    with atomic_path(out) as tmp:
        tmp.write_bytes(payload)
    return out


def _source_tree(source: Path) -> tuple[etree._ElementTree, str, str | None, Scan | None]:
    """The MusicXML tree to annotate; other formats (MEI, JSON) are first written as MusicXML."""
    from serialkit.io import score_format
    from serialkit.io.external import VIA_MUSICXML, via_musicxml
    from serialkit.io.safety import parse_xml

    fmt = score_format(source)
    if fmt == "musicxml":
        return take_scan(source)
    if fmt in VIA_MUSICXML:  # MuseScore, **kern, ABC: the MusicXML their reader read
        where = f"{source} (as MusicXML)"
        return parse_xml(via_musicxml(source, fmt), where), where, None, None
    from serialkit.io import read_score
    from serialkit.io.musicxml_write import musicxml_bytes

    data = musicxml_bytes(read_score(source))
    return parse_xml(data, str(source)), str(source), None, None


CONTAINER = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<container><rootfiles><rootfile full-path="{name}" '
    'media-type="application/vnd.recordare.musicxml+xml"/></rootfiles></container>\n'
)


def _mxl_bytes(source: Path | None, member: str | None, data: bytes) -> bytes:
    """A compressed MusicXML archive holding ``data``, keeping the source archive's other members."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.recordare.musicxml")
        if source is not None and member is not None:
            with zipfile.ZipFile(source) as src:
                for info in src.infolist():
                    if info.filename == "mimetype" or info.is_dir():
                        continue
                    body = (
                        data
                        if info.filename == member
                        else read_member(src, info, str(source), max_bytes())
                    )
                    out.writestr(info.filename, body)
        else:
            out.writestr("META-INF/container.xml", CONTAINER.format(name="score.musicxml"))
            out.writestr("score.musicxml", data)
    return buf.getvalue()


def notehead_annotations(path: str | os.PathLike[str]) -> list[tuple[RawNote, Annotation]]:
    """Every pitched notehead of a MusicXML file with the label and colour it carries."""
    tree, where, _ = load_tree(Path(path))
    scan = scan_tree(tree, where)
    out = []
    for el, raw in scan.elements:
        texts = [f.text or "" for f in el.iterfind("notations/technical/fingering")]
        texts += [t.text or "" for t in el.iterfind("lyric/text")]
        head = el.find("notehead")
        color = head.get("color") if head is not None and head.get("color") else el.get("color")
        out.append((raw, Annotation(" ".join(texts) or None, color)))
    return out


def read_annotations(path: str | os.PathLike[str]) -> dict[str, Annotation]:
    """Note id → the label (fingering or lyric text) and notehead colour a MusicXML file carries."""
    return {raw.id: ann for raw, ann in notehead_annotations(path)}
