"""MusicXML writer: a fresh MusicXML 4.0 score from a Piece (every note's id is its event id)."""

from __future__ import annotations

import io
import os
import zipfile
from fractions import Fraction
from pathlib import Path

from lxml import etree

from serialkit.core.piece import Event, Piece
from serialkit.io.build import encode_id
from serialkit.io.files.atomic import atomic_path
from serialkit.io.files.safety import max_bytes, read_member
from serialkit.io.musicxml.instruments import declare_instrument
from serialkit.io.notate import (
    Bar,
    Item,
    Part,
    Spelling,
    bars,
    beam_marks,
    beat_unit,
    clef_for,
    diatonic_steps,
    divisions,
    layout,
    plan_layer,
    staff_transposition,
    tuplet_marks,
)

DOCTYPE = (
    '<!DOCTYPE score-partwise PUBLIC "-//Recordare//DTD MusicXML 4.0 Partwise//EN" '
    '"http://www.musicxml.org/dtds/partwise.dtd">'
)
_ACCIDENTAL = {-2: "flat-flat", -1: "flat", 0: "natural", 1: "sharp", 2: "double-sharp"}


def write_musicxml(piece: Piece, out_path: str | os.PathLike[str]) -> Path:
    """Write a Piece as a new MusicXML score (``.mxl`` when the name says so), atomically."""
    out = Path(out_path)
    data = musicxml_bytes(piece)
    if out.suffix.lower() == ".mxl":
        data = mxl_bytes(None, None, data)
    with atomic_path(out) as tmp:
        tmp.write_bytes(data)
    return out


def musicxml_bytes(piece: Piece) -> bytes:
    """The MusicXML document for a Piece."""
    root = build_score(piece)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", doctype=DOCTYPE, pretty_print=True)


def build_score(piece: Piece) -> etree._Element:
    """The score-partwise element for a Piece."""
    parts = layout(piece)
    bar_list = bars(piece)
    plans = {
        (part.id, staff.number, vname): plan_layer(layer, bar_list, fill=(k == 0))
        for part in parts
        for staff in part.staves
        for k, (vname, layer) in enumerate(staff.voices)
    }
    values = [b.onset for b in bar_list] + [b.length for b in bar_list]
    values += [it.shape.value for plan in plans.values() for bar in plan for it in bar if it.shape]
    div = divisions(values)
    root = etree.Element("score-partwise", version="4.0")
    if piece.title:
        etree.SubElement(etree.SubElement(root, "work"), "work-title").text = piece.title
    ident = etree.SubElement(root, "identification")
    etree.SubElement(etree.SubElement(ident, "encoding"), "software").text = "serialkit"
    part_list = etree.SubElement(root, "part-list")
    for index, part in enumerate(parts):
        sp = etree.SubElement(part_list, "score-part", id=part.id)
        etree.SubElement(sp, "part-name").text = part.name
        declare_instrument(sp, part.id, part.name, index)
    used_ids = {e.id for e in piece.events}
    speller = Spelling(piece)
    for part in parts:
        _write_part(root, part, bar_list, plans, div, used_ids, piece, speller)
    return root


def _write_part(
    root: etree._Element,
    part: Part,
    bar_list: list[Bar],
    plans: dict[tuple[str, int, str], list[list[Item]]],
    div: int,
    used_ids: set[str],
    piece: Piece,
    speller: Spelling,
) -> None:
    """One part, its transposing staves at written pitch with a ``<transpose>`` (as the MEI
    writer writes ``trans.semi``), every note spelt as its score spelt it."""
    el = etree.SubElement(root, "part", id=part.id)
    shifts = [staff_transposition([e for _, layer in staff.voices for g in layer for e in g])
              for staff in part.staves]
    meter = bar_list[0].meter or (4, 4)
    for index, bar in enumerate(bar_list):
        meter = bar.meter or meter
        full = Fraction(4 * meter[0], meter[1])
        beat_start = bar.onset + bar.length - full if bar.length < full and index == 0 else bar.onset
        m = etree.SubElement(el, "measure", number=bar.number)
        if index == 0 and piece.pickup and bar.length == piece.pickup:
            m.set("implicit", "yes")
        if index == 0 or bar.meter is not None:
            _attributes(m, part, bar, index, div, shifts)
        first = True
        for staff_index, staff in enumerate(part.staves, start=1):
            accidentals: dict[tuple[str, int], int] = {}
            for vname, _layer in staff.voices:
                items = plans[(part.id, staff.number, vname)][index]
                if not items:
                    continue
                if not first:
                    backup = etree.SubElement(m, "backup")
                    etree.SubElement(backup, "duration").text = str(int(bar.length * div))
                first = False
                beams = beam_marks(items, beat_start, beat_unit(meter))
                for item, marks, beam in zip(items, tuplet_marks(items), beams, strict=True):
                    _write_item(
                        m, item, vname, staff_index, len(part.staves) > 1, div, used_ids, accidentals,
                        speller, shifts[staff_index - 1], marks, beam,
                    )


