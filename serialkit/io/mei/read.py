"""MEI 3–5 reader on lxml: staff definitions, layers, chords, tuplets, ties, grace notes, transposition."""

from __future__ import annotations

from copy import deepcopy
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from lxml import etree

from serialkit.core.errors import PieceError, ScoreReadError
from serialkit.core.piece import Measure, Piece, TimeSignature
from serialkit.io.build import (
    DAMAGE,
    RawNote,
    ScoreParts,
    build_piece,
    damaged,
    decode_id,
    line_of,
    midi_of,
    safe_id,
)
from serialkit.io.files.safety import parse_xml, read_bytes
from serialkit.io.mei.defs import (
    ACCID,
    MEI_NS,
    NS,
    XML_ID,
    StaffInfo,
    State,
    apply_def,
    choose_reading,
    key_signature,
    local_name,
    parse_number,
    tuplet_numbers,
)

__all__ = ["MEI_NS", "XML_ID", "read_mei", "scan_mei", "scan_mei_tree"]

_DUR = {"maxima": Fraction(32), "long": Fraction(16), "breve": Fraction(8)}
_CONTAINERS = {"beam", "tuplet", "graceGrp", "bTrem", "fTrem", "ligature", "supplied", "reg", "corr"}


def read_mei(path: str | Path, limit: int | None = None) -> Piece:
    """Read an MEI (3, 4 or 5) file into a Piece with sounding pitches."""
    path = Path(path)
    parts = scan_mei(path, limit)
    try:
        return build_piece(parts, path, "mei")
    except PieceError as exc:
        raise ScoreReadError(f"{path}: {exc}") from None


def scan_mei(path: Path, limit: int | None = None) -> ScoreParts:
    """Every notehead of an MEI file as the reader finds it, before ties are merged."""
    tree = parse_xml(read_bytes(path, limit), str(path))
    return scan_mei_tree(tree, str(path)).parts


def scan_mei_tree(tree: etree._ElementTree, where: str) -> State:
    """Walk a parsed MEI tree: the reader's state, with every note element and its notehead."""
    root = tree.getroot()
    if local_name(root) not in ("mei", "music", "meiCorpus"):
        raise ScoreReadError(
            f"{where}:{root.sourceline or 1}: root element <{local_name(root)}> is not MEI"
        )
    path = where
    state = State(where)
    state.by_id = {v: el for el in root.iter() if (v := el.get(XML_ID))}
    state.existing = set(state.by_id)
    state.ours = any(
        (el.text or "").strip() == "serialkit" and (parent := el.getparent()) is not None
        and local_name(parent) == "application"
        for el in root.iter(NS + "name")
    )
    state.parts.title = _title(root)
    scores = _music(root, "score")
    try:
        for score in scores:
            _walk(score, state)
        if not scores:  # a parts-based encoding: each <part> holds its own staves and bars
            for part in _music(root, "part"):
                _walk_part(part, state)
    except DAMAGE as exc:
        raise damaged(str(path), state.current, exc) from None
    _warn_undated(state)
    return state


def _music(root: etree._Element, name: str) -> list[etree._Element]:
    """The ``<score>`` or ``<part>`` elements of the music (not an incipit in the header)."""
    return [
        el for el in root.iter(NS + name, name)
        if not any(local_name(a) == "meiHead" for a in el.iterancestors())
    ]


def _walk_part(part: etree._Element, state: State) -> None:
    """Walk one ``<part>`` of a parts-based encoding from the start of the piece: its staves are
    its own (a staff ``n`` of another part is another staff), its bars fall on the bars the first
    part laid out."""
    state.staves = {}
    state.onset, state.measure_index = Fraction(0), 0
    state.meter, state.meter_changed = (4, 4), True
    state.dur_default = None
    _walk(part, state)


