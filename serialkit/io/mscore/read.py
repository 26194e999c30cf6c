"""A native reader of MuseScore's own XML: .mscx, and .mscz (a zip holding one .mscx), versions 3.0-4.x.

MuseScore stores sounding (concert) pitch in ``<pitch>`` and the written spelling in ``<tpc2>``
(``<tpc>`` when the instrument does not transpose); ``<transposeChromatic>`` of the instrument is
sounding minus written.  Time is counted in quarter notes, as in every serialkit reader.
:func:`walk_mscore` is the one walk of a score: the reader builds its Piece from it, and the
writer (``mscore.write``) finds each event's ``<Note>`` through it.
"""

from __future__ import annotations

import io
import os
import zipfile
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from lxml import etree

from serialkit.core.errors import ScoreReadError
from serialkit.core.piece import Measure, Piece, TimeSignature
from serialkit.io.build import RawNote, ScoreParts, build_piece, safe_id
from serialkit.io.files.safety import refuse_entities

__all__ = ["GRACES", "REPEATS", "Walk", "load_mscore", "mscore_file", "mscx_bytes", "musescore_version", "read_mscore", "walk_mscore"]

_TYPES = {
    "long": Fraction(16), "breve": Fraction(8), "whole": Fraction(4), "half": Fraction(2),
    "quarter": Fraction(1), "eighth": Fraction(1, 2), "16th": Fraction(1, 4), "32nd": Fraction(1, 8),
    "64th": Fraction(1, 16), "128th": Fraction(1, 32), "256th": Fraction(1, 64),
    "512th": Fraction(1, 128), "1024th": Fraction(1, 256),
}
GRACES = ("acciaccatura", "appoggiatura", "grace4", "grace8after", "grace16", "grace16after",
          "grace32", "grace32after")
"""The elements that make a ``<Chord>`` a grace chord."""
REPEATS = ("RepeatMeasure", "MeasureRepeat")
"""The elements of a measure that repeats the one before it (MuseScore 3, MuseScore 4)."""
_MAX_BYTES = 64 * 1024 * 1024


@dataclass(slots=True)
class Walk:
    """One walk of a MuseScore score: what the reader collected, and where each notehead stands."""

    root: Any
    version: str
    parts: ScoreParts = field(default_factory=ScoreParts)
    elements: list[tuple[Any, RawNote]] = field(default_factory=list)
    """Each notehead with its ``<Note>``; a note a measure repeat plays, with the repeat element."""


@dataclass(slots=True)
class _Bars:
    """The measures of the first staff: lengths, numbers and onsets in quarter notes."""

    lengths: list[Fraction]
    numbers: list[str]
    onsets: list[Fraction]


def mscx_bytes(path: Path) -> bytes:
    """The .mscx text of a MuseScore file: the file itself, or the score inside a .mscz zip."""
    return mscore_file(path)[0]


def mscore_file(path: Path) -> tuple[bytes, bytes | None, str]:
    """A MuseScore file's .mscx bytes, with the .mscz archive they are in and their member name
    (None and "" for a .mscx file)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ScoreReadError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if not data.startswith(b"PK\x03\x04"):
        return data, None, ""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            name = mscx_member(zf, path)
            info = zf.getinfo(name)
            if info.file_size > _MAX_BYTES:
                raise ScoreReadError(f"{path}: the score inside is {info.file_size} bytes, over the limit")
            return zf.read(name), data, name
    except (zipfile.BadZipFile, EOFError, OSError) as exc:
        raise ScoreReadError(f"{path}: not a readable .mscz archive: {exc}") from None


def mscx_member(zf: zipfile.ZipFile, path: Path) -> str:
    """The archive name of the score in a .mscz: the first .mscx at the top, else the first anywhere."""
    names = [n for n in zf.namelist() if n.endswith(".mscx") and "/" not in n.strip("/")]
    names = names or [n for n in zf.namelist() if n.endswith(".mscx")]
    if not names:
        raise ScoreReadError(f"{path}: the .mscz archive holds no .mscx score")
    return names[0]


def musescore_version(root: Any) -> str:
    """The format version written in ``<museScore version=…>`` ("3.02", "4.20", …)."""
    return str(root.get("version", ""))


def load_mscore(path: Path, data: bytes) -> Any:
    """The parsed root ``<museScore>`` of a score's .mscx bytes, refused unless format 3.0-4.x."""
    refuse_entities(data, str(path))
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, remove_blank_text=False)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise ScoreReadError(f"{path}: not well-formed MuseScore XML: {exc}") from None
    if root.tag != "museScore":
        raise ScoreReadError(f"{path}: the root element is <{root.tag}>, not <museScore>")
    version = musescore_version(root)
    try:
        major = int(version.split(".")[0])
    except ValueError:
        major = 0
    if major < 3:
        raise ScoreReadError(
            f"{path}: MuseScore format version {version or '(none)'}; this reader reads 3.0-4.x"
        )
    return root


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


