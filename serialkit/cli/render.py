"""CLI: ``serialkit render`` — engrave a score to SVG, PNG, PDF or an HTML review page."""

from __future__ import annotations

import contextlib
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from serialkit.cli._batch import into_directory, one_output
from serialkit.cli._common import (
    check_row_option,
    check_rules_option,
    echo_json,
    jobs_option,
    json_option,
    one_format,
    one_standard_output,
    output_option,
    report_option,
    write_report,
)
from serialkit.core.errors import ScoreWriteError


@contextlib.contextmanager
def input_path(score: Path) -> Iterator[Path]:
    """SCORE itself, or standard input (``-``) spooled to a file named for its sniffed format."""
    if str(score) != "-":
        yield score
        return
    from serialkit.io.dispatch import read_stdin_bytes, spooled_score

    with spooled_score(read_stdin_bytes()) as path:
        yield path


@click.command("render")
@click.argument("scores", nargs=-1, required=True, metavar="SCORE...",
                type=click.Path(path_type=str, allow_dash=True))
@output_option(
    "Output file; .svg, .png, .pdf or .html picks the format (SVG/PNG of several pages are written "
    "as NAME-1.svg, NAME-2.svg, ..., one page as the file itself); '-' writes one file to standard output (give --to); a DIR "
    "(existing, or new written DIR/; give --to) gets the score as NAME.FORMAT, as it gets each of several scores.",
    required=True, stdout=True, file_or_dir=True,
)
@click.option(
    "--check-report", "check_report", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
    help="A check report (`serialkit check --report FILE`): labels, violations, unexplained notes.",
)
@click.option(
    "--certificate", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
    help="Trace certificate JSON (`serialkit generate`): labels and repair rungs per note.",
)
@click.option("--row", help="Label the score by running the checker with this row (no report); without it the "
              "checker identifies the row, as check does.")
@click.option(
    "--convention", type=click.Choice(["relative", "absolute"]), default="relative",
    show_default=True, help="Labelling convention used with --row.",
)
@click.option(
    "--to", "fmt", type=click.Choice(["svg", "png", "pdf", "html"]),
    help="Output format when -o does not name it (-o -).",
)
@click.option("--rules", "rules_spec", metavar="PROFILE",
              help="Rule profile when the checker runs (--row, or a JSON piece): analysis (default for "
                   "a score), generation, or predicate codes such as ROW,ORDER.")
@click.option("--blind", is_flag=True, help="No colours, labels, titles or revealing metadata.")
@click.option("--scale", type=int, default=100, show_default=True,
              help="Size of the pages in percent (100: a 2100 px wide PNG, labels about 13 px tall).")
@click.option("--page-width", type=int, default=2100, show_default=True, help="Page width (MEI units x10).")
@report_option("Also write what was written (files, pages, labels, findings) as JSON to FILE.")
@json_option("Print what was written as JSON (several scores: one JSON line each, then a summary line).")
@jobs_option(help="Engrave N scores at once (processes).")
def render_command(
    scores: tuple[str, ...],
    output: Path,
    check_report: Path | None,
    certificate: Path | None,
    row: str | None,
    convention: str,
    fmt: str | None,
    rules_spec: str | None,
    blind: bool,
    scale: int,
    page_width: int,
    report_path: Path | None,
    as_json: bool,
    jobs: int,
) -> None:
    """Engrave SCORE (MusicXML, .mxl, MEI, a JSON piece, or '-' for standard input) with labels,
    violations and repairs marked.

    SCORE may also be a `serialkit generate` run directory: its score.musicxml (or, when the run
    was not released, its candidate.json) is engraved with its certificate and the failures of
    its report. Several scores are engraved one by one into the folder -o DIR (give --to), with
    one line each and a summary (exit 2 if any could not be engraved).

    \b
    Examples:
      serialkit render score.musicxml --check-report check.json -o review.html
      serialkit render out/run -o run.pdf
      serialkit render candidate.musicxml --blind -o panel.png
      cat score.mei | serialkit render - --to svg -o - > score.svg
      serialkit render a.musicxml b.mei out/run --to pdf -o pages/
    """
    from serialkit.io.files.outputs import ensure_writable_file, refuse_sources
    from serialkit.render import render
    from serialkit.render.output import output_format

    one_format(output, fmt, {f: (f".{f}",) for f in ("svg", "png", "pdf")} | {"html": (".html", ".htm")})
    check_row_option(row)  # a bad row, profile or code is one error, not one per score
    check_rules_option(rules_spec)
    to_stdout = str(output) == "-"
    one_standard_output(output=output, report_path=report_path, as_json=as_json)
    if len(scores) > 1:
        raise SystemExit(_render_several(scores, output, fmt, report_path, as_json, jobs, {
            "report": check_report, "certificate": certificate, "blind": blind, "scale": scale,
            "page_width": page_width, "row": row, "convention": convention, "fmt": fmt, "rules": rules_spec}))
    score = Path(scores[0])
    if to_stdout and fmt is None:
        raise click.UsageError("-o - (standard output) needs --to svg|png|pdf|html")
    if into_directory(output):  # -o DIR: the score under its own name, as for several
        if fmt is None:
            raise click.UsageError("give --to FORMAT with -o DIR")
        output = one_output(_named(scores[0]), output, lambda _s: f".{fmt}") or output
    if blind and (check_report or certificate or row):
        click.echo("note: --blind ignores --check-report, --certificate and --row", err=True)
    refuse_sources([None if scores[0] == "-" else score, check_report, certificate], report_path,
                   None if to_stdout else output)
    if not to_stdout:
        output_format(output, fmt)  # an unknown format is refused before any work
        ensure_writable_file(output)
    if report_path is not None:
        ensure_writable_file(report_path)
    with input_path(score) as source, tempfile.TemporaryDirectory(prefix="serialkit-render-") as tmp:
        target = Path(tmp) / f"out.{fmt}" if to_stdout else output
        result = render(
            source, target, report=check_report, certificate=certificate, blind=blind, scale=scale,
            page_width=page_width, row=row, convention=convention, fmt=fmt, rules=rules_spec,
        )
        if to_stdout:
            if len(result.files) != 1:
                raise ScoreWriteError(f"-: the score has {result.pages} pages and {fmt} writes one file "
                                      "per page; use --to pdf or html, or -o FILE")
            sys.stdout.buffer.write(result.files[0].read_bytes())
            sys.stdout.buffer.flush()
    if result.missing:
        shown = ", ".join(result.missing[:5]) + (" ..." if len(result.missing) > 5 else "")
        click.echo(f"warning: {len(result.missing)} noted ids are not in the score: {shown}",
                   err=True)
    data = result.to_dict()
    if to_stdout:
        data["files"] = ["-"]
    if report_path is not None:
        write_report(report_path, data)
    if to_stdout:
        return
    if as_json:
        echo_json(data)
        return
    click.echo(_wrote(data, blind))


