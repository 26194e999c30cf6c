"""CLI: ``serialkit repair SCORE... --row R -o OUT`` — apply the suggested corrections the gate accepts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from serialkit.cli._common import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_OK, echo_json
from serialkit.core.errors import SerialkitError


def register(cli: Any) -> None:
    """Add ``repair`` to the CLI."""
    cli.add_command(repair)


@click.command("repair")
@click.argument("scores", metavar="SCORE...", nargs=-1, required=True,
                type=click.Path(exists=True, path_type=Path))
@click.option("--row", "row_spec", metavar="ROW", help="The row (numbers, note names or a catalog name); default: the score's own.")
@click.option("--identify", is_flag=True, help="Find the row from the music (the default when neither --row nor the score gives one).")
@click.option("--convention", type=click.Choice(["relative", "absolute"]), default=None,
              help="Labelling convention (default: the score's own, else relative).")
@click.option("-o", "--output", "output", type=click.Path(path_type=Path),
              help="The repaired score (one SCORE), or a folder for several scores or a folder of them.")
@click.option("--only", "only", multiple=True, type=click.Choice(["ROW", "ORDER", "COLL", "CROSS"]),
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

    files = score_files(scores)
    batch = len(files) > 1 or any(p.is_dir() for p in scores)
    if not dry_run and output is None:
        raise click.UsageError("give -o/--output for the repaired score (or --dry-run)")
    if batch and output is not None and not dry_run:
        if output.exists() and not output.is_dir():
            raise SerialkitError(f"{output}: several scores are repaired into a folder, and this is a file")
        output.mkdir(parents=True, exist_ok=True)
    results: list[dict[str, Any]] = []
    errors = 0
    for path in files:
        target = (output / path.name if batch else output) if output is not None else None
        try:
            result = repair_score(
                path, row_spec, identify=identify, convention=convention, out=target,
                only=list(only) or None, dry_run=dry_run,
                threshold=DEFAULT_THRESHOLD if threshold is None else threshold, review=not no_review,
                rules=rules_spec,
            )
        except SerialkitError as exc:
            if not batch:
                raise
            errors += 1
            click.echo(f"error: {exc}", err=True)
            results.append({"source": str(path), "error": str(exc)})
            continue
        data = result.to_dict()
        results.append(data)
        if not as_json:
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
        click.echo(
            f"summary: {summary['scores']} scores, {summary['scores_changed']} changed "
            f"({summary['changed_notes']} notes), {summary['passed']} pass the gate"
            + (f", {errors} could not be read" if errors else "")
        )
    if errors:
        raise SystemExit(EXIT_BAD_INPUT)
    raise SystemExit(EXIT_OK if all(r["passed"] for r in done) else EXIT_FAIL)


def _edit(c: dict[str, Any]) -> str:
    """``D4 → D#4  P5:7 of S11  [rewrite; accidental, 82%]``, or for a timing rung
    ``A#3 at bar 6, beat 1 for 4 → at bar 6, beat 1 for 1 quarter  [yield]`` and why."""
    before, after = c["before"], c["after"]
    parts = []
    if before["midi"] != after["midi"] or "onset" not in before:
        parts.append(f"{before['name']} → {after['name']}  {c['label']}"
                     + (f" of {c['statement']}" if c["statement"] else ""))
    if "onset" in before:
        unit = "quarter" if after["duration"] in (1, "1") else "quarters"
        parts.append(f"{after['name']} at {before['at']} for {before['duration']} → at {after['at']} for "
                     f"{after['duration']} {unit}")
    rungs = "; ".join(
        f"{r}; {c['model']}, {c['confidence']:.0%}" if r == "rewrite" and c["model"] else r for r in c["rungs"]
    )
    why = f"\n      why: {c['why']}" if "onset" in before else ""
    return "; ".join(parts) + f"  [{rungs}]" + why


def _print(data: dict[str, Any]) -> None:
    verdict = click.style("pass", fg="green", bold=True) if data["passed"] else click.style("FAIL", fg="red", bold=True)
    where = "dry run" if data["dry_run"] else f"→ {data['output']}"
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
                f"  held: {c['location']}: {c['before']['name']} → {c['after']['name']}  {c['label']}"
                + (f" of {c['statement']}" if c["statement"] else "")
                + f"  [{c['model']}, {c['confidence']:.0%} < {data['threshold']:g}]"
            )
    for eid in data["withdrawn"]:
        click.echo(f"  withdrawn: {eid} (the gate found something new on it)")
    if data["certificate"]:
        click.echo(f"  certificate {data['certificate']}" + (f", review {data['review']}" if data["review"] else ""))
