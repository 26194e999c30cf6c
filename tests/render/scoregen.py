"""A synthetic twelve-tone score of any length (MusicXML) with a matching report and certificate."""

from __future__ import annotations

import random
from typing import Any

ROW = (0, 11, 7, 8, 3, 1, 2, 10, 6, 5, 4, 9)
_STEPS = {0: ("C", 0), 1: ("C", 1), 2: ("D", 0), 3: ("E", -1), 4: ("E", 0), 5: ("F", 0),
          6: ("F", 1), 7: ("G", 0), 8: ("A", -1), 9: ("A", 0), 10: ("B", -1), 11: ("B", 0)}
_CLEFS = (("G", 2, 72), ("G", 2, 64), ("C", 3, 57), ("F", 4, 45))
_RUNGS = ("trim", "yield", "retime", "patch", "rewrite")
# (duration in eighths, type) patterns that fill a 4/4 bar (8 eighths)
_BARS = ((2, 2, 2, 2), (1, 1, 2, 2, 1, 1), (4, 2, 1, 1), (1, 1, 1, 1, 2, 2), (3, 1, 2, 2))
_TYPES = {1: ("eighth", False), 2: ("quarter", False), 3: ("quarter", True), 4: ("half", False)}


def _form(kind: str, n: int) -> tuple[int, ...]:
    prime = [(p + n) % 12 for p in ROW]
    inv = [(2 * ROW[0] - p + n) % 12 for p in ROW]
    return {"P": prime, "I": inv, "R": prime[::-1], "RI": inv[::-1]}[kind]  # type: ignore[return-value]


def _note(nid: str, midi: int, eighths: int, accid: dict[int, int]) -> str:
    step, alter = _STEPS[midi % 12]
    octave = midi // 12 - 1
    typ, dot = _TYPES[eighths]
    alt = f"<alter>{alter}</alter>" if alter else ""
    key = midi - alter
    shown = ""
    if accid.get(key, 0) != alter:
        shown = "<accidental>" + {1: "sharp", -1: "flat", 0: "natural"}[alter] + "</accidental>"
    accid[key] = alter
    return (f'<note id="{nid}"><pitch><step>{step}</step>{alt}<octave>{octave}</octave></pitch>'
            f"<duration>{eighths}</duration><voice>1</voice><type>{typ}</type>"
            f"{'<dot/>' if dot else ''}{shown}</note>")