def _length(el: Any, where: str, measure_len: Fraction) -> Fraction:
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
    walk = walk_mscore(load_mscore(p, mscx_bytes(p)), p)
    piece = build_piece(walk.parts, p, "musescore")
    metadata = dict(piece.metadata or {})
    metadata["musescore_version"] = walk.version
    return piece.copy(metadata=metadata)


def walk_mscore(root: Any, p: Path) -> Walk:
    """Walk a parsed score: parts, bars and meter, and every notehead with its element."""
    score = root.find("Score")
    if score is None:
        raise ScoreReadError(f"{p}: no <Score> element")
    walk = Walk(root, musescore_version(root))
    places = _staff_places(score, p, walk.parts)
    staves = [s for s in score.findall("Staff") if s.get("id") in places]
    if not staves:
        raise ScoreReadError(f"{p}: the score has no staves with music")
    bars = _bars(staves[0], p, walk.parts)
    for staff in staves:
        _walk_staff(staff, places[staff.get("id", "")], bars, p, walk)
    return walk


def _staff_places(score: Any, p: Path, parts: ScoreParts) -> dict[str, tuple[str, int, int]]:
    """Staff id -> (part id, staff in part, transposition); part names and title into ``parts``."""
    places: dict[str, tuple[str, int, int]] = {}
    for pi, part in enumerate(score.findall("Part"), start=1):
        pid = f"P{pi}"
        name = part.findtext("trackName") or part.findtext("Instrument/longName")
        parts.part_names[pid] = name.strip() if name and name.strip() else None
        chromatic = _int(part.findtext("Instrument/transposeChromatic"), f"{p}: part {pi}",
                         "transposeChromatic", 0)
        for si, staff in enumerate(part.findall("Staff"), start=1):
            places[staff.get("id", "")] = (pid, si, chromatic)
    for meta in score.findall("metaTag"):
        if meta.get("name") == "workTitle" and (meta.text or "").strip():
            parts.title = (meta.text or "").strip()
    return places


def _bars(staff: Any, p: Path, parts: ScoreParts) -> _Bars:
    """The bars of the first staff, with their time signatures and pickup, into ``parts``."""
    bars = _Bars([], [], [])
    meter = (4, 4)
    for mi, measure in enumerate(staff.findall("Measure")):
        where = f"{p}: measure {mi + 1}"
        for sig in measure.iter("TimeSig"):
            meter = (_int(sig.findtext("sigN"), where, "sigN"), _int(sig.findtext("sigD"), where, "sigD"))
            if meter[0] <= 0 or meter[1] <= 0:
                raise ScoreReadError(f"{where}: time signature {meter[0]}/{meter[1]} is not positive")
            parts.time_signatures.append(TimeSignature(meter[0], meter[1], mi))
            break
        actual = measure.get("len")
        bars.lengths.append(_fraction(actual, where, "len") * 4 if actual else Fraction(4 * meter[0], meter[1]))
        bars.numbers.append(str(mi + 1))
    t = Fraction(0)
    for i, length in enumerate(bars.lengths):
        bars.onsets.append(t)
        parts.measures.append(Measure(bars.numbers[i], t, length))
        t += length
    if bars.lengths and parts.time_signatures:
        first = parts.time_signatures[0]
        if bars.lengths[0] < Fraction(4 * first.numerator, first.denominator):
            parts.pickup = bars.lengths[0]
    return bars