def _warn_undated(state: State) -> None:
    for lines, what in (
        (state.undated, "with no duration (no @dur, @dur.ges or @dur.default): read as quarter "
                        "notes, as verovio reads them"),
        (state.hidden, "with no duration and visible=\"false\": left out, as they take no time"),
    ):
        if lines:
            span = f"line {lines[0]}" if lines[0] == lines[-1] else f"lines {lines[0]}–{lines[-1]}"
            count = f"{len(lines)} notes, chords or rests ({span})" if len(lines) > 1 else "a note, chord or rest"
            state.parts.warnings.append(f"{state.where}:{lines[0]}: {count} {what}")


def _title(root: etree._Element) -> str | None:
    for el in root.iter(NS + "title"):
        text = (el.text or "").strip()
        if text:
            return text
    return None

def _walk(el: etree._Element, state: State) -> None:
    for child in el:
        state.current = child
        name = local_name(child)
        if name == "scoreDef":
            apply_def(child, state)
        elif name == "staffDef":
            apply_def(child, state)
        elif name == "measure":
            _measure(child, state)
        elif name in ("section", "ending", "lem", "expansion"):
            _walk(child, state)
        elif name in ("app", "choice"):
            pick = choose_reading(child)
            if pick is not None:
                _walk(pick, state)


@dataclass(slots=True)
class _Layer:
    part: str
    staff: int
    voice: str
    number: str
    info: StaffInfo
    accids: dict[tuple[str, int], int]
    spans: dict[str, tuple[str, Fraction]]
    key: dict[str, int]
    """The key signature where the walk stands (a <keySig> in the layer changes it)."""
    pos: Fraction = Fraction(0)
    count: int = 0
    active: list[tuple[str, Fraction]] = field(default_factory=list)


def _measure(el: etree._Element, state: State) -> None:
    number = el.get("n") or str(state.measure_index + 1)
    bar = Fraction(4 * state.meter[0], state.meter[1])
    laid = state.parts.measures[state.measure_index] if state.measure_index < len(state.parts.measures) else None
    if laid is not None:  # a later part of a parts-based encoding: the bar is laid out already
        state.onset, state.meter_changed = laid.onset, False
    if state.meter_changed:
        state.parts.time_signatures.append(
            TimeSignature(state.meter[0], state.meter[1], state.measure_index)
        )
        state.meter_changed = False
    longest = Fraction(0)
    start = len(state.parts.notes)
    layers: list[tuple[int, str, Fraction, etree._Element]] = []
    for staff in el:
        name = local_name(staff)
        if name == "staffDef":
            apply_def(staff, state)
            continue
        if name != "staff":
            continue
        n = int(staff.get("n", "1"))
        info = state.staves.get(n)
        if info is None:
            state.part_count += 1
            info = state.staves[n] = StaffInfo(f"P{state.part_count}")
            state.parts.part_names[info.part] = None
        accids: dict[tuple[str, int], int] = {}
        spans = _tuplet_spans(el, n)
        key, key_after = info.key, info.key
        for li, layer in enumerate(c for c in staff if local_name(c) == "layer"):
            lay = _Layer(info.part, n, layer.get("n") or str(li + 1), number, info, accids, spans, key)
            _layer_items(layer, lay, state, Fraction(1), False, bar)
            if lay.key is not key:  # a key change inside the bar holds from there on
                key_after = lay.key
            longest = max(longest, lay.pos)
            layers.append((n, lay.voice, lay.pos, layer))
        info.key = key_after
    for tie in el.iter(NS + "tie"):
        s, e = (tie.get("startid") or "").lstrip("#"), (tie.get("endid") or "").lstrip("#")
        if s and e:
            state.tie_targets[e] = s
            if state.ours:
                s, e = decode_id(s), decode_id(e)
            state.parts.tie_links[s] = e
    complete = state.metered and el.get("metcon") != "false" and el.get("type") != "upbeat"
    if next(el.iter(NS + "multiRest"), None) is not None:
        complete = False  # one <measure> standing for several bars of rest
    # A complete bar lasts what its meter says (as music21 and engravers read it); a layer that
    # runs over is an encoding error, reported, and its last notes sound into the next bar.
    length = bar if complete or longest == 0 else longest
    if complete:
        for staff_n, layer_n, reach, layer_el in layers:
            if reach > bar:
                state.parts.warnings.append(
                    f"{state.where}:{layer_el.sourceline}: bar {number}, <staff n=\"{staff_n}\">, <layer "
                    f"n=\"{layer_n}\"> lasts {reach} quarter notes in a bar of {bar}; the following bars "
                    "keep the meter's length"
                )
    if laid is not None:
        length = laid.duration
    elif state.measure_index == 0 and length < bar:
        state.parts.pickup = length
    for note in state.parts.notes[start:]:
        note.onset += state.onset
    if laid is None:
        state.parts.measures.append(Measure(number, state.onset, length))
    state.onset += length
    state.measure_index += 1


