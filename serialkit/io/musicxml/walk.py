"""The MusicXML walk: one pass over a partwise tree giving noteheads with exact time and pitch."""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from fractions import Fraction

from lxml import etree

from serialkit.core.errors import ScoreReadError
from serialkit.io.build import (
    DAMAGE,
    RawNote,
    ScoreParts,
    damaged,
    decode_id,
    midi_of,
    safe_id,
)


@dataclass(slots=True)
class Scan:
    """A scanned MusicXML tree: what the reader needs, plus each pitched note's element."""

    parts: ScoreParts
    root: etree._Element
    elements: list[tuple[etree._Element, RawNote]] = field(default_factory=list)
    assigned: set[str] = field(default_factory=set)
    ends: tuple[bytes, bytes] | None = None
    """The file's bytes around its root element (``document_ends``), for writing it back as it was."""


def _num(text: str | None, where: str, what: str) -> Fraction:
    if text is None or not text.strip():
        raise ScoreReadError(f"{where}: missing {what}")
    try:
        return Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise ScoreReadError(f"{where}: {what} {text!r} is not a number") from None


def _time_signature(attrs: etree._Element, where: str) -> tuple[int, int] | None:
    time = attrs.find("time")
    if time is None or time.find("beats") is None:
        return None
    beats_text = time.findtext("beats") or ""
    unit_text = time.findtext("beat-type") or ""
    try:
        beats = sum(int(b) for b in beats_text.replace("+", " ").split())
        unit = int(unit_text.split("+")[0])
    except ValueError:
        raise ScoreReadError(f"{where}: time signature {beats_text}/{unit_text} is not numeric") from None
    return (beats, unit) if beats > 0 and unit > 0 else None


Pending = tuple[etree._Element, RawNote, int]
"""A pitched note's element, its notehead (onset within its measure) and its measure's index."""


_ZERO = Fraction(0)
_ONE = Fraction(1)
# Fraction's numerator/denominator are Python-level properties over these slots (CPython, PyPy):
# the slots are read directly where the interpreter has them (twice as fast as an attrgetter).
_SLOTTED = hasattr(_ONE, "_numerator") and Fraction(1, 2)._numerator == 1  # type: ignore[attr-defined]
_SUMS: dict[tuple[int, int, int, int], Fraction] = {}


def _plus_slots(a: Fraction, b: Fraction) -> Fraction:
    """``a + b``, remembered: a score adds the same few durations to the same few positions
    over and over, and a dict lookup is several times cheaper than a Fraction sum."""
    key = (a._numerator, a._denominator, b._numerator, b._denominator)  # type: ignore[attr-defined]
    found = _SUMS.get(key)
    if found is None:
        if len(_SUMS) >= 8192:
            _SUMS.clear()
        found = _SUMS[key] = a + b
    return found


def _plus_plain(a: Fraction, b: Fraction) -> Fraction:  # pragma: no cover - Fraction keeps its slots
    return a + b


plus = _plus_slots if _SLOTTED else _plus_plain


def _above_slots(a: Fraction, b: Fraction) -> bool:
    """``a > b`` of two Fractions, by their slots (denominators are positive): a fifth of the
    cost of Fraction's own comparison, which a walk makes twice a measure."""
    return a._numerator * b._denominator > b._numerator * a._denominator  # type: ignore[attr-defined,no-any-return]


above = _above_slots if _SLOTTED else operator.gt
#: A Fraction's numerator, read from its slot where it has one (a C-level call, not the property).
numerator = operator.attrgetter("_numerator" if _SLOTTED else "numerator")