def _walk_staff(staff: Any, place: tuple[str, int, int], bars: _Bars, p: Path, walk: Walk) -> None:
    """Every notehead of one staff, measure by measure, into ``walk``."""
    previous: list[RawNote] = []
    for mi, measure in enumerate(staff.findall("Measure")):
        if mi >= len(bars.lengths):
            raise ScoreReadError(f"{p}: staff {staff.get('id')} has more measures than the first staff")
        where = f"{p}: staff {staff.get('id')}, measure {bars.numbers[mi]}"
        repeat = _repeat_element(measure)
        if repeat is not None:
            current = _repeat_copies(previous, place, bars, mi)
            walk.elements.extend((repeat, note) for note in current)
        else:
            current = []
            for vi, voice_el in enumerate(measure.findall("voice") or [measure], start=1):
                found = _walk_voice(voice_el, str(vi), place, bars, mi, where)
                walk.elements.extend(found)
                current.extend(note for _, note in found)
        walk.parts.notes.extend(current)
        previous = current


def _repeat_element(measure: Any) -> Any:
    """The measure-repeat element of a measure (None when it has none)."""
    for tag in REPEATS:
        found = measure.find(f"voice/{tag}")
        if found is None:
            found = measure.find(tag)
        if found is not None:
            return found
    return None


def _repeat_copies(previous: list[RawNote], place: tuple[str, int, int], bars: _Bars, mi: int) -> list[RawNote]:
    """The notes a measure repeat plays: the measure before's, shifted by its length."""
    pid, si, _ = place
    shift = bars.onsets[mi] - (bars.onsets[mi - 1] if mi else Fraction(0))
    number = bars.numbers[mi]
    return [
        RawNote(
            safe_id(f"{pid}_s{si}_m{number}_v{note.voice}_n{k}"), pid, si, note.voice, number,
            note.onset + shift, note.duration, note.midi, note.beat, None, note.grace,
            False, False, 0, note.transposition, note.alter,
        )
        for k, note in enumerate(previous, start=1)
    ]


def _walk_voice(
    voice_el: Any, voice: str, place: tuple[str, int, int], bars: _Bars, mi: int, where: str
) -> list[tuple[Any, RawNote]]:
    """The noteheads of one voice of a measure, each with its ``<Note>``."""
    out: list[tuple[Any, RawNote]] = []
    pos = Fraction(0)
    ratios: list[Fraction] = []
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
            dur = _length(el, where, bars.lengths[mi])
            for r in ratios:
                dur *= r
            grace = any(el.find(g) is not None for g in GRACES)
            if grace:
                dur = Fraction(0)
            if tag == "Chord":
                for note_el in el.findall("Note"):
                    raw = _raw_note(note_el, len(out) + 1, voice, place, bars, mi, pos, dur, grace, where)
                    out.append((note_el, raw))
            pos += dur
    return out


def _raw_note(
    note_el: Any, k: int, voice: str, place: tuple[str, int, int], bars: _Bars, mi: int,
    pos: Fraction, dur: Fraction, grace: bool, where: str,
) -> RawNote:
    """The k-th notehead of a voice in a measure, from its ``<Note>``."""
    pid, si, chromatic = place
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
    number = bars.numbers[mi]
    return RawNote(
        safe_id(f"{pid}_s{si}_m{number}_v{voice}_n{k}"), pid, si, voice, number,
        bars.onsets[mi] + pos, dur, pitch, pos, None, grace, tie_start, tie_stop, 0, chromatic, alter,
    )
