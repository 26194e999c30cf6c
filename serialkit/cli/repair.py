"""CLI: ``serialkit repair SCORE... --row R -o OUT`` — apply the suggested corrections the gate accepts."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Any

import click

from serialkit.cli._common import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_OK, check_row_option, echo_json
from serialkit.core.errors import SerialkitError


def register(cli: Any) -> None:
    """Add ``repair`` to the CLI."""
    cli.add_command(repair)


@click.command("repair")
@click.argument("scores", metavar="SCORE...", nargs=-1, required=True,
                type=click.Path(exists=True, path_type=Path, allow_dash=True))
@click.option("--row", "row_spec", metavar="ROW", help="The row (numbers, note names or a catalog name); default: the score's own.")
@click.option("--identify", is_flag=True, help="Find the row from the music (the default when neither --row nor the score gives one).")
@click.option("--convention", type=click.Choice(["relative", "absolute"]), default=None,
              help="Labelling convention (default: the score's own, else relative).")
@click.option("-o", "--output", "output", type=click.Path(path_type=Path, allow_dash=True),
              help="The repaired score (one SCORE; '-': standard output, without certificate or review "
                   "page), or a folder for several scores or a folder of them.")
@click.option("--only", "only", multiple=True,
              type=click.Choice(["ROW", "ORDER", "COLL", "CROSS"], case_sensitive=False),
              help="Change only notes that findings of this code name (repeatable; default: every code the "
                   "profile judges; COLL and CROSS need --rules generation).")
@click.option("--rules", "rules_spec", metavar="PROFILE",
              help="The rule profile the gate follows: analysis (default for a score: real-score idioms "
                   "allowed; COLL, CROSS, RANGE as observations), generation, or codes such as ROW,ORDER.")
@click.option("--dry-run", is_flag=True, help="Print the corrections; write nothing.")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=None,
              help="Confidence a suggestion needs before it is applied (default 0.6).")
@click.option("--no-review", is_flag=True, help="Do not write the HTML review page beside the output.")
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON (one entry per score, and a summary).")
def repair(
    scores: tuple[Path, ...],
    row_spec: str | None,
    identify: bool,
    convention: str | None,
    output: Path | None,
    only: tuple[str, ...],
    rules_spec: str | None,
    dry_run: bool,
    threshold: float | None,
    no_review: bool,
    as_json: bool,
) -> None:
    """Correct wrong notes in SCORE (MusicXML, .mxl, MEI or a .json piece), or in every score of a
    folder: each note the row cannot explain gets the note most likely meant (a dropped or added
    accidental, a note a line off, two notes swapped), applied one at a time and kept only when the
    gate accepts the result. With --rules generation, collisions (two voices sounding one pitch
    class at once) and voice crossings are put right too, by the repair ladder's timing rungs
    (trim, yield, retime), each kept only when the gate no longer reports it and reports nothing
    new; the analysis profile (the default) never changes timing.

    Writes the repaired score in the input's format (changed notes coloured and labelled
    ``rewrite P5:7``, ``trim COLL``), OUT-stem.certificate.json (every changed note before and after, and why)
    and OUT-stem.review.html. The source is never written. Exit 0 when every repaired score
    passes the gate, 1 when findings remain, 2 bad input.

    \b
    Examples:
      serialkit repair exercise.musicxml --row webern-op21 -o exercise-fixed.musicxml
      serialkit repair class/ --row "C B G Ab Eb Db D Bb F# F E A" -o class-fixed/
      serialkit repair score.mei --row webern-op21 --dry-run
      serialkit repair score.musicxml --rules generation --only COLL -o fixed.musicxml
    """
    from serialkit.core.suggest import DEFAULT_THRESHOLD
    from serialkit.repairing import repair_score, score_files

    if not dry_run and output is None:
        raise click.UsageError("give -o/--output for the repaired score (or --dry-run)")
    check_row_option(row_spec)
    scores, output, shown = _spool(scores, output, as_json)
    files = score_files(scores)
    batch = len(files) > 1 or any(p.is_dir() for p in scores)
    targets: dict[Path, Path] = {}
    if batch and output is not None:
        from serialkit.batch import Source, output_paths

        # two scores that would share an output name are refused, as check and annotate refuse them
        sources = [Source(str(p), p, relative=Path(p.name)) for p in files]
        targets = dict(zip(files, output_paths(sources, output, lambda s: Path(s.name).suffix), strict=True))
    if batch and output is not None and not dry_run:
        if output.exists() and not output.is_dir():
            raise SerialkitError(f"{output}: several scores are repaired into a folder, and this is a file")
        output.mkdir(parents=True, exist_ok=True)
    results: list[dict[str, Any]] = []
    errors = 0
    for path in files:
        target = (targets[path] if batch else output) if output is not None else None
        try:
            result = repair_score(
                path, row_spec, identify=identify, convention=convention, out=target,
                only=list(only) or None, dry_run=dry_run,
                threshold=DEFAULT_THRESHOLD if threshold is None else threshold,
                review=not no_review and output not in shown,
                rules=rules_spec, name="-" if path in shown else None,
            )
        except SerialkitError as exc:
            if not batch:
                raise
            errors += 1
            click.echo(f"error: {exc}", err=True)
            results.append({"source": str(path), "error": str(exc)})
            continue
        data = result.to_dict()
        if shown:  # standard input or output: named "-", not by the temporary files that held them
            if result.out is not None and output in shown:
                data.update(output="-", certificate=None, review=None)
                sys.stdout.buffer.write(result.out.read_bytes())
                sys.stdout.buffer.flush()
        results.append(data)
        if not as_json:
            with contextlib.redirect_stdout(sys.stderr) if output in shown else contextlib.nullcontext():
                _print(data)
    done = [r for r in results if "error" not in r]
    summary = {
        "scores": len(results),
        "errors": errors,
        "changed_notes": sum(len(r["changes"]) for r in done),
        "scores_changed": sum(1 for r in done if r["changes"]),
        "passed": sum(1 for r in done if r["passed"]),
        "dry_run": dry_run,
    }
    if batch and output is not None and not dry_run:
        from serialkit.io.atomic import atomic_write

        atomic_write(output / "summary.json",
                     json.dumps({"summary": summary, "scores": results}, indent=2, ensure_ascii=False) + "\n")
    if as_json:
        echo_json({"summary": summary, "scores": results} if batch else results[0])
    elif batch:
        n, k = summary["scores"], summary["changed_notes"]
        click.echo(
            f"summary: {n} score{'s' if n != 1 else ''}, {summary['scores_changed']} changed "
            f"({k} note{'s' if k != 1 else ''}), {summary['passed']} pass the gate"
            + (f", {errors} could not be read" if errors else "")
        )
    if errors:
        raise SystemExit(EXIT_BAD_INPUT)
    raise SystemExit(EXIT_OK if all(r["passed"] for r in done) else EXIT_FAIL)


def _spool(scores: tuple[Path, ...], output: Path | None,
           as_json: bool) -> tuple[tuple[Path, ...], Path | None, set[Path]]:
    """``-`` as SCORE (standard input) and as -o (standard output), as check and annotate take
    them: each through a temporary file that lives as long as the command. Returns the scores,
    the output and the temporary paths that stand for ``-``."""
    import tempfile

    from serialkit.io.stdin import read_stdin_bytes, spooled

    dash = Path("-")
    if dash in scores and len(scores) > 1:
        raise click.UsageError("'-' (standard input) is repaired alone")
    to_stdout = output == dash
    if to_stdout and as_json:
        raise click.UsageError("only one of -o - and --json can use standard output")
    if to_stdout and len(scores) == 1 and scores[0].is_dir() or len(scores) > 1 and to_stdout:
        raise click.UsageError("several scores need -o DIR, not -o -")
    ctx = click.get_current_context()
    shown: set[Path] = set()
    if dash in scores:
        scores = (ctx.with_resource(spooled(read_stdin_bytes())),)
        shown.add(scores[0])
    if to_stdout:
        folder = Path(ctx.with_resource(tempfile.TemporaryDirectory(prefix="serialkit-repair-")))
        output = folder / f"repaired{scores[0].suffix}"
        shown.add(output)
    return scores, output, shown


def _written(side: dict[str, Any]) -> str:
    """A note's pitch as the score writes it (its spelling and transposition), else as it sounds."""
    return str(side.get("written") or side["name"])


