"""``serialkit eval run|report|bank``: experiments over the task bank."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import click

from serialkit.cli._common import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    echo_json,
    exit_at_once,
    force_option,
    is_tty,
    jobs_option,
    json_option,
    output_option,
    timeout_option,
    with_timeout,
)

ALL_VARIANTS = ("raw", "harness", "self-refine", "soft-rules")


def _variants(values: tuple[str, ...]) -> tuple[str, ...]:
    """``--variant`` values (repeatable, each may be a comma-separated list); default: all four."""
    items = tuple(v.strip() for value in values for v in value.split(",") if v.strip())
    if values and not items:
        raise click.BadParameter("give at least one variant", param_hint="--variant")
    return items or ALL_VARIANTS


def _rate(value: str | None) -> float | None:
    if value is None:
        return None
    text = value.strip().lower().removesuffix("/s")
    try:
        return float(text)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a rate like 2/s") from None


_signals: list[int] = []  # SIGTERMs received during ``eval run``


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGTERM stops ``eval run`` the way Ctrl-C does (finished runs saved, --resume goes on)."""
    _signals.append(signum)
    raise KeyboardInterrupt


def interrupted_exit_code() -> int:
    """130 after Ctrl-C (SIGINT), 143 after SIGTERM: 128 + the signal, as shells report it."""
    return 128 + _signals[-1] if _signals else EXIT_INTERRUPTED


@click.group("eval")
def eval_group() -> None:
    """Run experiments over a task bank and report them."""


@eval_group.command("run")
@click.argument("bank", default="builtin")
@click.option("--variant", "variant", multiple=True, metavar="NAME[,NAME...]",
              help="Condition(s) to run, repeatable or comma-separated (default: raw, harness, "
                   "self-refine, soft-rules; also harness-paper: the harness on the paper's ladder).")
@click.option("--variants", "variants_alias", multiple=True, hidden=True)
@click.option("--runs", type=click.IntRange(min=1), default=3, show_default=True, help="Runs per task and variant.")
@click.option("--proposer", default="stochastic", show_default=True,
              help="stochastic (offline), openai, replay or a plugin's.")
@click.option("--model", "model_names", multiple=True,
              help="Model name (remote proposers); repeat for several models in one experiment.")
@click.option("--models", "models_file", type=click.Path(dir_okay=False), default=None,
              help="Models TOML: [[model]] entries with name, base_url, rpm, tpm, concurrency, prices.")
@click.option("--base-url", default=None, metavar="URL",
              help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1.")
@click.option("-O", "--option", "options", multiple=True, metavar="KEY=VALUE",
              help="Proposer option, repeatable; VALUE is JSON or a string, a dotted KEY sets one "
                   "entry (temperature=0.2, timeout=30, profile=paper-raw, rates.wrong_pc=0.01).")
@timeout_option()
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--tasks", "task_patterns", default=None, metavar="GLOB,...",
              help="Only tasks whose name or family matches (e.g. 'canon,mono-line-0[12]').")
@output_option("RUN_DIR: runs.jsonl, manifest.json and one folder per run (refused if it has files in "
               "it, unless --resume or --force).", required=True, directory=True,
               holds="a run directory")
@force_option("Start over in RUN_DIR: its earlier runs are removed.")
@jobs_option(help="Runs in parallel (local proposers: processes).")
@click.option("--concurrency", type=int, default=None,
              help="Requests in flight per remote model, across runs (default: --jobs).")
@click.option("--rpm", type=int, default=None, help="Requests per minute per remote model.")
@click.option("--tpm", type=int, default=None, help="Tokens per minute per remote model.")
@click.option("--max-cost", type=float, default=None, metavar="USD",
              help="Stop starting runs once this invocation has spent this much (needs prices).")
@click.option("--max-tokens", type=int, default=None,
              help="Stop starting runs once this invocation has used this many tokens.")
@click.option("--executor", type=click.Choice(["auto", "process", "thread"]), default="auto",
              show_default=True, help="Processes for local proposers, threads for remote (auto).")
@click.option("--resume", is_flag=True, help="Continue RUN_DIR, skipping finished runs (with the settings it was "
                                              "made with: other ones are refused).")
@click.option("--extend", is_flag=True, help="Continue RUN_DIR with other settings (another model, more runs, "
                                              "other variants or tasks), adding their runs; recorded in its manifest.")
