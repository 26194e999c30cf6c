"""A native reader of MuseScore's own XML: .mscx, and .mscz (a zip holding one .mscx), versions 3.0-4.x.

MuseScore stores sounding (concert) pitch in ``<pitch>`` and the written spelling in ``<tpc2>``
(``<tpc>`` when the instrument does not transpose); ``<transposeChromatic>`` of the instrument is
sounding minus written.  Time is counted in quarter notes, as in every serialkit reader.
"""

from __future__ import annotations

import io
import os
import zipfile
from fractions import Fraction
from pathlib import Path
from xml.etree import ElementTree as ET

from serialkit.core.errors import ScoreReadError
from serialkit.core.piece import Measure, Piece, TimeSignature
from serialkit.io.build import RawNote, ScoreParts, build_piece, safe_id

_TYPES = {
    "long": Fraction(16), "breve": Fraction(8), "whole": Fraction(4), "half": Fraction(2),
    "quarter": Fraction(1), "eighth": Fraction(1, 2), "16th": Fraction(1, 4), "32nd": Fraction(1, 8),
    "64th": Fraction(1, 16), "128th": Fraction(1, 32), "256th": Fraction(1, 64),
    "512th": Fraction(1, 128), "1024th": Fraction(1, 256),
}
_GRACE = {"acciaccatura", "appoggiatura", "grace4", "grace8after", "grace16", "grace16after",
          "grace32", "grace32after"}
_REPEAT = ("RepeatMeasure", "MeasureRepeat")
_MAX_BYTES = 64 * 1024 * 1024


