"""CLI: ``serialkit check PIECE`` — every hard predicate, strict and relaxed verdicts, exit 0/1/2."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

import click

from serialkit.batch import CHECKS
from serialkit.check.report import ambiguity_kinds
from serialkit.cli._batch import gather, run_and_report, run_one
from serialkit.cli._common import (
    EXIT_FAIL,
    EXIT_OK,
    check_row_option,
    check_rules_option,
    echo_json,
    jobs_option,
    json_option,
    one_standard_output,
    output_option,
    read_task,
    recursive_option,
    report_option,
    write_report,
)
from serialkit.cli._suggestions import hole_notes, suggestion_lines
from serialkit.core.analysis.result import percent
from serialkit.core.errors import SerialkitError


def _exact(ctx: click.Context, param: click.Parameter, value: str) -> Fraction:
    """A non-negative exact number: ``1/8``, ``0.125`` or ``2`` (never rounded through a float)."""
    try:
        result = Fraction(str(value).strip())
    except (ValueError, ZeroDivisionError):
        raise click.BadParameter(f"{value!r} is not a number like 1/8") from None
    if result < 0:
        raise click.BadParameter(f"{value!r} is negative")
    return result


def register(cli: Any) -> None:
    """Add ``check`` to the CLI."""
    cli.add_command(check)


@click.command("check")
@click.argument("inputs", nargs=-1, required=True, metavar="SCORE...",
                type=click.Path(path_type=str, allow_dash=True))
@click.option("--row", "row_spec", metavar="ROW", help="The row (numbers, note names or a catalog name); default: the piece's own.")
@click.option("--identify", is_flag=True,
              help="Find the row from the music when neither --row nor the piece gives one, and fail "
                   "(exit 2) when none fits. Without it the row is still looked for when the rules "
                   "need one; if none fits, ROW and ORDER are reported as not checked (never a pass).")
@click.option(
    "--convention",
    type=click.Choice(["relative", "absolute"]),
    default=None,
    help="Labelling convention (default: the piece's own, else relative).",
)
@click.option("--strict", "strict_flag", is_flag=True, help="Exit 1 unless every predicate passes (default).")
@click.option("--relaxed", "relaxed_flag", is_flag=True, help="Exit 1 only for failures other than SCHED (and, for a candidate, COMPLETE).")
@click.option("--tolerance", default="0", show_default=True, metavar="N/D", callback=_exact, help="Overlap (quarter notes) allowed before same-pitch-class notes collide.")
@click.option("--repeats", is_flag=True, help="Allow a note to be re-struck at once within a statement.")
@click.option("--oscillation", type=click.IntRange(min=0), default=0, show_default=True, help="Extra notes allowed when alternating two adjacent order positions.")
@click.option("--max-crossing", default="1/10", show_default=True, metavar="N/D", callback=_exact, help="Largest share of notes allowed in voice crossings (grace notes are not judged).")
@click.option("--rules", "rules_spec", metavar="PROFILE",
              help="analysis (default for a score: real-score idioms allowed; COLL, CROSS, RANGE, COMPLETE as "
                   "observations), generation (default for a task-bound candidate: every rule), or "
                   "predicate codes such as ROW,ORDER.")
@click.option("--task", "task_spec", metavar="TASK",
              help="Judge SCORE as a candidate of this task (file, bundled name or '-': standard input) with the one "
                   "gate `serialkit generate` uses: claims, inferred reading, sections, completeness.")
@click.option("--from", "in_format", default=None, metavar="FORMAT",
              help="Force the reader (musicxml, mei, midi, json) instead of sniffing the content.")
@recursive_option()
@jobs_option(help="Check N scores at once (processes).")
@output_option("DIR: write each score's JSON check report there (its file name + .json).", directory=True,
               holds="a directory of reports")
@report_option("Also write the JSON check report to FILE ('-': standard output); for several "
               "scores, every report and the summary.")
@click.option("--show", type=click.IntRange(min=0), default=40, show_default=True, help="Violations listed in the text output.")
@json_option("Print the check report as JSON (several scores: one JSON line each, then a summary line).")
@click.option("--suggest/--no-suggest", "suggest", default=True, show_default=True,
              help="Propose the note most likely meant for each unexplained note and ROW/ORDER finding.")
def check(
    inputs: tuple[str, ...],
    row_spec: str | None,
    identify: bool,
    convention: str | None,
    strict_flag: bool,
    relaxed_flag: bool,
    tolerance: Fraction,
    repeats: bool,
    oscillation: int,
    max_crossing: Fraction,
    rules_spec: str | None,
    task_spec: str | None,
    in_format: str | None,
    recursive: bool,
    jobs: int,
    output: Path | None,
    report_path: Path | None,
    show: int,
    as_json: bool,
    suggest: bool,
) -> None:
    """Check SCORE (a .json piece, MusicXML, .mxl, MEI, MIDI; '-' for standard input) against the
    rules of twelve-tone writing. Several scores or folders (--recursive for sub-folders) are
    checked one by one, in --jobs processes, with one line each and a summary.

    Runs ROW, ORDER, COLL, PC, RANGE, CROSS and SCHED, labels every note with its row form and
    order position when a row is known, and prints the strict and relaxed verdicts.
    Without --row, the row is the piece's own or the one the music shows (as with --identify).
    Exit 0 pass, 1 violations or rules left unchecked, 2 bad input (for several scores: 2 if any was unreadable, else 1
    if any failed, else 0).

    \b
    Example:
      serialkit check fixtures/pieces/demo-piece.json
      serialkit check score.musicxml --row webern-op21 --relaxed --json
      serialkit check ../shared/corpus/ --json --jobs 2
      cat score.mei | serialkit check - --json
    """
    from serialkit.batch import is_batch, output_paths
    from serialkit.core.predicates import Rules
    from serialkit.io.files.outputs import ensure_output_dir, ensure_writable_file, refuse_sources
    from serialkit.jobs import check_job

    if strict_flag and relaxed_flag:  # one gate per check: the two flags contradict each other
        raise SerialkitError("give --strict or --relaxed, not both")
    mode = "relaxed" if relaxed_flag else "strict"
    if max_crossing > 1:
        raise click.BadParameter("must be at most 1", param_hint="--max-crossing")
    one_standard_output(report_path=report_path, as_json=as_json)
    check_row_option(row_spec)  # a bad row, profile or code is one error, not one per score
    check_rules_option(rules_spec)
    if report_path is not None:
        ensure_writable_file(report_path)
    if output is not None:
        ensure_output_dir(output)
    if task_spec == "-" and "-" in inputs:
        raise click.UsageError("standard input can hold the score or the task (--task -), not both")
    task: Any = read_task(task_spec) if task_spec == "-" else task_spec  # read once, for every score
    sources = gather(inputs, recursive)
    refuse_sources([s.path for s in sources], report_path)
    outputs = output_paths(sources, output, lambda _s: ".json", append=True) if output is not None else [None] * len(sources)
    options = {"row": row_spec, "convention": convention, "rules": Rules(tolerance, repeats, oscillation, max_crossing),
               "identify": identify, "mode": mode, "format": in_format, "rules_spec": rules_spec,
               "task": task, "suggest": suggest}
    if is_batch(inputs):
        code = run_and_report(check_job, sources, outputs, options, jobs=jobs, as_json=as_json,
                              report_path=report_path, line=_line, counts=CHECKS)
        raise SystemExit(code)
    outcome = run_one(check_job, sources[0], outputs[0], options)
    data = outcome.record
    data.pop("output", None)
    if report_path is not None:
        write_report(report_path, data)
    if as_json:
        echo_json(data)
    elif report_path is None or str(report_path) != "-":
        _print_text(outcome.title, data, mode, show)
    raise SystemExit(EXIT_OK if outcome.status == "passed" else EXIT_FAIL)


def _line(outcome: Any) -> str:
    """One score's line in a batch: verdict, violation counts, coverage."""
    data = outcome.record
    mode = data.get("mode", "strict")
    counts = ", ".join(f"{code} {n}" for code, n in data["counts"].items() if n)
    word = _verdict_word(outcome.status == "passed", None if data["violations"] else data.get("unchecked"))
    cov = f"; coverage {percent(data['coverage'])}" if data.get("coverage") is not None else ""
    n = len(data["violations"])
    return f"{outcome.source}: {word} ({mode}) {n} violation{'s' if n != 1 else ''}" + (
        f" ({counts})" if counts else "") + cov


