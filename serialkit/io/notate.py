"""Notation planning shared by the score writers: parts and staves, bars, ties, tuplets, spelling."""

from __future__ import annotations

import bisect
import functools
import math
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction

from serialkit.core.errors import ScoreWriteError
from serialkit.core.events import VOICE_KEY
from serialkit.core.notenames import habit_of, written_spelling
from serialkit.core.piece import Event, Piece

# (type name, quarter-note value), longest first.
TYPES: tuple[tuple[str, Fraction], ...] = tuple(
    (name, Fraction(2) ** (5 - i))
    for i, name in enumerate(
        "maxima long breve whole half quarter eighth 16th 32nd 64th 128th 256th 512th 1024th".split()
    )
)
_SPELL = (("C", 0), ("C", 1), ("D", 0), ("E", -1), ("E", 0), ("F", 0), ("F", 1), ("G", 0),
          ("A", -1), ("A", 0), ("B", -1), ("B", 0))


@dataclass(frozen=True, slots=True)
class Shape:
    """One written duration: its value, type name, dots and tuplet ratio (actual, normal)."""

    value: Fraction
    type: str
    dots: int
    ratio: tuple[int, int] | None


@dataclass(slots=True)
class Item:
    """One written note, chord or rest inside a bar of one voice."""

    onset: Fraction
    shape: Shape | None  # None for a grace note
    events: list[Event]  # empty for a rest
    tie_stop: bool = False
    tie_start: bool = False
    ids: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Staff:
    """A staff of a part: its number and voice layers (each a list of chord groups)."""

    number: int
    voices: list[tuple[str, list[list[Event]]]] = field(default_factory=list)


@dataclass(slots=True)
class Part:
    """A written part: id, name and staves."""

    id: str
    name: str
    staves: list[Staff] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Bar:
    """A bar to write: number, onset, length, and its meter when it changes here."""

    number: str
    onset: Fraction
    length: Fraction
    meter: tuple[int, int] | None


def spell(midi: int) -> tuple[str, int, int]:
    """(step, alter, octave) of a MIDI pitch, preferring the usual accidentals."""
    step, alter = _SPELL[midi % 12]
    return step, alter, midi // 12 - 1


class Spelling:
    """How the score writers spell a note: as the score it was read from writes it (its reader's
    record of the written note, ``core.notenames.written_spelling``: a G#4 stays a G#4, a Db3 a
    Db3; a note whose pitch changed since keeps its letter where it can), else as ``spell`` does.
    ``shift`` is the transposition of the staff the note is written on (sounding minus written
    semitones): a note read on a staff of another transposition is spelt anew."""

    def __init__(self, piece: Piece) -> None:
        self.habit = habit_of(e.source.alter for e in piece.events if e.source is not None)

    def __call__(self, event: Event, shift: int = 0) -> tuple[str, int, int]:
        """(step, alter, octave) of the note as written on a staff transposed by ``shift``."""
        src = event.source
        if src is not None and src.transposition == shift:
            found = written_spelling(event, self.habit)
            if found is not None and -2 <= found[1] <= 2:
                return found
        return spell(event.midi - shift)


#: diatonic steps of the chromatic intervals within an octave (the tritone as an augmented fourth)
_STEPS = (0, 1, 1, 2, 2, 3, 3, 4, 5, 5, 6, 6)


