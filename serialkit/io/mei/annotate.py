"""Annotated MEI, in place: the source tree with labels and colours added and nothing else changed.

Labels are ``<dir startid>`` (``labels="words"``), ``<fing startid>`` (``"fingering"``) control
events at the end of the note's measure, or a ``<verse><syl>`` inside the note (``"lyric"``; each
layer of a staff on verse lines of its own, a chord's k-th note on the layer's k-th, past the
verses the staff has); the colour is ``@color`` on the note and
on every note tied to it. Notes without an ``xml:id`` get the id the reader gave them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from lxml import etree

from serialkit.core.errors import ScoreWriteError
from serialkit.io.accidentals import Written, needed, shows, shows_unneeded
from serialkit.io.annotation import LABEL_STYLES, Annotation, lyric_lines, musicxml_color
from serialkit.io.build import _merge_ties, encode_id
from serialkit.io.files.atomic import atomic_path
from serialkit.io.files.safety import parse_xml, read_bytes
from serialkit.io.mei.defs import NS, XML_ID, State, local_name
from serialkit.io.mei.read import scan_mei_tree
from serialkit.io.splice import Edits, declared_encoding, splice

__all__ = ["ADDED", "Edits", "annotate_mei_tree", "plan_mei_edits", "splice", "write_annotated_mei"]

ADDED = "serialkit"
"""The ``@type`` of every element the annotator adds (so a reader, or a second run, can find them)."""


def _staff_n(note: etree._Element) -> str | None:
    if note.get("staff"):
        return note.get("staff")
    for anc in note.iterancestors():
        if local_name(anc) == "staff":
            return anc.get("n")
    return None


def _measure_of(note: etree._Element) -> etree._Element | None:
    for anc in note.iterancestors():
        if local_name(anc) == "measure":
            return anc
    return None


def _chord_notes(note: etree._Element) -> list[etree._Element]:
    parent = note.getparent()
    if parent is not None and local_name(parent) == "chord":
        return [n for n in parent.iter(NS + "note")]
    return [note]


def _verse_numbers(state: State, notes: list[etree._Element]) -> dict[etree._Element, int]:
    """The verse number of each note to be labelled with a lyric (``annotation.lyric_lines``): each
    layer of a staff its own verse lines, past the numbers of the verses the staff has already."""
    raw_of = {el: raw for el, raw in state.elements}
    own: dict[tuple[str, int], set[int]] = {}
    for el, raw in state.elements:
        for verse in el.iter(NS + "verse"):
            if (n := (verse.get("n") or "1").strip()).isdigit():
                own.setdefault((raw.part, raw.home or raw.staff), set()).add(int(n))
    where = {}
    for note in notes:
        raw = raw_of[note]
        where[note] = ((raw.part, raw.home or raw.staff), raw.voice, _chord_notes(note).index(note))
    lines = lyric_lines(where.values(), own)
    return {note: lines[spot] for note, spot in where.items()}


def _markup(prefix: str, tag: str, attrs: dict[str, str], text: str | None = None,
            child: bytes | None = None) -> bytes:
    name = f"{prefix}{tag}"
    parts = "".join(f' {k}="{escape(v, {chr(34): "&quot;"})}"' for k, v in attrs.items())
    body = escape(text) if text is not None else ""
    inner = body.encode() + (child or b"")
    return f"<{name}{parts}>".encode() + inner + f"</{name}>".encode()


Spelling = Callable[[str, str, int], tuple[str, int, int]]
"""``(event id, written step, new written MIDI pitch) -> (step, alter, octave)``: how a repitched
note is written (``NoteNames.spell``)."""
_ACCID_VALUE = {-2: "ff", -1: "f", 0: "n", 1: "s", 2: "ss"}


def plan_mei_edits(
    tree: etree._ElementTree, where: str, annotations: Mapping[str, Annotation], labels: str = "words",
    pitches: Mapping[str, int] | None = None, spelling: Spelling | None = None, state: State | None = None,
) -> Edits:
    """The attributes and children annotating adds (event ids as the MEI reader gives them).

    ``pitches``: notes to repitch, event id -> the new sounding MIDI pitch, written by
    ``spelling`` at the written pitch of the note's staff (``trans.semi``), on every notehead of
    a tied note: ``@pname``, ``@oct`` and the accidental (``@accid`` or the ``<accid>`` child,
    and a gestural ``accid.ges`` where the note has one) — nothing else."""
    if labels not in LABEL_STYLES:
        raise ScoreWriteError(f"label carrier {labels!r} is not one of {', '.join(LABEL_STYLES)}")
    if state is None:  # the reader's walk of this tree, unless the caller has it already
        state = scan_mei_tree(tree, where)
    element = {raw.id: el for el, raw in state.elements}
    missing = [k for k in [*annotations, *(pitches or {})] if k not in element]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise ScoreWriteError(f"{where}: annotations name notes that are not in the score: {shown}")
    members: dict[str, list[str]] = {}
    for chain in _merge_ties(state.parts.notes, state.parts.tie_links):
        ids = [n.id for n in chain]
        members[ids[0]] = ids
    order = {el: i for i, el in enumerate(tree.getroot().iter(tag=etree.Element))}
    edits = Edits()
    if pitches:
        if spelling is None:
            raise ValueError("repitching MEI notes needs a spelling")
        raw_of = {raw.id: raw for _, raw in state.elements}
        changed: dict[etree._Element, tuple[str, tuple[str, int, int]]] = {}
        for event_id, midi in pitches.items():
            ids = members.get(event_id, [event_id])
            copied = next((nid for nid in ids if element[nid] not in order), None)
            if copied is not None:
                raise ScoreWriteError(
                    f"{where}:{element[copied].sourceline}: note {event_id} is written as a copy of another "
                    "element (@copyof): it cannot be changed on its own"
                )
            shift = midi - raw_of[ids[0]].midi
            for k, nid in enumerate(ids):
                changed[element[nid]] = _repitch(element[nid], raw_of[nid].midi - raw_of[nid].transposition + shift,
                                                 k == 0, event_id, order, edits, spelling)
        _respell(state, changed, order, edits)
    verses: dict[etree._Element, int] = {}
    if labels == "lyric":
        firsts = [element[members.get(e, [e])[0]] for e, a in annotations.items() if a.label]
        verses = _verse_numbers(state, [el for el in firsts if el in order])
    for event_id, ann in annotations.items():
        ids = [nid for nid in members.get(event_id, [event_id]) if element[nid] in order]
        if not ids:
            continue  # a note of a @copyof copy: the file writes it only as its original
        note = element[ids[0]]
        prefix = _prefix(note)
        color = musicxml_color(ann.color) if ann.color else None
        if color:
            for nid in ids:
                edits.set(order[element[nid]], "color", color)
        if not ann.label:
            continue
        if labels == "lyric":
            syl = _markup(prefix, "syl", {}, ann.label)
            edits.add(order[note], _markup(prefix, "verse", {"n": str(verses[note]), "type": ADDED}, child=syl))
            continue
        ident = note.get(XML_ID)
        if not ident:
            ident = encode_id(event_id)
            edits.set(order[note], "xml:id", ident)
        measure = _measure_of(note)
        if measure is None:
            raise ScoreWriteError(f"{where}:{note.sourceline}: note {event_id} is not inside a <measure>")
        attrs = {"startid": "#" + ident, "type": ADDED, "place": "above"}
        staff = _staff_n(note)
        if staff:
            attrs["staff"] = staff
        if color:
            attrs["color"] = color
        tag = "fing" if labels == "fingering" else "dir"
        edits.add(order[measure], _markup(prefix, tag, attrs, ann.label))
    return edits


def _repitch(note: etree._Element, written: int, first: bool, event_id: str, order: Mapping[etree._Element, int],
             edits: Edits, spelling: Spelling) -> tuple[str, tuple[str, int, int]]:
    """Edits that write ``note`` at the written MIDI pitch ``written``; its letter before, and
    its letter, alteration and octave after (``_respell`` decides which accidental it shows)."""
    step = (note.get("pname.ges") or note.get("pname") or "c").upper()
    letter, alter, octave = spelling(event_id, step, written)
    at = order[note]
    for name, value in (("pname", letter.lower()), ("oct", str(octave))):
        edits.set(at, name, value)
        if note.get(name + ".ges") is not None:
            edits.set(at, name + ".ges", value)
    value = _ACCID_VALUE[alter]
    child = next((c for c in note if local_name(c) == "accid"), None)
    holder = child if child is not None and note.get("accid") is None else note
    if first or holder.get("accid") is not None:
        edits.set(order[holder], "accid", value)
    for el in (note, child):
        if el is not None and el.get("accid.ges") is not None:
            edits.set(order[el], "accid.ges", value)
    if not first and holder.get("accid") is None and note.get("accid.ges") is None:
        edits.set(at, "accid.ges", value)  # a tied continuation carries its pitch unseen
    return step, (letter, alter, octave)


_KEEP = {"func": ("caution", "edit"), "enclose": ("paren", "brack")}
"""Marks that make a shown MEI accidental deliberate (cautionary, editorial, bracketed): kept."""


def _shown(note: etree._Element) -> tuple[etree._Element, str | None]:
    """The element that shows ``note``'s accidental (its ``<accid>`` child when the note itself
    has no ``@accid``) and the accidental shown, if any."""
    child = next((c for c in note if local_name(c) == "accid"), None)
    holder = child if child is not None and note.get("accid") is None else note
    return holder, holder.get("accid")


def _written_place(note: etree._Element) -> tuple[str, int]:
    """A note's written letter and octave."""
    step = (note.get("pname") or note.get("pname.ges") or "c").upper()
    octave = note.get("oct") or note.get("oct.ges") or "4"
    return step, int(float(octave)) if octave.strip().lstrip("-").replace(".", "", 1).isdigit() else 4