def _duration(el: etree._Element, lay: _Layer, state: State, ratio: Fraction, bar: Fraction) -> Fraction:
    name = local_name(el)
    if name == "multiRest":
        return bar * int(parse_number(el.get("num") or "1", f"{state.where}:{el.sourceline}", "num"))
    if name in ("mRest", "mSpace", "mRpt"):
        return bar
    stated = _stated(el, state.where)
    if stated is None and name == "space":
        return Fraction(0)  # a <space> stating no duration marks a place; it takes no time
    return (stated if stated is not None else _default(el, lay, state)) * ratio


def _value(dur: str) -> Fraction | None:
    """A duration value (``4``, ``breve``, …) in quarter notes, or None when it is not one."""
    if dur in _DUR:
        return _DUR[dur]
    try:
        return Fraction(4, int(dur))
    except (ValueError, ZeroDivisionError):
        return None


def _stated(el: etree._Element, where: str) -> Fraction | None:
    """The duration an element states itself, as verovio reads it: ``@dur.ges`` before ``@dur``,
    ``@dots.ges`` before ``@dots`` (or ``<dot>`` children), then ``@num``/``@numbase``; None when
    it states none."""
    dur = el.get("dur.ges")
    base = _value(dur) if dur is not None else None
    if base is None:
        dur = el.get("dur")
        if dur is None:
            return None
        base = _value(dur)
        if base is None:
            raise ScoreReadError(
                f"{where}:{el.sourceline}: <{local_name(el)}> dur={dur!r} is not a duration"
            )
    dots_text = el.get("dots.ges") or el.get("dots")
    dots = int(dots_text) if dots_text and dots_text.isdigit() else sum(
        1 for c in el if local_name(c) == "dot"
    )
    total = base * (2 - Fraction(1, 2**dots))
    num, numbase = el.get("num"), el.get("numbase")
    if num and numbase:
        total = total * int(numbase) / int(num)
    return total


def _default(el: etree._Element, lay: _Layer, state: State) -> Fraction:
    """The duration of an event that states none: the staff's or score's ``@dur.default``, else a
    quarter note (as verovio reads it), noted for the reader's warning."""
    for default in (lay.info.dur_default, state.dur_default):
        if default is not None and (value := _value(default)) is not None:
            return value
    state.undated.append(_line(el))
    return Fraction(1)


def _line(el: etree._Element) -> int:
    line = el.sourceline
    return line if isinstance(line, int) else 0


def _is_hidden(el: etree._Element) -> bool:
    return el.get("visible") == "false"


