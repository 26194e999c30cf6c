"""CLI: ``serialkit render`` — engrave a score to SVG, PNG, PDF or an HTML review page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from serialkit.cli._common import echo_json


@click.command("render")
@click.argument("score", type=click.Path(path_type=Path))
@click.option(
    "-o", "--output", "out", required=True, type=click.Path(dir_okay=False, path_type=Path),
    help="Output file; .svg, .png, .pdf or .html picks the format (pages 2+ of SVG/PNG are "
    "written as NAME-1.svg, NAME-2.svg, ...).",
)
@click.option(
    "--report", type=click.Path(dir_okay=False, path_type=Path),
    help="Check report JSON (`serialkit check --json`): labels, violations, unexplained notes.",
)
@click.option(
    "--certificate", type=click.Path(dir_okay=False, path_type=Path),
    help="Trace certificate JSON (`serialkit generate`): labels and repair rungs per note.",
)
@click.option("--row", help="Label the score by running the checker with this row (no report).")
@click.option(
    "--convention", type=click.Choice(["relative", "absolute"]), default="relative",
    show_default=True, help="Labelling convention used with --row.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["svg", "png", "pdf", "html"]),
    help="Output format when the file name does not say it.",
)
@click.option("--rules", "rules_spec", metavar="PROFILE",
              help="Rule profile when the checker runs (--row, or a JSON piece): analysis (default for "
                   "a score), generation, or predicate codes such as ROW,ORDER.")
@click.option("--blind", is_flag=True, help="No colours, labels, titles or revealing metadata.")
@click.option("--scale", type=int, default=40, show_default=True, help="Verovio scale (percent).")
@click.option("--page-width", type=int, default=2100, show_default=True, help="Page width (MEI units x10).")
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
def render_command(
    score: Path,
    out: Path,
    report: Path | None,
    certificate: Path | None,
    row: str | None,
    convention: str,
    fmt: str | None,
    rules_spec: str | None,
    blind: bool,
    scale: int,
    page_width: int,
    as_json: bool,
) -> None:
    """Engrave SCORE (MusicXML, .mxl or MEI) with labels, violations and repairs marked.

    SCORE may also be a `serialkit generate` run directory: its score.musicxml (or, when the run
    was not released, its candidate.json) is engraved with its certificate and the failures of
    its report.

    \b
    Examples:
      serialkit render score.musicxml --report check.json -o review.html
      serialkit render out/run -o run.pdf
      serialkit render candidate.musicxml --blind -o panel.png
    """
    from serialkit.render import render

    if blind and (report or certificate or row):
        click.echo("note: --blind ignores --report, --certificate and --row", err=True)
    result = render(
        score, out, report=report, certificate=certificate, blind=blind, scale=scale,
        page_width=page_width, row=row, convention=convention, fmt=fmt, rules=rules_spec,
    )
    if result.missing:
        shown = ", ".join(result.missing[:5]) + (" ..." if len(result.missing) > 5 else "")
        click.echo(f"warning: {len(result.missing)} noted ids are not in the score: {shown}",
                   err=True)
    if as_json:
        echo_json(result.to_dict())
        return
    files = ", ".join(str(f) for f in result.files)
    what = "blind" if blind else f"{result.labels} labels, {len(result.findings)} findings"
    click.echo(f"wrote {files} ({result.pages} page{'s' if result.pages != 1 else ''}; {what})")


def register(cli: Any) -> None:
    """Add ``render`` to the CLI."""
    cli.add_command(render_command)
