"""MusicXML reader (partwise, timewise, compressed .mxl) on lxml: exact time, sounding pitch."""

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
from serialkit.io.safety import is_zip, parse_xml, read_bytes, read_mxl

ROOTS = ("score-partwise", "score-timewise")


@dataclass(slots=True)
class Scan:
    """A scanned MusicXML tree: what the reader needs, plus each pitched note's element."""

    parts: ScoreParts
    root: etree._Element
    elements: list[tuple[etree._Element, RawNote]] = field(default_factory=list)
    assigned: set[str] = field(default_factory=set)


def load_tree(path: Path, limit: int | None = None) -> tuple[etree._ElementTree, str, str | None]:
    """Parse a MusicXML or .mxl file safely: (tree, place name for messages, .mxl member)."""
    data = read_bytes(path, limit)
    where = str(path)
    member = None
    if is_zip(data):
        data, member = read_mxl(data, where, limit)
        where = f"{path}!{member}"
    tree = parse_xml(data, where)
    root = tree.getroot()
    if not isinstance(root.tag, str) or etree.QName(root).localname not in ROOTS:
        name = etree.QName(root).localname if isinstance(root.tag, str) else "?"
        raise ScoreReadError(
            f"{where}:{root.sourceline or 1}: root element <{name}> is not a MusicXML score "
            "(score-partwise or score-timewise)"
        )
    return tree, where, member


def read_musicxml(path: str | Path, limit: int | None = None) -> Piece:
    """Read a MusicXML (.musicxml, .xml) or compressed (.mxl) score into a Piece."""
    path = Path(path)
    tree, where, member = load_tree(path, limit)
    scan = scan_tree(tree, where)
    return build_piece(scan.parts, path, "mxl" if member else "musicxml")


def _partwise(root: etree._Element) -> etree._Element:
    """The root as score-partwise (timewise scores are regrouped; sourcelines are kept)."""
    if root.tag == "score-partwise":
        return root
    out = etree.Element("score-partwise")
    for child in root:
        if child.tag != "measure":
            out.append(child)
    parts: dict[str, etree._Element] = {}
    for measure in root.iter("measure"):
        for part in measure.findall("part"):
            pid = part.get("id", "")
            target = parts.get(pid)
            if target is None:
                target = parts[pid] = etree.SubElement(out, "part", id=pid)
            m = etree.SubElement(
                target, "measure", {str(k): str(v) for k, v in measure.attrib.items()}
            )
            m.extend(list(part))
    return out


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


def _part_names(root: etree._Element) -> dict[str, str | None]:
    names: dict[str, str | None] = {}
    for sp in root.iterfind("part-list/score-part"):
        text = sp.findtext("part-name")
        names[sp.get("id", "")] = text.strip() if text and text.strip() else None
    return names


def _title(root: etree._Element) -> str | None:
    for path in ("work/work-title", "movement-title"):
        text = root.findtext(path)
        if text and text.strip():
            return text.strip()
    return None


@dataclass(slots=True)
class _Pending:
    element: etree._Element
    note: RawNote
    index: int  # measure index


def scan_tree(tree: etree._ElementTree, where: str) -> Scan:
    """Walk a MusicXML tree: noteheads with exact onsets, sounding pitch and stable ids."""
    root = _partwise(tree.getroot())
    parts = ScoreParts(part_names=_part_names(root), title=_title(root))
    ours = (root.findtext("identification/encoding/software") or "").strip() == "serialkit"
    existing = {el.get("id") for el in root.iter("note") if el.get("id")}
    used: set[str] = set()
    scan = Scan(parts, root)
    pending: list[_Pending] = []
    lengths: list[Fraction] = []
    numbers: list[str] = []
    meters: dict[int, tuple[int, int]] = {}
    for p_index, part in enumerate(root.iterfind("part")):
        pid = part.get("id") or f"P{p_index + 1}"
        parts.part_names.setdefault(pid, None)
        divisions = Fraction(1)
        transpose: dict[int | None, int] = {}
        for m_index, measure in enumerate(part.iterfind("measure")):
            number = measure.get("number") or str(m_index + 1)
            if m_index >= len(lengths):
                lengths.append(Fraction(0))
                numbers.append(number)
            clock = _Clock()
            last_onset = Fraction(0)
            longest = Fraction(0)
            counters: dict[tuple[int, str], int] = {}
            for child in measure:
                tag = child.tag
                if tag == "note":
                    here = f"{where}:{child.sourceline}"
                    grace = child.find("grace") is not None
                    onset = last_onset if child.find("chord") is not None else clock.pos
                    if grace or child.find("cue") is not None and child.find("duration") is None:
                        dur = file_dur = Fraction(0)
                    else:
                        file_dur = _num(child.findtext("duration"), here, "note <duration>") / divisions
                        dur = _exact(child, file_dur, divisions)
                    if child.find("chord") is None:
                        last_onset = clock.pos
                        clock.advance(file_dur, dur)
                    longest = max(longest, clock.pos)
                    pitch = child.find("pitch")
                    if pitch is None or (dur == 0 and not grace):
                        continue
                    staff = int(child.findtext("staff") or 1)
                    voice = (child.findtext("voice") or "1").strip()
                    k = counters[(staff, voice)] = counters.get((staff, voice), 0) + 1
                    nid = child.get("id")
                    if nid and ours:
                        nid = decode_id(nid)
                    if not nid or nid in used:
                        nid = _fresh(f"{pid}-m{number}-s{staff}-v{voice}-n{k}", existing, used)
                        scan.assigned.add(nid)
                    used.add(nid)
                    alter = round(_num(pitch.findtext("alter") or "0", here, "<alter>"))
                    octave = int(_num(pitch.findtext("octave"), here, "<octave>"))
                    step = (pitch.findtext("step") or "").strip()
                    shift = transpose.get(staff, transpose.get(None, 0))
                    ties = {t.get("type") for t in child.iterfind("tie")}
                    ties |= {t.get("type") for t in child.iterfind("notations/tied")}
                    raw = RawNote(
                        id=nid,
                        part=pid,
                        staff=staff,
                        voice=voice,
                        measure=number,
                        onset=onset,
                        duration=dur,
                        midi=midi_of(step, alter, octave, here) + shift,
                        beat=onset + 1,
                        line=line_of(child),
                        grace=grace,
                        tie_start=bool(ties & {"start", "continue"}),
                        tie_stop=bool(ties & {"stop", "continue"}),
                    )
                    pending.append(_Pending(child, raw, m_index))
                elif tag == "backup":
                    here = f"{where}:{child.sourceline}"
                    clock.move(-_num(child.findtext("duration"), here, "<backup> duration") / divisions)
                    if clock.pos < 0:
                        raise ScoreReadError(
                            f"{where}:{child.sourceline}: <backup> goes before the start of measure {number}"
                        )
                elif tag == "forward":
                    here = f"{where}:{child.sourceline}"
                    clock.move(_num(child.findtext("duration"), here, "<forward> duration") / divisions)
                    longest = max(longest, clock.pos)
                elif tag == "attributes":
                    here = f"{where}:{child.sourceline}"
                    if child.find("divisions") is not None:
                        divisions = _num(child.findtext("divisions"), here, "<divisions>")
                        if divisions <= 0:
                            raise ScoreReadError(f"{here}: <divisions> must be positive")
                    for tr in child.iterfind("transpose"):
                        semis = int(_num(tr.findtext("chromatic") or "0", here, "<chromatic>"))
                        semis += 12 * int(_num(tr.findtext("octave-change") or "0", here, "<octave-change>"))
                        staff_no = tr.get("number")
                        transpose[int(staff_no) if staff_no else None] = semis
                    ts = _time_signature(child, here)
                    if ts is not None and m_index not in meters:
                        meters[m_index] = ts
            lengths[m_index] = max(lengths[m_index], longest)
    _finish(parts, scan, pending, lengths, numbers, meters)
    return scan


