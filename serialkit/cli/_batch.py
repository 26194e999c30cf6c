"""The CLI side of many scores at once: progress bar, one line (or JSON line) per score, summary."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from serialkit.batch import (
    STDIN,
    UNREADABLE,
    VERDICTS,
    Job,
    JobOutcome,
    ScoreInput,
    Summary,
    collect,
    run_batch,
)
from serialkit.cli._common import echo_json_line, is_tty, names_directory, write_report
from serialkit.core.errors import SerialkitError


def gather(inputs: Sequence[str], recursive: bool, suffixes: Sequence[str] | None = None) -> list[ScoreInput]:
    """The sources named on the command line, standard input read once into memory; a folder
    gives its files of ``suffixes`` (default: every registered reader's)."""
    if sum(1 for i in inputs if i == STDIN) > 1:
        raise click.UsageError("'-' (standard input) can be given once")
    sources = collect(inputs, recursive=recursive, suffixes=suffixes)
    if not sources:
        raise SerialkitError(f"{', '.join(inputs)}: no scores found"
                             + (f" ({', '.join(suffixes)})" if suffixes else "")
                             + ("" if recursive else " (use --recursive for sub-folders)"))
    out = []
    for src in sources:
        if src.name == STDIN:
            from serialkit.io.dispatch import read_stdin_bytes

            src = ScoreInput(STDIN, data=read_stdin_bytes(), relative=src.relative)
        out.append(src)
    return out


def own_suffix(source: ScoreInput) -> str:
    """The extension of a source's own format: its name's, or for standard input the one its
    content calls for (``.mei`` for MEI, ``.mxl`` for a compressed MusicXML, …), so a score written
    to ``-o -`` without ``--to`` is in the format that came in, as it is for a file."""
    if source.data is None:
        return Path(source.name).suffix.lower()
    from serialkit.io.dispatch import spool_suffix

    return spool_suffix(source.data)


def into_directory(output: Path | None) -> bool:
    """True when ``-o`` names a directory (an existing one, or ``-o new/``): one score then goes
    into it under its own name, as each of several scores does (``-o DIR`` means the same for one
    score as for many)."""
    return names_directory(output)


def one_output(source: ScoreInput, output: Path | None, suffix: Callable[[ScoreInput], str], *,
               make: bool = True) -> Path | None:
    """Where one score's output goes: ``-o FILE`` (or ``-``, or nothing) as given; ``-o DIR`` the
    score's name in it with ``suffix`` — the path several scores get (``output_paths``: the source
    itself is refused) — the directory made one level deep first, as for several, unless not
    ``make`` (nothing will be written: a dry run)."""
    if not into_directory(output):
        return output
    from serialkit.batch import output_paths
    from serialkit.io.files.outputs import ensure_output_dir

    assert output is not None
    target = output_paths([source], output, suffix)[0]
    if make:
        ensure_output_dir(output)
    return target


def run_one(job: Job, source: ScoreInput, output: Path | None, options: dict[str, Any], *,
            stand_in: Path | None = None) -> JobOutcome:
    """One score's outcome; an unreadable score is its one-line error. ``stand_in``: a temporary
    file standing for standard output (``-o -``), named ``-`` in the error, never by its path."""
    outcome = next(run_batch(job, [source], [output], options))
    if outcome.status == UNREADABLE:
        error = str(outcome.error)
        raise SerialkitError(error.replace(str(stand_in), STDIN) if stand_in is not None else error)
    return outcome


def run_and_report(job: Job, sources: Sequence[ScoreInput], outputs: Sequence[Path | None],
                   options: dict[str, Any], *, jobs: int, as_json: bool, report_path: Path | None,
                   line: Callable[[JobOutcome], str], tail: Callable[[dict[str, int]], str] | None = None,
                   counts: tuple[str, ...] = VERDICTS) -> int:
    """Run a batch: one line per score (``line``) or one JSON line with ``--json``, then the
    summary (``tail``: what the command adds to its text line, from the summary's tallies;
    ``counts``: the statuses it counts, ``batch.WRITES`` for a command that writes without
    judging); ``--report FILE`` gets every record and the summary. Returns the exit status."""
    summary = Summary(counts=counts)
    aside = report_path is not None and str(report_path) == "-"  # stdout carries the report: text to stderr
    records: list[dict[str, Any]] = []
    bar_on = is_tty() and len(sources) > 1
    bar: Any = None
    if bar_on:
        bar = click.progressbar(length=len(sources), label="scores", file=sys.stderr, show_pos=True)
        bar.__enter__()
    try:
        for outcome in run_batch(job, sources, outputs, options, jobs=jobs,
                                 progress=bar.update if bar is not None else None):
            summary.add(outcome)
            if report_path is not None:
                records.append(outcome.to_dict())
            if bar is not None:
                sys.stderr.write("\r\033[K")
            if as_json:
                echo_json_line(outcome.to_dict())
            elif outcome.status == UNREADABLE:
                click.echo(f"error: {outcome.error}", err=True)
            else:
                click.echo(line(outcome), err=aside)
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    totals = summary.to_dict()
    if as_json:
        echo_json_line({"summary": totals})
    else:
        click.echo(f"{totals['scores']} score{'s' if totals['scores'] != 1 else ''}: "
                   + ", ".join(f"{totals[status]} {status}" for status in counts)
                   + (tail(totals) if tail is not None else ""), err=aside)
    if report_path is not None:
        write_report(report_path, {"scores": records, "summary": totals})
    return summary.exit_code