def _event(
    el: etree._Element, lay: _Layer, state: State, scale: Fraction, bar: Fraction
) -> tuple[Fraction, list[tuple[etree._Element, Fraction]]] | None:
    """A note's or chord's place in the layer: how far it moves the layer on, and each of its
    notes with the duration it sounds. A chord member's own duration counts before the chord's;
    a chord stating none lasts as long as its longest member. None for an invisible event that
    states no duration anywhere (it takes no time, and nothing sounds)."""
    if local_name(el) == "note":
        notes = [el]
    else:
        notes = [n for n in el.iter(NS + "note")]
    own = {n: _stated(n, state.where) for n in notes}
    stated = own[el] if el in own else _stated(el, state.where)
    if stated is None:
        known = [d for d in own.values() if d is not None]
        stated = max(known) if known else None
    if stated is None:
        defaults = (lay.info.dur_default, state.dur_default)
        if _is_hidden(el) or (notes and all(_is_hidden(n) for n in notes)):
            if not any(d is not None and _value(d) is not None for d in defaults):
                state.hidden.append(_line(el))
                return None
        stated = _default(el, lay, state)
    whole = stated
    return whole * scale, [(n, (d if (d := own[n]) is not None else whole) * scale) for n in notes]


def _layer_items(
    parent: etree._Element, lay: _Layer, state: State, ratio: Fraction, grace: bool, bar: Fraction
) -> None:
    for el in parent:
        state.current = el
        if el.get("copyof") is not None:
            copy = state.copies[el] = _copy_of(el, state)
            el = copy
        name = local_name(el)
        if name in ("note", "chord", "rest", "space"):
            if el.get("sameas"):
                continue
            ident = el.get(XML_ID)
            if ident is not None and ident in lay.spans:
                lay.active.append(lay.spans[ident])
            scale = ratio
            for _end, span_ratio in lay.active:
                scale = scale * span_ratio
            if name in ("rest", "space"):
                advance = state.advance[el] = _duration(el, lay, state, scale, bar)
                lay.pos += advance
            elif grace or el.get("grace") is not None:
                for note in [el] if name == "note" else el.iter(NS + "note"):
                    _note(note, el, lay, state, Fraction(0), True)
            elif (event := _event(el, lay, state, scale, bar)) is not None:
                advance, sounding = event
                for note, dur in sounding:
                    _note(note, el, lay, state, dur, False)
                lay.pos += advance
                state.advance[el] = advance
            if lay.active:
                ids = {ident} | {n.get(XML_ID) for n in el.iter(NS + "note")}
                lay.active = [a for a in lay.active if a[0] not in ids]
        elif name in ("mRest", "mSpace", "multiRest", "mRpt", "halfmRpt"):
            lay.pos += _duration(el, lay, state, ratio, bar)
        elif name == "keySig":
            key = key_signature(el, state.where)
            if key is not None:
                lay.key = key
        elif name in _CONTAINERS:
            sub = ratio
            if name == "tuplet" and (numbers := tuplet_numbers(el)) is not None:
                sub = ratio * Fraction(numbers[1], numbers[0])
            elif name == "fTrem":
                sub = ratio / 2  # two notes alternate through one written duration
            _layer_items(el, lay, state, sub, grace or name == "graceGrp", bar)
        elif name in ("app", "choice"):
            pick = choose_reading(el)
            if pick is not None:
                _layer_items(pick, lay, state, ratio, grace, bar)


def _copy_of(el: etree._Element, state: State) -> etree._Element:
    """The element an ``@copyof`` element stands for: a copy of its target, without the target's
    ids (its notes get ids of their own), placed at the copying element's line."""
    ref = (el.get("copyof") or "").split("#")[-1]
    target = state.by_id.get(ref)
    if target is None:
        raise ScoreReadError(
            f"{state.where}:{el.sourceline}: <{local_name(el)} copyof={el.get('copyof')!r}>: "
            "no element of the file has that xml:id"
        )
    if any(a is target for a in el.iterancestors()) or target.get("copyof") is not None:
        raise ScoreReadError(
            f"{state.where}:{el.sourceline}: <{local_name(el)} copyof={el.get('copyof')!r}> copies "
            "an element that contains it or is itself a copy"
        )
    clone = deepcopy(target)
    for node in clone.iter():
        if isinstance(node.tag, str):
            if XML_ID in node.attrib:
                del node.attrib[XML_ID]
        node.sourceline = el.sourceline
    return clone