def row_score(n_notes: int, parts: int = 4, seed: int = 0) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(MusicXML text, check report, certificate) for about ``n_notes`` notes in ``parts`` parts."""
    rng = random.Random(seed)
    per_part = n_notes // parts
    part_xml: list[str] = []
    labels: dict[str, str | None] = {}
    violations: list[dict[str, Any]] = []
    unexplained: list[str] = []
    cert: list[dict[str, Any]] = []
    bars = None
    for p in range(parts):
        sign, line, centre = _CLEFS[p % len(_CLEFS)]
        measures: list[str] = []
        count = 0
        bar = 0
        pcs: list[tuple[int, str, int]] = []
        while count < per_part or (bars is not None and bar < bars):
            if bars is not None and bar >= bars:
                break
            pattern = rng.choice(_BARS)
            accid: dict[int, int] = {}
            notes = []
            for eighths in pattern:
                if not pcs:
                    kind = rng.choice(("P", "I", "R", "RI"))
                    n = rng.randrange(12)
                    pcs = [(pc, kind + str(n), i) for i, pc in enumerate(_form(kind, n))][::-1]
                pc, form, pos = pcs.pop()
                midi = centre - 6 + (pc - centre + 6) % 12
                nid = f"p{p + 1}n{count + 1}"
                notes.append(_note(nid, midi, eighths, accid))
                labels[nid] = f"{form}:{pos}"
                if count % 97 == 13:
                    violations.append({"code": "ROW", "event_ids": [nid], "message": "wrong pitch class",
                                       "location": f"bar {bar + 1}"})
                if count % 131 == 7:
                    labels[nid] = None
                    unexplained.append(nid)
                rung = _RUNGS[count % 5] if count % 23 == 4 else None
                cert.append({"id": nid, "form": form.rstrip("0123456789"), "position": pos, "rung": rung})
                count += 1
            attrs = ""
            if bar == 0:
                attrs = (f"<attributes><divisions>2</divisions><key><fifths>0</fifths></key><time><beats>4"
                         f"</beats><beat-type>4</beat-type></time><clef><sign>{sign}</sign><line>{line}"
                         f"</line></clef></attributes>")
            measures.append(f'<measure number="{bar + 1}">{attrs}{"".join(notes)}</measure>')
            bar += 1
        bars = bar if bars is None else bars
        part_xml.append(f'<part id="P{p + 1}">{"".join(measures)}</part>')
    for i in range(0, parts - 1):
        a, b = f"p{i + 1}n5", f"p{i + 2}n5"
        violations.append({"code": "COLL", "event_ids": [a, b], "message": "same pitch class at once",
                           "location": "bar 1"})
    head = "".join(f'<score-part id="P{p + 1}"><part-name>Part {p + 1}</part-name></score-part>'
                   for p in range(parts))
    xml = ('<?xml version="1.0" encoding="UTF-8"?>\n<score-partwise version="4.0">'
           f"<work><work-title>Synthetic</work-title></work><part-list>{head}</part-list>"
           f"{''.join(part_xml)}</score-partwise>\n")
    report = {"labels": labels, "violations": violations, "unexplained": unexplained,
              "ambiguities": [], "strict": False, "relaxed": False}
    return xml, report, {"events": cert}


def _pitched(nid: str, midi: int, duration: int, typ: str, chord: bool = False, extra: str = "",
             notations: str = "") -> str:
    step, alter = _STEPS[midi % 12]
    alt = f"<alter>{alter}</alter>" if alter else ""
    shown = "<accidental>" + {1: "sharp", -1: "flat"}[alter] + "</accidental>" if alter else ""
    return (f'<note id="{nid}">{"<chord/>" if chord else ""}<pitch><step>{step}</step>{alt}'
            f"<octave>{midi // 12 - 1}</octave></pitch><duration>{duration}</duration><voice>1</voice>"
            f"<type>{typ}</type>{shown}{extra}"
            f"{f'<notations>{notations}</notations>' if notations else ''}</note>")


def _direction(content: str, placement: str = "below") -> str:
    return f'<direction placement="{placement}"><direction-type>{content}</direction-type></direction>'


def chord_score(bars: int = 4, size: int = 3, room: bool = False) -> tuple[str, dict[str, Any]]:
    """(MusicXML text, check report) of two staves (treble, bass) of row chords of ``size`` notes
    under dynamics and hairpins, slurred triplets and ledger-line notes above and below the staves.

    Each bar: two half-note chords (``p``, a crescendo between them); the next bar: a slurred
    quarter-note triplet under a tuplet bracket, a quarter chord and a ledger-line quarter. With
    ``room``, a rest stands after each chord (the second half-note chord and the quarter chord
    give way to rests), so the chord's labels have room beside it."""
    labels: dict[str, str | None] = {}
    parts: list[str] = []
    ranges = ((60, 79, 84, 57), (40, 59, 64, 38))  # (lowest, highest, ledger above, ledger below)
    for p, (low, high, ledger_up, ledger_down) in enumerate(ranges):
        clef = ("G", 2) if p == 0 else ("F", 4)
        position = 0
        count = 0

        def take(k: int, p: int = p, low: int = low, high: int = high) -> list[tuple[str, int]]:
            nonlocal position, count
            out = []
            for _ in range(k):
                pc = ROW[position % 12]
                midi = low + (pc - low) % 12
                midi = midi if midi <= high else midi - 12
                count += 1
                nid = f"s{p + 1}n{count}"
                labels[nid] = f"P0:{position % 12}"
                out.append((nid, midi))
                position += 1
            return out

        measures = []
        for bar in range(bars):
            notes: list[str] = []
            if bar % 2 == 0:
                for half in range(2):
                    if half and room:
                        notes.append(_direction('<wedge type="stop" number="1"/>'))
                        notes.append('<note><rest/><duration>6</duration><voice>1</voice><type>half</type></note>')
                        continue
                    chord = sorted(take(size), key=lambda t: t[1])
                    if half == 0:
                        notes.append(_direction("<dynamics><p/></dynamics>"))
                        notes.append(_direction('<wedge type="crescendo" number="1"/>'))
                    else:
                        notes.append(_direction('<wedge type="stop" number="1"/>'))
                    for i, (nid, midi) in enumerate(chord):
                        notes.append(_pitched(nid, midi, 6, "half", chord=i > 0))
            else:
                tm = "<time-modification><actual-notes>3</actual-notes><normal-notes>2</normal-notes></time-modification>"
                for i, (nid, midi) in enumerate(take(3)):
                    marks = ""
                    if i == 0:
                        marks = '<tuplet type="start" bracket="yes"/><slur type="start" number="1"/>'
                    elif i == 2:
                        marks = '<tuplet type="stop"/><slur type="stop" number="1"/>'
                    notes.append(_pitched(nid, midi, 2, "quarter", extra=tm, notations=marks))
                notes.append(_direction("<dynamics><f/></dynamics>"))
                chord = [] if room else sorted(take(size), key=lambda t: t[1])
                for i, (nid, midi) in enumerate(chord):
                    notes.append(_pitched(nid, midi, 3, "quarter", chord=i > 0))
                (nid, midi), = take(1)
                ledger = ledger_up if bar % 4 == 1 else ledger_down
                pitch = ledger + (midi - ledger) % 12 if ledger == ledger_up else ledger - (ledger - midi) % 12
                notes.append(_pitched(nid, pitch, 3, "quarter"))
                if room:
                    notes.append('<note><rest/><duration>3</duration><voice>1</voice><type>quarter</type></note>')
            attrs = ""
            if bar == 0:
                attrs = (f"<attributes><divisions>3</divisions><key><fifths>0</fifths></key><time><beats>4"
                         f"</beats><beat-type>4</beat-type></time><clef><sign>{clef[0]}</sign><line>{clef[1]}"
                         f"</line></clef></attributes>")
            measures.append(f'<measure number="{bar + 1}">{attrs}{"".join(notes)}</measure>')
        parts.append(f'<part id="P{p + 1}">{"".join(measures)}</part>')
    head = "".join(f'<score-part id="P{p + 1}"><part-name>Part {p + 1}</part-name></score-part>'
                   for p in range(2))
    xml = ('<?xml version="1.0" encoding="UTF-8"?>\n<score-partwise version="4.0">'
           f"<work><work-title>Chords</work-title></work><part-list>{head}</part-list>"
           f"{''.join(parts)}</score-partwise>\n")
    report = {"labels": labels, "violations": [], "unexplained": [], "ambiguities": []}
    return xml, report
