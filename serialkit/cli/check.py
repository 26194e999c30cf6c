"""CLI: ``serialkit check PIECE`` — every hard predicate, strict and relaxed verdicts, exit 0/1/2."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import click

from serialkit.cli._common import EXIT_FAIL, EXIT_OK, echo_json
from serialkit.cli._suggestions import suggestion_lines
from serialkit.core.piece import Piece
from serialkit.core.rows import Row

JSON_SUFFIXES = (".json",)


def _exact(ctx: click.Context, param: click.Parameter, value: str) -> Fraction:
    """A non-negative exact number: ``1/8``, ``0.125`` or ``2`` (never rounded through a float)."""
    try:
        result = Fraction(str(value).strip())
    except (ValueError, ZeroDivisionError):
        raise click.BadParameter(f"{value!r} is not a number like 1/8") from None
    if result < 0:
        raise click.BadParameter(f"{value!r} is negative")
    return result


def read_piece(path: str | Path) -> Piece:
    """A piece from a JSON piece file, or from any score ``serialkit.io.read_score`` reads."""
    p = Path(path)
    if p.suffix.lower() in JSON_SUFFIXES:
        from serialkit.io.jsonio import load_piece

        return load_piece(p)
    from serialkit.io import read_score

    return read_score(p)


def register(cli: Any) -> None:
    """Add ``check`` to the CLI."""
    cli.add_command(check)


@click.command("check")
@click.argument("piece_path", metavar="PIECE", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--row", "row_spec", metavar="ROW", help="The row (numbers, note names or a catalog name); default: the piece's own.")
@click.option("--identify", is_flag=True, help="Find the row from the music when neither --row nor the piece gives one.")
@click.option(
    "--convention",
    type=click.Choice(["relative", "absolute"]),
    default=None,
    help="Labelling convention (default: the piece's own, else relative).",
)
@click.option("--strict", "mode", flag_value="strict", default=True, help="Exit 1 unless every predicate passes (default).")
@click.option("--relaxed", "mode", flag_value="relaxed", help="Exit 1 only for failures other than SCHED (and, for a candidate, COMPLETE).")
@click.option("--tolerance", default="0", show_default=True, metavar="N/D", callback=_exact, help="Overlap (quarter notes) allowed before same-pitch-class notes collide.")
@click.option("--repeats", is_flag=True, help="Allow a note to be re-struck at once within a statement.")
@click.option("--oscillation", type=click.IntRange(min=0), default=0, show_default=True, help="Extra notes allowed when alternating two adjacent order positions.")
@click.option("--max-crossing", default="1/10", show_default=True, metavar="N/D", callback=_exact, help="Largest share of noteheads allowed in voice crossings.")
@click.option("--rules", "rules_spec", metavar="PROFILE",
              help="analysis (default for a score: real-score idioms allowed; COLL, CROSS, RANGE as "
                   "observations), generation (default for a task-bound candidate: every rule), or "
                   "predicate codes such as ROW,ORDER.")
@click.option("--task", "task_spec", metavar="TASK",
              help="Judge PIECE as a candidate of this task (file or bundled name) with the one "
                   "gate `serialkit generate` uses: claims, inferred reading, sections, completeness.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path), help="Also write the JSON check report to this file.")
@click.option("--show", type=click.IntRange(min=0), default=40, show_default=True, help="Violations listed in the text output.")
@click.option("--json", "as_json", is_flag=True, help="Print the check report as JSON.")
@click.option("--suggest/--no-suggest", "suggest", default=True, show_default=True, help="Propose the note most likely meant for each unexplained note and ROW/ORDER finding.")
def check(
    piece_path: Path,
    row_spec: str | None,
    identify: bool,
    convention: str | None,
    mode: str,
    tolerance: Fraction,
    repeats: bool,
    oscillation: int,
    max_crossing: Fraction,
    rules_spec: str | None,
    task_spec: str | None,
    report_path: Path | None,
    show: int,
    as_json: bool,
    suggest: bool,
) -> None:
    """Check PIECE (a .json piece, MusicXML, .mxl or MEI) against the rules of twelve-tone writing.

    Runs ROW, ORDER, COLL, PC, RANGE, CROSS and SCHED, labels every note with its row form and
    order position when a row is known, and prints the strict and relaxed verdicts.
    Exit 0 pass, 1 violations, 2 bad input.

    \b
    Example:
      serialkit check fixtures/pieces/demo-piece.json
      serialkit check score.musicxml --row webern-op21 --relaxed --json
    """
    from serialkit.check import check_piece
    from serialkit.check.profiles import profile_for
    from serialkit.core.predicates import Rules
    from serialkit.io.atomic import atomic_write

    if max_crossing > 1:
        raise click.BadParameter("must be at most 1", param_hint="--max-crossing")
    piece = read_piece(piece_path)
    rules = Rules(tolerance, repeats, oscillation, max_crossing)
    task = None
    if task_spec is not None:
        from serialkit.harness import load_task
        from serialkit.harness.gate import rules_for

        task = load_task(task_spec)
        rules = rules_for(task)
        piece = task.frame(piece.events)
    task_bound = task is not None or piece.blueprint is not None
    if task_bound and rules_spec not in (None, "generation"):
        raise click.UsageError(f"--rules {rules_spec}: a task-bound candidate is judged by the generation "
                               "rules of the gate (drop --rules, or check the score without its task)")
    profile = profile_for(rules_spec, rules, task_bound=task_bound)
    row = Row.parse(row_spec) if row_spec else None
    report = check_piece(piece, row=row, convention=convention, identify=identify, source=str(piece_path),
                         profile=profile, suggest=suggest)
    data = report.to_dict()
    passed = report.passed(mode)
    if task_bound and (row is not None or piece.row is not None):
        passed = _gate(piece, row, convention, profile.rules, data, mode, task)
    data["mode"] = mode
    if report_path is not None:
        import json

        atomic_write(report_path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    if as_json:
        echo_json(data)
    else:
        _print_text(piece, data, mode, show)
    raise SystemExit(EXIT_OK if passed else EXIT_FAIL)


def _gate(piece: Piece, row: Row | None, convention: str | None, rules: Any, data: dict[str, Any],
          mode: str, task: Any = None) -> bool:
    """Judge a task-bound candidate with the one gate and put its verdict into the report."""
    from serialkit.check.gate import gate_candidate

    framed = piece.copy(row=row or piece.row, convention=convention or piece.convention)
    limits = None
    if task is not None:
        from serialkit.harness.gate import limits_for

        limits = limits_for(task)
    verdict = gate_candidate(framed, rules, limits=limits)
    checked = list(dict.fromkeys([*data["checked"], *verdict.counts()]))
    data.update(
        strict=verdict.strict, relaxed=verdict.relaxed, counts={c: verdict.counts().get(c, 0) for c in checked},
        violations=[{k: v.get(k) for k in ("code", "event_ids", "message", "location", "tags")}
                    for v in verdict.violations],
        labels=dict(verdict.labels), gate=verdict.to_dict(),
    )
    data["checked"] = checked
    data["notes"] = [*data["notes"], *verdict.notes]
    return verdict.passed(mode)


def _verdict_word(ok: bool) -> str:
    return click.style("pass", fg="green", bold=True) if ok else click.style("FAIL", fg="red", bold=True)


def _print_text(piece: Piece, data: dict[str, Any], mode: str, show: int) -> None:
    title = f" — {piece.title}" if piece.title else ""
    names = {v.id: v.name for v in piece.voices if v.name}
    voices = ", ".join(names.get(v, v) for v in data["voices"])  # as the score names them
    click.echo(f"{data['source']}{title}")
    click.echo(f"  {data['events']} events, {len(data['voices'])} voices ({voices})")
    if data["row"] is not None:
        line = f"  row {data['row_names']} ({data['convention']})"
        if data["coverage"] is not None:
            line += f"; labelled by analysis: {data['coverage']:.1%} of notes explained"
            if data["unexplained"]:
                line += f", {len(data['unexplained'])} unexplained"
        click.echo(line)
        if data.get("identification"):
            click.echo(f"  {data['identification']['summary']}")
    counts = data["counts"]
    checked = " ".join(f"{code} {n}" for code, n in counts.items())
    profile = data.get("profile") or {}
    rules = f" ({profile['name']} rules)" if profile.get("name") else ""
    click.echo(f"  checked{rules}: {checked}")
    click.echo(
        f"strict: {_verdict_word(data['strict'])}   relaxed: {_verdict_word(data['relaxed'])}"
        f"   (exit status follows {mode})"
    )
    violations = data["violations"]
    if violations:
        click.echo(f"{len(violations)} violation{'s' if len(violations) != 1 else ''}:")
        for v in violations[:show]:
            ids = ", ".join(v["event_ids"][:4]) + (" …" if len(v["event_ids"]) > 4 else "")
            code = click.style(f"{v['code']:<6}", fg="red")
            click.echo(f"  {code} {v['location']}  [{ids}]")
            click.echo(f"         {v['message']}")
            for line in suggestion_lines(data, v["event_ids"]) if v["code"] in ("ROW", "ORDER") else ():
                click.echo(f"         {line}")
        if len(violations) > show:
            click.echo(f"  … and {len(violations) - show} more (use --json for all)")
    observations = data.get("observations") or []
    if observations:
        click.echo(f"{len(observations)} observation{'s' if len(observations) != 1 else ''} "
                   "(reported, not violations):")
        for v in observations[:show]:
            click.echo(f"  {v['code']:<6} {v['location']}: {v['message']}")
        if len(observations) > show:
            click.echo(f"  … and {len(observations) - show} more (use --json for all)")
    for note in data["notes"]:
        click.echo(f"note: {note}")
