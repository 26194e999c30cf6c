"""MEI 5 writer: a Piece as an MEI score (staves, layers, chords, tuplets, ties, grace notes).

A transposing part (its notes read with a transposition: a clarinet in B♭, a horn in F) is written
as its score writes it: ``trans.semi``/``trans.diat`` on its staffDef and the notes at written
pitch, which the MEI reader turns back into the same sounding notes."""

from __future__ import annotations

import os
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path

from lxml import etree

from serialkit.core.errors import ScoreWriteError
from serialkit.core.piece import Piece
from serialkit.io.annotation import LABEL_STYLES, Annotations, lyric_lines
from serialkit.io.build import encode_id
from serialkit.io.dispatch import read_score
from serialkit.io.files.atomic import atomic_path
from serialkit.io.mei.read import MEI_NS, XML_ID
from serialkit.io.notate import (
    Bar,
    Item,
    Part,
    Spelling,
    bars,
    clef_for,
    diatonic_steps,
    layout,
    plan_layer,
    staff_transposition,
    tuplet_marks,
)

_N = "{" + MEI_NS + "}"
_DUR = {"maxima": "maxima", "long": "long", "breve": "breve", "whole": "1", "half": "2",
        "quarter": "4", "eighth": "8", "16th": "16", "32nd": "32", "64th": "64", "128th": "128",
        "256th": "256", "512th": "512", "1024th": "1024"}
_ACCID = {-2: "ff", -1: "f", 0: "n", 1: "s", 2: "x"}


def write_mei(
    piece_or_source: Piece | str | os.PathLike[str],
    out_path: str | os.PathLike[str],
    annotations: Annotations | None = None,
    label_style: str = "words",
) -> Path:
    """Write a Piece (or any readable score file) as MEI 5, atomically.

    ``annotations`` maps event ids to an Annotation: the label becomes a ``<dir>`` pointing at
    the note (``label_style="words"``), a ``<fing>`` (``"fingering"``) or a ``<verse>`` of the
    note (``"lyric"``); the colour goes on the note and on every note tied to it.
    """
    if label_style not in LABEL_STYLES:
        raise ScoreWriteError(f"label style {label_style!r} is not one of {', '.join(LABEL_STYLES)}")
    if isinstance(piece_or_source, Piece):
        piece = piece_or_source
    else:
        piece = read_score(piece_or_source)
    out = Path(out_path)
    if annotations:
        missing = sorted(set(annotations) - {e.id for e in piece.events})
        if missing:
            shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
            raise ScoreWriteError(f"{out}: annotations name notes that are not in the piece: {shown}")
    root = build_mei(piece, annotations, label_style)
    data = etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)
    with atomic_path(out) as tmp:
        tmp.write_bytes(data)
    return out


def _sub(parent: etree._Element, tag: str, **attrs: str) -> etree._Element:
    return etree.SubElement(parent, _N + tag, {k.replace("_", "."): v for k, v in attrs.items()})


def build_mei(piece: Piece, annotations: Annotations | None = None, label_style: str = "words") -> etree._Element:
    """The <mei> element for a Piece, with labels and colours when ``annotations`` are given."""
    root = etree.Element(_N + "mei", nsmap={None: MEI_NS}, meiversion="5.0")  # type: ignore[dict-item]
    head = _sub(root, "meiHead")
    file_desc = _sub(head, "fileDesc")
    _sub(_sub(file_desc, "titleStmt"), "title").text = piece.title or "Untitled"
    _sub(file_desc, "pubStmt")
    app = _sub(_sub(_sub(head, "encodingDesc"), "appInfo"), "application")
    _sub(app, "name").text = "serialkit"
    score = _sub(_sub(_sub(_sub(root, "music"), "body"), "mdiv"), "score")
    parts = layout(piece)
    bar_list = bars(piece)
    score_def = _sub(score, "scoreDef")
    first = bar_list[0].meter or (4, 4)
    score_def.set("meter.count", str(first[0]))
    score_def.set("meter.unit", str(first[1]))
    outer = _sub(score_def, "staffGrp")
    staff_numbers: dict[tuple[str, int], int] = {}
    shifts: dict[tuple[str, int], int] = {}
    for part in parts:
        grp = _sub(outer, "staffGrp", symbol="brace", label=part.name) if len(part.staves) > 1 else outer
        for staff in part.staves:
            n = len(staff_numbers) + 1
            staff_numbers[(part.id, staff.number)] = n
            events = [e for _, layer in staff.voices for g in layer for e in g]
            shift = shifts[(part.id, staff.number)] = staff_transposition(events)
            shape, line = clef_for(events, shift)  # the clef for the notes as written
            sd = _sub(grp, "staffDef", n=str(n), lines="5", clef_shape=shape, clef_line=str(line))
            if len(part.staves) == 1:
                sd.set("label", part.name)
            if shift:
                sd.set("trans.semi", str(shift))
                sd.set("trans.diat", str(diatonic_steps(shift)))
    plans = {
        (part.id, staff.number, vname): plan_layer(layer, bar_list, fill=True)
        for part in parts
        for staff in part.staves
        for vname, layer in staff.voices
    }
    section = _sub(score, "section")
    speller = Spelling(piece)
    verses = _verse_numbers(parts, staff_numbers, plans, annotations or {}) if label_style == "lyric" else {}
    meter = first
    for index, bar in enumerate(bar_list):
        if index and bar.meter is not None:
            sdef = _sub(section, "scoreDef")
            sdef.set("meter.count", str(bar.meter[0]))
            sdef.set("meter.unit", str(bar.meter[1]))
        meter = bar.meter or meter
        m = _measure(section, bar, index, parts, staff_numbers, plans, annotations or {}, label_style, shifts,
                     speller, verses)
        if bar.length != Fraction(4 * meter[0], meter[1]):
            m.set("metcon", "false")  # a pickup or an irregular bar: its content sets its length
    return root


