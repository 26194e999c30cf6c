"""CLI: ``serialkit repair SCORE... --row R -o OUT`` — apply the suggested corrections the gate accepts."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import click

from serialkit.batch import JobOutcome, ScoreInput, is_batch, output_paths
from serialkit.cli._batch import gather, one_output, own_suffix, run_and_report, run_one
from serialkit.cli._common import (
    EXIT_FAIL,
    EXIT_OK,
    check_row_option,
    echo_json,
    jobs_option,
    json_option,
    output_option,
    recursive_option,
    report_option,
    write_report,
)
from serialkit.core.errors import SerialkitError
from serialkit.jobs import repair_job


def register(cli: Any) -> None:
    """Add ``repair`` to the CLI."""
    cli.add_command(repair)


@click.command("repair")
@click.argument("inputs", nargs=-1, required=True, metavar="SCORE...",
                type=click.Path(path_type=str, allow_dash=True))
@click.option("--row", "row_spec", metavar="ROW", help="The row (numbers, note names or a catalog name); default: the score's own.")
@click.option("--identify", is_flag=True, help="Find the row from the music (the default when neither --row nor the score gives one).")
@click.option("--convention", type=click.Choice(["relative", "absolute"]), default=None,
              help="Labelling convention (default: the score's own, else relative).")
@output_option("The repaired score (one SCORE; '-': standard output, without certificate or review "
               "page); a DIR (existing, or new written DIR/), or for several scores or a folder a DIR, gets each repaired score "
               "under its own name, with its certificate and review page.", file_or_dir=True, stdout=True)
@click.option("--only", "only", multiple=True,
              type=click.Choice(["ROW", "ORDER", "COLL", "CROSS"], case_sensitive=False),
              help="Change only notes that findings of this code name (repeatable; default: every code the "
                   "profile judges; COLL and CROSS need --rules generation).")
@click.option("--rules", "rules_spec", metavar="PROFILE",
              help="The rule profile the gate follows: analysis (default for a score: real-score idioms "
                   "allowed; COLL, CROSS, RANGE, COMPLETE as observations), generation, or codes such as ROW,ORDER.")
@click.option("--dry-run", is_flag=True, help="Print the corrections; write nothing.")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=None,
              help="Confidence a suggestion needs before it is applied (default 0.6).")
@click.option("--no-review", is_flag=True, help="Do not write the HTML review page beside the output.")
@recursive_option()
@jobs_option(help="Repair N scores at once (processes).")
@report_option("Also write what was done as JSON to FILE ('-': standard output); for several scores, "
               "every score's entry and the summary.")
@json_option("Print what was done as JSON (several scores: one JSON line each, then a summary line).")
def repair(
    inputs: tuple[str, ...],
    row_spec: str | None,
    identify: bool,
    convention: str | None,
    output: Path | None,
    only: tuple[str, ...],
    rules_spec: str | None,
    dry_run: bool,
    threshold: float | None,
    no_review: bool,
    recursive: bool,
    jobs: int,
    report_path: Path | None,
    as_json: bool,
) -> None:
    """Correct wrong notes in SCORE (any score check reads: MusicXML, .mxl, MEI, MuseScore,
    MIDI, **kern, ABC or a .json piece; '-' for standard input), or in every score of a folder (--recursive for sub-folders, --jobs processes), with one
    report per score and a summary, as check takes them: each note the row cannot explain gets the
    note most likely meant (a dropped or added accidental, a note a line off, two notes swapped),
    applied one at a time and kept only when the gate accepts the result. With --rules generation,
    collisions (two voices sounding one pitch class at once) and voice crossings are put right too,
    by the repair ladder's timing rungs (trim, yield, retime), each kept only when the gate no
    longer reports it and reports nothing new; the analysis profile (the default) never changes
    timing.

    Writes the repaired score in the format OUT's extension names (MusicXML, .mxl or MuseScore
    .mscz/.mscx for a MusicXML, MuseScore, **kern or ABC score; MEI, JSON or MIDI as the input;
    a folder's scores each in its own format, **kern and ABC as .musicxml; changed notes coloured
    and labelled ``rewrite P5:7``, ``trim COLL``), OUT-stem.certificate.json (every changed note before and after, and why)
    and OUT-stem.review.html: all three or none. The source is never written. Exit 0 when every
    repaired score passes the gate, 1 when findings remain, 2 bad input (several scores: 2 if any
    was unreadable, else 1 if any still fails, else 0).

    \b
    Examples:
      serialkit repair exercise.musicxml --row webern-op21 -o exercise-fixed.musicxml
      serialkit repair class/ --row "C B G Ab Eb Db D Bb F# F E A" -o class-fixed/ --report class-fixed/report.json
      serialkit repair score.mei --row webern-op21 --dry-run
      serialkit repair score.musicxml --rules generation --only COLL -o fixed.musicxml
    """
    from serialkit.check.profiles import profile_for
    from serialkit.core.suggest import DEFAULT_THRESHOLD
    from serialkit.io.files.outputs import ensure_output_dir, ensure_writable_file, refuse_sources
    from serialkit.repair import companion_paths, validate_only

    if not dry_run and output is None:
        raise click.UsageError("give -o/--output for the repaired score (or --dry-run)")
    if dry_run and output is not None:
        click.echo(f"note: --dry-run writes nothing: {output} is not written", err=True)
    to_stdout = output is not None and str(output) == "-"
    stdouts = [x for x in (to_stdout, report_path is not None and str(report_path) == "-", as_json) if x]
    if len(stdouts) > 1:
        raise click.UsageError("only one of -o -, --report - and --json can use standard output")
    if "-" in inputs and len(inputs) > 1:
        raise click.UsageError("'-' (standard input) is repaired alone")
    batch = is_batch(inputs)
    if batch and to_stdout:
        raise click.UsageError("several scores need -o DIR, not -o -")
    check_row_option(row_spec)  # a bad row, profile or --only is one error, not one per score
    validate_only(list(only) or None, profile_for(rules_spec, task_bound=False))
    if report_path is not None:
        ensure_writable_file(report_path)
    sources = gather(inputs, recursive)  # the file kinds check takes
    refuse_sources([s.path for s in sources], report_path)
    options: dict[str, Any] = {
        "row": row_spec, "identify": identify, "convention": convention, "only": list(only) or None,
        "dry_run": dry_run, "threshold": DEFAULT_THRESHOLD if threshold is None else threshold,
        "review": not no_review and not to_stdout, "rules": rules_spec,
    }
    if batch:
        outputs: list[Path | None] = [None] * len(sources)
        if output is not None:  # two scores that would share an output name are refused, as check does
            targets = output_paths(sources, output, _out_suffix)
            stems: dict[Path, str] = {}
            for src, path in zip(sources, targets, strict=True):  # ben.mscz and ben.mid: one certificate
                stem, page = companion_paths(path, options["review"])
                refuse_sources([s.path for s in sources], stem, page)
                if stem in stems:
                    raise SerialkitError(f"{src.name} and {stems[stem]} would both be certified in {stem}; "
                                         "give them separately or rename one")
                stems[stem] = src.name
            if not dry_run:
                ensure_output_dir(output)
                outputs = list(targets)
        code = run_and_report(repair_job, sources, outputs, options, jobs=jobs, as_json=as_json,
                              report_path=report_path, line=_line, tail=_tail)
        raise SystemExit(code)
    output = one_output(sources[0], output, _out_suffix, make=not dry_run)  # -o DIR: as for several scores
    if output is not None and not to_stdout and not dry_run:
        refuse_sources([s.path for s in sources], output)
        ensure_writable_file(output)  # an unwritable output is one error before any work
        companions = [p for p in companion_paths(output, options["review"]) if p is not None]
        refuse_sources([s.path for s in sources], *companions)
        if report_path is not None and str(report_path) != "-" and any(
                Path(report_path).resolve() == p.resolve() for p in (output, *companions)):
            raise SerialkitError(f"{report_path}: the report and the repaired score's files would share this "
                                 "path; give another --report path")
        for companion in companions:
            ensure_writable_file(companion)  # all three or none
    with tempfile.TemporaryDirectory(prefix="serialkit-repair-") as tmp:
        target = None if dry_run else output
        if to_stdout and not dry_run:  # through a file of the input's format, then standard output
            target = Path(tmp) / f"repaired{own_suffix(sources[0])}"
        options["progress"] = _Progress(sources[0].name)  # one score, in this process
        outcome = run_one(repair_job, sources[0], target, options, stand_in=target if target != output else None)
        data = outcome.record
        if to_stdout and data["output"] is not None and target is not None:
            sys.stdout.buffer.write(target.read_bytes())
            sys.stdout.buffer.flush()
            data.update(output="-", certificate=None, review=None)  # the temporary files are gone
    if report_path is not None:
        write_report(report_path, data)
    if as_json:
        echo_json(data)
    elif report_path is None or str(report_path) != "-":
        click.echo(_text(data), err=to_stdout)
    raise SystemExit(EXIT_OK if data["passed"] else EXIT_FAIL)


class _Progress:
    """A line on standard error per planning round of a repair that has run for more than
    ``AFTER`` seconds: ``repair NAME: round 3 (2 corrections so far), 41 s``."""

    AFTER = 5.0

    def __init__(self, name: str) -> None:
        import time

        self.name, self.start = name, time.monotonic()

    def __call__(self, round_: int, applied: int) -> None:
        import time

        spent = time.monotonic() - self.start
        if spent >= self.AFTER:
            click.echo(f"repair {self.name}: round {round_} ({applied} correction{'s' if applied != 1 else ''} "
                       f"so far), {spent:.0f} s", err=True)


def _out_suffix(source: ScoreInput) -> str:
    """The extension of a source's repaired copy in ``-o DIR``: its own format's where repair writes it."""
    from serialkit.repair import output_suffix

    return output_suffix(source.path) if source.path is not None else own_suffix(source)


def _line(outcome: JobOutcome) -> str:
    """One score's entry in a batch: what was done, each changed note (as for one score)."""
    return _text(outcome.record)


