"""MEI → MusicXML that keeps what an engraver sees, not only the notes.

The MEI tree is walked measure by measure, staff by staff, layer by layer, and written as
partwise MusicXML 4.0 with the source's own spelling (written pitch), durations, dots, chords,
tuplets, beams, grace notes, stems, clefs (and clef changes), key and time signatures,
transposition (``<transpose>``), part names and abbreviations, instruments, ties, slurs,
articulations, fermatas, dynamics, hairpins, text directions, tempo marks and lyrics. Each note's
``id`` is the event id serialkit's MEI reader gives it, so annotations by event id apply.
What is not carried over is listed in :data:`NOT_KEPT`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from lxml import etree

from serialkit.core.errors import ScoreReadError
from serialkit.io.build import RawNote, encode_id, midi_of
from serialkit.io.files.safety import parse_xml, read_bytes
from serialkit.io.mei.defs import (
    NS,
    XML_ID,
    State,
    fifths_of,
    key_signature,
    local_name,
    tuplet_numbers,
)
from serialkit.io.mei.read import scan_mei_tree
from serialkit.io.musicxml.instruments import declare_instrument

__all__ = ["KEPT", "NOT_KEPT", "mei_musicxml_bytes", "mei_to_musicxml"]

KEPT = (
    "notes at written pitch with the source's spelling and written accidentals",
    "durations, dots, chords, tuplets (with brackets), beams, grace notes, stem directions",
    "rests, measure rests and spaces (as forward)",
    "clefs and clef changes (with octave marks)",
    "key and time signatures and their changes",
    "transposition (trans.semi/trans.diat as <transpose>)",
    "part names, abbreviations, instruments (<score-instrument>, <midi-instrument>)",
    "brackets, braces and lines around groups of parts (<staffGrp symbol> as <part-group>)",
    "ties, slurs and phrase marks, articulations, fermatas",
    "dynamics, hairpins, text directions (<dir>), tempo marks, octave lines (<octave startid endid>)",
    "lyrics (<verse>/<syl>), note colours, measure numbers, title and composer",
)
NOT_KEPT = (
    "hairpins and octave lines timed by tstamp/tstamp2, pedal marks, trills, mordents, turns,",
    "arpeggios, glissandi",
    "beams drawn by <beamSpan> (notes keep their durations; programs beam them by meter)",
    "tremolo strokes (<bTrem>/<fTrem> notes are kept, their strokes are not)",
    "fingerings and harmonics already in the source, breath marks, rehearsal marks",
    "groups of a single part's staves other than its brace, system and page breaks, layout and fonts",
    "editorial markup (<app>/<choice>: the lemma or first reading only)",
)

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


class _Converter:
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

    # ---- definitions -------------------------------------------------------------------------
    def score_def(self, el: etree._Element) -> None:
        self._meter(el)
        key = key_signature(el, self.where)
        if key is not None:
            for sd in self.staves.values():
                if sd.key != key:
                    sd.key = key
                    sd.changed.add("key")
        for sd_el in el.iter(NS + "staffDef"):
            self.staff_def(sd_el, key)

    def _meter(self, el: etree._Element) -> None:
        count, unit, sym = el.get("meter.count"), el.get("meter.unit"), el.get("meter.sym")
        msig = el.find(NS + "meterSig")
        if msig is not None:
            count, unit, sym = msig.get("count", count), msig.get("unit", unit), msig.get("sym", sym)
        if sym and not (count and unit):
            count, unit = ("4", "4") if sym == "common" else ("2", "2")
        if count and unit:
            meter = (count, unit, sym)
            if meter != self.meter:
                self.meter, self.meter_changed = meter, True

    def staff_def(self, el: etree._Element, group_key: dict[str, int] | None = None) -> None:
        n = _num(el.get("n"))
        if n is None:
            return
        sd = self.staves.get(n)
        if sd is None:
            sd = self._new_staff(n)
            part = self.parts[sd.part]
            if el.get("label.abbr") and part.abbr is None:
                part.abbr = el.get("label.abbr")
            group = el.getparent()
            if part.abbr is None and group is not None and group.get("label.abbr"):
                part.abbr = group.get("label.abbr")
        if local_name(el) == "staffDef":
            self._meter(el)
        clef = self._clef_of(el)
        if clef is not None:  # an explicit clef is written again even when it restates the last
            sd.clef = clef
            sd.changed.add("clef")
        key = key_signature(el, self.where)
        if key is None:
            key = group_key
        if key is not None and key != sd.key:
            sd.key, sd.mode = key, el.get("key.mode") or sd.mode
            sd.changed.add("key")
        semi, diat = _num(el.get("trans.semi")), _num(el.get("trans.diat"))
        if semi is not None or diat is not None:
            trans = (diat or 0, semi or 0)
            if trans != sd.trans:
                sd.trans = trans
                sd.changed.add("trans")

    def _new_staff(self, n: int) -> _StaffDef:
        info = self.state.staves.get(n)
        sd = self.staves[n] = _StaffDef(n, info.part if info else f"P{n}")
        sd.changed.update(("clef", "key", "trans"))
        part = self.parts.get(sd.part)
        if part is None:
            name = self.state.parts.part_names.get(sd.part)
            part = self.parts[sd.part] = _Part(sd.part, name)
        part.staves.append(n)
        return sd

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

    # ---- walk --------------------------------------------------------------------------------
    def run(self) -> etree._Element:
        scores = [s for s in self.mei.iter(NS + "score")
                  if not any(local_name(a) == "meiHead" for a in s.iterancestors())]
        if not scores:
            raise ScoreReadError(f"{self.where}: the MEI file has no <score>")
        for score in scores:
            self.walk(score)
        self._head()
        div = math.lcm(1, *(value.denominator for _, value in self.durations))
        for el, value in self.durations:
            el.text = str(int(value * div))
        for part in self.parts.values():
            if part.divisions is not None:
                part.divisions.text = str(div)
        self.unplaced = sum(len(v) for v in self.before.values())
        return self.root

    def walk(self, el: etree._Element) -> None:
        for child in el:
            name = local_name(child)
            if name == "scoreDef":
                self.score_def(child)
            elif name == "staffDef":
                self.staff_def(child)
            elif name == "measure":
                self.measure(child)
            elif name in ("section", "ending", "lem", "expansion", "rdg"):
                self.walk(child)
            elif name in ("app", "choice"):
                pick = _choose(child)
                if pick is not None:
                    self.walk(pick)

    def _head(self) -> None:
        title = self.state.parts.title
        head: list[etree._Element] = []
        if title:
            work = etree.Element("work")
            etree.SubElement(work, "work-title").text = title
            head.append(work)
        ident = etree.Element("identification")
        for comp in self.mei.iter(NS + "composer"):
            text = " ".join("".join(str(t) for t in comp.itertext()).split())
            if text and any(local_name(a) == "meiHead" for a in comp.iterancestors()):
                etree.SubElement(ident, "creator", type="composer").text = text
                break
        encoding = etree.SubElement(ident, "encoding")
        etree.SubElement(encoding, "software").text = "serialkit"
        head.append(ident)
        part_list = etree.Element("part-list")
        performers = [" ".join("".join(str(t) for t in r.itertext()).split())
                      for r in self.mei.iter(NS + "perfRes", NS + "instrVoice")]
        starts, stops = self._groups()
        for index, part in enumerate(self.parts.values()):
            for group in starts.get(part.id, []):
                part_list.append(group)
            sp = etree.SubElement(part_list, "score-part", id=part.id)
            if not part.name:  # an unlabelled staff: the header's instrument when it names one
                part.name = performers[0] if len(performers) == 1 == len(self.parts) else f"Part {index + 1}"
            etree.SubElement(sp, "part-name").text = part.name
            if part.abbr:
                etree.SubElement(sp, "part-abbreviation").text = part.abbr
            declare_instrument(sp, part.id, part.name, index)
            for number in stops.get(part.id, []):
                etree.SubElement(part_list, "part-group", type="stop", number=number)
        head.append(part_list)
        for k, el in enumerate(head):
            self.root.insert(k, el)

    def _groups(self) -> tuple[dict[str, list[etree._Element]], dict[str, list[str]]]:
        """``<part-group>`` starts (before a part) and stops (after one) for every bracketed,
        braced or lined ``<staffGrp>`` of the first score definition that spans several parts."""
        order = list(self.parts)
        starts: dict[str, list[etree._Element]] = {}
        stops: dict[str, list[str]] = {}
        first = next((d for d in self.mei.iter(NS + "scoreDef")
                      if not any(local_name(a) == "meiHead" for a in d.iterancestors())), None)
        if first is None:
            return starts, stops
        number = 0
        for grp in first.iter(NS + "staffGrp"):
            symbol = grp.get("symbol")
            parts = []
            for sd in grp.iter(NS + "staffDef"):
                staff = self.staves.get(_num(sd.get("n")) or 0)
                if staff is not None and staff.part not in parts:
                    parts.append(staff.part)
            if symbol not in ("bracket", "brace", "line", "square") or len(parts) < 2:
                continue
            parts.sort(key=order.index)
            number += 1
            el = etree.Element("part-group", type="start", number=str(number))
            if grp.get("label"):
                etree.SubElement(el, "group-name").text = grp.get("label")
            etree.SubElement(el, "group-symbol").text = symbol
            etree.SubElement(el, "group-barline").text = "yes" if grp.get("barthru") == "true" else "no"
            starts.setdefault(parts[0], []).append(el)
            stops.setdefault(parts[-1], []).insert(0, str(number))
        return starts, stops

    def _part_element(self, part: _Part) -> etree._Element:
        if part.element is None:
            part.element = etree.SubElement(self.root, "part", id=part.id)
        return part.element

    def measure(self, el: etree._Element) -> None:
        for child in el:
            if local_name(child) == "staffDef":
                self.staff_def(child)
        index = self.measure_index
        measures = self.state.parts.measures
        length = measures[index].duration if index < len(measures) else Fraction(4)
        number = el.get("n") or str(index + 1)
        self._controls(el)
        staves = {(_num(s.get("n")) or 1): s for s in el if local_name(s) == "staff"}
        for n in staves:
            if n not in self.staves:
                self._new_staff(n)
        timed: dict[str, list[tuple[Fraction, int, etree._Element]]] = {}
        for ctl in self._timed(el):
            staff_n = _num((ctl[2].get("staff") or "1").split()[0]) or 1
            sd = self.staves.get(staff_n)
            if sd is not None:
                timed.setdefault(sd.part, []).append((ctl[0], ctl[1], ctl[3]))
        for part in self.parts.values():
            m = etree.SubElement(self._part_element(part), "measure", number=number)
            if index == 0 and self.state.parts.pickup:
                m.set("implicit", "yes")
            self._attributes(m, part, index == 0)
            cursor = Fraction(0)
            first = True
            for staff_index, n in enumerate(part.staves, start=1):
                staff = staves.get(n)
                if staff is None:
                    continue
                layers = [c for c in staff if local_name(c) == "layer"]
                for li, layer in enumerate(layers):
                    if not first and cursor > 0:
                        self._move(m, "backup", cursor)
                    first = False
                    voice = str((staff_index - 1) * 4 + (_num(layer.get("n")) or li + 1))
                    ctx = _Ctx(part, n, staff_index, voice)
                    cursor = self.items(m, layer, ctx, Fraction(0), length)
            for pos, staff_index, direction in sorted(timed.get(part.id, []), key=lambda t: t[0]):
                if pos < cursor:
                    self._move(m, "backup", cursor - pos)
                elif pos > cursor:
                    self._move(m, "forward", pos - cursor)
                cursor = pos
                if len(part.staves) > 1:
                    _set_staff(direction, staff_index)
                m.append(direction)
        self.meter_changed = False
        self.measure_index += 1

    def _move(self, m: etree._Element, kind: str, amount: Fraction) -> None:
        el = etree.SubElement(m, kind)
        self.durations.append((etree.SubElement(el, "duration"), amount))

    def _attributes(self, m: etree._Element, part: _Part, first: bool) -> None:
        sds = [self.staves[n] for n in part.staves]
        need_key = any("key" in sd.changed for sd in sds)
        need_clef = [sd for sd in sds if "clef" in sd.changed and sd.clef is not None]
        need_trans = [sd for sd in sds if "trans" in sd.changed and sd.trans is not None]
        if not (first or need_key or need_clef or need_trans or self.meter_changed):
            return
        attrs = etree.SubElement(m, "attributes")
        if first:
            part.divisions = etree.SubElement(attrs, "divisions")
        if need_key or first:
            keys = {(tuple(sorted((sd.key or {}).items())), sd.mode) for sd in sds}
            if len(keys) == 1:
                _key(attrs, sds[0].key or {}, sds[0].mode, None)
            else:
                for i, sd in enumerate(sds, start=1):
                    _key(attrs, sd.key or {}, sd.mode, i)
        if (first or self.meter_changed) and self.meter is not None:
            count, unit, sym = self.meter
            time = etree.SubElement(attrs, "time")
            if sym in ("common", "cut"):
                time.set("symbol", sym)
            etree.SubElement(time, "beats").text = count
            etree.SubElement(time, "beat-type").text = unit
        if first and len(sds) > 1:
            etree.SubElement(attrs, "staves").text = str(len(sds))
        for sd in need_clef:
            assert sd.clef is not None
            _clef(attrs, sd.clef, part.staves.index(sd.n) + 1 if len(sds) > 1 else None)
        for sd in need_trans:
            assert sd.trans is not None
            diat, semi = sd.trans
            octave = int(semi / 12)
            tr = etree.SubElement(attrs, "transpose")
            if len(sds) > 1:
                tr.set("number", str(part.staves.index(sd.n) + 1))
            etree.SubElement(tr, "diatonic").text = str(diat - 7 * octave)
            etree.SubElement(tr, "chromatic").text = str(semi - 12 * octave)
            if octave:
                etree.SubElement(tr, "octave-change").text = str(octave)
        for sd in sds:
            sd.changed.clear()

    # ---- control events ----------------------------------------------------------------------
    def _direction(self, ctl: etree._Element) -> etree._Element | None:
        name = local_name(ctl)
        text = " ".join("".join(str(t) for t in ctl.itertext()).split())
        place = ctl.get("place")
        direction = etree.Element("direction")
        if name == "dynam":
            direction.set("placement", place or "below")
            dt = etree.SubElement(direction, "direction-type")
            dyn = etree.SubElement(dt, "dynamics")
            if text in _DYNAMICS:
                etree.SubElement(dyn, text)
            else:
                etree.SubElement(dyn, "other-dynamics").text = text
        elif name in ("dir", "tempo"):
            if not text:
                return None
            direction.set("placement", place or "above")
            dt = etree.SubElement(direction, "direction-type")
            words = etree.SubElement(dt, "words")
            words.text = text
            rend = ctl.find(NS + "rend")
            style = rend.get("fontstyle") if rend is not None else None
            if style in ("italic", "oblique"):
                words.set("font-style", "italic")
            weight = rend.get("fontweight") if rend is not None else None
            if weight == "bold" or name == "tempo":
                words.set("font-weight", "bold")
            if name == "tempo":
                bpm = ctl.get("midi.bpm") or ctl.get("mm")
                if bpm:
                    try:
                        etree.SubElement(direction, "sound", tempo=f"{float(bpm):g}")
                    except ValueError:
                        pass
        elif name == "hairpin":
            direction.set("placement", place or "below")
            dt = etree.SubElement(direction, "direction-type")
            kind = "crescendo" if ctl.get("form") == "cres" else "diminuendo"
            etree.SubElement(dt, "wedge", type=kind, number="1")
        elif name == "octave":
            size = {"8": "8", "15": "15", "22": "22"}.get(ctl.get("dis") or "8", "8")
            above = (ctl.get("dis.place") or "above") == "above"
            direction.set("placement", "above" if above else "below")
            dt = etree.SubElement(direction, "direction-type")
            # 8va (above): the notes are printed an octave below their pitch, so the shift is "down"
            etree.SubElement(dt, "octave-shift", type="down" if above else "up", size=size, number="1")
        else:
            return None
        return direction

    def _controls(self, measure: etree._Element) -> None:
        for ctl in measure:
            name = local_name(ctl)
            if name in ("staff", "staffDef") or not name:
                continue
            start = (ctl.get("startid") or "").lstrip("#")
            end = (ctl.get("endid") or "").lstrip("#")
            if name in ("slur", "phrase"):
                if start and end:
                    sid = ctl.get(XML_ID) or f"slur{id(ctl)}"
                    self.marks.setdefault(start, []).append(("slur-start", sid, ctl.get("curvedir") or ""))
                    self.marks.setdefault(end, []).append(("slur-stop", sid, ""))
                continue
            if name == "fermata" and start:
                self.marks.setdefault(start, []).append(("fermata", ctl.get("form") or "", ctl.get("place") or ""))
                continue
            if not start:
                continue  # timed by tstamp: placed after the layers (see _timed)
            direction = self._direction(ctl)
            if direction is None:
                continue
            staff_n = _num((ctl.get("staff") or "").split()[0] if ctl.get("staff") else None)
            self.before.setdefault(start, []).append(_with_staff(direction, staff_n))
            if name in ("hairpin", "octave") and end:
                stop = etree.Element("direction")
                dt = etree.SubElement(stop, "direction-type")
                if name == "hairpin":
                    etree.SubElement(dt, "wedge", type="stop", number="1")
                else:
                    size = {"8": "8", "15": "15", "22": "22"}.get(ctl.get("dis") or "8", "8")
                    etree.SubElement(dt, "octave-shift", type="stop", size=size, number="1")
                self.before.setdefault(f"after:{end}", []).append(_with_staff(stop, staff_n))

    def _timed(self, measure: etree._Element) -> list[tuple[Fraction, int, etree._Element, etree._Element]]:
        out = []
        unit = int(self.meter[1]) if self.meter and self.meter[1].isdigit() else 4
        for ctl in measure:
            if ctl.get("startid") or not ctl.get("tstamp") or local_name(ctl) in ("hairpin", "octave"):
                continue  # spans timed by tstamp/tstamp2 are not carried over (see NOT_KEPT)
            direction = self._direction(ctl)
            if direction is None:
                continue
            try:
                beat = Fraction(ctl.get("tstamp", "1"))
            except ValueError:
                continue
            pos = max(Fraction(0), (beat - 1) * Fraction(4, unit))
            staff_n = _num((ctl.get("staff") or "1").split()[0]) or 1
            sd = self.staves.get(staff_n)
            index = self.parts[sd.part].staves.index(staff_n) + 1 if sd else 1
            out.append((pos, index, ctl, direction))
        return out

    # ---- layer content -----------------------------------------------------------------------
    def items(self, m: etree._Element, parent: etree._Element, ctx: _Ctx, pos: Fraction, bar: Fraction) -> Fraction:
        for el in parent:
            el = self.state.copies.get(el, el)
            name = local_name(el)
            if el.get("sameas") and name in ("note", "chord", "rest", "space", "clef"):
                continue
            if name in ("note", "chord"):
                pos = self.chord(m, el, ctx, pos)
            elif name == "rest":
                pos = self.rest(m, el, ctx, pos, None)
            elif name in ("mRest", "multiRest"):
                pos = self.rest(m, el, ctx, pos, bar)
            elif name == "space":
                dur = self._read(el, ctx.ratio)
                self._flush(m, el.get(XML_ID), ctx)
                self._forward(m, dur, ctx)
                pos += dur
            elif name == "mSpace":
                self._forward(m, bar, ctx)
                pos += bar
            elif name == "keySig":
                key = key_signature(el, self.where)
                sd = self.staves.get(ctx.staff_n)
                if key is not None and sd is not None and key != sd.key:
                    sd.key = key
                    attrs = etree.SubElement(m, "attributes")
                    _key(attrs, key, sd.mode, ctx.staff_index if len(ctx.part.staves) > 1 else None)
            elif name == "clef":
                clef = self._clef_of(el)
                if clef is not None:
                    attrs = etree.SubElement(m, "attributes")
                    _clef(attrs, clef, ctx.staff_index if len(ctx.part.staves) > 1 else None)
                    self.staves[ctx.staff_n].clef = clef
            elif name in _CONTAINERS:
                pos = self.container(m, el, name, ctx, pos, bar)
            elif name in ("app", "choice"):
                pick = _choose(el)
                if pick is not None:
                    pos = self.items(m, pick, ctx, pos, bar)
        return pos

    def container(self, m: etree._Element, el: etree._Element, name: str, ctx: _Ctx,
                  pos: Fraction, bar: Fraction) -> Fraction:
        saved = (ctx.ratio, ctx.grace)
        pushed = False
        if name == "tuplet":
            num, numbase = tuplet_numbers(el) or (0, 0)
            if num and numbase:
                ctx.ratio = ctx.ratio * Fraction(numbase, num)
                ctx.tuplets.append((num, numbase))
                pushed = True
                leaves = _leaves(el, rests=True)
                if leaves and el.get("bracket.visible") != "false":
                    number = str(len(ctx.tuplets))
                    self.marks.setdefault(_key_of(leaves[0]), []).append(("tuplet-start", number, ""))
                    self.marks.setdefault(_key_of(leaves[-1]), []).append(("tuplet-stop", number, ""))
        elif name == "fTrem":
            ctx.ratio = ctx.ratio / 2
        elif name == "graceGrp":
            ctx.grace = el.get("grace") or "unacc"
        elif name == "beam" and not any(local_name(a) == "beam" for a in el.iterancestors()):
            leaves = [x for x in _leaves(el, rests=False) if not _is_grace(x)]
            if len(leaves) >= 2:
                for k, leaf in enumerate(leaves):
                    state = "begin" if k == 0 else ("end" if k == len(leaves) - 1 else "continue")
                    self.marks.setdefault(_key_of(leaf), []).append(("beam", state, ""))
        pos = self.items(m, el, ctx, pos, bar)
        if pushed:
            ctx.tuplets.pop()
        ctx.ratio, ctx.grace = saved
        return pos

    def _read(self, el: etree._Element, ratio: Fraction) -> Fraction:
        """How far an event moves its layer on: as the reader read it (chord members' durations,
        defaults, …), else as the element states it."""
        found = self.state.advance.get(el)
        return found if found is not None else self._duration(el, ratio)

    def _duration(self, el: etree._Element, ratio: Fraction) -> Fraction:
        dur = el.get("dur")
        if dur is None:
            return Fraction(0)
        base = _LONG.get(dur)
        if base is None:
            try:
                base = Fraction(4, int(dur))
            except (ValueError, ZeroDivisionError):
                raise ScoreReadError(f"{self.where}:{el.sourceline}: dur={dur!r} is not a duration") from None
        dots = _num(el.get("dots")) or sum(1 for c in el if local_name(c) == "dot")
        total = base * (2 - Fraction(1, 2**dots))
        num, numbase = _num(el.get("num")), _num(el.get("numbase"))
        if num and numbase:
            total = total * numbase / num
        return total * ratio

    def _forward(self, m: etree._Element, dur: Fraction, ctx: _Ctx) -> None:
        if dur <= 0:
            return
        fw = etree.SubElement(m, "forward")
        self.durations.append((etree.SubElement(fw, "duration"), dur))
        etree.SubElement(fw, "voice").text = ctx.voice
        if len(ctx.part.staves) > 1:
            etree.SubElement(fw, "staff").text = str(ctx.staff_index)

    def _flush(self, m: etree._Element, ident: str | None, ctx: _Ctx, after: bool = False) -> None:
        if not ident:
            return
        for direction in self.before.pop(f"after:{ident}" if after else ident, []):
            _place(direction, ctx, len(ctx.part.staves), self.staves, self.parts)
            m.append(direction)

    def rest(self, m: etree._Element, el: etree._Element, ctx: _Ctx, pos: Fraction, bar: Fraction | None) -> Fraction:
        self._flush(m, el.get(XML_ID), ctx)
        dur = bar if bar is not None else self._read(el, ctx.ratio)
        note = etree.SubElement(m, "note")
        rest = etree.SubElement(note, "rest")
        if bar is not None:
            rest.set("measure", "yes")
        self.durations.append((etree.SubElement(note, "duration"), dur))
        etree.SubElement(note, "voice").text = ctx.voice
        if bar is None:
            self._type(note, el)
        self._time_mod(note, ctx)
        if len(ctx.part.staves) > 1:
            etree.SubElement(note, "staff").text = str(ctx.staff_index)
        marks = self.marks.pop(_key_of(el), [])
        self._notations(note, el, None, marks, ctx, first=True)
        if el.get("color"):
            note.set("color", el.get("color", ""))
        self._flush(m, el.get(XML_ID), ctx, after=True)
        return pos + dur

    def chord(self, m: etree._Element, el: etree._Element, ctx: _Ctx, pos: Fraction) -> Fraction:
        is_chord = local_name(el) == "chord"
        grace = ctx.grace or el.get("grace")
        dur = Fraction(0) if grace else self._read(el, ctx.ratio)
        notes = [n for n in el.iter(NS + "note") if not n.get("sameas")] if is_chord else [el]
        ids = [el.get(XML_ID)] + ([n.get(XML_ID) for n in notes] if is_chord else [])
        for ident in ids:
            self._flush(m, ident, ctx)
        holder_marks = self.marks.pop(_key_of(el), []) if is_chord else []
        holder_marks += _slur_attr(el, ctx.part.id)
        written = [n for n in notes if n in self.raw_of]
        # a chord's first MusicXML note moves the voice on: one lasting the whole chord goes first
        written.sort(key=lambda n: not grace and self.raw_of[n].duration != dur)
        for k, note_el in enumerate(written):
            raw = self.raw_of[note_el]
            note = etree.SubElement(m, "note", id=encode_id(raw.id))
            color = note_el.get("color") or el.get("color")
            if color:
                note.set("color", color)
            cue = note_el in self.state.cues
            if grace:
                etree.SubElement(note, "grace", slash="no" if grace == "acc" else "yes")
            if cue:
                etree.SubElement(note, "cue")
            if k:
                etree.SubElement(note, "chord")
            pitch = etree.SubElement(note, "pitch")
            step = (note_el.get("pname") or note_el.get("pname.ges") or "c").upper()
            # MusicXML pitch is the true (gestural) octave; an octave line only shifts the display
            octave = _num(note_el.get("oct.ges") or note_el.get("oct")) or 4
            etree.SubElement(pitch, "step").text = step
            alter = raw.midi - raw.transposition - midi_of(step, 0, octave, self.where)
            if alter:
                etree.SubElement(pitch, "alter").text = str(alter)
            etree.SubElement(pitch, "octave").text = str(octave)
            if not grace:
                self.durations.append((etree.SubElement(note, "duration"), raw.duration if k else dur))
            start = raw.tie_start or raw.id in self.tie_starts
            stop = raw.tie_stop or raw.id in self.tie_stops
            if stop and not cue:  # (a cue note has no <tie>: its <tied> shows the tie)
                etree.SubElement(note, "tie", type="stop")
            if start and not cue:
                etree.SubElement(note, "tie", type="start")
            etree.SubElement(note, "voice").text = ctx.voice
            self._type(note, el, grace=bool(grace))
            accid = _written_accid(note_el)
            if accid:
                etree.SubElement(note, "accidental").text = accid
            self._time_mod(note, ctx)
            stem = el.get("stem.dir") or note_el.get("stem.dir")
            if stem in ("up", "down"):
                etree.SubElement(note, "stem").text = stem
            note_staff = _num(note_el.get("staff") or el.get("staff"))
            if len(ctx.part.staves) > 1:
                index = ctx.part.staves.index(note_staff) + 1 if note_staff in ctx.part.staves else ctx.staff_index
                etree.SubElement(note, "staff").text = str(index)
            own = self.marks.pop(_key_of(note_el), []) if note_el.get(XML_ID) else []
            shared = holder_marks if k == 0 else []
            if not is_chord:
                own = self.marks.pop(_key_of(el), []) + own
            elif note_el.get("slur"):
                own = own + _slur_attr(note_el, ctx.part.id)
            beam = next((mk for mk in (own + shared) if mk[0] == "beam"), None)
            if beam is not None:
                etree.SubElement(note, "beam", number="1").text = beam[1]
            self._notations(note, note_el, el if k == 0 else None, own + shared, ctx, first=k == 0,
                            tie=(start, stop))
            self._lyrics(note, note_el)
        for ident in ids:
            self._flush(m, ident, ctx, after=True)
        return pos + dur

    def _type(self, note: etree._Element, el: etree._Element, grace: bool = False) -> None:
        if el.get("dur") is None and local_name(el) == "chord":  # the members carry the duration
            el = next((n for n in el.iter(NS + "note") if n.get("dur")), el)
        dur = el.get("dur")
        name = _TYPES.get(dur or "", "eighth" if grace else None)
        if name:
            etree.SubElement(note, "type").text = name
        dots = _num(el.get("dots")) or sum(1 for c in el if local_name(c) == "dot")
        for _ in range(dots):
            etree.SubElement(note, "dot")

    def _time_mod(self, note: etree._Element, ctx: _Ctx) -> None:
        if ctx.tuplets:
            tm = etree.SubElement(note, "time-modification")
            actual = math.prod(t[0] for t in ctx.tuplets)
            normal = math.prod(t[1] for t in ctx.tuplets)
            etree.SubElement(tm, "actual-notes").text = str(actual)
            etree.SubElement(tm, "normal-notes").text = str(normal)

    def _notations(
        self, note: etree._Element, el: etree._Element, holder: etree._Element | None,
        marks: list[tuple[str, str, str]], ctx: _Ctx, first: bool,
        tie: tuple[bool, bool] = (False, False),
    ) -> None:
        notations = etree.Element("notations")
        if tie[1]:
            etree.SubElement(notations, "tied", type="stop")
        if tie[0]:
            etree.SubElement(notations, "tied", type="start")
        slurs = ctx.part.slurs  # slur id -> number, while only one of its ends is written
        for kind, ident, extra in marks:
            if kind in ("slur-start", "slur-stop"):
                number = slurs.pop(ident, None)
                if number is None:  # the first end met (a cross-staff slur may stop first)
                    used = set(slurs.values())
                    number = slurs[ident] = next(i for i in range(1, 100) if i not in used)
                slur = etree.SubElement(notations, "slur", type=kind[5:], number=str(number))
                if extra in ("above", "below"):
                    slur.set("placement", extra)
            elif kind in ("tuplet-start", "tuplet-stop") and first:
                tup = etree.SubElement(notations, "tuplet", type=kind.split("-")[1], number=ident)
                if kind == "tuplet-start":
                    tup.set("bracket", "yes")
        artics: list[str] = []
        for source in [el] + ([holder] if holder is not None and holder is not el else []):
            artics += (source.get("artic") or "").split()
            artics += [a for c in source if local_name(c) == "artic" for a in (c.get("artic") or "").split()]
        groups: dict[str, etree._Element] = {}
        for artic in artics:
            group, name = _ARTIC.get(artic, ("articulations", "other-articulation"))
            parent = groups.get(group)
            if parent is None:
                parent = groups[group] = etree.SubElement(notations, group)
            child = etree.SubElement(parent, name)
            if name == "other-articulation":
                child.text = artic
        fermata = (holder.get("fermata") if holder is not None else None) or el.get("fermata")
        if fermata:
            etree.SubElement(notations, "fermata", type="inverted" if fermata == "below" else "upright")
        for kind, _form, place in marks:
            if kind == "fermata":
                etree.SubElement(notations, "fermata", type="inverted" if place == "below" else "upright")
        if len(notations):
            note.append(notations)

    def _lyrics(self, note: etree._Element, el: etree._Element) -> None:
        for verse in el.iter(NS + "verse"):
            syls = [s for s in verse.iter(NS + "syl")]
            if not syls:
                continue
            lyric = etree.SubElement(note, "lyric", number=verse.get("n") or "1")
            for k, syl in enumerate(syls):
                if k:
                    etree.SubElement(lyric, "elision")
                con = syl.get("wordpos")
                etree.SubElement(lyric, "syllabic").text = {"i": "begin", "m": "middle", "t": "end"}.get(
                    con or "", "single"
                )
                etree.SubElement(lyric, "text").text = "".join(str(t) for t in syl.itertext())


def _choose(el: etree._Element) -> etree._Element | None:
    children = [c for c in el if isinstance(c.tag, str)]
    for wanted in ("lem", "corr", "reg", "expan"):
        for c in children:
            if local_name(c) == wanted:
                return c
    return children[0] if children else None


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


def mei_to_musicxml(path: str | os.PathLike[str], limit: int | None = None) -> tuple[etree._ElementTree, int]:
    """The MusicXML tree for an MEI file, and how many control events found no note to attach to."""
    p = Path(path)
    tree = parse_xml(read_bytes(p, limit), str(p))
    converter = _Converter(tree, str(p))
    root = converter.run()
    etree.cleanup_namespaces(root)
    return root.getroottree(), converter.unplaced


DOCTYPE = (
    '<!DOCTYPE score-partwise PUBLIC "-//Recordare//DTD MusicXML 4.0 Partwise//EN" '
    '"http://www.musicxml.org/dtds/partwise.dtd">'
)


def mei_musicxml_bytes(path: str | os.PathLike[str]) -> bytes:
    """The MusicXML document (bytes) for an MEI file."""
    tree, _ = mei_to_musicxml(path)
    return bytes(etree.tostring(tree, xml_declaration=True, encoding="UTF-8", doctype=DOCTYPE,
                                pretty_print=True))