def _measure(
    section: etree._Element,
    bar: Bar,
    index: int,
    parts: list[Part],
    staff_numbers: dict[tuple[str, int], int],
    plans: dict[tuple[str, int, str], list[list[Item]]],
    marks: Annotations,
    label_style: str,
    shifts: Mapping[tuple[str, int], int],
    speller: Spelling,
    verses: Mapping[tuple[str, str, int], int],
) -> etree._Element:
    m = _sub(section, "measure", n=bar.number)
    labelled: list[tuple[etree._Element, str, str, str]] = []
    for part in parts:
        for staff in part.staves:
            n = str(staff_numbers[(part.id, staff.number)])
            st = _sub(m, "staff", n=n)
            for k, (vname, _layer_events) in enumerate(staff.voices):
                items = plans[(part.id, staff.number, vname)][index]
                if not items and k:
                    continue
                lay = _sub(st, "layer", n=str(k + 1), label=vname)
                shift = shifts.get((part.id, staff.number), 0)
                labelled += [(note, label, n, vname) for note, label in _layer(lay, items, marks, speller, shift)]
    for note, label, staff_n, vname in labelled:
        if label_style == "lyric":
            holder = note.getparent()
            index = list(holder).index(note) if holder is not None and holder.tag == _N + "chord" else 0
            verse = _sub(note, "verse", n=str(verses[(staff_n, vname, index)]), type="serialkit")
            _sub(verse, "syl").text = label
        else:
            tag = "fing" if label_style == "fingering" else "dir"
            _sub(m, tag, startid="#" + (note.get(XML_ID) or ""), staff=staff_n, type="serialkit").text = label
    return m


def _verse_numbers(
    parts: list[Part],
    staff_numbers: Mapping[tuple[str, int], int],
    plans: Mapping[tuple[str, int, str], list[list[Item]]],
    marks: Annotations,
) -> dict[tuple[str, str, int], int]:
    """(staff n, layer label, index in chord) → the verse number of a label written as a lyric:
    each layer of a staff its own verse lines (``annotation.lyric_lines``)."""
    spots = [
        (str(staff_numbers[(part.id, staff.number)]), vname, k)
        for part in parts for staff in part.staves for vname, _ in staff.voices
        for items in plans[(part.id, staff.number, vname)] for item in items
        for k, e in enumerate(sorted(item.events, key=lambda e: e.midi))
        if item.onset == e.onset and (mark := marks.get(e.id)) is not None and mark.label
    ]
    return lyric_lines(spots)


def _layer(
    lay: etree._Element, items: list[Item], marks: Annotations, speller: Spelling, shift: int = 0
) -> list[tuple[etree._Element, str]]:
    """Write one layer's notes, rests, chords and tuplets (at written pitch: ``shift`` semitones
    below the sounding one on a transposing staff, spelt as their score spelt them); returns the
    notes to label."""
    labelled: list[tuple[etree._Element, str]] = []
    accids: dict[tuple[str, int], int] = {}
    tuplet: etree._Element | None = None
    ended = False
    for item, (starts, ends) in zip(items, tuplet_marks(items), strict=True):
        shape = item.shape
        if ended:
            tuplet = None
        ended = ends
        if starts and shape is not None and shape.ratio is not None:
            tuplet = _sub(lay, "tuplet", num=str(shape.ratio[0]), numbase=str(shape.ratio[1]))
        elif shape is None or shape.ratio is None:
            tuplet = None
        parent = tuplet if tuplet is not None else lay
        if not item.events:
            assert shape is not None
            rest = _sub(parent, "rest", dur=_DUR[shape.type])
            if shape.dots:
                rest.set("dots", str(shape.dots))
            continue
        holder = parent
        if len(item.events) > 1:
            holder = _sub(parent, "chord")
            _duration(holder, item)
        for event in sorted(item.events, key=lambda e: e.midi):
            note = _sub(holder, "note")
            mark = marks.get(event.id)
            if item.onset == event.onset:
                note.set(XML_ID, encode_id(event.id))
                if mark is not None and mark.label:
                    labelled.append((note, mark.label))
            if mark is not None and mark.color:
                note.set("color", mark.color)
            step, alter, octave = speller(event, shift)
            note.set("pname", step.lower())
            note.set("oct", str(octave))
            shown = accids.get((step, octave), 0)
            if shown != alter and not item.tie_stop:
                note.set("accid", _ACCID[alter])
            else:  # always explicit: other layers' accidentals must not carry into this note
                note.set("accid.ges", _ACCID[alter])
            accids[(step, octave)] = alter
            if len(item.events) == 1:
                _duration(note, item)
                holder = note
        if item.tie_start or item.tie_stop:
            holder.set("tie", "m" if item.tie_start and item.tie_stop else ("i" if item.tie_start else "t"))
    return labelled


def _duration(el: etree._Element, item: Item) -> None:
    if item.shape is None:
        el.set("dur", "8")
        el.set("grace", "unacc")
        return
    el.set("dur", _DUR[item.shape.type])
    if item.shape.dots:
        el.set("dots", str(item.shape.dots))
