"""CLI: ``serialkit annotate SCORE -o OUT`` — label every note with its row form and order position."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from serialkit.check.annotate import (  # re-exported: the names this command has always offered
    FORM_COLOURS,
    MEI_SUFFIXES,
    MUSICXML_SUFFIXES,
    STATEMENT_COLOURS,
    UNEXPLAINED,
    annotate_score,
    note_annotations,
    write_annotated,
)
from serialkit.cli._common import EXIT_FAIL, EXIT_OK, echo_json
from serialkit.cli._suggestions import suggestion_lines
from serialkit.core.errors import SerialkitError

__all__ = [
    "FORM_COLOURS", "MEI_SUFFIXES", "MUSICXML_SUFFIXES", "STATEMENT_COLOURS", "UNEXPLAINED",
    "annotate", "note_annotations", "register", "write_annotated",
]


def register(cli: Any) -> None:
    """Add ``annotate`` to the CLI."""
    cli.add_command(annotate)


@click.command("annotate")
@click.argument("score", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--row", "row_spec", metavar="ROW", help="The row: numbers, note names or a catalog name (P0).")
@click.option("--identify", is_flag=True, help="Find the row from the catalog or the opening aggregate.")
@click.option("--convention", type=click.Choice(["relative", "absolute"]), default=None,
              help="Labelling convention (default: relative).")
@click.option("-o", "--output", "out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The labelled score: .musicxml, .xml, .mxl, .mei (an MEI source edited in place), "
                   ".mscz or .mscx.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the report (labels, statements, coverage, violations, every notehead's "
                   "place, label and colour) here; '-' prints it.")
@click.option("--labels", "labels", type=click.Choice(["words", "lyric", "fingering"]), default="words",
              help="What carries each note's label: words (default; kept by MuseScore, LilyPond and "
                   "verovio), lyric, or fingering. MEI: <dir>, <verse>, <fing>.")
@click.option("--label-style", "label_style", type=click.Choice(["words", "lyric", "fingering"]), hidden=True,
              default=None, help="Old name of --labels.")
@click.option("--rules", "rules_spec", metavar="PROFILE",
              help="Rule profile of the report's verdict: analysis (default for a score), generation, "
                   "or predicate codes such as ROW,ORDER.")
@click.option("--colour-by", "colour_by", type=click.Choice(["form", "statement"]), default="form",
              help="Colour notes by form type (P/I/R/RI) or by row statement.")
def annotate(
    score: Path,
    row_spec: str | None,
    identify: bool,
    convention: str | None,
    out: Path | None,
    json_path: Path | None,
    labels: str,
    label_style: str | None,
    rules_spec: str | None,
    colour_by: str,
) -> None:
    """Label every note of SCORE with its row form and order position (unexplained notes in red).

    Writes the labelled score (-o) and/or the JSON report (--json), whose "noteheads" list
    locates every notehead by part, measure, staff, voice, onset and pitch.
    """
    if row_spec and identify:
        raise click.UsageError("give either --row or --identify, not both")
    if out is None and json_path is None:
        raise click.UsageError("give -o OUT (the labelled score), --json REPORT, or both")
    if not score.is_file():
        raise SerialkitError(f"{score}: no such file")
    if json_path is not None and str(json_path) != "-" and json_path.resolve() == score.resolve():
        raise SerialkitError(f"{json_path}: refusing to overwrite the source score with the report")
    result = annotate_score(
        score, row_spec, identify=identify, convention=convention, out=out,
        labels=label_style or labels, colour_by=colour_by, rules=rules_spec,
    )
    to_stdout = json_path is not None and str(json_path) == "-"
    if json_path is not None:
        if to_stdout:
            echo_json(result.report)
        else:
            from serialkit.io.atomic import atomic_write

            atomic_write(json_path, json.dumps(result.report, indent=2, ensure_ascii=False, default=str) + "\n")
    analysis = result.analysis
    unexplained = len(analysis.unexplained)
    click.echo(
        f"{out or json_path}: {len(analysis.tags)} notes, {len(analysis.statements)} statements, "
        f"coverage {float(analysis.coverage):.1%} ({unexplained} unexplained) against row {result.row.names()}",
        err=to_stdout,
    )
    found = result.report.get("identification")
    if found:
        click.echo(f"  {found['summary']}", err=to_stdout)
    for note in result.report.get("suggestions") or ():
        for line in suggestion_lines(result.report, [note["event_id"]]):
            click.echo(f"  {note['event_id']} ({note['name']}, {note['finding']}): {line}", err=to_stdout)
    click.get_current_context().exit(EXIT_OK if unexplained == 0 else EXIT_FAIL)