def mscx_bytes(path: Path) -> bytes:
    """The .mscx text of a MuseScore file: the file itself, or the score inside a .mscz zip."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ScoreReadError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if not data.startswith(b"PK\x03\x04"):
        return data
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = [n for n in zf.namelist() if n.endswith(".mscx") and "/" not in n.strip("/")]
            names = names or [n for n in zf.namelist() if n.endswith(".mscx")]
            if not names:
                raise ScoreReadError(f"{path}: the .mscz archive holds no .mscx score")
            info = zf.getinfo(names[0])
            if info.file_size > _MAX_BYTES:
                raise ScoreReadError(f"{path}: the score inside is {info.file_size} bytes, over the limit")
            return zf.read(names[0])
    except (zipfile.BadZipFile, EOFError, OSError) as exc:
        raise ScoreReadError(f"{path}: not a readable .mscz archive: {exc}") from None


def musescore_version(root: ET.Element) -> str:
    """The format version written in ``<museScore version=…>`` ("3.02", "4.20", …)."""
    return root.get("version", "")


def _fraction(text: str | None, where: str, what: str) -> Fraction:
    try:
        return Fraction((text or "").strip())
    except (ValueError, ZeroDivisionError):
        raise ScoreReadError(f"{where}: {what} {text!r} is not a number or fraction") from None


def _int(text: str | None, where: str, what: str, default: int | None = None) -> int:
    if text is None and default is not None:
        return default
    try:
        return int((text or "").strip())
    except ValueError:
        raise ScoreReadError(f"{where}: {what} {text!r} is not a whole number") from None


def _alter(tpc: int) -> int:
    """The alteration of a tonal pitch class (14 = C, 13..19 naturals, +7 per sharp)."""
    return (tpc + 1) // 7 - 2


def _length(el: ET.Element, where: str, measure_len: Fraction) -> Fraction:
    kind = (el.findtext("durationType") or "").strip()
    if kind == "measure":
        text = el.findtext("duration")
        return _fraction(text, where, "duration") * 4 if text else measure_len
    base = _TYPES.get(kind)
    if base is None:
        raise ScoreReadError(f"{where}: durationType {kind!r} is not a MuseScore duration")
    dots = _int(el.findtext("dots"), where, "dots", 0)
    return base * (2 - Fraction(1, 2 ** dots))


def read_mscore(path: str | os.PathLike[str]) -> Piece:
    """Read a MuseScore 3.x/4.x file (.mscx or .mscz) without running MuseScore."""
    p = Path(path)
    data = mscx_bytes(p)
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise ScoreReadError(f"{p}: not well-formed MuseScore XML: {exc}") from None
    if root.tag != "museScore":
        raise ScoreReadError(f"{p}: the root element is <{root.tag}>, not <museScore>")
    version = musescore_version(root)
    try:
        major = int(version.split(".")[0])
    except ValueError:
        major = 0
    if major < 3:
        raise ScoreReadError(
            f"{p}: MuseScore format version {version or '(none)'}; this reader reads 3.0-4.x"
        )
    score = root.find("Score")
    if score is None:
        raise ScoreReadError(f"{p}: no <Score> element")
    parts = ScoreParts()
    staff_place: dict[str, tuple[str, int, int]] = {}  # staff id -> (part id, staff in part, transposition)
    for pi, part in enumerate(score.findall("Part"), start=1):
        pid = f"P{pi}"
        name = part.findtext("trackName") or part.findtext("Instrument/longName")
        parts.part_names[pid] = name.strip() if name and name.strip() else None
        chromatic = _int(part.findtext("Instrument/transposeChromatic"), f"{p}: part {pi}",
                         "transposeChromatic", 0)
        for si, staff in enumerate(part.findall("Staff"), start=1):
            staff_place[staff.get("id", "")] = (pid, si, chromatic)
    for meta in score.findall("metaTag"):
        if meta.get("name") == "workTitle" and (meta.text or "").strip():
            parts.title = (meta.text or "").strip()
    staves = [s for s in score.findall("Staff") if s.get("id") in staff_place]
    if not staves:
        raise ScoreReadError(f"{p}: the score has no staves with music")
    lengths: list[Fraction] = []
    numbers: list[str] = []
    meter = (4, 4)
    for mi, measure in enumerate(staves[0].findall("Measure")):
        for sig in measure.iter("TimeSig"):
            where = f"{p}: measure {mi + 1}"
            meter = (_int(sig.findtext("sigN"), where, "sigN"), _int(sig.findtext("sigD"), where, "sigD"))
            if meter[0] <= 0 or meter[1] <= 0:
                raise ScoreReadError(f"{where}: time signature {meter[0]}/{meter[1]} is not positive")
            parts.time_signatures.append(TimeSignature(meter[0], meter[1], mi))
            break
        nominal = Fraction(4 * meter[0], meter[1])
        actual = measure.get("len")
        lengths.append(_fraction(actual, f"{p}: measure {mi + 1}", "len") * 4 if actual else nominal)
        numbers.append(str(mi + 1))
    onsets: list[Fraction] = []
    t = Fraction(0)
    for i, length in enumerate(lengths):
        onsets.append(t)
        parts.measures.append(Measure(numbers[i], t, length))
        t += length
    if lengths and parts.time_signatures:
        first = parts.time_signatures[0]
        if lengths[0] < Fraction(4 * first.numerator, first.denominator):
            parts.pickup = lengths[0]
    for staff in staves:
        pid, si, chromatic = staff_place[staff.get("id", "")]
        previous: list[tuple[str, RawNote]] = []
        for mi, measure in enumerate(staff.findall("Measure")):
            if mi >= len(lengths):
                raise ScoreReadError(f"{p}: staff {staff.get('id')} has more measures than the first staff")
            where = f"{p}: staff {staff.get('id')}, measure {numbers[mi]}"
            voices = measure.findall("voice") or [measure]
            current: list[tuple[str, RawNote]] = []
            if any(measure.find(f"voice/{tag}") is not None or measure.find(tag) is not None for tag in _REPEAT):
                shift = onsets[mi] - (onsets[mi - 1] if mi else Fraction(0))
                for voice, note in previous:
                    k = len(current) + 1
                    copy = RawNote(
                        safe_id(f"{pid}_s{si}_m{numbers[mi]}_v{voice}_n{k}"), pid, si, voice, numbers[mi],
                        note.onset + shift, note.duration, note.midi, note.beat, None, note.grace,
                        False, False, 0, note.transposition, note.alter,
                    )
                    current.append((voice, copy))
                parts.notes.extend(n for _, n in current)
                previous = current
                continue
            for vi, voice_el in enumerate(voices, start=1):
                voice = str(vi)
                pos = Fraction(0)
                ratios: list[Fraction] = []
                k = 0
                for el in voice_el:
                    tag = el.tag
                    if tag == "location":
                        pos += _fraction(el.findtext("fractions"), where, "location") * 4
                    elif tag == "Tuplet":
                        normal = _int(el.findtext("normalNotes"), where, "normalNotes")
                        played = _int(el.findtext("actualNotes"), where, "actualNotes")
                        if normal <= 0 or played <= 0:
                            raise ScoreReadError(f"{where}: tuplet {played}:{normal} is not positive")
                        ratios.append(Fraction(normal, played))
                    elif tag == "endTuplet":
                        if ratios:
                            ratios.pop()
                    elif tag in ("Chord", "Rest"):
                        dur = _length(el, where, lengths[mi])
                        for r in ratios:
                            dur *= r
                        grace = any(el.find(g) is not None for g in _GRACE)
                        if grace:
                            dur = Fraction(0)
                        if tag == "Chord":
                            for note_el in el.findall("Note"):
                                k += 1
                                pitch = _int(note_el.findtext("pitch"), where, "pitch")
                                tpc_text = note_el.findtext("tpc2") or note_el.findtext("tpc")
                                alter = _alter(_int(tpc_text, where, "tpc")) if tpc_text else 0
                                tie_start = tie_stop = False
                                for sp in note_el.findall("Spanner"):
                                    if sp.get("type") == "Tie":
                                        tie_start |= sp.find("next") is not None
                                        tie_stop |= sp.find("prev") is not None
                                if note_el.find("Tie") is not None:
                                    tie_start = True
                                if note_el.find("endSpanner") is not None:
                                    tie_stop = True
                                raw = RawNote(
                                    safe_id(f"{pid}_s{si}_m{numbers[mi]}_v{voice}_n{k}"), pid, si, voice,
                                    numbers[mi], onsets[mi] + pos, dur, pitch, pos, None, grace,
                                    tie_start, tie_stop, 0, chromatic, alter,
                                )
                                parts.notes.append(raw)
                                current.append((voice, raw))
                        pos += dur
            previous = current
    piece = build_piece(parts, p, "musescore")
    metadata = dict(piece.metadata or {})
    metadata["musescore_version"] = version
    return piece.copy(metadata=metadata)