def _tail(totals: dict[str, int]) -> str:
    """What the batch summary adds: ``; 3 changed (4 notes)``."""
    k = totals.get("changed_notes", 0)
    return f"; {totals.get('scores_changed', 0)} changed ({k} note{'s' if k != 1 else ''})"


def _written(side: dict[str, Any]) -> str:
    """A note's pitch as the score writes it (its spelling and transposition)."""
    return str(side["name"])


def _pitches(before: dict[str, Any], after: dict[str, Any]) -> str:
    """``C5 → A4``, and for a transposing part what sounds: ``C5 → A4 (sounding A#4 → G4)``."""
    from serialkit.core.errors import RowError
    from serialkit.core.spelling import parse_pitch

    text = f"{_written(before)} → {_written(after)}"
    try:
        transposed = parse_pitch(_written(before)) != before["midi"]
    except RowError:
        transposed = False
    return text + (f" (sounding {before['sounding']} → {after['sounding']})" if transposed else "")


def _edit(c: dict[str, Any]) -> str:
    """``D4 → D#4  P5:7 of S11  [rewrite; accidental, 82%]``, or for a timing rung
    ``A#3 at bar 6, beat 1 for 4 → at bar 6, beat 1 for 1 quarter  [yield]`` and why."""
    before, after = c["before"], c["after"]
    parts = []
    if before["midi"] != after["midi"] or "onset" not in before:
        parts.append(f"{_pitches(before, after)}  {c['label']}"
                     + (f" of {c['statement']}" if c["statement"] else ""))
    if "onset" in before:
        unit = "quarter" if after["duration"] in (1, "1") else "quarters"
        parts.append(f"{_written(after)} at {before['at']} for {before['duration']} → at {after['at']} for "
                     f"{after['duration']} {unit}")
    rungs = "; ".join(
        f"{r}; {c['model']}, {c['confidence']:.0%}" if r == "rewrite" and c["model"] else r for r in c["rungs"]
    )
    why = f"\n      why: {c['why']}" if "onset" in before else ""
    return "; ".join(parts) + f"  [{rungs}]" + why


