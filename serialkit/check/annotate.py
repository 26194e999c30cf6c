"""Annotating a score: per-note labels and colours, where each notehead sits, the labelled file.

``serialkit annotate`` and the MuseScore plugin both go through :func:`annotate_score`: the
labels and colours of the analysis, the check report, and one entry per notehead (tied
continuations included) located by part, measure, staff, voice, onset and pitch.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from serialkit.core.errors import ScoreWriteError, SerialkitError
from serialkit.core.piece import Piece
from serialkit.core.rows import Convention, Row

if TYPE_CHECKING:
    from serialkit.core.analysis import Analysis, Identification
    from serialkit.io.noteheads import Notehead

__all__ = [
    "DIVISION", "FORM_COLOURS", "MEI_SUFFIXES", "MUSICXML_SUFFIXES", "STATEMENT_COLOURS",
    "UNEXPLAINED", "Annotated", "annotate_score", "note_annotations", "notehead_entries",
    "write_annotated",
]

# Okabe–Ito colours (safe for colour-blind readers); unexplained notes get their own red.
FORM_COLOURS = {"P": "#0072B2", "I": "#009E73", "R": "#E69F00", "RI": "#CC79A7"}
STATEMENT_COLOURS = ("#0072B2", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#8C6D1F", "#000000")
UNEXPLAINED = "#D00000"
MUSICXML_SUFFIXES = (".musicxml", ".xml", ".mxl")
MEI_SUFFIXES = (".mei",)
DIVISION = 480
"""Ticks per quarter note in the notehead entries (MuseScore's resolution)."""

Marks = Mapping[str, tuple[str | None, str]]


def note_annotations(analysis: Analysis, colour_by: str = "form") -> dict[str, tuple[str | None, str]]:
    """Event id → (label, colour): labels like ``P0:3`` (an elided note shows both readings,
    ``P0:11/I3:1``), colours by form type or by statement, unexplained notes in red."""
    statement_index = {s.id: i for i, s in enumerate(analysis.statements)}
    elided: dict[str, list[str]] = {}
    for amb in analysis.ambiguities:
        if amb.reason.startswith("elision"):
            seen = {c.statement for c in amb.candidates}
            labels = []
            for statement in sorted(seen, key=lambda s: statement_index.get(s or "", 0)):
                first = next(c for c in amb.candidates if c.statement == statement)
                labels.append(f"{first.form.label}:{first.position}")
            elided[amb.event_id] = labels
    out: dict[str, tuple[str | None, str]] = {}
    for event_id, tag in analysis.tags.items():
        if tag is None:
            out[event_id] = (None, UNEXPLAINED)
            continue
        label = "/".join(elided[event_id]) if event_id in elided else f"{tag.form.label}:{tag.position}"
        if colour_by == "statement":
            index = statement_index.get(tag.statement or "", 0)
            colour = STATEMENT_COLOURS[index % len(STATEMENT_COLOURS)]
        else:
            colour = FORM_COLOURS[tag.form.type]
        out[event_id] = (label, colour)
    return out


def notehead_entries(noteheads: list[Notehead], marks: Marks) -> list[dict[str, Any]]:
    """The report's ``noteheads``: one entry per notehead with its place, label and colour.

    A tied continuation (``"tied": true``) has its first note's colour and no label;
    ``written_midi`` is present only where the written pitch differs from the sounding one.
    """
    out = []
    for n in noteheads:
        label, colour = marks.get(n.event_id, (None, UNEXPLAINED))
        entry: dict[str, Any] = {
            "id": n.id, "event_id": n.event_id, "part": n.part, "part_index": n.part_index,
            "measure": n.measure, "staff": n.staff, "voice": n.voice,
            "onset": str(n.onset), "tick": n.tick(DIVISION), "midi": n.midi,
        }
        if n.written_midi != n.midi:
            entry["written_midi"] = n.written_midi
        entry.update(grace=n.grace, tied=n.tied, label=None if n.tied else label, color=colour)
        out.append(entry)
    return out


def write_annotated(
    source: Path, piece: Piece, marks: Marks, out: Path, labels: str = "words"
) -> Path:
    """Write the labelled score in the format ``out`` names (``serialkit.io.write_annotated_score``):
    MusicXML (the source edited in place, or an MEI source converted with everything an
    engraver sees), MEI (an MEI source edited in place), MuseScore (.mscz/.mscx)."""
    from serialkit.io.annotate import ANNOTATED_SUFFIXES, write_annotated_score
    from serialkit.io.annotation import Annotation

    annotations = {eid: Annotation(label=label, color=colour) for eid, (label, colour) in marks.items()}
    if out.suffix.lower() not in ANNOTATED_SUFFIXES:
        raise ScoreWriteError(
            f"{out}: cannot write {out.suffix or 'a file without an extension'}; "
            "use .musicxml, .xml, .mxl, .mei, .mscz or .mscx"
        )
    return write_annotated_score(source, annotations, out, labels)


@dataclass(frozen=True, slots=True)
class Annotated:
    """What annotating a score produced: the analysis, per-note marks and the report."""

    piece: Piece
    row: Row
    convention: str
    analysis: Analysis
    marks: Mapping[str, tuple[str | None, str]]
    report: Mapping[str, Any]
    out: Path | None = None


def _report(
    piece: Piece,
    row: Row,
    convention: str,
    analysis: Analysis,
    source: Path,
    marks: Marks,
    found: Identification | None = None,
    rules: str | None = None,
) -> dict[str, Any]:
    """The check report (``serialkit check --json``) for the labelled piece, with noteheads."""
    from serialkit.check import check_piece
    from serialkit.check.profiles import profile_for
    from serialkit.io.noteheads import piece_noteheads

    profile = profile_for(rules, task_bound=piece.blueprint is not None)
    report = check_piece(
        piece, row=row, convention=convention, source=str(source), analysis=analysis, profile=profile,
        suggest=True,
    )
    heads = tuple(notehead_entries(piece_noteheads(piece), marks))
    ident = None if found is None else found.to_dict()
    data = replace(report, noteheads=heads, identification=ident).to_dict()
    data.setdefault("analysis_seconds", round(analysis.seconds, 4))
    return data


def annotate_score(
    score: str | os.PathLike[str],
    row: Row | str | None = None,
    *,
    identify: bool = False,
    convention: str | None = None,
    out: str | os.PathLike[str] | None = None,
    labels: str = "words",
    colour_by: str = "form",
    rules: str | None = None,
) -> Annotated:
    """Label every note of a score with its row form and order position.

    The row is ``row``, else the score's own, else the one found in it (``identify`` is accepted
    for older callers: the row is always looked for, and ``RowError`` names the score when none fits).
    With ``out`` the labelled score is written there (MusicXML or MEI, by extension). The
    report is the check report plus ``noteheads``: every notehead's place, label and colour;
    ``rules`` is the rule profile of its verdict (``serialkit.check.profiles``; default
    ``analysis``, or ``generation`` for a piece with a blueprint).
    """
    source = Path(score)
    if out is not None and Path(out).resolve() == source.resolve():
        raise SerialkitError(f"{out}: refusing to overwrite the source score; give another -o path")
    from serialkit.check.report import row_for
    from serialkit.core.analysis import analyze
    from serialkit.io import read_score

    piece = read_score(source)
    conv = convention or piece.convention
    the_row, found = row_for(piece, source, row)
    analysis = analyze(piece, the_row, cast(Convention, conv))
    marks = note_annotations(analysis, colour_by)
    report = _report(piece, the_row, conv, analysis, source, marks, found, rules)
    carrier = labels
    written = write_annotated(source, piece, marks, Path(out), carrier) if out is not None else None
    return Annotated(piece, the_row, conv, analysis, marks, report, written)