def _attributes(m: etree._Element, part: Part, bar: Bar, index: int, div: int, shifts: list[int]) -> None:
    attrs = etree.SubElement(m, "attributes")
    if index == 0:
        etree.SubElement(attrs, "divisions").text = str(div)
        key = etree.SubElement(attrs, "key")
        etree.SubElement(key, "fifths").text = "0"
    if bar.meter is not None:
        time = etree.SubElement(attrs, "time")
        etree.SubElement(time, "beats").text = str(bar.meter[0])
        etree.SubElement(time, "beat-type").text = str(bar.meter[1])
    if index == 0:
        if len(part.staves) > 1:
            etree.SubElement(attrs, "staves").text = str(len(part.staves))
        for staff_index, staff in enumerate(part.staves, start=1):
            events = [e for _, layer in staff.voices for g in layer for e in g]
            sign, line = clef_for(events, shifts[staff_index - 1])  # the clef for the notes as written
            clef = etree.SubElement(attrs, "clef")
            if len(part.staves) > 1:
                clef.set("number", str(staff_index))
            etree.SubElement(clef, "sign").text = sign
            etree.SubElement(clef, "line").text = str(line)
        one = len(set(shifts)) == 1  # one <transpose> for the part, else one per staff
        for staff_index, shift in enumerate(shifts, start=1):
            if shift and not (one and staff_index > 1):
                _transpose(attrs, shift, None if one else staff_index)


def _transpose(attrs: etree._Element, shift: int, staff: int | None) -> None:
    """``<transpose>`` for a staff written ``shift`` semitones away from its sound: octaves as
    ``<octave-change>`` (a bass clarinet's -14 is -1 diatonic, -2 chromatic, an octave down)."""
    octaves = int(shift / 12)  # toward zero
    tr = etree.SubElement(attrs, "transpose")
    if staff is not None:
        tr.set("number", str(staff))
    etree.SubElement(tr, "diatonic").text = str(diatonic_steps(shift) - 7 * octaves)
    etree.SubElement(tr, "chromatic").text = str(shift - 12 * octaves)
    if octaves:
        etree.SubElement(tr, "octave-change").text = str(octaves)


def _write_item(
    m: etree._Element,
    item: Item,
    voice: str,
    staff: int,
    show_staff: bool,
    div: int,
    used_ids: set[str],
    accidentals: dict[tuple[str, int], int],
    speller: Spelling,
    shift: int = 0,
    marks: tuple[bool, bool] = (False, False),
    beam: str | None = None,
) -> None:
    if not item.events:
        assert item.shape is not None
        note = etree.SubElement(m, "note")
        etree.SubElement(note, "rest")
        etree.SubElement(note, "duration").text = str(int(item.shape.value * div))
        _tail(note, item, voice, staff, show_staff, None, marks)
        return
    for k, event in enumerate(sorted(item.events, key=lambda e: e.midi)):
        note = etree.SubElement(m, "note")
        note.set("id", _note_id(event, item, used_ids))
        if item.shape is None:
            etree.SubElement(note, "grace", slash="yes")
        if k:
            etree.SubElement(note, "chord")
        step, alter, octave = speller(event, shift)
        pitch = etree.SubElement(note, "pitch")
        etree.SubElement(pitch, "step").text = step
        if alter:
            etree.SubElement(pitch, "alter").text = str(alter)
        etree.SubElement(pitch, "octave").text = str(octave)
        if item.shape is not None:
            etree.SubElement(note, "duration").text = str(int(item.shape.value * div))
        if item.tie_stop:
            etree.SubElement(note, "tie", type="stop")
        if item.tie_start:
            etree.SubElement(note, "tie", type="start")
        show = None
        if accidentals.get((step, octave), 0) != alter and not item.tie_stop:
            show = _ACCIDENTAL.get(alter)
        accidentals[(step, octave)] = alter
        _tail(note, item, voice, staff, show_staff, show, (False, False) if k else marks, beam)


