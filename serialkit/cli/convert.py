"""CLI: ``serialkit convert IN... -o OUT`` between MusicXML, .mxl, MEI, MIDI and JSON pieces."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import click

from serialkit.batch import WRITES, JobOutcome, is_batch, output_paths
from serialkit.cli._batch import gather, into_directory, one_output, run_and_report, run_one
from serialkit.cli._common import (
    SCORE_FORMATS,
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
from serialkit.core.errors import ScoreWriteError
from serialkit.jobs import convert_job


def _writer_suffix(name: str) -> str:
    """The extension ``--to NAME`` writes: the shared vocabulary's (``mxl`` → ``.mxl``), else a
    plugin writer's first."""
    from serialkit.plugins import registry

    if name in SCORE_FORMATS:
        return SCORE_FORMATS[name][0]
    writers = registry("writers")
    if name not in writers.names():
        known = ", ".join(dict.fromkeys([*SCORE_FORMATS, *writers.names()]))
        raise click.BadParameter(f"{name!r} is not one of {known}", param_hint="'--to'")
    extensions = writers.get(name).meta.get("extensions", ())
    if not extensions:
        raise ScoreWriteError(f"writer {name!r} names no file extension; give -o FILE")
    return str(extensions[0])


@click.command("convert")
@click.argument("inputs", nargs=-1, required=True, metavar="IN...",
                type=click.Path(path_type=str, allow_dash=True))
@output_option("OUT file (its extension picks the format: .musicxml .xml .mxl .mei .mid .midi .json; "
               "'-': standard output, give --to); a DIR (existing, or new written DIR/; give --to) gets the score under its "
               "own name, as it gets each of several inputs or a folder's scores.",
               required=True, file_or_dir=True, stdout=True)
@click.option(
    "--from", "in_format", default=None, metavar="FORMAT",
    help="Force the input reader (musicxml, mei, midi, json) instead of sniffing the content.",
)
@click.option(
    "--to", "out_format", default=None, metavar="FORMAT",
    help="Output format (musicxml, mxl, mei, midi, json) when -o does not name it (-o DIR, -o -).",
)
@recursive_option()
@jobs_option(help="Convert N scores at once (processes).")
@report_option("Also write the JSON summary to FILE ('-': standard output).")
@json_option("Print a JSON summary (several scores: one JSON line each, then a summary line).")
def convert(inputs: tuple[str, ...], output: Path, in_format: str | None, out_format: str | None,
            recursive: bool, jobs: int, report_path: Path | None, as_json: bool) -> None:
    """Convert scores: IN is MusicXML (.musicxml/.xml/.mxl), MEI, MIDI, a JSON piece, or '-' for
    standard input; several inputs or folders (--recursive) go into -o DIR, one file each.

    \b
    Examples:
      serialkit convert score.mei -o score.musicxml
      serialkit convert scores/ --recursive --to musicxml -o converted/ --jobs 2
      cat score.mei | serialkit convert - --to musicxml -o - > score.musicxml
    """
    from serialkit.io.files.outputs import ensure_output_dir, ensure_writable_file, refuse_sources

    one_format(output, out_format)
    if out_format is not None:
        _writer_suffix(out_format)  # an unknown --to is a usage error before any work
    to_stdout = str(output) == "-"
    options: dict[str, Any] = {"from": in_format, "to": out_format}
    if report_path is not None:
        ensure_writable_file(report_path)
    if (to_stdout or is_batch(inputs) or into_directory(output)) and out_format is None:
        raise click.UsageError("give --to FORMAT with -o -, -o DIR or several inputs")
    one_standard_output(output=output, report_path=report_path, as_json=as_json)
    if is_batch(inputs):
        if to_stdout:
            raise click.UsageError("several inputs need -o DIR, not -o -")
        assert out_format is not None
        suffix = _writer_suffix(out_format)
        sources = gather(inputs, recursive)
        refuse_sources([s.path for s in sources], report_path)
        ensure_output_dir(output)
        outputs = output_paths(sources, output, lambda _s: suffix)
        code = run_and_report(convert_job, sources, list(outputs), options, jobs=jobs, as_json=as_json,
                              report_path=report_path, line=_line, counts=WRITES)
        raise SystemExit(code)
    sources = gather(inputs, recursive)
    if into_directory(output):  # -o DIR: the score under its own name, as for several
        assert out_format is not None
        suffix = _writer_suffix(out_format)
        output = one_output(sources[0], output, lambda _s: suffix) or output
    refuse_sources([s.path for s in sources], report_path, None if to_stdout else output)
    if not to_stdout:
        ensure_writable_file(output)
    with tempfile.TemporaryDirectory(prefix="serialkit-convert-") as tmp:
        target = Path(tmp) / f"out{_writer_suffix(out_format)}" if to_stdout and out_format else output
        outcome = run_one(convert_job, sources[0], target, options, stand_in=target if to_stdout else None)
        if to_stdout:
            sys.stdout.buffer.write(target.read_bytes())
            sys.stdout.buffer.flush()
            outcome.record["output"] = "-"
    data = outcome.to_dict()
    if report_path is not None:
        write_report(report_path, data)
    if as_json:
        echo_json(data)
    elif not to_stdout:
        click.echo(_line(outcome))


def _line(outcome: JobOutcome) -> str:
    rec = outcome.record
    notes, heads = rec["events"], rec["noteheads"]
    written = f" ({heads} noteheads, tied continuations included)" if heads != notes else ""
    return (f"wrote {rec['output']}: {notes} note{'s' if notes != 1 else ''}{written}, "
            f"{rec['voices']} voice{'s' if rec['voices'] != 1 else ''}, {rec['bars']} bar{'s' if rec['bars'] != 1 else ''}")


def register(cli: Any) -> None:
    """Add ``convert`` to the CLI."""
    cli.add_command(convert)
