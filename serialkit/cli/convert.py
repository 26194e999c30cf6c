"""CLI: ``serialkit convert IN OUT`` between MusicXML, .mxl, MEI, MIDI and JSON pieces."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from serialkit.cli._common import echo_json


@click.command("convert")
@click.argument("source", type=click.Path(dir_okay=False, path_type=Path), metavar="IN")
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path), metavar="OUT")
@click.option(
    "--from", "in_format", default=None, metavar="FORMAT",
    help="Force the input reader (musicxml, mei, midi, json) instead of sniffing the content.",
)
@click.option(
    "--to", "out_format", default=None, metavar="FORMAT",
    help="Force the output writer (musicxml, mei, midi, json) instead of the OUT extension.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary.")
def convert(source: Path, out: Path, in_format: str | None, out_format: str | None, as_json: bool) -> None:
    """Convert a score: IN is MusicXML (.musicxml/.xml/.mxl), MEI, MIDI or a JSON piece; OUT's
    extension picks the format (.musicxml .xml .mxl .mei .mid .midi .json)."""
    from serialkit.io import read_score, write_score

    piece = read_score(source, format=in_format)
    write_score(piece, out, format=out_format)
    summary: dict[str, Any] = {
        "in": str(source),
        "out": str(out),
        "format": piece.metadata.get("format"),
        "events": len(piece.events),
        "noteheads": sum(max(1, len(e.tied_ids)) for e in piece.events),
        "voices": len(piece.voices),
        "bars": len(piece.bar_list()),
    }
    if as_json:
        echo_json(summary)
    else:
        click.echo(
            f"wrote {out}: {summary['events']} events ({summary['noteheads']} noteheads), "
            f"{summary['voices']} voices, {summary['bars']} bars"
        )


def register(cli: Any) -> None:
    """Add ``convert`` to the CLI."""
    cli.add_command(convert)