@click.option("--rate-limit", default=None, metavar="R/s", help="At most R run starts per second.")
@json_option("One JSON line per finished run, then the summary as one JSON line.")
def run_cmd(bank: str, variant: tuple[str, ...], variants_alias: tuple[str, ...], runs: int, proposer: str,
            model_names: tuple[str, ...], models_file: str | None, base_url: str | None,
            options: tuple[str, ...], timeout: float | None, seed: int, task_patterns: str | None, output: Path, force: bool,
            jobs: int, concurrency: int | None, rpm: int | None, tpm: int | None, max_cost: float | None,
            max_tokens: int | None, executor: str, resume: bool, extend: bool, rate_limit: str | None,
            as_json: bool) -> None:
    """Run BANK ("builtin" or a directory of task files) under each variant, RUNS times, per model."""
    from serialkit.eval.manifest import TASKS_DIR
    from serialkit.eval.models import ModelSpec, load_models
    from serialkit.eval.plan import EvalConfig
    from serialkit.eval.runner import run_eval
    from serialkit.eval.store import (
        ERROR_TRANSCRIPTS,
        ERRORS,
        MANIFEST,
        RECORDS,
        RUNS_DIR,
        lock_run_dir,
    )
    from serialkit.harness.proposers.options import parse_options
    from serialkit.io.files.outputs import clear_outputs, run_dir

    if (resume or extend) and force:
        raise click.UsageError(f"give either {'--extend' if extend else '--resume'} or --force, not both")
    resume = resume or extend
    out = str(output)
    proposer_options = with_timeout(parse_options(options), timeout)
    patterns = tuple(p.strip() for p in (task_patterns or "").split(",") if p.strip())
    models: tuple[ModelSpec, ...] = ()
    if models_file:
        if model_names:
            raise click.UsageError("give --model or --models, not both")
        models = load_models(models_file, proposer if proposer != "stochastic" else "openai")
    elif len(model_names) > 1:
        models = tuple(ModelSpec(name, proposer, base_url) for name in model_names)
    config = EvalConfig(bank=bank, tasks=patterns, variants=_variants(variant + variants_alias), runs=runs, proposer=proposer,
                        model=model_names[0] if len(model_names) == 1 else None, base_url=base_url,
                        proposer_options=proposer_options, seed=seed, jobs=jobs, rate_limit=_rate(rate_limit),
                        executor=executor, models=models, concurrency=concurrency, rpm=rpm, tpm=tpm,
                        max_cost=max_cost, max_tokens=max_tokens)
    show = _StatusLine() if is_tty() and not as_json else None
    _signals.clear()
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        with run_dir(output, force=force, resume=resume,
                     hint="use --resume to continue it, or --force to start over"), lock_run_dir(output):
            if force:  # under the lock: never clear a directory another runner is writing
                clear_outputs(output, (RECORDS, ERRORS, ERROR_TRANSCRIPTS, MANIFEST, RUNS_DIR, TASKS_DIR))
            summary = run_eval(config, out, resume=resume, extend=extend, on_run=_json_line if as_json else None,
                               on_status=show.update if show else None)
    except KeyboardInterrupt:  # before or after the runner's own handling: nothing half-written
        click.echo("interrupted: finished runs are saved; continue with --resume", err=True)
        exit_at_once(interrupted_exit_code())
    finally:
        signal.signal(signal.SIGTERM, previous)
        if show:
            show.close()
    if as_json:
        click.echo(json.dumps({"event": "summary", **summary.to_dict()}, ensure_ascii=False, default=str))
    else:
        cost = "" if summary.cost is None else f", ${summary.cost:.4f}"
        click.echo(f"{summary.planned} runs planned: {summary.skipped} already done, "
                   f"{summary.finished} finished now, {len(summary.errors)} errored; "
                   f"{summary.prompt_tokens + summary.completion_tokens} tokens{cost} "
                   f"({summary.seconds:.1f} s) → {Path(out) / 'runs.jsonl'}")
        for err in summary.errors[:10]:
            click.echo(f"  errored {err['key']}: {err['error']}", err=True)
    if summary.budget:
        click.echo(f"stopped at the {summary.stopped}; finished runs are saved; continue with --resume",
                   err=True)
        sys.exit(EXIT_BUDGET)
    if summary.stopped:
        click.echo(f"stopped: {summary.stopped}; fix the endpoint and continue with --resume", err=True)
    elif summary.errors:
        click.echo(f"{len(summary.errors)} runs errored (not counted as delivered or undelivered); "
                   "--resume runs them again", err=True)
    if summary.interrupted:  # every record is fsync'ed: leave without joining the worker pool
        click.echo("interrupted: finished runs are saved; continue with --resume", err=True)
        exit_at_once(interrupted_exit_code())
    sys.exit(EXIT_BAD_INPUT if summary.errors else EXIT_OK)


