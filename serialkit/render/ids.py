"""Match the event ids of reports and certificates to the note ids verovio will draw.

Event ids are the source notes' ids (``note/@id``, ``@xml:id``), escaped with
``serialkit.io``'s ``encode_id`` in files serialkit wrote, or assigned by the reader where a
note has none. Tied notes are one event whose continuations carry their own ids. This module
maps every event id to the ids of all its noteheads, writing the reader's ids into the source
where the source had none, so that every labelled note can be found in the SVG.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from serialkit.core.piece import Piece
from serialkit.render.engrave import XML_ID, ParsedScore, note_ids

_TIE_HINTS = (b"<tie ", b"<tied ", b' tie="', b"<tie>")


def needs_mapping(source: ParsedScore, wanted: Iterable[str], present: set[str] | None = None) -> bool:
    """True when some wanted id is not a note id of the source, or the source has ties
    (``present``: the source's note ids, when known already)."""
    present = note_ids(source) if present is None else present
    if not present.issuperset(wanted):
        return True
    return has_ties(source)


def has_ties(source: ParsedScore) -> bool:
    """Whether the source's text has what a tie is written with (MusicXML or MEI): one of
    ``_TIE_HINTS``, found in one pass over it (each place ``tie`` is written, by its neighbours)."""
    data = source.data
    find = data.find
    at = find(b"tie")
    while at >= 0:
        before, after = data[at - 1:at] if at else b"", data[at + 3:at + 5]
        if before == b"<" and (after[:1] in (b" ", b">") or after == b"d ") or before == b" " and after == b'="':
            return True
        at = find(b"tie", at + 1)
    return False


def map_ids(
    source: ParsedScore, wanted: Iterable[str], piece: Piece | None = None
) -> tuple[dict[str, tuple[str, ...]], bool]:
    """Event id → note ids in the (possibly amended) source, and whether the source changed
    (``piece``: the source as ``read_score`` read it, when it has been read already)."""
    from serialkit.io import read_score
    from serialkit.io.build import encode_id

    piece = read_score(source.path) if piece is None else piece
    present = note_ids(source)
    wanted_set = set(wanted)
    out: dict[str, tuple[str, ...]] = {}
    missing: dict[str, str] = {}
    for event in piece.events:
        if event.id not in wanted_set:
            continue
        ids = []
        for member in dict.fromkeys((event.id, *event.tied_ids)):
            xml_id = member if member in present else encode_id(member)
            if xml_id not in present:
                missing[member] = xml_id
            ids.append(xml_id)
        out[event.id] = tuple(ids)
    changed = bool(missing) and _assign(source, missing)
    return out, changed


def _assign(source: ParsedScore, missing: Mapping[str, str]) -> bool:
    """Write reader-assigned ids into the source tree; True if any was written."""
    if source.kind == "musicxml":
        return _assign_musicxml(source, missing)
    return _assign_mei(source, missing)


def _assign_musicxml(source: ParsedScore, missing: Mapping[str, str]) -> bool:
    from lxml import etree

    from serialkit.io.musicxml.read import scan_tree

    scan = scan_tree(etree.ElementTree(source.root), str(source.path))
    changed = False
    for el, raw in scan.elements:
        if raw.id in missing and not el.get("id"):
            el.set("id", missing[raw.id])
            changed = True
    if scan.root is not source.root:
        # a timewise score was converted; verovio reads the partwise tree the reader built
        object.__setattr__(source, "root", scan.root)
        changed = True
    return changed


def _assign_mei(source: ParsedScore, missing: Mapping[str, str]) -> bool:
    """Write the MEI reader's ids (``part-mM-sS-vV-nK``, ``-2`` when a bar number comes again, as
    in a later movement) onto the notes it gave them to, found by the reader's own walk."""
    from lxml import etree

    from serialkit.io.mei.read import scan_mei_tree

    state = scan_mei_tree(etree.ElementTree(source.root), str(source.path))
    changed = False
    for el, raw in state.elements:
        if raw.id in missing and not el.get(XML_ID):
            el.set(XML_ID, missing[raw.id])
            changed = True
    return changed
