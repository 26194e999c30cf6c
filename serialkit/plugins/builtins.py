"""Every built-in plugin in one place: readers and writers, predicates, proposers and repair
rungs, registered through the same hooks as outside plugins (``BUILTIN_MODULES`` names this module)."""

from __future__ import annotations

from collections.abc import Callable

from serialkit.core.piece import Piece
from serialkit.core.predicates import (
    PREDICATE_STRICT_ONLY,
    UNTAGGED_CODES,
    Rules,
    Violation,
    check_collisions,
    check_crossings,
    check_order,
    check_pc,
    check_range,
    check_row,
    check_schedule,
)
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

__all__ = [
    "BUILTIN_PREDICATES",
    "register_predicates",
    "register_proposers",
    "register_readers",
    "register_repair_rungs",
    "register_writers",
]

# -- readers and writers -------------------------------------------------------------------------


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


# -- predicates ------------------------------------------------------------------------------------

Predicate = Callable[[Piece, Rules], list[Violation]]

BUILTIN_PREDICATES: dict[str, Predicate] = {
    "ROW": lambda piece, rules: check_row(piece),
    "ORDER": lambda piece, rules: check_order(piece, rules),
    "COLL": lambda piece, rules: check_collisions(piece, rules.tolerance),
    "PC": lambda piece, rules: check_pc(piece),
    "RANGE": lambda piece, rules: check_range(piece),
    "CROSS": lambda piece, rules: check_crossings(piece, rules.max_crossing_share),
    "SCHED": lambda piece, rules: check_schedule(piece),
}
"""The seven hard predicates as ``fn(piece, rules) -> list[Violation]`` (what the hook registers)."""


@hookimpl
def register_predicates(register: Register) -> None:
    """Register the built-in predicates (plugins register theirs through the same hook)."""
    for code, fn in BUILTIN_PREDICATES.items():
        register(code, fn, strict_only=code in PREDICATE_STRICT_ONLY, needs_tags=code not in UNTAGGED_CODES)


# -- proposers and repair rungs -----------------------------------------------------------------------


@hookimpl
def register_proposers(register: Register) -> None:
    """``stochastic`` (offline, default), ``openai`` (any compatible endpoint), ``replay``: lazy
    references (imported on first use; ``inspect.signature`` sees the class's options through them)."""
    register("stochastic", "serialkit.harness.proposers.stochastic:StochasticProposer", offline=True, description="seeded offline proposer with model-like mistakes")
    register("openai", "serialkit.harness.proposers.openai:OpenAIProposer", offline=False, description="OpenAI-compatible chat-completions endpoint")
    register("replay", "serialkit.harness.proposers.replay:ReplayProposer", offline=True, description="replays a recorded transcript exactly")


@hookimpl
def register_repair_rungs(register: Register) -> None:
    """The ladder, in explicit rank order: the deterministic timing rungs (on each note as it
    arrives), the model's batched patch, then the paper's model row-segment rewrite or serialkit's
    deterministic rewrite and reflow (on the notes still pending after a section call), and last
    serialkit's completion of the slots still empty after the attempts. ``ladders`` names the
    ladders a rung belongs to (``--ladder serialkit|paper``); ``scope`` says what it works on
    (``note``, the default; ``batch``: a section call's pending notes at once; ``holes``)."""
    from serialkit.harness.ladder import patch, reflow, rewrite, timing

    both = "serialkit paper"
    register("trim", timing.trim_tail, rank=10, ladders=both)
    register("yield", timing.yield_, rank=20, ladders=both)
    register("retime", timing.retime, rank=30, ladders=both)
    register("patch", patch.model_patch, rank=40, scope="batch", ladders=both)
    register("segment", patch.model_segment, rank=45, scope="batch", ladders="paper")
    register("rewrite", rewrite.rewrite_segment, rank=50, ladders="serialkit")
    register("reflow", reflow.reflow_note, rank=60, ladders="serialkit")
    register("complete", reflow.complete_holes, rank=70, scope="holes", ladders="serialkit")