def _render_several(scores: tuple[str, ...], output: Path, fmt: str | None, report_path: Path | None,
                    as_json: bool, jobs: int, options: dict[str, Any]) -> int:
    """Several scores, each into ``output``/NAME.FORMAT, as check and convert run several; the exit status."""
    from serialkit.batch import STDIN, WRITES, ScoreInput, output_paths
    from serialkit.cli._batch import run_and_report
    from serialkit.io.dispatch import read_stdin_bytes
    from serialkit.io.files.outputs import ensure_output_dir, ensure_writable_file, refuse_sources
    from serialkit.jobs import render_job

    if str(output) == "-":
        raise click.UsageError("several scores need -o DIR, not -o -")
    if fmt is None:
        raise click.UsageError("give --to FORMAT with several scores (-o DIR)")
    if options["report"] is not None or options["certificate"] is not None:
        raise click.UsageError("--check-report and --certificate belong to one score; render several without them")
    if report_path is not None:
        ensure_writable_file(report_path)
    if scores.count(STDIN) > 1:
        raise click.UsageError("'-' (standard input) can be given once")
    listed = [ScoreInput(STDIN, data=read_stdin_bytes(), relative=Path("stdin")) if s == STDIN else _named(s)
              for s in scores]
    refuse_sources([s.path for s in listed], report_path)
    ensure_output_dir(output)
    outputs = output_paths(listed, output, lambda _s: f".{fmt}")
    blind = bool(options["blind"])
    return run_and_report(render_job, listed, list(outputs), options, jobs=jobs, as_json=as_json,
                          report_path=report_path, line=lambda outcome: _wrote(outcome.record, blind), counts=WRITES)


def _named(score: str) -> Any:
    """A SCORE as given (``batch.Source``, without standard input's bytes): a folder is a `generate`
    run directory, not a folder of scores to scan; its output is named after it."""
    from serialkit.batch import STDIN, ScoreInput

    return ScoreInput(STDIN, relative=Path("stdin")) if score == STDIN else ScoreInput(score, Path(score),
                                                                               relative=Path(Path(score).name))


def _wrote(data: dict[str, Any], blind: bool) -> str:
    """'wrote FILES (N pages; L labels, findings)', for one score's record (``RenderResult.to_dict``)."""
    files = ", ".join(str(f) for f in data["files"])
    what = "blind" if blind else f"{data['labels']} labels, {_tally(data['findings'])}"
    return f"wrote {files} ({data['pages']} page{'s' if data['pages'] != 1 else ''}; {what})"


def _tally(findings: list[dict[str, Any]]) -> str:
    """'1 violation, 5 observations, 16 ambiguities', in the order the review page lists them."""
    names = {"violation": ("violation", "violations"), "unexplained": ("unexplained note", "unexplained notes"),
             "observation": ("observation", "observations"), "ambiguity": ("ambiguity", "ambiguities")}
    counts = Counter(f["kind"] for f in findings)
    return ", ".join(f"{n} {names.get(kind, (kind, kind))[n != 1]}" for kind, n in counts.items()) or "no findings"


def register(cli: Any) -> None:
    """Add ``render`` to the CLI."""
    cli.add_command(render_command)