def _respell(state: State, changed: Mapping[etree._Element, tuple[str, tuple[str, int, int]]],
             order: Mapping[etree._Element, int], edits: Edits) -> None:
    """Keep the accidentals shown in the bars of the repitched notes true (MEI's side of
    ``serialkit.io.accidentals``, whose rule :func:`~serialkit.io.accidentals.needed` it shares):
    per bar and staff, in the order the notes sound, a repitched note (``changed``: element → its
    letter before, and its new spelling) shows its accidental exactly when the bar needs one (the
    key signature or an earlier note of its letter and octave says otherwise; in a score that
    shows an accidental on every note, as Webern's Op. 27 does, always); any other note that now
    needs one gets ``@accid``, and one whose accidental only the old pitch needed loses it (unless
    cautionary, editorial or bracketed, or the score shows one on every note).
    A note's ``@accid.ges``, where it has one, keeps saying what it sounds."""
    groups: dict[tuple[Any, int], list[tuple[etree._Element, Any]]] = {}
    for el, raw in state.elements:
        groups.setdefault((_measure_of(el), raw.staff), []).append((el, raw))
    written: dict[tuple[Any, int], list[Written]] = {}
    for group, members in groups.items():
        members.sort(key=lambda m: (m[1].onset, order[m[0]]))
        written[group] = [Written(step, octave, raw.alter, raw.tie_stop, state.keys.get(el, {}).get(step, 0))
                          for el, raw in members for step, octave in [_written_place(el)]]
    every = shows_unneeded((written[g], [_shown(el)[1] is not None for el, _ in members])
                           for g, members in groups.items())
    for (measure, staff), members in groups.items():
        if measure is None or not any(el in changed for el, _ in members):
            continue
        before, after = written[(measure, staff)], []
        for (el, raw), was in zip(members, before, strict=True):
            key = state.keys.get(el, {})
            if el in changed:
                _was, (letter, alter, new_octave) = changed[el]
                after.append(Written(letter, new_octave, alter, raw.tie_stop, key.get(letter, 0)))
            else:
                after.append(was)
        for (el, _raw), w, need_before, need_now in zip(members, after, needed(before), needed(after), strict=True):
            holder, shown = _shown(el)
            show = shows(el in changed, need_before, need_now, every, w.tied)
            if show is None:
                continue
            value = _ACCID_VALUE.get(w.alter, "n")
            if show:
                edits.set(order[holder], "accid", value)
                for carrier in {el, holder}:
                    if carrier.get("accid.ges") is not None:
                        edits.set(order[carrier], "accid.ges", value)
            elif el in changed or (shown is not None and not any(holder.get(a) in v for a, v in _KEEP.items())):
                edits.drop(order[holder], "accid")  # (a repitched note's: the one _repitch gave it)
                if el.get("accid.ges") is None and holder.get("accid.ges") is None:
                    edits.set(order[el], "accid.ges", value)  # what it sounds, said without showing it
                if holder is not el and len(holder) == 0 and not set(holder.attrib) - _SAYS_NOTHING:
                    edits.remove(order[holder])  # an <accid> child left saying nothing