def diatonic_steps(semis: int) -> int:
    """The diatonic steps (MEI ``trans.diat``, MusicXML ``<diatonic>``) of a transposition of
    ``semis`` semitones, by the usual intervals: -2 (B♭) → -1, -3 (A) → -2, -7 (F) → -4,
    -9 (E♭ alto) → -5, -14 → -8, +3 (E♭) → +2."""
    return 7 * (semis // 12) + _STEPS[semis % 12]


def staff_transposition(events: list[Event]) -> int:
    """Sounding minus written semitones of a staff: what most of its notes were read with (0 for
    notes read without one, e.g. a JSON piece)."""
    found = Counter(e.source.transposition for e in events if e.source is not None)
    return found.most_common(1)[0][0] if found else 0


@functools.lru_cache(maxsize=4096)
def shapes(duration: Fraction) -> tuple[Shape, ...]:
    """Split a duration into written values (dotted, and tuplets for non-binary values)."""
    if duration <= 0:
        return ()
    den = duration.denominator
    odd = den // (den & -den)
    ratio: tuple[int, int] | None = None
    nominal = duration
    if odd > 1:
        normal = 1 << (odd.bit_length() - 1)
        ratio = (odd, normal)
        nominal = duration * odd / normal
    out: list[Shape] = []
    rest = nominal
    while rest > 0:
        found = next(((n, v) for n, v in TYPES if v <= rest), None)
        if found is None:
            raise ScoreWriteError(f"duration {duration} needs a value shorter than a 1024th note")
        name, value = found
        dots, total = 0, value
        while dots < 3 and total + value / 2 ** (dots + 1) <= rest:
            dots += 1
            total += value / 2**dots
        scale = Fraction(ratio[1], ratio[0]) if ratio else Fraction(1)
        out.append(Shape(total * scale, name, dots, ratio))
        rest -= total
    return tuple(out)


def layout(piece: Piece) -> list[Part]:
    """Parts, staves and voices: ``part/staff/voice`` keys keep their structure, others get a part each."""
    structured = all(VOICE_KEY.match(v) for v in piece.voice_ids)
    parts: dict[str, Part] = {}
    groups = {vid: _layers(evts) for vid, evts in piece.by_voice().items()}
    for index, voice in enumerate(piece.voices):
        if structured:
            match = VOICE_KEY.match(voice.id)
            assert match is not None
            pid, staff_no, vname = match.group(1), int(match.group(2)), match.group(3)
        else:
            pid, staff_no, vname = f"P{index + 1}", 1, "1"
        part = parts.get(pid)
        if part is None:
            name = voice.name or (pid if structured else voice.id)
            part = parts[pid] = Part(pid, name)
        staff = next((s for s in part.staves if s.number == staff_no), None)
        if staff is None:
            staff = Staff(staff_no)
            part.staves.append(staff)
            part.staves.sort(key=lambda s: s.number)
        layers = groups.get(voice.id, [])
        for k, layer in enumerate(layers or [[]]):
            staff.voices.append((vname if k == 0 else f"{vname}{k + 1}", layer))
    for part in parts.values():
        for staff in part.staves:
            staff.voices = _number_voices(staff.voices)
    return list(parts.values())


def _number_voices(voices: list[tuple[str, list[list[Event]]]]) -> list[tuple[str, list[list[Event]]]]:
    """Voice names as MusicXML wants them: keep distinct names, renumber clashes."""
    seen: set[str] = set()
    out = []
    for name, layer in voices:
        candidate = name
        n = 1
        while candidate in seen:
            n += 1
            candidate = f"{name}{n}"
        seen.add(candidate)
        out.append((candidate, layer))
    return out


def _layers(events: list[Event]) -> list[list[list[Event]]]:
    """Split a voice into non-overlapping layers of chord groups (same onset and duration)."""
    groups: dict[tuple[Fraction, Fraction, bool], list[Event]] = {}
    for e in events:
        groups.setdefault((e.onset, e.duration, not e.grace), []).append(e)
    layers: list[list[list[Event]]] = []
    ends: list[Fraction] = []
    for key in sorted(groups):
        onset, duration, _ = key
        for i, end in enumerate(ends):
            if onset >= end:
                layers[i].append(groups[key])
                ends[i] = onset + duration
                break
        else:
            layers.append([groups[key]])
            ends.append(onset + duration)
    return layers


def bars(piece: Piece) -> list[Bar]:
    """The bars to write, extended until every onset (grace notes included) falls inside one."""
    out: list[Bar] = []
    meters = {ts.bar: (ts.numerator, ts.denominator) for ts in piece.time_signatures}
    current = meters.get(0, (4, 4))
    last_onset = max((e.onset for e in piece.events), default=Fraction(0))
    end = max(piece.end, last_onset)
    listed = list(piece.bar_list())
    index = 0
    t = Fraction(0)
    while index < len(listed) or t < end or (t == end and any(e.onset == end for e in piece.events)):
        meter = meters.get(index)
        if meter is not None:
            current = meter
        if index < len(listed):
            number, length = listed[index].number, listed[index].duration
        else:
            number = str(int(out[-1].number) + 1) if out and out[-1].number.isdigit() else str(index + 1)
            length = Fraction(4 * current[0], current[1])
        if length <= 0:
            raise ScoreWriteError(f"bar {number} has length {length}")
        out.append(Bar(number, t, length, current if (index == 0 or meter is not None) else None))
        t += length
        index += 1
    return out


def plan_layer(layer: list[list[Event]], bar_list: list[Bar], fill: bool) -> list[list[Item]]:
    """The items of one voice layer in every bar (one pass over the layer)."""
    starts = [b.onset for b in bar_list]
    per_bar: list[list[list[Event]]] = [[] for _ in bar_list]
    for group in layer:
        first = group[0]
        i = max(0, bisect.bisect_right(starts, first.onset) - 1)
        if first.grace:
            per_bar[i].append(group)
            continue
        while i < len(bar_list) and bar_list[i].onset < first.end:
            per_bar[i].append(group)
            i += 1
    return [items_in_bar(per_bar[i], bar, fill) for i, bar in enumerate(bar_list)]


def items_in_bar(layer: list[list[Event]], bar: Bar, fill: bool) -> list[Item]:
    """The notes, chords and rests one voice layer writes in a bar (ties split at the barline)."""
    start, stop = bar.onset, bar.onset + bar.length
    out: list[Item] = []
    cursor = start
    for group in layer:
        first = group[0]
        if first.grace:
            if start <= first.onset < stop:
                if first.onset > cursor:
                    out.extend(_rests(cursor, first.onset - cursor))
                    cursor = first.onset
                out.append(Item(first.onset, None, group))
            continue
        if first.end <= start or first.onset >= stop:
            continue
        seg_start, seg_end = max(first.onset, start), min(first.end, stop)
        if seg_start > cursor:
            out.extend(_rests(cursor, seg_start - cursor))
        pieces = shapes(seg_end - seg_start)
        t = seg_start
        for shape in pieces:
            out.append(
                Item(
                    t,
                    shape,
                    group,
                    tie_stop=t > first.onset,
                    tie_start=t + shape.value < first.end,
                )
            )
            t += shape.value
        cursor = seg_end
    if out or fill:
        if cursor < stop:
            out.extend(_rests(cursor, stop - cursor))
    return out


def tuplet_marks(items: list[Item]) -> list[tuple[bool, bool]]:
    """(starts a tuplet, ends a tuplet) per item: runs of one ratio, closed when back on the grid."""
    marks = [(False, False)] * len(items)
    i = 0
    while i < len(items):
        shape = items[i].shape
        ratio = shape.ratio if shape is not None else None
        if ratio is None:
            i += 1
            continue
        j, total = i, Fraction(0)
        while j < len(items):
            s = items[j].shape
            if s is None or s.ratio != ratio:
                break
            total += s.value
            j += 1
            den = total.denominator
            if den & (den - 1) == 0:  # a whole number of beats again
                break
        marks[i] = (True, marks[i][1])
        marks[j - 1] = (marks[j - 1][0], True)
        i = j
    return marks


_BEAMABLE = frozenset("eighth 16th 32nd 64th 128th 256th 512th 1024th".split())


def beat_unit(meter: tuple[int, int]) -> Fraction:
    """The beat that beams group by: a dotted quarter in compound meters (6/8, 9/8, 12/8), else
    the quarter (or the meter's unit when shorter)."""
    beats, unit = meter
    if unit >= 8 and beats % 3 == 0 and beats > 3:
        return Fraction(12, unit)
    return min(Fraction(1), Fraction(4, unit))


def beam_marks(items: list[Item], beat_start: Fraction, beat: Fraction) -> list[str | None]:
    """``begin``/``continue``/``end`` per item: eighths and shorter within one beat, rests break."""
    marks: list[str | None] = [None] * len(items)
    group: list[int] = []
    group_beat: int | None = None

    def close() -> None:
        if len(group) >= 2:
            marks[group[0]] = "begin"
            for k in group[1:-1]:
                marks[k] = "continue"
            marks[group[-1]] = "end"
        group.clear()

    for i, item in enumerate(items):
        shape = item.shape
        if shape is None:  # grace notes do not join or break a beam
            continue
        index = (item.onset - beat_start) // beat
        if not item.events or shape.type not in _BEAMABLE or index != group_beat:
            close()
        group_beat = index
        if item.events and shape.type in _BEAMABLE:
            group.append(i)
    close()
    return marks


def _rests(onset: Fraction, duration: Fraction) -> list[Item]:
    out = []
    for shape in shapes(duration):
        out.append(Item(onset, shape, []))
        onset += shape.value
    return out


def divisions(values: list[Fraction]) -> int:
    """Divisions per quarter note that make every value a whole number."""
    return math.lcm(1, *(v.denominator for v in values))


def clef_for(events: list[Event], shift: int = 0) -> tuple[str, int]:
    """Treble or bass clef from a staff's mean written pitch (``shift``: the staff's transposition)."""
    if not events:
        return ("G", 2)
    mean = sum(e.midi for e in events) / len(events) - shift
    return ("G", 2) if mean >= 58 else ("F", 4)
