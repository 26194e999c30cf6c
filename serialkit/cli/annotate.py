"""CLI: ``serialkit annotate SCORE -o OUT`` — label every note with its row form and order position."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from serialkit.cli._common import EXIT_FAIL, EXIT_OK, echo_json
from serialkit.core.analysis import Analysis, analyze, identify_row
from serialkit.core.errors import RowError, ScoreWriteError, SerialkitError
from serialkit.core.piece import Piece
from serialkit.core.rows import Row

# Okabe–Ito colours (safe for colour-blind readers); unexplained notes get their own red.
FORM_COLOURS = {"P": "#0072B2", "I": "#009E73", "R": "#E69F00", "RI": "#CC79A7"}
STATEMENT_COLOURS = ("#0072B2", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#8C6D1F", "#000000")
UNEXPLAINED = "#D00000"
MUSICXML_SUFFIXES = (".musicxml", ".xml", ".mxl")
MEI_SUFFIXES = (".mei",)


def register(cli: Any) -> None:
    """Add ``annotate`` to the CLI."""
    cli.add_command(annotate)


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


def write_annotated(
    source: Path, piece: Piece, marks: Mapping[str, tuple[str | None, str]], out: Path, label_style: str
) -> Path:
    """Write the labelled score: MusicXML (edits of the source) or MEI (labels as ``<fing>``)."""
    suffix = out.suffix.lower()
    if suffix in MUSICXML_SUFFIXES:
        from serialkit.io.annotate import Annotation, write_annotated_musicxml

        annotations = {eid: Annotation(label=label, color=colour) for eid, (label, colour) in marks.items()}
        return write_annotated_musicxml(source, annotations, out, label_style=label_style)
    if suffix in MEI_SUFFIXES:
        return _write_mei(piece, marks, out)
    raise ScoreWriteError(
        f"{out}: cannot write {suffix or 'a file without an extension'}; use .musicxml, .xml, .mxl or .mei"
    )


def _write_mei(piece: Piece, marks: Mapping[str, tuple[str | None, str]], out: Path) -> Path:
    from lxml import etree

    from serialkit.io.atomic import atomic_write
    from serialkit.io.mei_write import build_mei

    ns = "{http://www.music-encoding.org/ns/mei}"
    xml_id = "{http://www.w3.org/XML/1998/namespace}id"
    root = build_mei(piece)
    for note in root.iter(f"{ns}note"):
        mark = marks.get(note.get(xml_id) or "")
        if mark is None:
            continue
        label, colour = mark
        note.set("color", colour)
        if label is None:
            continue
        staff = next((a for a in note.iterancestors(f"{ns}staff")), None)
        measure = next((a for a in note.iterancestors(f"{ns}measure")), None)
        if staff is None or measure is None:
            continue
        fing = etree.SubElement(measure, f"{ns}fing", startid=f"#{note.get(xml_id)}", staff=staff.get("n", "1"))
        fing.text = label
    atomic_write(out, etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True))
    return out


def _report(piece: Piece, row: Row, convention: str, analysis: Analysis, source: Path) -> dict[str, Any]:
    """The check report (``serialkit check --json``) for the labelled piece, else the analysis."""
    try:
        from serialkit.checking import check_piece
    except ImportError:  # pragma: no cover - the predicates are not in this build
        data = analysis.to_dict()
        data["source"] = str(source)
        return data
    report = check_piece(piece, row=row, convention=convention, source=str(source)).to_dict()
    report.setdefault("analysis_seconds", round(analysis.seconds, 4))
    return report


@click.command("annotate")
@click.argument("score", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--row", "row_spec", metavar="ROW", help="The row: numbers, note names or a catalog name (P0).")
@click.option("--identify", is_flag=True, help="Find the row from the catalog or the opening aggregate.")
@click.option("--convention", type=click.Choice(["relative", "absolute"]), default=None,
              help="Labelling convention (default: relative).")
@click.option("-o", "--output", "out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The labelled score: .musicxml, .xml, .mxl or .mei.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the check report (labels, statements, coverage, violations) here; '-' prints it.")
@click.option("--label-style", type=click.Choice(["fingering", "lyric"]), default="fingering",
              help="Where labels go: fingering (per notehead, survives chords) or lyric.")
@click.option("--colour-by", "colour_by", type=click.Choice(["form", "statement"]), default="form",
              help="Colour notes by form type (P/I/R/RI) or by row statement.")
def annotate(
    score: Path,
    row_spec: str | None,
    identify: bool,
    convention: str | None,
    out: Path,
    json_path: Path | None,
    label_style: str,
    colour_by: str,
) -> None:
    """Label every note of SCORE with its row form and order position (unexplained notes in red)."""
    if row_spec and identify:
        raise click.UsageError("give either --row or --identify, not both")
    if not score.is_file():
        raise SerialkitError(f"{score}: no such file")
    if out.resolve() == score.resolve():
        raise SerialkitError(f"{out}: refusing to overwrite the source score; give another -o path")
    from serialkit.cli.check import read_piece

    piece = read_piece(score)
    conv = convention or piece.convention
    if row_spec:
        row = Row.parse(row_spec)
    elif piece.row is not None:
        row = piece.row
    elif identify:
        row = identify_row(piece)
    else:
        raise RowError(f"{score}: the score names no row; give --row ROW or --identify")
    analysis = analyze(piece, row, conv)  # type: ignore[arg-type]
    marks = note_annotations(analysis, colour_by)
    report = _report(piece, row, conv, analysis, score)
    write_annotated(score, piece, marks, out, label_style)
    if json_path is not None:
        if str(json_path) == "-":
            echo_json(report)
        else:
            from serialkit.io.atomic import atomic_write

            atomic_write(json_path, json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n")
    unexplained = len(analysis.unexplained)
    click.echo(
        f"{out}: {len(analysis.tags)} notes, {len(analysis.statements)} statements, "
        f"coverage {float(analysis.coverage):.1%} ({unexplained} unexplained) against row {row.names()}",
        err=json_path is not None and str(json_path) == "-",
    )
    click.get_current_context().exit(EXIT_OK if unexplained == 0 else EXIT_FAIL)
