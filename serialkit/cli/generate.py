"""CLI: ``serialkit generate`` — one generate–verify–repair–trace run (or a baseline) on a task."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import click

from serialkit.cli._common import (
    EXIT_FAIL,
    EXIT_OK,
    echo_json,
    force_option,
    json_option,
    output_option,
    proposer_options,
    read_task,
    timeout_option,
    with_timeout,
)
from serialkit.core.errors import ProposerError, TaskError
from serialkit.interrupts import Interruptions


def _summary(result: Any, out_dir: Path) -> None:
    rec = result.to_record()
    state = "released" if result.released else "abstained"
    click.echo(f"{state}: {result.task.name} ({result.variant}, {rec['proposer']}, seed {rec['seed']}) — "
               f"strict {'pass' if result.verdict.strict else 'FAIL'}, "
               f"relaxed {'pass' if result.verdict.relaxed else 'FAIL'}")
    click.echo(f"notes {rec['notes']}, delivered {rec['delivered']} of {rec['scheduled']} scheduled; repairs "
               + (", ".join(f"{k} {v}" for k, v in rec["repairs"].items()) or "none")
               + f"; dropped {rec['drops']}")
    shares = rec["authorship"]
    click.echo("authorship: " + ", ".join(f"{k} {v:.0%}" for k, v in shares.items() if v or k == "model")
               + (f" (ladder {rec['ladder']})" if rec.get("ladder") else ""))
    click.echo(f"proposer calls {rec['calls']}, tokens {rec['prompt_tokens']} in / "
               f"{rec['completion_tokens']} out, {rec['seconds']:.2f} s")
    if not result.released:
        failures = result.report["failures"]
        for failure in failures[:12]:
            where = f" ({failure['location']})" if failure.get("location") else ""
            click.echo(f"  {failure['code']}{where}: {failure['message']}")
        if len(failures) > 12:
            click.echo(f"  ... and {len(failures) - 12} more in report.json")
    for note in result.report.get("notes", []):
        click.echo(f"note: {note}", err=True)
    click.echo(f"outputs in {out_dir}/: " + ", ".join(Path(p).name for p in result.outputs.values()))


def _list_tasks(ctx: click.Context, _param: Any, value: bool) -> None:
    """Print the bundled example tasks and exit (an eager option)."""
    if not value or ctx.resilient_parsing:
        return
    from serialkit.harness import list_tasks, load_task

    for name in list_tasks():
        t = load_task(name)
        click.echo(f"{name:<18} {len(t.voices)} voices, {t.bars} bars, {len(t.all_slots())} notes — {t.description}")
    ctx.exit(EXIT_OK)


@click.command("generate")
@click.argument("task")
@output_option("Run directory for score.musicxml, certificate.json, report.json, transcript.jsonl "
               "(refused if it has files in it, unless --force).", required=True, directory=True,
               holds="a run directory")
@force_option("Write over an existing run directory (its earlier run files are replaced).")
@proposer_options(None, "stochastic (offline; default when no endpoint is configured), openai, replay "
                        "(needs -O transcript=FILE), or a plugin's.")
@timeout_option()
@click.option("--seed", type=int, default=None, help="Seed (default 0; a replay defaults to the recorded seed).")
@click.option("--attempts", type=click.IntRange(1, 50), default=None, help="Override the task's attempt budget K.")
@click.option("--variant", type=click.Choice(["harness", "harness-paper", "raw", "self-refine", "soft-rules"]),
              default=None, help="harness (default), harness-paper (= --ladder paper) or a baseline.")
@click.option("--ladder", type=click.Choice(["serialkit", "paper"]), default=None,
              help="The harness's repair ladder: serialkit (default; deterministic rewrite and reflow) or the "
                   "paper's (trim, yield, retime, model patch, model row-segment rewrite).")
@click.option("--strict/--relaxed", "strict", default=True, help="Release on the strict gate (default) or relaxed.")
@click.option("--review/--no-review", default=True,
              help="Also write annotated.musicxml and review.html for a released run (default on).")
@json_option("Print the run record as JSON.")
@click.option("--list-tasks", is_flag=True, is_eager=True, expose_value=False, callback=_list_tasks,
              help="List the bundled example tasks and exit.")
@click.pass_context
def generate(ctx: click.Context, task: str, output: Path, force: bool, proposer: str | None, model: str | None,
             base_url: str | None, options: tuple[str, ...], timeout: float | None, seed: int | None, attempts: int | None,
             variant: str | None, ladder: str | None, strict: bool, review: bool, as_json: bool) -> None:
    """Generate a twelve-tone piece for TASK (a task JSON file, a bundled task name, or '-': the
    task JSON on standard input).

    \b
    Examples:
      serialkit generate trio-schoenberg -o out/run --seed 3 -O profile=paper-raw
      serialkit generate duo-berg -o out/replay --proposer replay -O transcript=out/run/transcript.jsonl
      serialkit generate duo-berg -o out/run --proposer openai --model gpt-4o-mini -O temperature=0.2
    """
    from serialkit.harness import run
    from serialkit.harness.proposers.openai import configured
    from serialkit.harness.proposers.options import parse_options
    from serialkit.harness.proposers.options import proposer_options as merge_options
    from serialkit.harness.proposers.replay import read_transcript
    from serialkit.io.files.outputs import run_dir
    from serialkit.render.runreview import clear_run_review, write_run_review

    if proposer is None:
        proposer = "openai" if (base_url or configured()) else "stochastic"
    opts = merge_options(with_timeout(parse_options(options), timeout), model=model, base_url=base_url)
    loaded = read_task(task)
    if attempts is not None:
        loaded = dataclasses.replace(loaded, attempts=attempts)
    if proposer == "replay":
        if "transcript" not in opts:
            raise ProposerError("--proposer replay needs -O transcript=FILE (a run's transcript.jsonl)")
        transcript = Path(str(opts["transcript"]))
        header, _ = read_transcript(transcript)
        seed = header.get("seed", 0) if seed is None else seed
        variant = header.get("variant", "harness") if variant is None else variant
        if header.get("task_digest") != loaded.digest():
            raise TaskError(f"{transcript}: recorded for task {header.get('task')!r} "
                            f"({header.get('task_digest')}), not this task ({loaded.digest()})")
    # Ctrl-C or SIGTERM during the run lets it finish and be written (its model request in flight
    # too), then exits 130 or 143; a second one abandons it at once
    signals = Interruptions(abort_at=2, terminate=True)
    try:
        with signals.noted(), run_dir(output, force=force):
            result = run(loaded, variant=variant or "harness", proposer=proposer, proposer_options=opts,
                         seed=0 if seed is None else seed, out_dir=output, mode="strict" if strict else "relaxed",
                         ladder=ladder)
            if review:
                # only what the gate verified is written
                written = write_run_review(output, result.certificate, result.released, result.verdict.labels)
                result.outputs.update(written.written)
                for note in written.notes:
                    click.echo(f"note: {note}", err=True)
            else:
                clear_run_review(output)
    except KeyboardInterrupt:
        click.echo("interrupted: the run was abandoned", err=True)
        ctx.exit(signals.exit_code)
    if as_json:
        echo_json(result.to_record())
    else:
        _summary(result, output)
    if result.usage.unreadable_calls:
        n = result.usage.unreadable_calls
        click.echo(f"note: the server's token usage was unreadable in {n} of {result.usage.calls} calls "
                   "(see transcript.jsonl); those counts are charged at their upper bound", err=True)
    if signals.count:
        click.echo(f"interrupted: the run finished and is saved in {output}/", err=True)
        ctx.exit(signals.exit_code)
    ctx.exit(EXIT_OK if result.released else EXIT_FAIL)


def register(cli: Any) -> None:
    """Add ``generate`` to the CLI."""
    cli.add_command(generate)
