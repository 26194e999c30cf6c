"""``serialkit eval run|report|bank``: experiments over the task bank."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import click

from serialkit.cli._common import EXIT_BAD_INPUT, EXIT_OK, echo_json, is_tty, parse_options


def _variants(value: str) -> tuple[str, ...]:
    items = tuple(v.strip() for v in value.split(",") if v.strip())
    if not items:
        raise click.BadParameter("give at least one variant")
    return items


def _rate(value: str | None) -> float | None:
    if value is None:
        return None
    text = value.strip().lower().removesuffix("/s")
    try:
        return float(text)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a rate like 2/s") from None


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@click.group("eval")
def eval_group() -> None:
    """Run experiments over a task bank and report them."""


@eval_group.command("run")
@click.argument("bank", default="builtin")
@click.option("--variants", default="raw,harness,self-refine,soft-rules", show_default=True,
              help="Comma-separated conditions.")
@click.option("--runs", type=int, default=3, show_default=True, help="Runs per task and variant.")
@click.option("--proposer", default="stochastic", show_default=True)
@click.option("--model", default=None, help="Model name (remote proposers).")
@click.option("--base-url", default=None, help="OpenAI-compatible endpoint.")
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE",
              help="Extra proposer option (JSON value or string); repeatable.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--tasks", "task_patterns", default=None, metavar="GLOB,...",
              help="Only tasks whose name or family matches (e.g. 'canon,mono-line-0[12]').")
@click.option("-o", "--out", "out", required=True, type=click.Path(file_okay=False), help="RUN_DIR.")
@click.option("--jobs", "-j", type=int, default=1, show_default=True, help="Runs in parallel.")
@click.option("--executor", type=click.Choice(["auto", "process", "thread"]), default="auto",
              show_default=True, help="Processes for local proposers, threads for remote (auto).")
@click.option("--resume", is_flag=True, help="Continue RUN_DIR, skipping finished runs.")
@click.option("--rate-limit", default=None, metavar="R/s", help="At most R run starts per second.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def run_cmd(bank: str, variants: str, runs: int, proposer: str, model: str | None,
            base_url: str | None, options: tuple[str, ...], seed: int, task_patterns: str | None,
            out: str, jobs: int,
            executor: str, resume: bool, rate_limit: str | None, as_json: bool) -> None:
    """Run BANK ("builtin" or a directory of task files) under each variant, RUNS times."""
    from serialkit.eval.runner import EvalConfig, run_eval

    proposer_options = parse_options(options)
    patterns = tuple(p.strip() for p in (task_patterns or "").split(",") if p.strip())
    config = EvalConfig(bank=bank, tasks=patterns, variants=_variants(variants), runs=runs, proposer=proposer,
                        model=model, base_url=base_url, proposer_options=proposer_options,
                        seed=seed, jobs=jobs, rate_limit=_rate(rate_limit), executor=executor)
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        if is_tty():
            summary = _with_bar(config, out, resume)
        else:
            summary = run_eval(config, out, resume=resume)
    finally:
        signal.signal(signal.SIGTERM, previous)
    if as_json:
        echo_json(summary.to_dict())
    else:
        click.echo(f"{summary.planned} runs planned: {summary.skipped} already done, "
                   f"{summary.finished} finished now, {len(summary.errors)} errored "
                   f"({summary.seconds:.1f} s) → {Path(out) / 'runs.jsonl'}")
        for err in summary.errors[:10]:
            click.echo(f"  errored {err['key']}: {err['error']}", err=True)
    if summary.stopped:
        click.echo(f"stopped: {summary.stopped}; fix the endpoint and continue with --resume", err=True)
    elif summary.errors:
        click.echo(f"{len(summary.errors)} runs errored (not counted as delivered or undelivered); "
                   "--resume runs them again", err=True)
    if summary.interrupted:
        click.echo("interrupted: finished runs are saved; continue with --resume", err=True)
        sys.exit(130)
    sys.exit(EXIT_BAD_INPUT if summary.errors else EXIT_OK)


def _with_bar(config: Any, out: str, resume: bool) -> Any:
    from serialkit.eval.bank import load_bank
    from serialkit.eval.runner import plan_runs, run_eval
    from serialkit.eval.store import RunStore

    total = len(plan_runs(load_bank(config.bank), config))
    done = len(RunStore(out).records()) if resume else 0
    with click.progressbar(length=total, label="runs", file=sys.stderr, show_pos=True,
                           show_eta=True) as bar:
        bar.update(min(done, total))
        return run_eval(config, out, resume=resume, progress=bar.update)


@eval_group.command("report")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False))
@click.option("-o", "--out", "out", required=True, type=click.Path(dir_okay=False),
              help="report.html (self-contained) or report.md (plots beside it).")
@click.option("--reference", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Reference score (MusicXML, MEI or JSON piece) for corpus distance; repeatable.")
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@click.option("--json", "as_json", is_flag=True, help="Also print the summary as JSON.")
def report_cmd(run_dir: str, out: str, reference: tuple[str, ...], seed: int, as_json: bool) -> None:
    """Tables and plots of RUN_DIR: delivery, predicate pass rates, collisions, degeneracy, cost."""
    from serialkit.eval.report import write_report

    summary = write_report(run_dir, out, reference=reference, seed=seed)
    if as_json:
        echo_json(summary)
    else:
        click.echo(f"wrote {out} ({summary['runs']} runs, {len(summary['variants'])} variants)")


@eval_group.command("bank")
@click.argument("bank", default="builtin")
@click.option("--json", "as_json", is_flag=True)
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
