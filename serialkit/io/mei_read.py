"""MEI 3–5 reader on lxml: staff definitions, layers, chords, tuplets, ties, grace notes, transposition."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from lxml import etree

from serialkit.core.errors import ScoreReadError
from serialkit.core.piece import Measure, Piece, TimeSignature
from serialkit.io._build import (
    RawNote,
    ScoreParts,
    build_piece,
    decode_id,
    line_of,
    midi_of,
    safe_id,
)
from serialkit.io.safety import parse_xml, read_bytes

MEI_NS = "http://www.music-encoding.org/ns/mei"
XML_ID = "{http://www.w3.org/XML/1998/namespace}id"
_N = "{" + MEI_NS + "}"

_ACCID = {
    "s": 1, "f": -1, "ss": 2, "x": 2, "ff": -2, "xs": 3, "sx": 3, "ts": 3, "tf": -3, "n": 0,
    "nf": -1, "ns": 1, "su": 1, "sd": 1, "fu": -1, "fd": -1, "nu": 0, "nd": 0, "1qf": 0,
    "3qf": -1, "1qs": 0, "3qs": 1, "bms": -1, "kms": -1, "bs": 1, "ks": 1,
}
_DUR = {"maxima": Fraction(32), "long": Fraction(16), "breve": Fraction(8)}
_CONTAINERS = {"beam", "tuplet", "graceGrp", "bTrem", "fTrem", "ligature", "supplied", "reg", "corr"}


def _local(el: etree._Element) -> str:
    tag = el.tag
    if not isinstance(tag, str):
        return ""
    return tag[len(_N):] if tag.startswith(_N) else tag.rsplit("}", 1)[-1]


def _number(text: str | None, where: str, what: str) -> float:
    """Tolerant number parsing: accepts real-world values such as ``-1.000000``."""
    try:
        return float(text) if text is not None else 0.0
    except ValueError:
        raise ScoreReadError(f"{where}: {what} {text!r} is not a number") from None


@dataclass(slots=True)
class _StaffInfo:
    part: str
    trans_semi: int = 0
    key: dict[str, int] = field(default_factory=dict)
    name: str | None = None


@dataclass(slots=True)
class _State:
    where: str
    staves: dict[int, _StaffInfo] = field(default_factory=dict)
    meter: tuple[int, int] = (4, 4)
    meter_changed: bool = True
    parts: ScoreParts = field(default_factory=ScoreParts)
    onset: Fraction = Fraction(0)
    measure_index: int = 0
    used: set[str] = field(default_factory=set)
    existing: set[str] = field(default_factory=set)
    part_count: int = 0
    ours: bool = False
    tie_alters: dict[tuple[int, str, int], int] = field(default_factory=dict)
    alter_of: dict[str, tuple[str, int, int]] = field(default_factory=dict)
    tie_targets: dict[str, str] = field(default_factory=dict)


def read_mei(path: str | Path, limit: int | None = None) -> Piece:
    """Read an MEI (3, 4 or 5) file into a Piece with sounding pitches."""
    path = Path(path)
    tree = parse_xml(read_bytes(path, limit), str(path))
    root = tree.getroot()
    if _local(root) not in ("mei", "music", "meiCorpus"):
        raise ScoreReadError(
            f"{path}:{root.sourceline or 1}: root element <{_local(root)}> is not MEI"
        )
    state = _State(str(path))
    state.existing = {v for el in root.iter() if (v := el.get(XML_ID))}
    state.ours = any(
        (el.text or "").strip() == "serialkit" and (parent := el.getparent()) is not None
        and _local(parent) == "application"
        for el in root.iter(_N + "name")
    )
    state.parts.title = _title(root)
    for score in root.iter(_N + "score", "score"):
        if not any(_local(a) == "meiHead" for a in score.iterancestors()):
            _walk(score, state)
    return build_piece(state.parts, path, "mei")


def _title(root: etree._Element) -> str | None:
    for el in root.iter(_N + "title"):
        text = (el.text or "").strip()
        if text:
            return text
    return None


def _key_sig(value: str | None) -> dict[str, int]:
    if not value or value in ("0", "none", "mixed"):
        return {}
    count, kind = int(value[:-1] or 0), value[-1]
    order = "FCGDAEB" if kind == "s" else "BEADGCF"
    return {step: (1 if kind == "s" else -1) for step in order[:count]}


def _apply_def(el: etree._Element, state: _State) -> None:
    """Read meter, key and transposition from a scoreDef or staffDef (attributes or children)."""
    count, unit = el.get("meter.count"), el.get("meter.unit")
    meter_sig = el.find(_N + "meterSig")
    if meter_sig is not None:
        count, unit = meter_sig.get("count", count), meter_sig.get("unit", unit)
    if count and unit:
        try:
            beats = sum(int(b) for b in count.replace("+", " ").split())
            meter = (beats, int(unit))
        except ValueError:
            raise ScoreReadError(
                f"{state.where}:{el.sourceline}: meter {count}/{unit} is not numeric"
            ) from None
        if meter != state.meter:
            state.meter = meter
            state.meter_changed = True
    key = el.get("key.sig")
    key_sig = el.find(_N + "keySig")
    if key_sig is not None:
        key = key_sig.get("sig", key)
    if _local(el) == "scoreDef":
        if key is not None:
            for info in state.staves.values():
                info.key = _key_sig(key)
        for grp in el.iterfind(_N + "staffGrp"):
            _staff_group(grp, state, key)
        return
    _staff_def(el, state, key, None)


def _label(el: etree._Element) -> str | None:
    text = el.get("label")
    if text:
        return text
    lab = el.find(_N + "label")
    if lab is not None:
        joined = "".join(str(t) for t in lab.itertext()).strip()
        return joined or None
    return None


def _staff_group(grp: etree._Element, state: _State, key: str | None) -> None:
    defs = [c for c in grp if _local(c) == "staffDef"]
    groups = [c for c in grp if _local(c) == "staffGrp"]
    one_part = (
        len(defs) > 1
        and not groups
        and all(_label(d) is None for d in defs)
        and (_label(grp) is not None or grp.get("symbol") == "brace")
    )
    if one_part:
        state.part_count += 1
        pid = f"P{state.part_count}"
        state.parts.part_names[pid] = _label(grp)
        for d in defs:
            _staff_def(d, state, key, pid)
        return
    for child in grp:
        if _local(child) == "staffDef":
            _staff_def(child, state, key, None)
        elif _local(child) == "staffGrp":
            _staff_group(child, state, key)


def _staff_def(el: etree._Element, state: _State, key: str | None, pid: str | None) -> None:
    here = f"{state.where}:{el.sourceline}"
    try:
        n = int(el.get("n", "0"))
    except ValueError:
        raise ScoreReadError(f"{here}: staffDef n={el.get('n')!r} is not a number") from None
    info = state.staves.get(n)
    if info is None:
        if pid is None:
            state.part_count += 1
            pid = f"P{state.part_count}"
            state.parts.part_names[pid] = _label(el)
        info = state.staves[n] = _StaffInfo(pid)
    if el.get("trans.semi") is not None:
        info.trans_semi = round(_number(el.get("trans.semi"), here, "trans.semi"))
    if el.get("trans.diat") is not None:
        _number(el.get("trans.diat"), here, "trans.diat")  # validated; spelling only
    own_key = el.get("key.sig")
    key_sig = el.find(_N + "keySig")
    if key_sig is not None:
        own_key = key_sig.get("sig", own_key)
    if own_key is not None or key is not None:
        info.key = _key_sig(own_key if own_key is not None else key)
    count, unit = el.get("meter.count"), el.get("meter.unit")
    if count and unit and _local(el) == "staffDef" and state.measure_index == 0:
        try:
            meter = (int(count), int(unit))
        except ValueError:
            meter = state.meter
        if meter != state.meter:
            state.meter, state.meter_changed = meter, True


def _walk(el: etree._Element, state: _State) -> None:
    for child in el:
        name = _local(child)
        if name == "scoreDef":
            _apply_def(child, state)
        elif name == "staffDef":
            _apply_def(child, state)
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
            if _local(c) == wanted:
                return c
    return children[0] if children else None


@dataclass(slots=True)
class _Layer:
    part: str
    staff: int
    voice: str
    number: str
    info: _StaffInfo
    accids: dict[tuple[str, int], int]
    spans: dict[str, tuple[str, Fraction]]
    pos: Fraction = Fraction(0)
    count: int = 0
    active: list[tuple[str, Fraction]] = field(default_factory=list)


def _measure(el: etree._Element, state: _State) -> None:
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
        name = _local(staff)
        if name == "staffDef":
            _apply_def(staff, state)
            continue
        if name != "staff":
            continue
        n = int(staff.get("n", "1"))
        info = state.staves.get(n)
        if info is None:
            state.part_count += 1
            info = state.staves[n] = _StaffInfo(f"P{state.part_count}")
            state.parts.part_names[info.part] = None
        accids: dict[tuple[str, int], int] = {}
        spans = _tuplet_spans(el, n)
        for li, layer in enumerate(c for c in staff if _local(c) == "layer"):
            lay = _Layer(info.part, n, layer.get("n") or str(li + 1), number, info, accids, spans)
            _layer_items(layer, lay, state, Fraction(1), False, bar)
            longest = max(longest, lay.pos)
            layers.append((n, lay.voice, lay.pos, layer))
    for tie in el.iter(_N + "tie"):
        s, e = (tie.get("startid") or "").lstrip("#"), (tie.get("endid") or "").lstrip("#")
        if s and e:
            state.tie_targets[e] = s
            if state.ours:
                s, e = decode_id(s), decode_id(e)
            state.parts.tie_links[s] = e
    complete = el.get("metcon") != "false" and el.get("type") != "upbeat"
    if next(el.iter(_N + "multiRest"), None) is not None:
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


def _duration(el: etree._Element, lay: _Layer, state: _State, ratio: Fraction, bar: Fraction) -> Fraction:
    name = _local(el)
    if name == "multiRest":
        return bar * int(_number(el.get("num") or "1", f"{state.where}:{el.sourceline}", "num"))
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
    dots = int(el.get("dots") or 0) or sum(1 for c in el if _local(c) == "dot")
    total = base * (2 - Fraction(1, 2**dots))
    num, numbase = el.get("num"), el.get("numbase")
    if num and numbase:
        total = total * int(numbase) / int(num)
    return total * ratio


def _layer_items(
    parent: etree._Element, lay: _Layer, state: _State, ratio: Fraction, grace: bool, bar: Fraction
) -> None:
    for el in parent:
        name = _local(el)
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
                notes = [el] if name == "note" else [c for c in el.iter(_N + "note")]
                for note in notes:
                    _note(note, el, lay, state, dur, is_grace)
                lay.pos += dur
            if lay.active:
                ids = {ident} | {n.get(XML_ID) for n in el.iter(_N + "note")}
                lay.active = [a for a in lay.active if a[0] not in ids]
        elif name in ("mRest", "mSpace", "multiRest", "mRpt", "halfmRpt"):
            lay.pos += _duration(el, lay, state, ratio, bar)
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
    for span in measure.iter(_N + "tupletSpan"):
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
        if _local(child) == "accid":
            ges = child.get("accid.ges", ges)
            written = child.get("accid", written)
    key = (step, octave)
    if written is not None:
        lay.accids[key] = _ACCID.get(written, 0)
    if ges is not None:
        return _ACCID.get(ges, 0)
    if written is not None:
        return _ACCID.get(written, 0)
    if tied_from is not None:
        return tied_from
    if key in lay.accids:
        return lay.accids[key]
    return lay.info.key.get(step, 0)


def _note(
    note: etree._Element, holder: etree._Element, lay: _Layer, state: _State, dur: Fraction, grace: bool
) -> None:
    here = f"{state.where}:{note.sourceline}"
    if note.get("sameas"):
        return
    pname = note.get("pname.ges") or note.get("pname")
    oct_text = note.get("oct.ges") or note.get("oct")
    if not pname or oct_text is None:
        return  # unpitched
    step = pname.upper()
    octave = int(_number(oct_text, here, "oct"))
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
    state.parts.notes.append(
        RawNote(
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
        )
    )