class Walker:
    """State of one walk over a partwise tree."""

    def __init__(self, where: str, scan: Scan) -> None:
        self.where = where
        self.scan = scan
        self.ours = False
        self.existing: set[str] | None = None  # every note id in the file, gathered when first needed
        self.used: set[str] = set()
        self.pending: list[Pending] = []
        self.lengths: list[Fraction] = []
        self.numbers: list[str] = []
        self.meters: dict[int, tuple[int, int]] = {}
        self.divisions = _ONE
        self.div_key = (1, 1)  # the divisions' numerator and denominator: ints hash faster than a Fraction
        self.spelled: dict[tuple[str, str | None, str | None], tuple[int, int]] = {}
        self.transpose: dict[int | None, int] = {}
        self.current: etree._Element | None = None
        self.homes: dict[tuple[str, str], int] = {}
        self.durations: dict[tuple[str | None, tuple[int, int]], Fraction] = {}
        self.exacts: dict[tuple[object, ...], Fraction] = {}
        #: False: a check only (``checked``): no notes kept, only whether one could fail to
        #: become an event (``doubt``) or none was met (``sounded``).
        self.records = True
        self.doubt = False
        self.sounded = 0

    def part(self, pid: str, part: etree._Element) -> None:
        """Walk one part's measures."""
        self.divisions, self.div_key = _ONE, (1, 1)
        self.transpose = {}
        for m_index, measure in enumerate(part.iterfind("measure")):
            number = measure.get("number") or str(m_index + 1)
            if m_index >= len(self.lengths):
                self.lengths.append(_ZERO)
                self.numbers.append(number)
            try:
                longest = (self.measure if self.records else self.check_measure)(pid, measure, m_index, number)
            except DAMAGE as exc:
                raise damaged(self.where, self.current, exc) from None
            if above(longest, self.lengths[m_index]):
                self.lengths[m_index] = longest

    def measure(self, pid: str, measure: etree._Element, m_index: int, number: str) -> Fraction:
        """Walk one measure; returns how far its content reaches."""
        clock = _Clock()
        last_onset = _ZERO
        longest = _ZERO
        counters: dict[tuple[int, str], int] = {}
        run: dict[str, int] = {}  # voice -> its staff, since the last <backup>
        seen: set[str] = set()  # voices met in this measure
        durations, pending = self.durations, self.pending
        for child in measure:
            self.current = child
            tag = child.tag
            if tag == "note":
                fields = _NoteFields(child)
                home = run.get(fields.voice)
                if home is None:
                    home = fields.staff if fields.voice in seen else self.homes.setdefault(
                        (pid, fields.voice), fields.staff
                    )
                    run[fields.voice] = home
                    seen.add(fields.voice)
                onset = last_onset if fields.chord else clock.pos
                if fields.grace or (fields.cue and fields.duration is None):
                    dur = file_dur = _ZERO
                else:
                    file_dur = durations.get((fields.duration, self.div_key)) or self.duration(fields.duration, child)
                    dur = self.exact(fields, file_dur) if fields.tuplet else file_dur
                if not fields.chord:
                    last_onset = clock.pos
                    if clock.seen is None and dur is file_dur:  # clock.advance's usual case, inline
                        clock.pos = clock.file_pos = plus(last_onset, dur)
                    else:
                        clock.advance(file_dur, dur)
                if fields.pitch is None or fields.cue or (not dur and not fields.grace):
                    continue  # a cue note takes its time in the voice but is not played
                key = (fields.staff, fields.voice)
                k = counters[key] = counters.get(key, 0) + 1
                pending.append((child, self.note(child, fields, pid, number, onset, dur, k, home), m_index))
            elif tag == "backup" or tag == "forward":
                if tag == "backup":
                    run = {}
                if clock.pos > longest:
                    longest = clock.pos
                delta = self.duration(child.findtext("duration"), child)
                clock.move(-delta if tag == "backup" else delta)
                if clock.pos < 0:  # clamped to the bar's start, as MuseScore and Finale read it
                    self.scan.parts.warnings.append(
                        f"{self.where}:{child.sourceline}: <backup> goes {-clock.pos} quarter notes "
                        f"before the start of measure {number}; read as going back to the start"
                    )
                    clock.start()
            elif tag == "attributes":
                self.attributes(child, m_index)
        return clock.pos if above(clock.pos, longest) else longest

    def duration(self, text: str | None, child: etree._Element) -> Fraction:
        """A <duration> in quarter notes (exact), cached per text and divisions."""
        key = (text, self.div_key)
        found = self.durations.get(key)
        if found is None:
            found = self.durations[key] = _duration(text, f"{self.where}:{child.sourceline}", self.divisions)
        return found

    def exact(self, fields: _NoteFields, file_dur: Fraction) -> Fraction:
        """The notated duration of a tuplet note when the file rounded it (cached by the texts
        that decide it: the file's duration is its <duration> text in the divisions)."""
        key = (fields.type, fields.dots, fields.actual, fields.normal, fields.duration, self.div_key)
        found = self.exacts.get(key)
        if found is None:
            found = self.exacts[key] = _exact(fields, file_dur, self.divisions)
        return found

    def spelled_pitch(self, pitch: etree._Element, child: etree._Element) -> tuple[int, int]:
        """(MIDI, alter) of a <pitch>, cached by its three texts (``spelling`` reads them anew)."""
        step, alter_text, octave_text = "", None, None
        for sub in pitch:
            t = sub.tag
            if t == "step":
                step = sub.text or ""
            elif t == "alter":
                alter_text = sub.text
            elif t == "octave":
                octave_text = sub.text
        spelled = self.spelled.get((step, alter_text, octave_text))  # (pitch text) → MIDI, alter
        if spelled is None:
            spelled = self.spelling(step, alter_text, octave_text, f"{self.where}:{child.sourceline}")
        return spelled

    def note(
        self, child: etree._Element, fields: _NoteFields, pid: str, number: str,
        onset: Fraction, dur: Fraction, k: int, home: int = 0,
    ) -> RawNote:
        """A RawNote for one pitched <note> (``home``: its voice's own staff)."""
        line = child.sourceline
        nid = child.get("id")
        if nid and self.ours:
            nid = decode_id(nid)
        if not nid or nid in self.used:
            existing = self.existing
            if existing is None:
                existing = self.existing = {v for el in self.scan.root.iter("note") if (v := el.get("id"))}
            nid = _fresh(f"{pid}-m{number}-s{fields.staff}-v{fields.voice}-n{k}", existing, self.used)
            self.scan.assigned.add(nid)
        self.used.add(nid)
        pitch = fields.pitch
        assert pitch is not None
        spelled = self.spelled_pitch(pitch, child)
        shift = self.transpose.get(fields.staff, self.transpose.get(None, 0)) if self.transpose else 0
        # positional, in RawNote's order: id, part, staff, voice, measure, onset, duration, midi,
        # beat, line, grace, tie_start, tie_stop, home, transposition, alter
        return RawNote(nid, pid, fields.staff, fields.voice, number, onset, dur, spelled[0] + shift,
                       plus(onset, _ONE), line if isinstance(line, int) else None, fields.grace,
                       fields.tie_start, fields.tie_stop, home, shift, spelled[1])

    def check_measure(self, pid: str, measure: etree._Element, m_index: int, number: str) -> Fraction:
        """``measure`` for a check (``records`` False): the same walk, raising the same errors in
        the same order, without a RawNote per note: of a note's children only those time and
        pitch need are read (``_NoteFields``' reading of them, inline; a tuplet's note is read
        whole for ``exact``), and ``doubt`` is set where a note might not become an event (a
        negative onset or duration, a MIDI number out of range: ``check_parts`` would say why)."""
        clock = _Clock()
        last_onset = _ZERO
        longest = _ZERO
        durations, field, spelled_of, numer = self.durations, _CHECKED.get, self.spelled.get, numerator
        for child in measure:
            self.current = child
            tag = child.tag
            if tag == "note":
                chord = grace = cue = tuplet = False
                pitch: etree._Element | None = None
                duration: str | None = None
                staff = 1
                for sub in child:
                    kind = field(sub.tag)
                    if kind is None:  # voice, type, dots, ties: no part of a check
                        continue
                    if kind == 0:
                        pitch = sub
                    elif kind == 1:
                        duration = sub.text
                    elif kind == 3:
                        staff = int(sub.text or 1)
                    elif kind == 4:
                        chord = True
                    elif kind == 5:
                        grace = True
                    elif kind == 6:
                        cue = True
                    else:  # 9: <time-modification>
                        tuplet = True
                onset = last_onset if chord else clock.pos
                if grace or (cue and duration is None):
                    dur = file_dur = _ZERO
                else:
                    known = durations.get((duration, self.div_key))  # (a Fraction's truth: a Python call)
                    file_dur = known if known is not None else self.duration(duration, child)
                    dur = self.exact(_NoteFields(child), file_dur) if tuplet else file_dur
                if not chord:
                    last_onset = clock.pos
                    if clock.seen is None and dur is file_dur:  # clock.advance's usual case, inline
                        clock.pos = clock.file_pos = plus(last_onset, dur)
                    else:
                        clock.advance(file_dur, dur)
                if pitch is None or cue or (not numer(dur) and not grace):
                    continue  # a cue note takes its time in the voice but is not played
                # ``note``'s checks: an escaped id serialkit wrote, then the pitch's texts
                self.sounded += 1
                if self.ours:
                    nid = child.get("id")
                    if nid:
                        decode_id(nid)
                # ``spelled_pitch``, inline
                step, alter_text, octave_text = "", None, None
                for sub in pitch:
                    t = sub.tag
                    if t == "step":
                        step = sub.text or ""
                    elif t == "alter":
                        alter_text = sub.text
                    elif t == "octave":
                        octave_text = sub.text
                spelled = spelled_of((step, alter_text, octave_text))
                if spelled is None:
                    spelled = self.spelling(step, alter_text, octave_text, f"{self.where}:{child.sourceline}")
                shift = self.transpose.get(staff, self.transpose.get(None, 0)) if self.transpose else 0
                if not 0 <= spelled[0] + shift <= 127 or numer(dur) < 0 or numer(onset) < 0:
                    self.doubt = True
            elif tag == "backup" or tag == "forward":
                if clock.pos > longest:
                    longest = clock.pos
                delta = self.duration(child.findtext("duration"), child)
                clock.move(-delta if tag == "backup" else delta)
                if clock.pos < 0:  # clamped to the bar's start (a warning, which a check leaves out)
                    clock.start()
            elif tag == "attributes":
                self.attributes(child, m_index)
        return clock.pos if above(clock.pos, longest) else longest

    def spelling(self, step: str, alter_text: str | None, octave_text: str | None, here: str) -> tuple[int, int]:
        """The MIDI number a <pitch>'s texts spell and its alteration (remembered per texts;
        errors name ``here``)."""
        alter = 0 if alter_text is None else round(_num(alter_text, here, "<alter>"))
        if octave_text is None:
            raise ScoreReadError(f"{here}: missing <octave>")
        octave = _int(octave_text, here, "<octave>")
        found = self.spelled[(step, alter_text, octave_text)] = (midi_of(step.strip(), alter, octave, here), alter)
        return found

    def attributes(self, child: etree._Element, m_index: int) -> None:
        """Divisions, transposition and meter."""
        here = f"{self.where}:{child.sourceline}"
        if child.find("divisions") is not None:
            self.divisions = _num(child.findtext("divisions"), here, "<divisions>")
            if self.divisions <= 0:
                raise ScoreReadError(f"{here}: <divisions> must be positive")
            self.div_key = (self.divisions.numerator, self.divisions.denominator)
        for tr in child.iterfind("transpose"):
            semis = int(_num(tr.findtext("chromatic") or "0", here, "<chromatic>"))
            semis += 12 * int(_num(tr.findtext("octave-change") or "0", here, "<octave-change>"))
            staff_no = tr.get("number")
            self.transpose[int(staff_no) if staff_no else None] = semis
        ts = _time_signature(child, here)
        if ts is not None and m_index not in self.meters:
            self.meters[m_index] = ts


