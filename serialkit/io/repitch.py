"""Writing a repaired score in its own format, from one reading of the source.

``read_editable`` reads a score once and keeps, for MusicXML (and the MusicXML a MuseScore, **kern
or ABC score is read through) and MEI, what the reader found on the way: the parsed tree, each
notehead's element, the tie chains and the spelling habit. ``write_repaired`` writes the repaired
piece from that reading: MusicXML and MEI re-pitched in place (pitch, accidental, colour and a label
per changed note; every other byte as it was), or written anew by serialkit's own writer when a
note's time changed; a JSON piece with its marks in its metadata; MIDI written anew.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from serialkit.core.errors import ScoreWriteError
from serialkit.core.notenames import NoteNames, habit_of
from serialkit.core.piece import Piece

if TYPE_CHECKING:
    from serialkit.io.annotation import Annotation

__all__ = ["EditableScore", "Repitch", "read_editable", "write_repaired"]


@dataclass(frozen=True, slots=True)
class Repitch:
    """One changed note of a repaired score: its sounding pitch before and after, how the change
    is spelt (the correction's model: ``accidental``, ``swap``, ``other``, ...), the mark the note
    carries, and whether its time changed."""

    before: int
    after: int
    model: str
    mark: Annotation
    timed: bool = False


@dataclass
class EditableScore:
    """One reading of a score: its piece and, for MusicXML and MEI, what the reader found on the
    way — the parsed tree, each notehead's element, the tie chains, the spelling habit — so that
    the names, the writing and the noteheads of a repair all come from that one reading."""

    piece: Piece
    kind: str
    """``musicxml`` (a MuseScore, **kern or ABC score too: the MusicXML it is read through), ``mei``,
    ``json``, ``midi`` or ``other`` (read by ``read_score``; not written)."""
    where: str = ""
    tree: Any = None
    member: str | None = None
    """The score's member in an .mxl archive."""
    scan: Any = None
    """MusicXML: the reader's ``Scan`` (its ``ends``: the bytes around the root)."""
    data: bytes = b""
    """The document's bytes (MusicXML: an .mxl's score member; MEI: the file), edited in place:
    every byte the repair does not change is kept."""
    mei: Any = None
    """MEI: the reader's state."""
    elements: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    """Notehead id → (its element, the reader's ``RawNote``)."""
    chains: dict[str, list[str]] = field(default_factory=dict)
    """A tied note's first notehead id → all its noteheads' ids, in order."""
    habit: int = 0
    """The score's habit in accidentals: > 0 when its notes are spelt with more sharps than
    flats, < 0 more flats (the reader's written alterations, in either format)."""


def read_editable(path: Path) -> EditableScore:
    """Read ``path`` once: a JSON piece, MusicXML (.mxl too) or MEI with the reader's tree and
    noteheads, or any other score ``read_score`` reads (repaired in a dry run only)."""
    from serialkit.core.errors import PieceError, ScoreReadError
    from serialkit.io.build import build_piece, tie_chains

    if path.suffix.lower() == ".json":
        from serialkit.io.jsonio import load_piece

        return EditableScore(load_piece(path), "json")
    from serialkit.io.dispatch import read_score, score_format
    from serialkit.io.external import VIA_MUSICXML

    fmt = score_format(path)
    if fmt not in ("musicxml", "mei", *VIA_MUSICXML):
        return EditableScore(read_score(path), "midi" if fmt == "midi" else "other")
    where, member, ends, data, mei = str(path), None, None, b"", None
    if fmt in VIA_MUSICXML:  # MuseScore, **kern, ABC: the MusicXML their reader reads, edited as such
        from serialkit.io.external import via_musicxml
        from serialkit.io.files.safety import parse_xml
        from serialkit.io.musicxml.read import document_ends, scan_tree

        data = xml = via_musicxml(path, fmt)
        where = f"{path} (as MusicXML)"
        tree = parse_xml(xml, where)
        scan = scan_tree(tree, where)
        scan.ends = document_ends(xml, tree)
        elements, parts = scan.elements, scan.parts
    elif fmt == "musicxml":
        from serialkit.io.musicxml.read import load_source, scan_tree

        tree, where, member, ends, data = load_source(path)
        scan = scan_tree(tree, where)
        scan.ends = ends
        elements, parts = scan.elements, scan.parts
    else:
        from serialkit.io.files.safety import parse_xml, read_bytes
        from serialkit.io.mei.read import scan_mei_tree

        data = read_bytes(path)
        tree, scan = parse_xml(data, where), None
        mei = scan_mei_tree(tree, where)
        elements, parts = mei.elements, mei.parts
    try:
        piece = build_piece(parts, path, "mxl" if member else fmt)
    except PieceError as exc:
        raise ScoreReadError(f"{where}: {exc}") from None
    if not piece.events:
        raise ScoreReadError(f"{path}: the score contains no notes")
    return EditableScore(
        piece, "mei" if fmt == "mei" else "musicxml", where, tree, member, scan, data, mei,
        elements={raw.id: (el, raw) for el, raw in elements},
        chains={chain[0].id: [n.id for n in chain] for chain in tie_chains(parts)},
        habit=habit_of(e.source.alter for e in piece.events if e.source is not None),
    )


def write_repaired(score: EditableScore, source: Path, repaired: Piece, changes: Mapping[str, Repitch],
                   out: Path) -> None:
    """The repaired score in the input's format, from the source's one reading (nothing written
    when anything fails)."""
    from serialkit.io.annotate import MUSESCORE_SUFFIXES
    from serialkit.io.files.atomic import named_as

    notes = {eid: c.mark for eid, c in changes.items()}
    timed = any(c.timed for c in changes.values())  # a note's time changed: written anew
    if out.suffix.lower() in MUSESCORE_SUFFIXES and not timed and _is_musescore(source):
        from serialkit.io.mscore.repitch import repitch_mscore

        names = NoteNames(score.piece, habit=score.habit)
        repitch_mscore(source, score.piece, {eid: (c.before, c.after, c.model) for eid, c in changes.items()},
                       notes, names.spell, out)  # the source's own MuseScore XML, edited in place
    elif out.suffix.lower() in MUSESCORE_SUFFIXES:  # the MusicXML made as for .musicxml, saved by MuseScore
        import tempfile

        from serialkit.io.mscore.program import save_with_musescore

        with tempfile.TemporaryDirectory(prefix="serialkit-repair-") as tmp:
            xml = Path(tmp) / "repaired.musicxml"
            with named_as({xml: out}):
                write_repaired(score, source, repaired, changes, xml)
                save_with_musescore(xml, out)
    elif score.kind == "musicxml" and timed:
        rewrite_musicxml(repaired, notes, out)
    elif score.kind == "musicxml":
        repitch_musicxml(score, source, changes, notes, out)
    elif score.kind == "mei" and timed:
        from serialkit.io.mei.write import write_mei

        write_mei(repaired, out, annotations=notes)
    elif score.kind == "mei":  # edited in place, as annotate does: every other byte as it was
        from serialkit.io.mei.annotate import write_annotated_mei

        names = NoteNames(score.piece, habit=score.habit)
        write_annotated_mei(source, notes, out, "fingering", pitches={eid: c.after for eid, c in changes.items()},
                            spelling=lambda eid, step, written: names.spell(eid, written, step, changes[eid].model),
                            parsed=(score.data, score.tree, score.mei))
    elif score.kind == "midi":  # no noteheads to edit: the repaired notes written anew
        from serialkit.io.dispatch import write_score

        write_score(repaired, out, format="midi")
    elif score.kind == "json":  # a JSON piece has no noteheads: the marks go in its metadata
        from serialkit.io.files.atomic import atomic_write

        marks = {eid: {"label": a.label, "color": a.color} for eid, a in notes.items()}
        marked = repaired.copy(metadata={**repaired.metadata, "repair_marks": marks}) if marks else repaired
        atomic_write(out, json.dumps(marked.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        suffix = source.suffix.lower()
        raise ScoreWriteError(f"{out}: cannot write {suffix or 'a file without an extension'}")


_NATURAL = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}


def _is_musescore(path: Path) -> bool:
    """A MuseScore file (.mscz/.mscx), whose repair is written in its own XML."""
    from serialkit.io.dispatch import score_format

    return score_format(path) == "musescore"


def rewrite_musicxml(repaired: Piece, notes: Mapping[str, Any], out: Path) -> None:
    """A changed note length cannot be edited into the source's measures soundly (voices, backups,
    ties and beams would all move), so the repaired piece is written anew by serialkit's own
    MusicXML writer — every bar adds up, rests fill what a trim frees — and annotated."""
    from serialkit.io.files.atomic import atomic_path
    from serialkit.io.files.safety import parse_xml
    from serialkit.io.musicxml.annotate import annotate_tree, serialize
    from serialkit.io.musicxml.write import musicxml_bytes, mxl_bytes

    tree = parse_xml(musicxml_bytes(repaired), str(out))
    data = serialize(annotate_tree(tree, str(out), notes, "fingering"), tree)
    payload = mxl_bytes(None, None, data) if out.suffix.lower() == ".mxl" else data
    with atomic_path(out) as tmp:
        tmp.write_bytes(payload)


def _set_pitch(pitch: Any, step: str, alter: int, octave: int) -> None:
    """Rewrite a ``<pitch>`` in place: its step, alter and octave elements' text, an ``<alter>``
    added after the step (on its line) or taken out when the note becomes natural; the rest of
    the element (whitespace, other children) as it was."""
    from lxml import etree

    step_el, octave_el, alter_el = pitch.find("step"), pitch.find("octave"), pitch.find("alter")
    if step_el is None or octave_el is None:
        raise ScoreWriteError(f"a <pitch> without <step> or <octave> (line {pitch.sourceline})")
    step_el.text, octave_el.text = step, str(octave)
    if alter and alter_el is None:
        alter_el = etree.Element("alter")
        step_el.addnext(alter_el)
        alter_el.tail = step_el.tail
    if alter_el is not None and alter:
        alter_el.text = str(alter)
    elif alter_el is not None:
        pitch.remove(alter_el)  # its tail goes with it: the octave keeps its line


def repitch_musicxml(score: EditableScore, source: Path, changes: Mapping[str, Repitch], notes: Mapping[str, Any],
                     out: Path) -> None:
    """The source's own MusicXML tree (its one reading) with the changed notes repitched,
    coloured and labelled, written back with every other byte as it was."""
    from serialkit.io.accidentals import bar_groups, respell, shows_unneeded, written_of
    from serialkit.io.files.atomic import atomic_path
    from serialkit.io.musicxml.annotate import annotate_tree, insert_in_order, serialize
    from serialkit.io.musicxml.write import mxl_bytes
    from serialkit.io.splice import Snapshot

    tree, where, member, scan = score.tree, score.where, score.member, score.scan
    element = {nid: el for nid, (el, _raw) in score.elements.items()}
    members, names = score.chains, NoteNames(score.piece, habit=score.habit)
    heads = {nid for eid in changes for nid in members.get(eid, [eid])}
    for nid in heads:
        if nid not in element:
            raise ScoreWriteError(f"{where}: note {nid} of the repair is not in the score")
    # the bars (per staff) the changed notes stand in, as written before: the accidentals shown
    # there are put right afterwards, so that every note still shows what it sounds
    bars = bar_groups(tree.getroot(), {el: raw.onset for el, raw in score.elements.values()})
    tied = {el for el, raw in score.elements.values() if raw.tie_stop}
    every = shows_unneeded((written_of(group, tied), [el.find("accidental") is not None for el, _ in group])
                           for group in bars.values())
    touched = {element[nid] for nid in heads}
    affected = {g: members_ for g, members_ in bars.items() if any(el in touched for el, _ in members_)}
    before = {g: written_of(members_, tied) for g, members_ in affected.items()}
    # every edit is inside these notes: the copy is the source's bytes with only them written anew
    snapshot = Snapshot(score.data, tree, {el for members_ in affected.values() for el, _ in members_} | touched)
    letters: dict[Any, str] = {}
    for eid, change in changes.items():
        for nid in members.get(eid, [eid]):
            note = element[nid]
            pitch = note.find("pitch")
            if pitch is None:
                raise ScoreWriteError(f"{where}: note {nid} has no <pitch> to correct")
            step = (pitch.findtext("step") or "C").strip()
            alter_text = (pitch.findtext("alter") or "0").strip()
            octave = int((pitch.findtext("octave") or "4").strip())
            written = 12 * (octave + 1) + _NATURAL.get(step, 0) + round(float(alter_text))
            new_step, new_alter, new_octave = names.spell(eid, written + change.after - change.before, step,
                                                          change.model)
            _set_pitch(pitch, new_step, new_alter, new_octave)
            letters[note] = step
    for g, members_ in affected.items():
        respell(members_, before[g], letters, tied, insert_in_order, every)
    root = annotate_tree(tree, where, notes, "fingering", scan, declare=False, every_id=False)
    data = (snapshot.write() if root is tree.getroot() and score.data else None) or serialize(root, tree, scan.ends)
    payload = mxl_bytes(source if member else None, member, data) if out.suffix.lower() == ".mxl" else data
    with atomic_path(out) as tmp:
        tmp.write_bytes(payload)
