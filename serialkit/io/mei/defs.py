"""MEI score and staff definitions: parts, labels, meter, key signatures, transposition."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction

from lxml import etree

from serialkit.core.errors import ScoreReadError
from serialkit.io.build import RawNote, ScoreParts

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


def tuplet_numbers(el: etree._Element) -> tuple[int, int] | None:
    """A ``<tuplet>``'s ``(num, numbase)``: ``num`` notes in the time of ``numbase``. Without
    ``@numbase`` it is the largest power of two below ``num`` (3 in the time of 2, 5 of 4, 9 of
    8), as engravers read it; None when ``@num`` is absent or not a positive whole number."""
    num_text, base_text = el.get("num"), el.get("numbase")
    if not num_text or not num_text.isdigit() or int(num_text) < 1:
        return None
    num = int(num_text)
    if base_text and base_text.isdigit() and int(base_text) > 0:
        return num, int(base_text)
    if base_text:
        return None
    base = 1
    while base * 2 < num:
        base *= 2
    return num, base if num > 1 else 1


@dataclass(slots=True)
class StaffInfo:
    """What a staff definition says: its part, transposition, key and name."""

    part: str
    trans_semi: int = 0
    key: dict[str, int] = field(default_factory=dict)
    name: str | None = None
    dur_default: str | None = None
    """The staff's ``@dur.default``: the duration of an event that states none."""


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
    by_id: dict[str, etree._Element] = field(default_factory=dict)
    """Every element with an ``xml:id``, for ``@copyof``."""
    copies: dict[etree._Element, etree._Element] = field(default_factory=dict)
    """Each ``@copyof`` element and the copy of its target the walk read in its place."""
    advance: dict[etree._Element, Fraction] = field(default_factory=dict)
    """How far each note, chord, rest and space moves its layer on, as the reader read it."""
    metered: bool = False
    """Whether the score states a meter; bars of an unmetered score last what they hold."""
    part_count: int = 0
    ours: bool = False
    tie_alters: dict[tuple[int, str, int], int] = field(default_factory=dict)
    alter_of: dict[str, tuple[str, int, int]] = field(default_factory=dict)
    tie_targets: dict[str, str] = field(default_factory=dict)
    current: etree._Element | None = None
    dur_default: str | None = None
    """The score definition's ``@dur.default``."""
    undated: list[int] = field(default_factory=list)
    """Source lines of events that state no duration anywhere (read as quarter notes)."""
    hidden: list[int] = field(default_factory=list)
    """Source lines of invisible notes that state no duration (left out: they take no time)."""
    elements: list[tuple[etree._Element, RawNote]] = field(default_factory=list)
    cues: dict[etree._Element, RawNote] = field(default_factory=dict)
    """Cue notes (``@cue="true"``): kept in the file, read for their pitch, not played, so in
    neither ``parts.notes`` nor ``elements``."""
    keys: dict[etree._Element, dict[str, int]] = field(default_factory=dict)
    """Each note element's key signature where it stands (letter → alteration; what a note
    showing no accidental, with none carried, sounds): for keeping a bar's accidentals true."""


ACCID = {
    "s": 1, "f": -1, "ss": 2, "x": 2, "ff": -2, "xs": 3, "sx": 3, "ts": 3, "tf": -3, "n": 0,
    "nf": -1, "ns": 1, "su": 1, "sd": 1, "fu": -1, "fd": -1, "nu": 0, "nd": 0, "1qf": 0,
    "3qf": -1, "1qs": 0, "3qs": 1, "bms": -1, "kms": -1, "bs": 1, "ks": 1,
}
"""An MEI accidental's alteration in semitones (quarter tones rounded towards natural)."""

_SIG = re.compile(r"([0-7])([sf])")
_MIXED = re.compile(r"([a-g])(\d*)([a-z0-9]+)")


def _sig_alters(value: str, where: str) -> dict[str, int] | None:
    """``3s`` → F, C, G sharp; ``0`` → none; ``mixed`` → None (the accidentals are given apart)."""
    if value in ("0", "none", ""):
        return {}
    if value == "mixed":
        return None
    match = _SIG.fullmatch(value)
    if match is None:
        raise ScoreReadError(
            f"{where}: key signature {value!r} is not 0, 1s–7s, 1f–7f or mixed"
        )
    count, kind = int(match.group(1)), match.group(2)
    order = "FCGDAEB" if kind == "s" else "BEADGCF"
    return {step: (1 if kind == "s" else -1) for step in order[:count]}