# The children of <note> that _NoteFields reads (any other child is skipped with one lookup).
_FIELD = {name: i for i, name in enumerate(
    ("pitch", "duration", "voice", "staff", "chord", "grace", "cue", "type", "dot", "time-modification",
     "tie", "notations"))}

#: Of those, the ones a check reads (``check_measure``), by the same numbers.
_CHECKED = {name: i for name, i in _FIELD.items() if i in (0, 1, 3, 4, 5, 6, 9)}


class _NoteFields:
    """The children of a <note> that matter for time and pitch, found in one pass."""

    __slots__ = ("chord", "grace", "cue", "pitch", "duration", "staff", "voice", "tuplet",
                 "tie_start", "tie_stop", "type", "dots", "actual", "normal")

    def __init__(self, note: etree._Element) -> None:
        # locals while reading, the slots once at the end (a fifth faster than slot updates)
        chord = grace = cue = tuplet = tie_start = tie_stop = False
        pitch: etree._Element | None = None
        duration: str | None = None
        kind_of: str | None = None
        staff, voice, dots, actual, normal = 1, "1", 0, "1", "1"
        field = _FIELD.get
        for sub in note:
            kind = field(sub.tag)
            if kind is None:
                continue
            if kind < 4:  # the children every note has first
                if kind == 0:
                    pitch = sub
                elif kind == 1:
                    duration = sub.text
                elif kind == 2:
                    voice = (sub.text or "1").strip()
                else:
                    staff = int(sub.text or 1)
            elif kind == 7:
                kind_of = (sub.text or "").strip()
            elif kind == 4:
                chord = True
            elif kind == 5:
                grace = True
            elif kind == 6:
                cue = True
            elif kind == 8:
                dots += 1
            elif kind == 9:
                tuplet = True
                actual, normal = _tuplet_texts(sub)
            else:  # <tie> (10), or <notations> (11) holding <tied>s
                for tie in (sub,) if kind == 10 else sub.iterchildren("tied"):
                    starts, stops = _TIE.get(tie.get("type"), _NO_TIE)
                    tie_start = tie_start or starts
                    tie_stop = tie_stop or stops
        self.chord, self.grace, self.cue, self.tuplet = chord, grace, cue, tuplet
        self.tie_start, self.tie_stop = tie_start, tie_stop
        self.pitch, self.duration, self.staff, self.voice = pitch, duration, staff, voice
        self.type, self.dots, self.actual, self.normal = kind_of, dots, actual, normal