def _text(data: dict[str, Any]) -> str:
    """One score's report: what was done, each changed note, notes, held suggestions, files."""
    lines: list[str] = []
    verdict = click.style("pass", fg="green", bold=True) if data["passed"] else click.style("FAIL", fg="red", bold=True)
    where = "dry run" if data["dry_run"] else f"→ {data['output']}" if data["output"] else "not written"
    n = len(data["changes"])
    lines.append(f"{data['source']} {where}: {n} note{'s' if n != 1 else ''} changed; gate after: {verdict} "
                 f"(unexplained {data['before']['unexplained']} → {data['after']['unexplained']})")
    for c in data["changes"]:
        lines.append(f"  {c['location']}: " + _edit(c))
    for note in data["notes"]:
        lines.append(f"  note: {note}")
    if data["dry_run"]:
        for c in data["held"]:
            lines.append(
                f"  held: {c['location']}: {_pitches(c['before'], c['after'])}  {c['label']}"
                + (f" of {c['statement']}" if c["statement"] else "")
                + f"  [{c['model']}, {c['confidence']:.0%} < {data['threshold']:g}]"
            )
    if data["certificate"]:
        lines.append(f"  certificate {data['certificate']}" + (f", review {data['review']}" if data["review"] else ""))
    return "\n".join(lines)
