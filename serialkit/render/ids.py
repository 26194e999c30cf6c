"""Match the event ids of reports and certificates to the note ids verovio will draw.

Event ids are the source notes' ids (``note/@id``, ``@xml:id``), escaped with
``serialkit.io``'s ``encode_id`` in files serialkit wrote, or assigned by the reader where a
note has none. Tied notes are one event whose continuations carry their own ids. This module
maps every event id to the ids of all its noteheads, writing the reader's ids into the source
where the source had none, so that every labelled note can be found in the SVG.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from serialkit.render.engrave import MEI_NS, XML_ID, Source, note_ids

_ASSIGNED_MEI = re.compile(r"^(?P<part>.+)-m(?P<m>.+)-s(?P<s>\d+)-v(?P<v>[^-]+)-n(?P<n>\d+)(?:-\d+)?$")
_TIE_HINTS = (b"<tie ", b"<tied ", b' tie="', b"<tie>")


def needs_mapping(source: Source, wanted: Iterable[str]) -> bool:
    """True when some wanted id is not a note id of the source, or the source has ties."""
    present = note_ids(source)
    if any(w not in present for w in wanted):
        return True
    return any(hint in source.data for hint in _TIE_HINTS)


def map_ids(source: Source, wanted: Iterable[str]) -> tuple[dict[str, tuple[str, ...]], bool]:
    """Event id → note ids in the (possibly amended) source, and whether the source changed."""
    from serialkit.io import read_score
    from serialkit.io._build import encode_id

    piece = read_score(source.path)
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


def _assign(source: Source, missing: Mapping[str, str]) -> bool:
    """Write reader-assigned ids into the source tree; True if any was written."""
    if source.kind == "musicxml":
        return _assign_musicxml(source, missing)
    return _assign_mei(source.root, missing)


def _assign_musicxml(source: Source, missing: Mapping[str, str]) -> bool:
    from lxml import etree

    from serialkit.io.musicxml_read import scan_tree

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


def _assign_mei(root: Any, missing: Mapping[str, str]) -> bool:
    """Find MEI notes by the reader's ``part-mM-sS-vV-nK`` ids (K-th pitched note of the layer)."""
    ns = f"{{{MEI_NS}}}"
    wanted: dict[tuple[str, str, str], dict[int, str]] = {}
    for member, xml_id in missing.items():
        m = _ASSIGNED_MEI.match(member)
        if m:
            wanted.setdefault((m["m"], m["s"], m["v"]), {})[int(m["n"])] = xml_id
    if not wanted:
        return False
    changed = False
    for index, measure in enumerate(root.iter(f"{ns}measure")):
        number = measure.get("n") or str(index + 1)
        for staff in measure.iterchildren(f"{ns}staff"):
            layers = [c for c in staff.iterchildren(f"{ns}layer")]
            for li, layer in enumerate(layers):
                key = (number, staff.get("n", "1"), layer.get("n") or str(li + 1))
                targets = wanted.get(key)
                if not targets:
                    continue
                count = 0
                for note in layer.iter(f"{ns}note"):
                    if note.get("sameas") or not (note.get("pname") or note.get("pname.ges")):
                        continue
                    count += 1
                    if count in targets and not note.get(XML_ID):
                        note.set(XML_ID, targets.pop(count))
                        changed = True
    return changed
