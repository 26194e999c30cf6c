"""Built-in readers and writers, registered through the same hooks as outside plugins."""

from __future__ import annotations

from serialkit.io import sniff
from serialkit.io.external import read_abc, read_kern
from serialkit.io.jsonio import load_piece, save_piece
from serialkit.io.mei.read import read_mei
from serialkit.io.mei.write import write_mei
from serialkit.io.midi.read import is_midi, read_midi
from serialkit.io.midi.write import write_midi
from serialkit.io.mscore.read import read_mscore
from serialkit.io.musicxml.read import read_musicxml
from serialkit.io.musicxml.write import write_musicxml
from serialkit.plugins.hookspecs import Register, hookimpl


@hookimpl
def register_readers(register: Register) -> None:
    """MusicXML (.musicxml, .xml, .mxl), MEI, MIDI, MuseScore, **kern, ABC and JSON pieces."""
    register(
        "musicxml",
        read_musicxml,
        extensions=(".musicxml", ".xml", ".mxl"),
        sniff=sniff.is_musicxml,
        description="MusicXML 1.0-4.0, partwise or timewise, and compressed .mxl",
    )
    register("mei", read_mei, extensions=(".mei",), sniff=sniff.is_mei, description="MEI 3-5")
    register("midi", read_midi, extensions=(".mid", ".midi"), sniff=is_midi, description="Standard MIDI File")
    register(
        "musescore",
        read_mscore,
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
        load_piece,
        extensions=(".json",),
        sniff=sniff.is_json,
        description="serialkit JSON piece",
    )


@hookimpl
def register_writers(register: Register) -> None:
    """MusicXML, compressed MusicXML, MEI, MIDI and JSON pieces."""
    register("musicxml", write_musicxml, extensions=(".musicxml", ".xml", ".mxl"))
    register("mei", write_mei, extensions=(".mei",))
    register("midi", write_midi, extensions=(".mid", ".midi"))
    register("json", save_piece, extensions=(".json",))