def _note_id(event: Event, item: Item, used: set[str]) -> str:
    if item.onset == event.onset:
        return encode_id(event.id)
    base = encode_id(f"{event.id}-t{int(item.onset * 1000)}")
    nid, n = base, 1
    while nid in used:
        n += 1
        nid = f"{base}-{n}"
    used.add(nid)
    return nid


def _tail(
    note: etree._Element,
    item: Item,
    voice: str,
    staff: int,
    show_staff: bool,
    accidental: str | None = None,
    marks: tuple[bool, bool] = (False, False),
    beam: str | None = None,
) -> None:
    """The children after pitch/duration/tie, in schema order."""
    etree.SubElement(note, "voice").text = voice
    shape = item.shape
    if shape is None:
        etree.SubElement(note, "type").text = "eighth"
    else:
        if item.events or shape.type != "whole":
            etree.SubElement(note, "type").text = shape.type
        for _ in range(shape.dots):
            etree.SubElement(note, "dot")
    if accidental:
        etree.SubElement(note, "accidental").text = accidental
    if shape is not None and shape.ratio is not None:
        tm = etree.SubElement(note, "time-modification")
        etree.SubElement(tm, "actual-notes").text = str(shape.ratio[0])
        etree.SubElement(tm, "normal-notes").text = str(shape.ratio[1])
    if show_staff:
        etree.SubElement(note, "staff").text = str(staff)
    if beam is not None:
        etree.SubElement(note, "beam", number="1").text = beam
    if item.tie_stop or item.tie_start or marks[0] or marks[1]:
        notations = etree.SubElement(note, "notations")
        if item.tie_stop:
            etree.SubElement(notations, "tied", type="stop")
        if item.tie_start:
            etree.SubElement(notations, "tied", type="start")
        if marks[0]:
            etree.SubElement(notations, "tuplet", type="start", bracket="yes")
        if marks[1]:
            etree.SubElement(notations, "tuplet", type="stop")


def fraction_of(value: Fraction, div: int) -> int:
    """A time value in divisions (exact)."""
    return int(value * div)


CONTAINER = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<container><rootfiles><rootfile full-path="{name}" '
    'media-type="application/vnd.recordare.musicxml+xml"/></rootfiles></container>\n'
)


def mxl_bytes(source: Path | None, member: str | None, data: bytes) -> bytes:
    """A compressed MusicXML archive holding ``data``, keeping the source archive's other members
    as they were, in their order (a new archive: ``mimetype`` first, stored, as the format asks)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
        if source is not None and member is not None:
            with zipfile.ZipFile(source) as src:  # its members as they were (a mimetype only if it has one)
                for info in src.infolist():
                    if info.filename == "mimetype":
                        out.writestr(zipfile.ZipInfo("mimetype"), read_member(src, info, str(source), max_bytes()))
                    if info.filename == "mimetype" or info.is_dir():
                        continue
                    body = (
                        data
                        if info.filename == member
                        else read_member(src, info, str(source), max_bytes())
                    )
                    out.writestr(info.filename, body)
        else:
            out.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.recordare.musicxml")
            out.writestr("META-INF/container.xml", CONTAINER.format(name="score.musicxml"))
            out.writestr("score.musicxml", data)
    return buf.getvalue()