_NO_TIE = (False, False)
_TIE: dict[str | None, tuple[bool, bool]] = {"start": (True, False), "stop": (False, True), "continue": (True, True)}
"""A tie's type -> (it starts a tie, it ends one)."""


def _tuplet_texts(modification: etree._Element) -> tuple[str, str]:
    """The texts of a <time-modification>'s first <actual-notes> and <normal-notes> ("1" when
    absent or empty), read from its children (``findtext`` costs a path lookup per call)."""
    actual = normal = None
    for sub in modification:
        tag = sub.tag
        if tag == "actual-notes":
            if actual is None:
                actual = sub.text or "1"
        elif tag == "normal-notes" and normal is None:
            normal = sub.text or "1"
    return actual or "1", normal or "1"


def _int(text: str | None, where: str, what: str) -> int:
    try:
        return int(text or "")
    except ValueError:
        return int(_num(text, where, what))


def _duration(text: str | None, where: str, divisions: Fraction) -> Fraction:
    """A <duration> in quarter notes (exact)."""
    if text is not None:
        try:
            return Fraction(int(text), 1) / divisions
        except ValueError:
            pass
    return _num(text, where, "<duration>") / divisions


_TYPE_VALUE = {
    name: Fraction(2) ** (5 - i)
    for i, name in enumerate(
        "maxima long breve whole half quarter eighth 16th 32nd 64th 128th 256th 512th 1024th".split()
    )
}