def _edit(c: dict[str, Any]) -> str:
    """``D4 → D#4  P5:7 of S11  [rewrite; accidental, 82%]``, or for a timing rung
    ``A#3 at bar 6, beat 1 for 4 → at bar 6, beat 1 for 1 quarter  [yield]`` and why."""
    before, after = c["before"], c["after"]
    parts = []
    if before["midi"] != after["midi"] or "onset" not in before:
        parts.append(f"{_written(before)} → {_written(after)}  {c['label']}"
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


def _print(data: dict[str, Any]) -> None:
    verdict = click.style("pass", fg="green", bold=True) if data["passed"] else click.style("FAIL", fg="red", bold=True)
    where = "dry run" if data["dry_run"] else f"→ {data['output']}" if data["output"] else "not written"
    n = len(data["changes"])
    click.echo(f"{data['source']} {where}: {n} note{'s' if n != 1 else ''} changed; gate after: {verdict} "
               f"(unexplained {data['before']['unexplained']} → {data['after']['unexplained']})")
    for c in data["changes"]:
        click.echo(f"  {c['location']}: " + _edit(c))
    for note in data["notes"]:
        click.echo(f"  note: {note}")
    if data["dry_run"]:
        for c in data["held"]:
            click.echo(
                f"  held: {c['location']}: {_written(c['before'])} → {_written(c['after'])}  {c['label']}"
                + (f" of {c['statement']}" if c["statement"] else "")
                + f"  [{c['model']}, {c['confidence']:.0%} < {data['threshold']:g}]"
            )
    if data["certificate"]:
        click.echo(f"  certificate {data['certificate']}" + (f", review {data['review']}" if data["review"] else ""))