EXIT_BUDGET = 3


def _json_line(record: dict[str, Any]) -> None:
    usage = record.get("usage") or {}
    line = {"event": "run", **{k: record.get(k) for k in ("key", "task", "variant", "run", "model")}}
    if "error" in record:
        line.update(errored=True, error=record["error"])
    else:
        line.update({k: record.get(k) for k in ("released", "strict", "relaxed", "cost", "wall_seconds")})
        line.update(calls=usage.get("calls"), prompt_tokens=usage.get("prompt_tokens"),
                    completion_tokens=usage.get("completion_tokens"))
    click.echo(json.dumps(line, ensure_ascii=False, default=str))


def status_text(s: dict[str, Any]) -> str:
    """One line: runs done/total, in flight, tokens, cost, errored, ETA."""
    cost = "" if s.get("cost") is None else f" · ${s['cost']:.4f}"
    eta = "" if s.get("eta") is None else f" · ETA {_clock(s['eta'])}"
    return (f"runs {s['done']}/{s['planned']} · in flight {s.get('runs_in_flight', 0)} runs, "
            f"{s.get('requests_in_flight', 0)} requests · tokens "
            f"{int(s['prompt_tokens']):,} in / {int(s['completion_tokens']):,} out{cost} · "
            f"errored {s['errored']}{eta}")


def _clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


class _StatusLine:
    """The status line on a terminal (stderr), rewritten in place."""

    def __init__(self) -> None:
        self.width = 0

    def update(self, snap: dict[str, Any]) -> None:
        text = status_text(snap)
        click.echo("\r" + text.ljust(self.width), nl=False, err=True)
        self.width = len(text)

    def close(self) -> None:
        if self.width:
            click.echo("", err=True)


@eval_group.command("status")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status_cmd(run_dir: str, as_json: bool) -> None:
    """Runs done/total, requests in flight, tokens, cost, errored runs and ETA of RUN_DIR
    (running or stopped), from its files."""
    from serialkit.eval.status import experiment_status

    status = experiment_status(run_dir)
    if as_json:
        echo_json(status)
        return
    click.echo(f"{run_dir}: {status['state']}" + (f" ({status['stopped']})" if status.get("stopped") else ""))
    click.echo(status_text(status))
    for model, row in sorted(status["by_model"].items()):
        click.echo(f"  {model}: {row['done']} runs, {row['released']} released")
    if status.get("unreadable_usage"):
        click.echo(f"note: the server's token usage was unreadable in {status['unreadable_usage']} calls; "
                   "those counts are charged at their upper bound (see the runs' transcripts)")


@eval_group.command("report")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False))
@output_option("report.html (self-contained) or report.md (plots beside it).", required=True)
@click.option("--reference", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Reference score (MusicXML, MEI or JSON piece) for corpus distance; repeatable.")
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@json_option("Also print the summary as JSON.")
def report_cmd(run_dir: str, output: Path, reference: tuple[str, ...], seed: int, as_json: bool) -> None:
    """Tables and plots of RUN_DIR: delivery, predicate pass rates, collisions, degeneracy, cost."""
    from serialkit.eval.report import write_report
    from serialkit.io.files.outputs import ensure_writable_file

    out = str(output)
    ensure_writable_file(output)
    summary = write_report(run_dir, out, reference=reference, seed=seed)
    if as_json:
        echo_json(summary)
    else:
        click.echo(f"wrote {out} ({summary['runs']} runs, {len(summary['variants'])} variants)")


@eval_group.command("bank")
@click.argument("bank", default="builtin")
@json_option("Print the task list as JSON.")
def bank_cmd(bank: str, as_json: bool) -> None:
    """List the tasks of BANK by family (validated through the harness)."""
    from serialkit.eval.bank import load_bank

    tasks = load_bank(bank, validate=True)
    if as_json:
        echo_json([{"name": t.name, "family": t.family, "bars": t.bars, "path": str(t.path)}
                   for t in tasks])
        return
    for t in tasks:
        click.echo(f"{t.family:24} {t.name:36} {t.bars or '?':>4} bars")


def register(cli: click.Group) -> None:
    """Add ``eval`` to the CLI."""
    cli.add_command(eval_group)
