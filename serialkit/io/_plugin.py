"""Built-in readers and writers, registered through the same hooks as outside plugins."""

from __future__ import annotations

from serialkit.io import sniff
from serialkit.plugins.hookspecs import Register, hookimpl


@hookimpl
def register_readers(register: Register) -> None:
    """MusicXML (.musicxml, .xml, .mxl), MEI, MIDI, MuseScore, **kern, ABC and JSON pieces."""
    from serialkit.io.mei_read import read_mei
    from serialkit.io.musicxml_read import read_musicxml

    register(
        "musicxml",
        read_musicxml,
        extensions=(".musicxml", ".xml", ".mxl"),
        sniff=sniff.is_musicxml,
        description="MusicXML 1.0-4.0, partwise or timewise, and compressed .mxl",
    )
    register("mei", read_mei, extensions=(".mei",), sniff=sniff.is_mei, description="MEI 3-5")
    from serialkit.io.midi_read import is_midi, read_midi

    register("midi", read_midi, extensions=(".mid", ".midi"), sniff=is_midi, description="Standard MIDI File")
    from serialkit.io.external import read_abc, read_kern, read_musescore

    register(
        "musescore",
        read_musescore,
        extensions=(".mscz", ".mscx"),
        sniff=sniff.is_musescore,
        description="MuseScore .mscz/.mscx, versions 3.0-4.x, read natively",
    )
    register(
        "kern", read_kern, extensions=(".krn", ".kern"), sniff=sniff.is_kern,
        description="Humdrum **kern, through music21",
    )
    register(
        "abc", read_abc, extensions=(".abc",), sniff=sniff.is_abc,
        description="ABC notation (the first tune), through music21",
    )
    register(
        "json",
        _read_json,
        extensions=(".json",),
        sniff=sniff.is_json,
        description="serialkit JSON piece",
    )


def _read_json(path: str) -> object:
    from serialkit.io.jsonio import load_piece

    return load_piece(path)


@hookimpl
def register_writers(register: Register) -> None:
    """MusicXML, compressed MusicXML, MEI, MIDI and JSON pieces."""
    from serialkit.io import writers

    register("musicxml", writers.write_musicxml, extensions=(".musicxml", ".xml", ".mxl"))
    register("mei", writers.write_mei, extensions=(".mei",))
    register("midi", writers.write_midi, extensions=(".mid", ".midi"))
    register("json", writers.write_json, extensions=(".json",))
