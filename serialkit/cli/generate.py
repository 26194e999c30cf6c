"""CLI: ``serialkit generate`` — one generate–verify–repair–trace run (or a baseline) on a task."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import click

from serialkit.cli._common import EXIT_FAIL, EXIT_OK, echo_json, parse_options
from serialkit.core.errors import ProposerError, SerialkitError, TaskError


def _rates(values: tuple[str, ...]) -> dict[str, float]:
    out = {}
    for item in values:
        name, sep, value = item.partition("=")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep:
            raise ProposerError(f"--rate {item!r}: expected NAME=NUMBER, e.g. wrong_pc=0.01")
    return out


def _proposer_options(proposer: str, model: str | None, base_url: str | None, transcript: Path | None,
                      profile: str | None, rates: dict[str, float], temperature: float | None,
                      timeout: float | None) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    if proposer == "openai":
        opts.update(model=model, base_url=base_url)
        if temperature is not None:
            opts["temperature"] = temperature
        if timeout is not None:
            opts["timeout"] = timeout
    elif proposer == "stochastic":
        if profile:
            opts["profile"] = profile
        if rates:
            opts["rates"] = rates
        if model:
            opts["model"] = model
    elif proposer == "replay":
        if transcript is None:
            raise ProposerError("--proposer replay needs --transcript FILE (a run's transcript.jsonl)")
        opts["transcript"] = transcript
    return opts


def write_review(result: Any, out_dir: Path) -> dict[str, str]:
    """For a released run: ``annotated.musicxml`` (labels, repairs coloured by rung) and
    ``review.html`` (the render engineer's review page); skipped with a note if unavailable."""
    score = out_dir / "score.musicxml"
    if not result.released or not score.exists():
        return {}
    written: dict[str, str] = {}
    from serialkit.io import Annotation, write_annotated_musicxml
    from serialkit.render import RUNG_COLORS, render

    labels = result.verdict.labels  # only what the gate verified is written
    annotations = {
        r["id"]: Annotation(label=labels.get(r["id"]),
                            color=RUNG_COLORS.get(r["rung"]) if r["rung"] else None)
        for r in result.certificate["events"]
    }
    try:
        write_annotated_musicxml(score, annotations, out_dir / "annotated.musicxml")
        written["annotated"] = str(out_dir / "annotated.musicxml")
        render(score, out_dir / "review.html", certificate=result.certificate)
        written["review"] = str(out_dir / "review.html")
    except SerialkitError as exc:
        click.echo(f"note: review files not written: {exc}", err=True)
    return written


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
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Run directory for score.musicxml, certificate.json, report.json, transcript.jsonl.")
@click.option("--proposer", default=None,
              help="stochastic (offline; default when no endpoint is configured), openai, replay, or a plugin's.")
@click.option("--model", default=None, help="Model name for the openai proposer.")
@click.option("--base-url", default=None, help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1.")
@click.option("--seed", type=int, default=None, help="Seed (default 0; a replay defaults to the recorded seed).")
@click.option("--attempts", type=click.IntRange(1, 50), default=None, help="Override the task's attempt budget K.")
@click.option("--variant", type=click.Choice(["harness", "harness-paper", "raw", "self-refine", "soft-rules"]),
              default=None, help="harness (default), harness-paper (= --ladder paper) or a baseline.")
@click.option("--ladder", type=click.Choice(["serialkit", "paper"]), default=None,
              help="The harness's repair ladder: serialkit (default; deterministic rewrite and reflow) or the "
                   "paper's (trim, yield, retime, model patch, model row-segment rewrite).")
@click.option("--strict/--relaxed", "strict", default=True, help="Release on the strict gate (default) or relaxed.")
@click.option("--transcript", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Transcript to replay (with --proposer replay).")
@click.option("--profile", default=None, help="Stochastic error profile: clean, default, paper-raw.")
@click.option("--rate", "rates", multiple=True, metavar="NAME=P", help="Stochastic error rate override (repeatable).")
@click.option("--temperature", type=float, default=None, help="Sampling temperature (openai).")
@click.option("--timeout", type=float, default=None, help="Per-request timeout in seconds (openai).")
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE",
              help="Extra proposer option (JSON value or string), e.g. max_retries=4; repeatable.")
@click.option("--review/--no-review", default=True,
              help="Also write annotated.musicxml and review.html for a released run (default on).")
@click.option("--json", "as_json", is_flag=True, help="Print the run record as JSON.")
@click.option("--list-tasks", is_flag=True, is_eager=True, expose_value=False, callback=_list_tasks,
              help="List the bundled example tasks and exit.")
@click.pass_context
def generate(ctx: click.Context, task: str, out_dir: Path, proposer: str | None, model: str | None,
             base_url: str | None, seed: int | None, attempts: int | None, variant: str | None,
             ladder: str | None, strict: bool,
             transcript: Path | None, profile: str | None, rates: tuple[str, ...], temperature: float | None,
             timeout: float | None, options: tuple[str, ...], review: bool, as_json: bool) -> None:
    """Generate a twelve-tone piece for TASK (a task JSON file or a bundled task name)."""
    from serialkit.harness import load_task, run
    from serialkit.harness.proposers.openai import configured
    from serialkit.harness.proposers.replay import read_transcript

    if proposer is None:
        proposer = "openai" if (base_url or configured()) else "stochastic"
    loaded = load_task(task)
    if attempts is not None:
        loaded = dataclasses.replace(loaded, attempts=attempts)
    if proposer == "replay" and transcript is not None:
        header, _ = read_transcript(transcript)
        seed = header.get("seed", 0) if seed is None else seed
        variant = header.get("variant", "harness") if variant is None else variant
        if header.get("task_digest") != loaded.digest():
            raise TaskError(f"{transcript}: recorded for task {header.get('task')!r} "
                            f"({header.get('task_digest')}), not this task ({loaded.digest()})")
    proposer_options = _proposer_options(proposer, model, base_url, transcript, profile, _rates(rates),
                                         temperature, timeout)
    proposer_options.update(parse_options(options))
    result = run(loaded, variant=variant or "harness", proposer=proposer, proposer_options=proposer_options,
                 seed=0 if seed is None else seed, out_dir=out_dir, mode="strict" if strict else "relaxed",
                 ladder=ladder)
    for name in ("annotated.musicxml", "review.html"):
        (out_dir / name).unlink(missing_ok=True)  # never leave an earlier run's review beside this one
    if review:
        result.outputs.update(write_review(result, out_dir))
    if as_json:
        echo_json(result.to_record())
    else:
        _summary(result, out_dir)
    ctx.exit(EXIT_OK if result.released else EXIT_FAIL)


def register(cli: Any) -> None:
    """Add ``generate`` to the CLI."""
    cli.add_command(generate)
