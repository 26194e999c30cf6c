"""Instrument declarations for written MusicXML: General MIDI programs guessed from part names."""

from __future__ import annotations

import re

from lxml import etree

# (pattern on the lower-cased name, General MIDI program 1-128); first match wins.
_PROGRAMS: tuple[tuple[str, int], ...] = (
    (r"piccolo", 73), (r"alto flute|flute|flauto|flöte", 74), (r"cor anglais|english horn", 70),
    (r"oboe", 69), (r"contrabassoon|bassoon|fagott", 71), (r"clarinet|klarinette|clarinetto", 72),
    (r"soprano sax", 65), (r"alto sax", 66), (r"tenor sax", 67), (r"baritone sax|sax", 68),
    (r"horn|corno|cor\b", 61), (r"trumpet|tromba|trompete|cornet", 57),
    (r"bass trombone|trombone|posaune", 58), (r"tuba", 59), (r"harp|arpa|harfe", 47),
    (r"celesta", 9), (r"glockenspiel", 10), (r"vibraphone", 12), (r"marimba", 13),
    (r"xylophone", 14), (r"timpani|pauken", 48), (r"harpsichord", 7), (r"organ", 20),
    (r"guitar|gitarre", 25), (r"mandolin", 26), (r"violoncello|cello", 43),
    (r"contrabass|double bass|kontrabass", 44), (r"viola|bratsche", 42), (r"violin|violine|geige", 41),
    (r"soprano|alto|tenor|baritone|bass|voice|voce|stimme|choir", 53), (r"piano|klavier", 1),
)


def midi_program(name: str | None) -> int:
    """The General MIDI program (1-128) a part name suggests; acoustic grand piano when unknown."""
    text = (name or "").lower()
    for pattern, program in _PROGRAMS:
        if re.search(pattern, text):
            return program
    return 1


def declare_instrument(
    score_part: etree._Element, part_id: str, name: str | None, index: int, program: int | None = None
) -> None:
    """Add ``<score-instrument>`` and ``<midi-instrument>`` to a ``<score-part>`` (schema order:
    after part-name/abbreviation and any group, before midi-device)."""
    inst_id = f"{part_id}-I1"
    inst = etree.Element("score-instrument", id=inst_id)
    etree.SubElement(inst, "instrument-name").text = name or part_id
    midi = etree.Element("midi-instrument", id=inst_id)
    channel = index % 15 + 1
    etree.SubElement(midi, "midi-channel").text = str(channel if channel < 10 else channel + 1)
    etree.SubElement(midi, "midi-program").text = str(program or midi_program(name))
    etree.SubElement(midi, "volume").text = "80"
    etree.SubElement(midi, "pan").text = "0"
    anchor = None
    for child in score_part:
        if child.tag in ("part-name", "part-name-display", "part-abbreviation",
                         "part-abbreviation-display", "group", "identification", "part-link"):
            anchor = child
    if anchor is None:
        score_part.insert(0, inst)
    else:
        anchor.addnext(inst)
    inst.addnext(midi)


def declares_instruments(root: etree._Element) -> bool:
    """True when every ``<score-part>`` has a ``<score-instrument>``."""
    parts = root.findall("part-list/score-part")
    return bool(parts) and all(sp.find("score-instrument") is not None for sp in parts)
