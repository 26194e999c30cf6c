"""The MEI → MusicXML converter's state and the pieces of MusicXML it writes that need no walk:
the tables, the definitions it keeps per staff and part, and key, clef and direction helpers."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from lxml import etree

from serialkit.io.build import RawNote
from serialkit.io.mei.defs import (
    NS,
    XML_ID,
    State,
    fifths_of,
    local_name,
)
from serialkit.io.mei.read import scan_mei_tree

_DYNAMICS = frozenset(
    "p pp ppp pppp ppppp pppppp f ff fff ffff fffff ffffff mp mf sf sfp sfpp fp rf rfz sfz sffz "
    "fz n pf sfzp".split()
)
_ARTIC = {
    "acc": ("articulations", "accent"), "stacc": ("articulations", "staccato"),
    "ten": ("articulations", "tenuto"), "stacciss": ("articulations", "staccatissimo"),
    "marc": ("articulations", "strong-accent"), "spicc": ("articulations", "spiccato"),
    "stress": ("articulations", "stress"), "unstress": ("articulations", "unstress"),
    "doit": ("articulations", "doit"), "scoop": ("articulations", "scoop"),
    "plop": ("articulations", "plop"), "fall": ("articulations", "falloff"),
    "dnbow": ("technical", "down-bow"), "upbow": ("technical", "up-bow"),
    "harm": ("technical", "harmonic"), "snap": ("technical", "snap-pizzicato"),
    "open": ("technical", "open-string"), "stop": ("technical", "stopped"),
    "dbltongue": ("technical", "double-tongue"), "trpltongue": ("technical", "triple-tongue"),
    "heel": ("technical", "heel"), "toe": ("technical", "toe"), "tap": ("technical", "tap"),
}
_TYPES = {
    "maxima": "maxima", "long": "long", "breve": "breve", "1": "whole", "2": "half", "4": "quarter",
    "8": "eighth", "16": "16th", "32": "32nd", "64": "64th", "128": "128th", "256": "256th",
    "512": "512th", "1024": "1024th", "2048": "1024th",
}
_LONG = {"maxima": Fraction(32), "long": Fraction(16), "breve": Fraction(8)}
_ACCIDENTALS = {
    "s": "sharp", "f": "flat", "ss": "double-sharp", "x": "double-sharp", "ff": "flat-flat",
    "n": "natural", "nf": "natural-flat", "ns": "natural-sharp", "xs": "sharp-sharp",
    "ts": "triple-sharp", "tf": "triple-flat", "su": "sharp-up", "sd": "sharp-down",
    "fu": "flat-up", "fd": "flat-down", "nu": "natural-up", "nd": "natural-down",
    "1qf": "quarter-flat", "3qf": "three-quarters-flat", "1qs": "quarter-sharp",
    "3qs": "three-quarters-sharp",
}
_CONTAINERS = {"beam", "tuplet", "graceGrp", "bTrem", "fTrem", "ligature", "supplied", "reg", "corr",
               "unclear", "add", "sic", "orig"}


@dataclass(slots=True)
class _StaffDef:
    n: int
    part: str = ""
    clef: tuple[str, str, int] | None = None  # sign, line, octave change
    key: dict[str, int] | None = None  # letter -> alteration (a mixed signature: any letters)
    mode: str | None = None
    trans: tuple[int, int] | None = None  # (diatonic, chromatic), sounding minus written
    label: str | None = None
    abbr: str | None = None
    changed: set[str] = field(default_factory=set)


@dataclass(slots=True)
class _Part:
    id: str
    name: str | None
    staves: list[int] = field(default_factory=list)
    abbr: str | None = None
    element: etree._Element | None = None
    divisions: etree._Element | None = None
    slurs: dict[str, int] = field(default_factory=dict)  # slur id -> number in use


@dataclass(slots=True)
class _Ctx:
    """Where the layer walk stands: part, staff index, voice, ratio, grace, open tuplets."""

    part: _Part
    staff_n: int
    staff_index: int
    voice: str
    ratio: Fraction = Fraction(1)
    grace: str | None = None
    tuplets: list[tuple[int, int]] = field(default_factory=list)


def _num(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return round(float(text))
    except ValueError:
        return None


class ConverterState:
    """What the MEI → MusicXML walk knows: the reader's scan, staff and part definitions, the
    meter, the control events waiting for their notes and the MusicXML root being built."""

    def __init__(self, tree: etree._ElementTree, where: str) -> None:
        self.where = where
        self.mei = tree.getroot()
        self.state: State = scan_mei_tree(tree, where)
        self.raw_of: dict[etree._Element, RawNote] = {el: raw for el, raw in self.state.elements}
        self.raw_of.update(self.state.cues)  # cue notes are written (as <cue/>), though not played
        links = self.state.parts.tie_links
        self.tie_starts = set(links)
        self.tie_stops = set(links.values())
        self.staves: dict[int, _StaffDef] = {}
        self.parts: dict[str, _Part] = {}
        self.meter: tuple[str, str, str | None] | None = None
        self.meter_changed = False
        self.measure_index = 0
        self.durations: list[tuple[etree._Element, Fraction]] = []
        self.staff_of: dict[str, int] = {}
        for staff in self.mei.iter(NS + "staff"):
            n = _num(staff.get("n")) or 1
            for el in staff.iter():
                ident = el.get(XML_ID)
                if ident:
                    self.staff_of[ident] = n
        self.before: dict[str, list[etree._Element]] = {}
        self.marks: dict[str | etree._Element, list[tuple[str, str, str]]] = {}
        self.unplaced = 0
        self.root = etree.Element("score-partwise", version="4.0")

    @staticmethod
    def _clef_of(el: etree._Element) -> tuple[str, str, int] | None:
        shape, line = el.get("clef.shape"), el.get("clef.line")
        dis, place = el.get("clef.dis"), el.get("clef.dis.place")
        child = el.find(NS + "clef")
        if child is not None and local_name(el) != "clef":
            shape, line = child.get("shape", shape), child.get("line", line)
            dis, place = child.get("dis", dis), child.get("dis.place", place)
        if local_name(el) == "clef":
            shape, line, dis, place = el.get("shape"), el.get("line"), el.get("dis"), el.get("dis.place")
        if not shape:
            return None
        sign = {"perc": "percussion", "TAB": "TAB", "GG": "G"}.get(shape, shape)
        octave = {"8": 1, "15": 2, "22": 3}.get(dis or "", 0) * (-1 if place == "below" else 1)
        if sign == "percussion":
            return (sign, "", 0)
        return (sign, line or {"G": "2", "F": "4", "C": "3"}.get(sign, "2"), octave)


def _slur_attr(el: etree._Element, part: str) -> list[tuple[str, str, str]]:
    """Slurs written as ``@slur`` on a note or chord (``i1`` starts slur 1, ``t1`` ends it)."""
    out = []
    for token in (el.get("slur") or "").split():
        kind, number = token[:1], token[1:] or "1"
        if kind == "i":
            out.append(("slur-start", f"@slur:{part}:{number}", el.get("curvedir") or ""))
        elif kind == "t":
            out.append(("slur-stop", f"@slur:{part}:{number}", ""))
    return out


def _is_grace(el: etree._Element) -> bool:
    return el.get("grace") is not None or any(local_name(a) == "graceGrp" for a in el.iterancestors())


def _leaves(el: etree._Element, rests: bool) -> list[etree._Element]:
    wanted = {"note", "chord"} | ({"rest"} if rests else set())
    out = []
    for d in el.iter():
        name = local_name(d)
        if name in wanted and not d.get("sameas"):
            parent = d.getparent()
            if name == "note" and parent is not None and local_name(parent) == "chord":
                continue
            out.append(d)
    return out


def _key_of(el: etree._Element) -> str | etree._Element:
    """A note's key in the marks table: its xml:id, else the element itself (which keeps lxml's
    proxy alive, so the walk meets the same object again)."""
    return el.get(XML_ID) or el


def _written_accid(note: etree._Element) -> str | None:
    accid = note.get("accid")
    for child in note:
        if local_name(child) == "accid" and child.get("accid"):
            accid = child.get("accid")
    return _ACCIDENTALS.get(accid or "")


def _key(attrs: etree._Element, alters: dict[str, int], mode: str | None, number: int | None) -> None:
    key = etree.Element("key")
    # schema order inside <attributes>: key after divisions, before time/staves/clef
    later = [c for c in attrs if c.tag not in ("divisions", "footnote", "level")]
    if later:
        later[0].addprevious(key)
    else:
        attrs.append(key)
    if number is not None:
        key.set("number", str(number))
    fifths = fifths_of(alters)
    if fifths is None:  # a mixed signature: MusicXML's non-traditional key
        for step, alter in alters.items():
            etree.SubElement(key, "key-step").text = step
            etree.SubElement(key, "key-alter").text = str(alter)
        return
    etree.SubElement(key, "fifths").text = str(fifths)
    if mode in ("major", "minor", "dorian", "phrygian", "lydian", "mixolydian", "aeolian", "locrian"):
        etree.SubElement(key, "mode").text = mode


def _clef(attrs: etree._Element, clef: tuple[str, str, int], number: int | None) -> None:
    sign, line, octave = clef
    el = etree.Element("clef")
    if number is not None:
        el.set("number", str(number))
    etree.SubElement(el, "sign").text = sign
    if line:
        etree.SubElement(el, "line").text = line
    if octave:
        etree.SubElement(el, "clef-octave-change").text = str(octave)
    # schema order inside <attributes>: clef after key/time/staves, before transpose
    after = [c for c in attrs if c.tag in ("transpose", "for-part", "directive", "measure-style")]
    if after:
        after[0].addprevious(el)
    else:
        attrs.append(el)


def _with_staff(direction: etree._Element, staff_n: int | None) -> etree._Element:
    direction.attrib["{urn:serialkit}staff"] = str(staff_n or "")
    return direction


def _set_staff(direction: etree._Element, index: int) -> None:
    for old in direction.findall("staff"):
        direction.remove(old)
    staff = etree.Element("staff")
    staff.text = str(index)
    sound = direction.find("sound")
    if sound is not None:
        sound.addprevious(staff)
    else:
        direction.append(staff)


def _place(
    direction: etree._Element, ctx: _Ctx, staves: int, defs: dict[int, _StaffDef], parts: dict[str, _Part]
) -> None:
    mark = direction.attrib.pop("{urn:serialkit}staff", "")
    if staves > 1:
        n = int(mark) if mark.isdigit() else ctx.staff_n
        index = ctx.part.staves.index(n) + 1 if n in ctx.part.staves else ctx.staff_index
        _set_staff(direction, index)