def _exact(fields: _NoteFields, file_dur: Fraction, divisions: Fraction) -> Fraction:
    """The note's duration: the file's, or the notated value when the file rounded it."""
    value = _TYPE_VALUE.get(fields.type or "")
    if value is None:
        return file_dur
    nominal = value * (2 - Fraction(1, 2**fields.dots))
    try:
        nominal = nominal * int(fields.normal) / int(fields.actual)
    except (ValueError, ZeroDivisionError):
        return file_dur
    if nominal != file_dur and abs(nominal - file_dur) * divisions < 1:
        return nominal
    return file_dur


class _Clock:
    """The position in a measure, kept exact when a file's durations are rounded (MuseScore and
    Finale write tuplets in divisions that do not divide them): once the exact position drifts
    from the file's, file positions are mapped back to the exact ones they stood for."""

    __slots__ = ("pos", "file_pos", "seen")

    def __init__(self) -> None:
        self.pos = _ZERO
        self.file_pos = _ZERO
        self.seen: dict[Fraction, Fraction] | None = None

    def advance(self, file_dur: Fraction, exact: Fraction) -> None:
        if self.seen is None and (exact is file_dur or exact == file_dur):
            self.pos = self.file_pos = plus(self.pos, exact)
            return
        if self.seen is None:
            self.seen = {}
        self.seen.setdefault(self.file_pos, self.pos)
        self.file_pos += file_dur
        self.pos += exact
        self.seen.setdefault(self.file_pos, self.pos)

    def start(self) -> None:
        """Stand at the measure's start again."""
        self.pos = self.file_pos = _ZERO
        if self.seen is not None:
            self.seen.setdefault(_ZERO, _ZERO)

    def move(self, file_delta: Fraction) -> None:
        if self.seen is None:
            self.pos = self.file_pos = self.pos + file_delta
            return
        self.seen.setdefault(self.file_pos, self.pos)
        self.file_pos += file_delta
        known = self.seen.get(self.file_pos)
        self.pos = known if known is not None else self.pos + file_delta


def _fresh(base: str, existing: set[str], used: set[str]) -> str:
    nid = safe_id(base)
    candidate, j = nid, 1
    while candidate in existing or candidate in used:
        j += 1
        candidate = f"{nid}-{j}"
    return candidate
