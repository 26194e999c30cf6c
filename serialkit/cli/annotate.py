"""CLI: ``serialkit annotate SCORE... -o OUT`` — label every note with its row form and order position."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import click

from serialkit.batch import JobOutcome, ScoreInput, is_batch, output_paths
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
from serialkit.check.report import row_doubt
from serialkit.cli._batch import gather, one_output, own_suffix, run_and_report, run_one
from serialkit.cli._common import (
    EXIT_FAIL,
    EXIT_OK,
    SCORE_FORMATS,
    check_row_option,
    check_rules_option,
    echo_json,
    jobs_option,
    json_option,
    one_format,
    one_standard_output,
    output_option,
    recursive_option,
    report_option,
    write_report,
)
from serialkit.cli._suggestions import suggestion_lines
from serialkit.core.analysis.result import percent
from serialkit.jobs import annotate_job

__all__ = [
    "FORM_COLOURS", "MEI_SUFFIXES", "MUSICXML_SUFFIXES", "STATEMENT_COLOURS", "UNEXPLAINED",
    "annotate", "annotate_score", "note_annotations", "register", "write_annotated",
]

TO_SUFFIX = {fmt: SCORE_FORMATS[fmt][0] for fmt in ("musicxml", "mxl", "mei")}
"""The ``--to`` formats a labelled score can be written in (the shared vocabulary's)."""


def register(cli: Any) -> None:
    """Add ``annotate`` to the CLI."""
    cli.add_command(annotate)


def _suffix_for(to: str | None) -> Any:
    """The output extension of one source: ``--to``, else the source's own score format."""
    def suffix(src: ScoreInput) -> str:
        if to is not None:
            return TO_SUFFIX[to]
        own = own_suffix(src)  # standard input: the format its content is
        return own if own in MUSICXML_SUFFIXES + MEI_SUFFIXES else ".musicxml"
    return suffix


@click.command("annotate")
@click.argument("inputs", nargs=-1, required=True, metavar="SCORE...",
                type=click.Path(path_type=str, allow_dash=True))
@click.option("--row", "row_spec", metavar="ROW", help="The row: numbers, note names or a catalog name (P0).")
@click.option("--identify", is_flag=True, help="Find the row from the music (the default when neither --row nor the score gives one).")
@click.option("--convention", type=click.Choice(["relative", "absolute"]), default=None,
              help="Labelling convention (default: relative).")
@output_option("The labelled score (.musicxml, .xml, .mxl, .mei — an MEI source edited in place —, .mscz "
               "or .mscx; '-': standard output); a DIR (existing, or new written DIR/) gets the score under its own name, as "
               "it gets one labelled score per input for several scores or a folder.",
               file_or_dir=True, stdout=True)
@click.option("--to", "to", type=click.Choice(sorted(TO_SUFFIX)), default=None,
              help="Output format when -o does not name it (-o DIR or -o -); default: the input's.")
@report_option("Also write the report (labels, statements, coverage, violations, every notehead's "
               "place, label and colour) to FILE ('-': standard output).")
@json_option("Print the report as JSON (several scores: one JSON line each, then a summary line).")
@click.option("--labels", "labels", type=click.Choice(["words", "lyric", "fingering"]), default="words",
              help="What carries each note's label: words (default; kept by MuseScore, LilyPond and "
                   "verovio), lyric, or fingering. MEI: <dir>, <verse>, <fing>.")
@click.option("--rules", "rules_spec", metavar="PROFILE",
              help="Rule profile of the report's verdict: analysis (default for a score), generation, "
                   "or predicate codes such as ROW,ORDER.")
@click.option("--color-by", "color_by", type=click.Choice(["form", "statement"]), default="form",
              help="Colour notes by form type (P/I/R/RI) or by row statement.")
@recursive_option()
@jobs_option(help="Annotate N scores at once (processes).")
def annotate(
    inputs: tuple[str, ...],
    row_spec: str | None,
    identify: bool,
    convention: str | None,
    output: Path | None,
    to: str | None,
    report_path: Path | None,
    as_json: bool,
    labels: str,
    rules_spec: str | None,
    color_by: str,
    recursive: bool,
    jobs: int,
) -> None:
    """Label every note of SCORE with its row form and order position (unexplained notes in red).

    Writes the labelled score (-o) and/or the report (--report FILE, --json), whose "noteheads"
    list locates every notehead by part, measure, staff, voice, onset and pitch. Several scores
    or folders go into -o DIR, one labelled score each, with one line per score and a summary.
    Exit 0 every note explained, 1 some unexplained, 2 bad input (several scores: 2 if any was
    unreadable, else 1 if any has unexplained notes).
    """
    from serialkit.io.files.outputs import ensure_output_dir, ensure_writable_file, refuse_sources

    if row_spec and identify:
        raise click.UsageError("give either --row or --identify, not both")
    check_row_option(row_spec)  # a bad row, profile or code is one error, not one per score
    check_rules_option(rules_spec)
    one_format(output, to)
    if output is None and report_path is None and not as_json:
        raise click.UsageError("give -o OUT (the labelled score), --report FILE, --json, or several")
    stdouts = one_standard_output(output=output, report_path=report_path, as_json=as_json)
    batch = is_batch(inputs)
    if batch and output is not None and str(output) == "-":
        raise click.UsageError("several scores need -o DIR, not -o -")
    if report_path is not None:
        ensure_writable_file(report_path)
    options: dict[str, Any] = {"row": row_spec, "identify": identify, "convention": convention,
                               "labels": labels, "colour_by": color_by, "rules": rules_spec}
    if batch:
        sources = gather(inputs, recursive)
        refuse_sources([s.path for s in sources], report_path)
        if output is not None:
            ensure_output_dir(output)
        outputs = (output_paths(sources, output, _suffix_for(to)) if output is not None
                   else [None] * len(sources))
        code = run_and_report(annotate_job, sources, outputs, options, jobs=jobs, as_json=as_json,
                              report_path=report_path, line=_line)
        raise SystemExit(code)
    sources = gather(inputs, recursive)
    output = one_output(sources[0], output, _suffix_for(to))  # -o DIR: as for several scores
    refuse_sources([s.path for s in sources], report_path, output)
    if output is not None and str(output) != "-":
        ensure_writable_file(output)
    with tempfile.TemporaryDirectory(prefix="serialkit-annotate-") as tmp:
        target = output
        if output is not None and str(output) == "-":
            target = Path(tmp) / f"out{_suffix_for(to)(sources[0])}"
        outcome = run_one(annotate_job, sources[0], target, options, stand_in=target if target != output else None)
        if output is not None and str(output) == "-" and target is not None:
            sys.stdout.buffer.write(target.read_bytes())
            sys.stdout.buffer.flush()
            outcome.record["output"] = "-"  # the temporary file is gone: say where it went
    report = outcome.record["report"]
    if report_path is not None:
        write_report(report_path, report)
    if as_json:
        echo_json(report)
    click.echo(_line(outcome), err=bool(stdouts))
    if outcome.record.get("identification"):
        click.echo(f"  {outcome.record['identification']}", err=bool(stdouts))
    for note in report.get("suggestions") or ():
        for line in suggestion_lines(report, [note["event_id"]]):
            where = note.get("location") or note["event_id"]
            click.echo(f"  {where}, {note['name']} ({note['finding']}): {line}", err=bool(stdouts))
    raise SystemExit(EXIT_OK if outcome.status == "passed" else EXIT_FAIL)


def _line(outcome: JobOutcome) -> str:
    rec = outcome.record
    where = {None: outcome.source, "-": f"{outcome.source} → standard output"}.get(rec["output"], rec["output"])
    line = (f"{where}: {rec['notes']} notes, {rec['statements']} statements, coverage "
            f"{percent(rec['coverage'])} ({rec['unexplained']} unexplained) against row {rec['row']}")
    doubt = None if rec.get("identification") else row_doubt(rec["coverage"])
    return f"{line}; {doubt}" if doubt else line
