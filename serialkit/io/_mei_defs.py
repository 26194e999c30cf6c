"""MEI score and staff definitions: parts, labels, meter, key signatures, transposition."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from lxml import etree

from serialkit.core.errors import ScoreReadError
from serialkit.io._build import RawNote, ScoreParts

MEI_NS = "http://www.music-encoding.org/ns/mei"
XML_ID = "{http://www.w3.org/XML/1998/namespace}id"
NS = "{" + MEI_NS + "}"


def local_name(el: etree._Element) -> str:
    """An element's name without the MEI namespace ("" for comments)."""
    tag = el.tag
    if not isinstance(tag, str):
        return ""
    return tag[len(NS):] if tag.startswith(NS) else tag.rsplit("}", 1)[-1]


def parse_number(text: str | None, where: str, what: str) -> float:
    """Tolerant number parsing: accepts real-world values such as ``-1.000000``."""
    try:
        return float(text) if text is not None else 0.0
    except ValueError:
        raise ScoreReadError(f"{where}: {what} {text!r} is not a number") from None


@dataclass(slots=True)
class StaffInfo:
    """What a staff definition says: its part, transposition, key and name."""

    part: str
    trans_semi: int = 0
    key: dict[str, int] = field(default_factory=dict)
    name: str | None = None


@dataclass(slots=True)
class State:
    """The reader's state while walking the score: staves, meter, time, ids, ties."""

    where: str
    staves: dict[int, StaffInfo] = field(default_factory=dict)
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
    current: etree._Element | None = None
    elements: list[tuple[etree._Element, RawNote]] = field(default_factory=list)
    keys: dict[etree._Element, dict[str, int]] = field(default_factory=dict)
    """Each note element's key signature where it stands (letter → alteration; what a note
    showing no accidental, with none carried, sounds): for keeping a bar's accidentals true."""


def _key_sig(value: str | None) -> dict[str, int]:
    if not value or value in ("0", "none", "mixed"):
        return {}
    count, kind = int(value[:-1] or 0), value[-1]
    order = "FCGDAEB" if kind == "s" else "BEADGCF"
    return {step: (1 if kind == "s" else -1) for step in order[:count]}


def apply_def(el: etree._Element, state: State) -> None:
    """Read meter, key and transposition from a scoreDef or staffDef (attributes or children)."""
    count, unit = el.get("meter.count"), el.get("meter.unit")
    meter_sig = el.find(NS + "meterSig")
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
    key_sig = el.find(NS + "keySig")
    if key_sig is not None:
        key = key_sig.get("sig", key)
    if local_name(el) == "scoreDef":
        if key is not None:
            for info in state.staves.values():
                info.key = _key_sig(key)
        for grp in el.iterfind(NS + "staffGrp"):
            _staff_group(grp, state, key)
        return
    _staff_def(el, state, key, None)


def _label(el: etree._Element) -> str | None:
    text = el.get("label")
    if text:
        return text
    lab = el.find(NS + "label")
    if lab is not None:
        joined = "".join(str(t) for t in lab.itertext()).strip()
        return joined or None
    return None


def _staff_group(grp: etree._Element, state: State, key: str | None) -> None:
    defs = [c for c in grp if local_name(c) == "staffDef"]
    groups = [c for c in grp if local_name(c) == "staffGrp"]
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
        if local_name(child) == "staffDef":
            _staff_def(child, state, key, None)
        elif local_name(child) == "staffGrp":
            _staff_group(child, state, key)


def _staff_def(el: etree._Element, state: State, key: str | None, pid: str | None) -> None:
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
        info = state.staves[n] = StaffInfo(pid)
    if el.get("trans.semi") is not None:
        info.trans_semi = round(parse_number(el.get("trans.semi"), here, "trans.semi"))
    if el.get("trans.diat") is not None:
        parse_number(el.get("trans.diat"), here, "trans.diat")  # validated; spelling only
    own_key = el.get("key.sig")
    key_sig = el.find(NS + "keySig")
    if key_sig is not None:
        own_key = key_sig.get("sig", own_key)
    if own_key is not None or key is not None:
        info.key = _key_sig(own_key if own_key is not None else key)
    count, unit = el.get("meter.count"), el.get("meter.unit")
    if count and unit and local_name(el) == "staffDef" and state.measure_index == 0:
        try:
            meter = (int(count), int(unit))
        except ValueError:
            meter = state.meter
        if meter != state.meter:
            state.meter, state.meter_changed = meter, True
