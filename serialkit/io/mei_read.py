"""MEI 3–5 reader on lxml: staff definitions, layers, chords, tuplets, ties, grace notes, transposition."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from lxml import etree

from serialkit.core.errors import PieceError, ScoreReadError
from serialkit.core.piece import Measure, Piece, TimeSignature
from serialkit.io._build import (
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
from serialkit.io._mei_defs import (
    ACCID,
    MEI_NS,
    NS,
    XML_ID,
    StaffInfo,
    State,
    apply_def,
    key_signature,
    local_name,
    parse_number,
)
from serialkit.io.safety import parse_xml, read_bytes

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
    state.existing = {v for el in root.iter() if (v := el.get(XML_ID))}
    state.ours = any(
        (el.text or "").strip() == "serialkit" and (parent := el.getparent()) is not None
        and local_name(parent) == "application"
        for el in root.iter(NS + "name")
    )
    state.parts.title = _title(root)
    for score in root.iter(NS + "score", "score"):
        if not any(local_name(a) == "meiHead" for a in score.iterancestors()):
            try:
                _walk(score, state)
            except DAMAGE as exc:
                raise damaged(str(path), state.current, exc) from None
    return state


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
            pick = _choose(child)
            if pick is not None:
                _walk(pick, state)


def _choose(el: etree._Element) -> etree._Element | None:
    """The reading to follow inside <app>/<choice>: lem, corr, reg, expan, else the first."""
    children = [c for c in el if isinstance(c.tag, str)]
    for wanted in ("lem", "corr", "reg", "expan"):
        for c in children:
            if local_name(c) == wanted:
                return c
    return children[0] if children else None


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
    complete = el.get("metcon") != "false" and el.get("type") != "upbeat"
    if next(el.iter(NS + "multiRest"), None) is not None:
        complete = False  # one <measure> standing for several bars of rest
    # A complete bar lasts what its meter says (as music21 and engravers read it); a layer that
    # runs over is an encoding error, reported, and its last notes sound into the next bar.
    length = bar if complete or longest == 0 else longest
    if complete:
        for staff_n, layer_n, reach, layer_el in layers:
            if reach > bar:
                state.parts.warnings.append(
                    f"{state.where}:{layer_el.sourceline}: bar {number}, staff {staff_n}, layer "
                    f"{layer_n} lasts {reach} quarter notes in a bar of {bar}; the following bars "
                    "keep the meter's length"
                )
    if state.measure_index == 0 and length < bar:
        state.parts.pickup = length
    for note in state.parts.notes[start:]:
        note.onset += state.onset
    state.parts.measures.append(Measure(number, state.onset, length))
    state.onset += length
    state.measure_index += 1


def _duration(el: etree._Element, lay: _Layer, state: State, ratio: Fraction, bar: Fraction) -> Fraction:
    name = local_name(el)
    if name == "multiRest":
        return bar * int(parse_number(el.get("num") or "1", f"{state.where}:{el.sourceline}", "num"))
    if name in ("mRest", "mSpace", "mRpt"):
        return bar
    dur = el.get("dur")
    if dur is None:
        return Fraction(0)
    if dur in _DUR:
        base = _DUR[dur]
    else:
        try:
            base = Fraction(4, int(dur))
        except (ValueError, ZeroDivisionError):
            raise ScoreReadError(f"{state.where}:{el.sourceline}: dur={dur!r} is not a duration") from None
    dots = int(el.get("dots") or 0) or sum(1 for c in el if local_name(c) == "dot")
    total = base * (2 - Fraction(1, 2**dots))
    num, numbase = el.get("num"), el.get("numbase")
    if num and numbase:
        total = total * int(numbase) / int(num)
    return total * ratio


def _layer_items(
    parent: etree._Element, lay: _Layer, state: State, ratio: Fraction, grace: bool, bar: Fraction
) -> None:
    for el in parent:
        state.current = el
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
                lay.pos += _duration(el, lay, state, scale, bar)
            else:
                is_grace = grace or el.get("grace") is not None
                dur = Fraction(0) if is_grace else _duration(el, lay, state, scale, bar)
                notes = [el] if name == "note" else [c for c in el.iter(NS + "note")]
                for note in notes:
                    _note(note, el, lay, state, dur, is_grace)
                lay.pos += dur
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
            if name == "tuplet" and el.get("num") and el.get("numbase"):
                sub = ratio * Fraction(int(el.get("numbase", "1")), int(el.get("num", "1")))
            elif name == "fTrem":
                sub = ratio / 2  # two notes alternate through one written duration
            _layer_items(el, lay, state, sub, grace or name == "graceGrp", bar)
        elif name in ("app", "choice"):
            pick = _choose(el)
            if pick is not None:
                _layer_items(pick, lay, state, ratio, grace, bar)


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