_TYPE_VALUE = {
    name: Fraction(2) ** (5 - i)
    for i, name in enumerate(
        "maxima long breve whole half quarter eighth 16th 32nd 64th 128th 256th 512th 1024th".split()
    )
}


def _exact(note: etree._Element, file_dur: Fraction, divisions: Fraction) -> Fraction:
    """The note's duration: the file's, or the notated value when the file rounded it."""
    type_name = note.findtext("type")
    if type_name is None:
        return file_dur
    value = _TYPE_VALUE.get(type_name.strip())
    if value is None:
        return file_dur
    dots = len(note.findall("dot"))
    nominal = value * (2 - Fraction(1, 2**dots))
    tm = note.find("time-modification")
    if tm is not None:
        try:
            nominal = nominal * int(tm.findtext("normal-notes") or 1) / int(tm.findtext("actual-notes") or 1)
        except (ValueError, ZeroDivisionError):
            return file_dur
    if nominal != file_dur and abs(nominal - file_dur) * divisions < 1:
        return nominal
    return file_dur


class _Clock:
    """The position in a measure, kept exact when a file's durations are rounded (MuseScore,
    Finale write tuplets in divisions that do not divide them): file positions map to exact ones."""

    __slots__ = ("pos", "file_pos", "seen")

    def __init__(self) -> None:
        self.pos = Fraction(0)
        self.file_pos = Fraction(0)
        self.seen: dict[Fraction, Fraction] = {self.file_pos: self.pos}

    def advance(self, file_dur: Fraction, exact: Fraction) -> None:
        self.file_pos += file_dur
        self.pos += exact
        self.seen.setdefault(self.file_pos, self.pos)

    def move(self, file_delta: Fraction) -> None:
        self.file_pos += file_delta
        known = self.seen.get(self.file_pos)
        self.pos = known if known is not None else self.pos + file_delta
        self.seen.setdefault(self.file_pos, self.pos)


def _fresh(base: str, existing: set[str | None], used: set[str]) -> str:
    nid = safe_id(base)
    candidate, j = nid, 1
    while candidate in existing or candidate in used:
        j += 1
        candidate = f"{nid}-{j}"
    return candidate


def _finish(
    parts: ScoreParts,
    scan: Scan,
    pending: list[_Pending],
    lengths: list[Fraction],
    numbers: list[str],
    meters: dict[int, tuple[int, int]],
) -> None:
    """Place measures on the global timeline and give each notehead its absolute onset."""
    meter = (4, 4)
    onsets: list[Fraction] = []
    t = Fraction(0)
    for i, length in enumerate(lengths):
        if i in meters:
            meter = meters[i]
            parts.time_signatures.append(TimeSignature(meter[0], meter[1], i))
        bar = Fraction(4 * meter[0], meter[1])
        if length == 0:
            length = bar
        if i == 0 and length < bar:
            parts.pickup = length
        onsets.append(t)
        parts.measures.append(Measure(numbers[i], t, length))
        t += length
    for item in pending:
        note = item.note
        note.onset += onsets[item.index]
        parts.notes.append(note)
        scan.elements.append((item.element, note))