def _tuplet_spans(measure: etree._Element, staff_n: int) -> dict[str, tuple[str, Fraction]]:
    """<tupletSpan> control events of a staff: start id → (end id, duration ratio)."""
    spans: dict[str, tuple[str, Fraction]] = {}
    for span in measure.iter(NS + "tupletSpan"):
        staff = span.get("staff")
        if staff is not None and str(staff_n) not in staff.split():
            continue
        start, end = (span.get("startid") or "").lstrip("#"), (span.get("endid") or "").lstrip("#")
        num, numbase = span.get("num"), span.get("numbase")
        if start and end and num and numbase:
            try:
                spans[start] = (end, Fraction(int(numbase), int(num)))
            except (ValueError, ZeroDivisionError):
                continue
    return spans


def _alter(note: etree._Element, lay: _Layer, step: str, octave: int, tied_from: int | None) -> int:
    """The note's alteration: gestural, written, held over a tie, carried in the bar, or the key's."""
    ges, written = note.get("accid.ges"), note.get("accid")
    for child in note:
        if local_name(child) == "accid":
            ges = child.get("accid.ges", ges)
            written = child.get("accid", written)
    key = (step, octave)
    if written is not None:
        lay.accids[key] = ACCID.get(written, 0)
    if ges is not None:
        return ACCID.get(ges, 0)
    if written is not None:
        return ACCID.get(written, 0)
    if tied_from is not None:
        return tied_from
    if key in lay.accids:
        return lay.accids[key]
    return lay.key.get(step, 0)


def _note(
    note: etree._Element, holder: etree._Element, lay: _Layer, state: State, dur: Fraction, grace: bool
) -> None:
    here = f"{state.where}:{note.sourceline}"
    if note.get("sameas"):
        return
    pname = note.get("pname.ges") or note.get("pname")
    oct_text = note.get("oct.ges") or note.get("oct")
    if not pname or oct_text is None:
        return  # unpitched
    step = pname.upper()
    octave = int(parse_number(oct_text, here, "oct"))
    tie = (note.get("tie") or holder.get("tie") or "").lower()
    file_id = note.get(XML_ID)
    tied_from = None
    if tie in ("m", "t"):
        tied_from = state.tie_alters.get((lay.staff, step, octave))
    elif file_id is not None and file_id in state.tie_targets:
        start = state.alter_of.get(state.tie_targets[file_id])
        if start is not None and start[:2] == (step, octave):
            tied_from = start[2]
    alter = _alter(note, lay, step, octave, tied_from)
    if tie in ("i", "m"):
        state.tie_alters[(lay.staff, step, octave)] = alter
    if file_id is not None:
        state.alter_of[file_id] = (step, octave, alter)
    midi = midi_of(step, alter, octave, here) + lay.info.trans_semi
    lay.count += 1
    nid = file_id
    if nid and state.ours:
        nid = decode_id(nid)
    if not nid or nid in state.used:
        base = safe_id(f"{lay.part}-m{lay.number}-s{lay.staff}-v{lay.voice}-n{lay.count}")
        nid, j = base, 1
        while nid in state.existing or nid in state.used:
            j += 1
            nid = f"{base}-{j}"
    state.used.add(nid)
    raw = RawNote(
        id=nid,
        part=lay.part,
        staff=lay.staff,
        voice=lay.voice,
        measure=lay.number,
        onset=lay.pos,
        duration=dur,
        midi=midi,
        beat=lay.pos + 1,
        line=line_of(note),
        grace=grace,
        tie_start=tie in ("i", "m"),
        tie_stop=tie in ("m", "t"),
        transposition=lay.info.trans_semi,
        alter=alter,
    )
    if "true" in (note.get("cue"), holder.get("cue")):  # a cue note shows another part: not played
        state.cues[note] = raw
        return
    state.parts.notes.append(raw)
    state.elements.append((note, raw))
    state.keys[note] = lay.key