def _mixed_alters(value: str, where: str) -> dict[str, int]:
    """MEI 3–4 ``key.sig.mixed`` / ``sig.mixed``: tokens such as ``a4 c5ss e5f`` (letter, octave
    for placement only, accidental)."""
    out: dict[str, int] = {}
    for token in value.split():
        match = _MIXED.fullmatch(token)
        if match is None or match.group(3) not in ACCID:
            raise ScoreReadError(f"{where}: mixed key signature token {token!r} is not a letter, "
                                 "an octave and an accidental (such as c5s)")
        out[match.group(1).upper()] = ACCID[match.group(3)]
    return out


def _key_accids(sig: etree._Element, where: str) -> dict[str, int]:
    """The ``<keyAccid pname accid>`` children of a ``<keySig>`` (MEI 4–5 mixed signatures)."""
    out: dict[str, int] = {}
    for acc in sig.iterfind(NS + "keyAccid"):
        pname, accid = (acc.get("pname") or "").lower(), acc.get("accid") or ""
        if pname not in tuple("abcdefg") or accid not in ACCID:
            raise ScoreReadError(f"{where}:{acc.sourceline}: <keyAccid> pname={pname!r} accid={accid!r} "
                                 "is not a letter and an accidental")
        out[pname.upper()] = ACCID[accid]
    return out


def key_signature(el: etree._Element, where: str) -> dict[str, int] | None:
    """The key signature a ``scoreDef``, ``staffDef`` or ``keySig`` element states, as letter →
    alteration ({} for none), or None when it states none. Every MEI form is read: ``@keysig``
    (MEI 5), ``@key.sig`` with ``@key.sig.mixed`` (MEI 3–4), a ``<keySig>`` (the element itself
    or its child) with ``@sig`` (and MEI 4's ``@sig.mixed``) or ``<keyAccid>`` children; a child
    ``<keySig>`` outranks the element's attributes."""
    here = f"{where}:{el.sourceline}"
    if local_name(el) == "keySig":
        sig: etree._Element | None = el
        value, mixed = None, None
    else:
        sig = el.find(NS + "keySig")
        value = el.get("keysig", el.get("key.sig"))
        mixed = el.get("key.sig.mixed")
    if sig is not None:
        accids = _key_accids(sig, where)
        if accids:
            return accids
        if sig.get("sig") is not None or sig.get("sig.mixed") is not None:
            value, mixed = sig.get("sig"), sig.get("sig.mixed")
            here = f"{where}:{sig.sourceline}"
    if value is None and mixed is None:
        return None
    alters = _sig_alters(value.strip(), here) if value is not None else None
    if alters is None:  # mixed (or only the mixed list given)
        return _mixed_alters(mixed, here) if mixed else {}
    return alters


def fifths_of(key: dict[str, int]) -> int | None:
    """The sharps (> 0) or flats (< 0) of a traditional key signature; None for a mixed one."""
    for count in range(8):
        for sign, order in ((1, "FCGDAEB"), (-1, "BEADGCF")):
            if key == {step: sign for step in order[:count]}:
                return sign * count
    return None


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
        state.metered = True
        if meter != state.meter:
            state.meter = meter
            state.meter_changed = True
    key = key_signature(el, state.where)
    if local_name(el) == "scoreDef":
        if el.get("dur.default"):
            state.dur_default = el.get("dur.default")
        if key is not None:
            for info in state.staves.values():
                info.key = key
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


def _staff_group(grp: etree._Element, state: State, key: dict[str, int] | None) -> None:
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


def _staff_def(el: etree._Element, state: State, key: dict[str, int] | None, pid: str | None) -> None:
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
    if el.get("dur.default"):
        info.dur_default = el.get("dur.default")
    if el.get("trans.semi") is not None:
        info.trans_semi = round(parse_number(el.get("trans.semi"), here, "trans.semi"))
    if el.get("trans.diat") is not None:
        parse_number(el.get("trans.diat"), here, "trans.diat")  # validated; spelling only
    own_key = key_signature(el, state.where)
    if own_key is not None or key is not None:
        info.key = own_key if own_key is not None else key or {}
    count, unit = el.get("meter.count"), el.get("meter.unit")
    if count and unit and local_name(el) == "staffDef" and state.measure_index == 0:
        try:
            meter = (int(count), int(unit))
        except ValueError:
            meter = state.meter
        state.metered = True
        if meter != state.meter:
            state.meter, state.meter_changed = meter, True


def choose_reading(el: etree._Element) -> etree._Element | None:
    """The reading to follow inside <app>/<choice>: lem, corr, reg, expan, else the first."""
    children = [c for c in el if isinstance(c.tag, str)]
    for wanted in ("lem", "corr", "reg", "expan"):
        for c in children:
            if local_name(c) == wanted:
                return c
    return children[0] if children else None
