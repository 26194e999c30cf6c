"""The MEI → MusicXML converter's layer walk: notes, chords, rests, spaces and the containers
around them (beams, tuplets, grace groups, editorial markup), with their notations and lyrics."""

from __future__ import annotations

import math
from fractions import Fraction

from lxml import etree

from serialkit.core.errors import ScoreReadError
from serialkit.io.build import encode_id, midi_of
from serialkit.io.mei.convert_state import (
    _ARTIC,
    _CONTAINERS,
    _LONG,
    _TYPES,
    ConverterState,
    _clef,
    _Ctx,
    _is_grace,
    _key,
    _key_of,
    _leaves,
    _num,
    _place,
    _slur_attr,
    _written_accid,
)
from serialkit.io.mei.defs import (
    NS,
    XML_ID,
    choose_reading,
    key_signature,
    local_name,
    tuplet_numbers,
)


class LayerWriter(ConverterState):
    """Writes the content of one MEI layer as MusicXML notes, rests and forwards."""

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
                pick = choose_reading(el)
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
