"""The MuseScore fixture score, composed from row forms so every note's label is known.

``python -m tests.plugins.musescore_fixture`` rewrites ``fixtures/musescore/three-voices.musicxml``;
``expected_labels()`` gives each note's label from the composition plan, not from serialkit.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from serialkit.core.rows import Row, RowForm, position_label

ROW = "C B G Ab Eb Db D Bb F# F E A"
DIVISIONS = 6
FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "musescore" / "three-voices.musicxml"
_STEPS = [("C", 0), ("C", 1), ("D", 0), ("D", 1), ("E", 0), ("F", 0), ("F", 1), ("G", 0),
          ("G", 1), ("A", 0), ("A", 1), ("B", 0)]
_TYPES = {Fraction(4): ("whole", 0), Fraction(3): ("half", 1), Fraction(2): ("half", 0),
          Fraction(1): ("quarter", 0), Fraction(1, 3): ("eighth", 0)}

Slot = tuple[Fraction, tuple[int, ...]]  # duration in quarters, row positions (empty = rest)


@dataclass(frozen=True)
class Line:
    """One notated voice stating one row form."""

    part: int
    staff: int
    voice: str
    form: str
    center: int
    slots: tuple[Slot, ...]


def _q(n: int | str) -> Fraction:
    return Fraction(n)


LINES = (
    Line(0, 1, "1", "P0", 72, tuple((_q(1), (i,)) for i in range(12)) + ((_q(4), ()),)),
    Line(1, 1, "1", "I0", 74, (
        (_q(2), ()), (_q(1), (0,)), (_q(1), (1,)),
        (_q(1), (2,)), (_q(1), (3,)), (_q(1), (4,)), (_q(1), (5,)),
        (_q(1), (6, 7)), (_q(1), (8,)), (_q(1), (9,)), (_q(1), (10, 11)),
        (_q(4), ()),
    )),
    Line(1, 2, "5", "R5", 50, (
        (_q(4), ()),
        (_q(1), (0,)), (_q(1), (1,)), (_q(1), (2,)), (_q(1), (3,)),
        (_q(1), (4,)), (_q(1), (5,)), (_q(1), (6,)), (_q(1), (7,)),
        (_q("1/3"), (8,)), (_q("1/3"), (9,)), (_q("1/3"), (10,)), (_q(3), (11,)),
    )),
)
PARTS = (("P1", "Violin", 1), ("P2", "Piano", 2))


def _midi(pc: int, center: int) -> int:
    low = center - 6
    return low + (pc - low) % 12


def plan() -> list[dict[str, object]]:
    """Every note of the fixture: part index, staff, onset, MIDI and its intended label."""
    row = Row.parse(ROW)
    notes: list[dict[str, object]] = []
    for line in LINES:
        form = RowForm.parse(line.form)
        pcs = row.form(form)
        onset = Fraction(0)
        for duration, positions in line.slots:
            for pos in positions:
                notes.append({"part_index": line.part, "staff": line.staff, "onset": onset,
                              "midi": _midi(pcs[pos], line.center),
                              "label": position_label(form, pos)})
            onset += duration
    return notes


def _note_xml(
    midi: int | None, duration: Fraction, line: Line, chord: bool, tuplet: str | None = None
) -> str:
    divs = int(duration * DIVISIONS)
    kind, dots = _TYPES[duration]
    parts = ["<note>"]
    if chord:
        parts.append("<chord/>")
    if midi is None:
        parts.append('<rest measure="yes"/>' if duration == 4 else "<rest/>")
    else:
        step, alter = _STEPS[midi % 12]
        alter_xml = f"<alter>{alter}</alter>" if alter else ""
        parts.append(f"<pitch><step>{step}</step>{alter_xml}<octave>{midi // 12 - 1}</octave></pitch>")
    parts.append(f"<duration>{divs}</duration><voice>{line.voice}</voice>")
    if midi is not None or duration != 4:
        parts.append(f"<type>{kind}</type>" + "<dot/>" * dots)
    if duration == Fraction(1, 3):
        parts.append("<time-modification><actual-notes>3</actual-notes>"
                     "<normal-notes>2</normal-notes></time-modification>")
    if PARTS[line.part][2] > 1:
        parts.append(f"<staff>{line.staff}</staff>")
    if tuplet:
        parts.append(f'<notations><tuplet type="{tuplet}"/></notations>')
    parts.append("</note>")
    return "".join(parts)


def _measures(line: Line, row: Row) -> list[list[str]]:
    pcs = row.form(line.form)
    bars: list[list[str]] = [[] for _ in range(4)]
    onset = Fraction(0)
    for duration, positions in line.slots:
        bar = int(onset // 4)
        if not positions:
            bars[bar].append(_note_xml(None, duration, line, False))
        tuplet = None
        if duration.denominator == 3:  # triplets start and stop on the beat
            tuplet = "start" if onset.denominator == 1 else (
                "stop" if (onset + duration).denominator == 1 else None)
        for i, pos in enumerate(positions):
            bars[bar].append(
                _note_xml(_midi(pcs[pos], line.center), duration, line, i > 0, tuplet)
            )
        onset += duration
    return bars


def build() -> str:
    """The fixture's MusicXML text."""
    row = Row.parse(ROW)
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<score-partwise version="4.0">',
           "<work><work-title>serialkit MuseScore fixture</work-title></work>",
           "<part-list>"]
    for pid, name, _ in PARTS:
        out.append(f'<score-part id="{pid}"><part-name>{name}</part-name></score-part>')
    out.append("</part-list>")
    for index, (pid, _, staves) in enumerate(PARTS):
        lines = [line for line in LINES if line.part == index]
        bars = [_measures(line, row) for line in lines]
        out.append(f'<part id="{pid}">')
        for m in range(4):
            out.append(f'<measure number="{m + 1}">')
            if m == 0:
                clefs = ("<clef number=\"1\"><sign>G</sign><line>2</line></clef>"
                         "<clef number=\"2\"><sign>F</sign><line>4</line></clef>"
                         if staves == 2 else "<clef><sign>G</sign><line>2</line></clef>")
                staves_xml = f"<staves>{staves}</staves>" if staves > 1 else ""
                out.append(f"<attributes><divisions>{DIVISIONS}</divisions><key><fifths>0</fifths>"
                           f"</key><time><beats>4</beats><beat-type>4</beat-type></time>"
                           f"{staves_xml}{clefs}</attributes>")
            for i, line_bars in enumerate(bars):
                if i > 0:
                    out.append(f"<backup><duration>{4 * DIVISIONS}</duration></backup>")
                out.extend(line_bars[m])
            out.append("</measure>")
        out.append("</part>")
    out.append("</score-partwise>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(build(), encoding="utf-8")
    print(f"wrote {FIXTURE}")
