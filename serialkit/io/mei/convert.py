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
from fractions import Fraction
from pathlib import Path

from lxml import etree

from serialkit.core.errors import ScoreReadError
from serialkit.io.files.safety import parse_xml, read_bytes
from serialkit.io.mei.convert_notes import LayerWriter
from serialkit.io.mei.convert_state import (
    _DYNAMICS,
    _clef,
    _Ctx,
    _key,
    _num,
    _Part,
    _set_staff,
    _StaffDef,
    _with_staff,
)
from serialkit.io.mei.defs import (
    NS,
    XML_ID,
    choose_reading,
    key_signature,
    local_name,
)
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


class _Converter(LayerWriter):
    """The walk over an MEI score: definitions, measures, control events, the part list."""

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
                pick = choose_reading(child)
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