_SAYS_NOTHING = {"accid", "{http://www.w3.org/XML/1998/namespace}id"}
"""The attributes of an ``<accid>`` child that say nothing once its ``@accid`` is taken off."""


def _prefix(el: etree._Element) -> str:
    prefix = el.prefix
    return f"{prefix}:" if prefix else ""


def annotate_mei_tree(
    tree: etree._ElementTree, where: str, annotations: Mapping[str, Annotation], labels: str = "words"
) -> bytes:
    """The annotated document for a parsed MEI tree, re-serialised by lxml (use
    ``write_annotated_mei`` to keep the source's own bytes)."""
    edits = plan_mei_edits(tree, where, annotations, labels)
    data = etree.tostring(tree, encoding="UTF-8", xml_declaration=True)
    return splice(bytes(data), edits)


def write_annotated_mei(
    source: str | os.PathLike[str],
    annotations: Mapping[str, Annotation],
    out_path: str | os.PathLike[str],
    labels: str = "words",
    pitches: Mapping[str, int] | None = None,
    spelling: Spelling | None = None,
    parsed: tuple[bytes, etree._ElementTree, State] | None = None,
) -> Path:
    """Copy an MEI file to ``out_path`` with labels and colours added (and ``pitches``: notes
    repitched, see ``plan_mei_edits``) and every other byte as it was (declaration, comments,
    processing instructions, ids, attribute order, spacing). ``parsed``: the source's bytes, tree
    and reader state when the caller has read it already (it is not read again). Nothing is
    written when anything fails."""
    src, out = Path(source), Path(out_path)
    if parsed is None:
        data = read_bytes(src)
        tree, state = parse_xml(data, str(src)), None
    else:
        data, tree, state = parsed
    edits = plan_mei_edits(tree, str(src), annotations, labels, pitches, spelling, state)
    if declared_encoding(data) != "utf-8":
        text = bytes(etree.tostring(tree, encoding="UTF-8", xml_declaration=True))
        payload = splice(text, edits)
    else:
        payload = splice(data, edits)
    with atomic_path(out) as tmp:
        tmp.write_bytes(payload)
    return out