def _verdict_word(ok: bool, unchecked: list[str] | None = None) -> str:
    if ok:
        return click.style("pass", fg="green", bold=True)
    if unchecked:  # never a pass: the rules asked for codes that could not run
        return click.style(f"not checked ({', '.join(unchecked)})", fg="red", bold=True)
    return click.style("FAIL", fg="red", bold=True)


def ambiguity_line(entries: Iterable[Mapping[str, Any]]) -> str | None:
    """``16 ambiguities (notes with more than one reading: elision 14, pivot 2), not violations; …``:
    the count ``render`` gives too (``check.report.is_ambiguity``), None when there is none."""
    kinds = ambiguity_kinds(entries)
    n = sum(kinds.values())
    if not n:
        return None
    what = ", ".join(f"{kind} {k}" for kind, k in kinds.most_common())
    return (f"{n} {'ambiguity' if n == 1 else 'ambiguities'} (notes with more than one reading: {what}), "
            "not violations; each with its place in --json")


def _print_text(title_text: str | None, data: dict[str, Any], mode: str, show: int) -> None:
    title = f" — {title_text}" if title_text else ""
    names = [data.get("voice_names", {}).get(v, v) for v in data["voices"]]  # as the score names them
    voices = ("; " if any(", " in n for n in names) else ", ").join(names)
    click.echo(f"{data['source']}{title}")
    n = len(data["voices"])
    click.echo(f"  {data['events']} note{'s' if data['events'] != 1 else ''}, {n} voice{'s' if n != 1 else ''} ({voices})")
    if data["row"] is not None:
        line = f"  row {data['row_names']} ({data['convention']})"
        if data["coverage"] is not None:
            line += f"; labelled by analysis: {percent(data['coverage'])} of notes explained"
            if data["unexplained"]:
                line += f", {len(data['unexplained'])} unexplained"
        click.echo(line)
        if data.get("identification"):
            click.echo(f"  {data['identification']['summary']}")
        ambiguous = ambiguity_line(data.get("ambiguities") or [])
        if ambiguous:
            click.echo(f"  {ambiguous}")
    counts = data["counts"]
    checked = " ".join(f"{code} {n}" for code, n in counts.items())
    profile = data.get("profile") or {}
    rules = f" ({profile['name']} rules)" if profile.get("name") else ""
    click.echo(f"  checked{rules}: {checked or 'nothing (the codes asked for need a row)'}")
    unchecked = [] if data["violations"] else (data.get("unchecked") or [])
    click.echo(
        f"strict: {_verdict_word(data['strict'], unchecked)}   relaxed: "
        f"{_verdict_word(data['relaxed'], unchecked)}   (exit status follows {mode})"
    )
    # why the row's rules did not run leads, when no row was found: what follows is secondary
    leading = [n for n in data["notes"] if (" not checked: " in n and data["row"] is None)
               or "is the row right?" in n]
    for note in leading:
        click.echo(f"note: {note}")
    violations = data["violations"]
    if violations:
        click.echo(f"{len(violations)} violation{'s' if len(violations) != 1 else ''}:")
        for v in violations[:show]:
            ids = ", ".join(v["event_ids"][:4]) + (" …" if len(v["event_ids"]) > 4 else "")
            code = click.style(f"{v['code']:<6}", fg="red")
            click.echo(f"  {code} {v['location'] or ''}" + (f"  [{ids}]" if ids else ""))
            click.echo(f"         {v['message']}")
            for line in suggestion_lines(data, v["event_ids"]) if v["code"] in ("ROW", "ORDER") else ():
                click.echo(f"         {line}")
            for eid in hole_notes(data, v) if v["code"] == "ROW" else ():  # the note standing in the hole
                for line in suggestion_lines(data, [eid]):
                    click.echo(f"         {line} for {_placed(data, eid)}")
        if len(violations) > show:
            click.echo(f"  … and {len(violations) - show} more (use --json for all)")
        shown = {e for v in violations[:show] for e in [*v["event_ids"], *hole_notes(data, v)]}
        rest = [n["event_id"] for n in data.get("suggestions") or () if n["event_id"] not in shown]
        if rest and len(violations) <= show:  # notes standing where a statement has a hole
            click.echo("suggested for notes standing where a statement has a hole:")
            for eid in rest:
                for line in suggestion_lines(data, [eid]):
                    click.echo(f"  {_placed(data, eid)}: {line}")
    observations = data.get("observations") or []
    if observations:
        # with no row, doublings and crossings are the texture, not news: counted, a few shown
        few = min(show, 5) if leading else show
        counted = ""
        if leading:
            codes = Counter(v["code"] for v in observations)
            counted = " — " + ", ".join(f"{code} {n}" for code, n in codes.most_common())
        click.echo(f"{len(observations)} observation{'s' if len(observations) != 1 else ''} "
                   f"(reported, not violations){counted}:")
        for v in observations[:few]:
            click.echo(f"  {v['code']:<6} {v['location']}: {v['message']}")
        if len(observations) > few:
            click.echo(f"  … and {len(observations) - few} more (use --json for all)")
    for note in data["notes"]:
        if note not in leading:
            click.echo(f"note: {note}")


def _placed(data: dict[str, Any], event_id: str) -> str:
    """A suggested note as a reader finds it: ``the E4 at bar 2, beat 3`` (its id when unplaced)."""
    note = next((n for n in data.get("suggestions") or () if n["event_id"] == event_id), None)
    if note is None or not note.get("at"):
        return event_id
    return f"the {note.get('name')} at {note['at']}"
