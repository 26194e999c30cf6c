"""What an experiment runs: its configuration, the variants and codes it reports, and the plan of
runs (task × variant × run × model) in a stable order, each with its paired seed."""

from __future__ import annotations

import fnmatch
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from serialkit.core.errors import TaskError
from serialkit.eval.bank import BankTask
from serialkit.eval.models import ModelSpec, with_prices
from serialkit.eval.store import run_key

VARIANTS: tuple[str, ...] = ("raw", "harness", "self-refine", "soft-rules")
# every variant in report order; ``harness-paper`` (the harness on the paper's ladder) runs when asked
VARIANT_ORDER: tuple[str, ...] = ("raw", "harness", "harness-paper", "self-refine", "soft-rules")
PREDICATE_CODES: tuple[str, ...] = ("ROW", "ORDER", "COLL", "PC", "RANGE", "CROSS", "SCHED")
REMOTE = frozenset({"openai"})


@dataclass(frozen=True)
class EvalConfig:
    """What to run: the bank, conditions, repetitions, models and how fast."""

    bank: str = "builtin"
    tasks: tuple[str, ...] = ()  # glob patterns on task name or family; empty = all
    variants: tuple[str, ...] = VARIANTS
    runs: int = 3
    proposer: str = "stochastic"
    model: str | None = None
    base_url: str | None = None
    proposer_options: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    jobs: int = 1
    rate_limit: float | None = None  # run starts per second
    executor: str = "auto"  # "process", "thread" or "auto" (threads for remote proposers)
    models: tuple[ModelSpec, ...] = ()  # several models; empty = (proposer, model, base_url)
    concurrency: int | None = None  # requests in flight per remote model (default: jobs)
    rpm: int | None = None  # requests per minute per remote model (unless its entry says)
    tpm: int | None = None  # tokens per minute per remote model
    max_cost: float | None = None  # USD this invocation may spend
    max_tokens: int | None = None  # tokens this invocation may spend
    window: float = 60.0  # the rate limits' window in seconds (tests shorten it)

    def __post_init__(self) -> None:
        if self.runs < 1:
            raise TaskError(f"--runs must be at least 1, not {self.runs}")
        if self.jobs < 1:
            raise TaskError(f"--jobs must be at least 1, not {self.jobs}")
        if not self.variants:
            raise TaskError("no variants given")
        if self.rate_limit is not None and self.rate_limit <= 0:
            raise TaskError(f"--rate-limit must be positive, not {self.rate_limit}")
        if self.executor not in ("auto", "process", "thread"):
            raise TaskError(f"unknown executor {self.executor!r} (process, thread, auto)")
        for name in ("concurrency", "rpm", "tpm", "max_tokens"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise TaskError(f"--{name.replace('_', '-')} must be at least 1, not {value}")
        if self.max_cost is not None and self.max_cost <= 0:
            raise TaskError(f"--max-cost must be positive, not {self.max_cost}")

    def model_specs(self) -> tuple[ModelSpec, ...]:
        """The experiment's models (one from proposer/model/base_url when none are listed)."""
        models = self.models or (ModelSpec(self.model, self.proposer, self.base_url),)
        return with_prices(models)


@dataclass(frozen=True)
class RunSpec:
    """One run to do: everything a worker process needs, picklable."""

    key: str
    task: str
    family: str
    task_path: str
    variant: str
    run: int
    proposer: str
    model: str | None
    seed: int
    proposer_options: dict[str, Any]
    bars: int | None
    endpoint: int = 0  # index of its model in ``EvalConfig.model_specs()``


def run_seed(base: int, task: str, run: int) -> int:
    """The proposer seed of a run: the same for every variant, so conditions are paired."""
    return (base * 1_000_003 + zlib.crc32(f"{task}#{run}".encode())) % (2**31 - 1)


def select_tasks(tasks: Sequence[BankTask], patterns: Sequence[str]) -> list[BankTask]:
    """Tasks whose name or family matches one of the glob patterns (all when none given)."""
    if not patterns:
        return list(tasks)
    chosen = [t for t in tasks if any(fnmatch.fnmatchcase(t.name, p) or fnmatch.fnmatchcase(t.family, p)
                                      for p in patterns)]
    if not chosen:
        raise TaskError(f"--tasks {','.join(patterns)}: no task of the bank matches")
    return chosen


def run_options(config: EvalConfig, m: ModelSpec) -> dict[str, Any]:
    """The proposer options of model ``m``'s runs: the experiment's, its entry's, its name and URL."""
    options = {**config.proposer_options, **m.options}
    if m.name:
        options.setdefault("model", m.name)
    if m.base_url:
        options.setdefault("base_url", m.base_url)
    return options


def plan_runs(tasks: Sequence[BankTask], config: EvalConfig) -> list[RunSpec]:
    """All runs in a stable order: run index, task, variant, model (early stops stay balanced)."""
    tasks = select_tasks(tasks, config.tasks)
    models = config.model_specs()
    specs = []
    for run in range(config.runs):
        for task in tasks:
            for variant in config.variants:
                for index, m in enumerate(models):
                    options = run_options(config, m)
                    specs.append(RunSpec(
                        key=run_key(task.name, variant, run, m.proposer, m.name),
                        task=task.name, family=task.family, task_path=str(task.path),
                        variant=variant, run=run, proposer=m.proposer, model=m.name,
                        seed=run_seed(config.seed, task.name, run), proposer_options=options,
                        bars=task.bars, endpoint=index,
                    ))
    return specs


def check_names(config: EvalConfig) -> None:
    """Unknown variants, proposers or proposer options are bad input, found before anything runs."""
    # the harness loads on first use: planning, reports and status do not need it
    from serialkit.harness import VARIANTS as known
    from serialkit.harness.session import check_proposer_options
    from serialkit.plugins import registry

    for variant in config.variants:
        if variant not in known:
            raise TaskError(f"unknown variant {variant!r} (known: {', '.join(known)})")
    for m in config.model_specs():
        registry("proposers").get(m.proposer)
        # an option the proposer does not take would fail every run: refuse it before any starts
        check_proposer_options(m.proposer, run_options(config, m))
    if config.max_cost is not None:
        unpriced = [m.name or m.proposer for m in config.model_specs() if not m.priced]
        if unpriced:
            raise TaskError(f"--max-cost: no price for {', '.join(unpriced)}; give input_price and "
                            "output_price in a --models file (or SERIALKIT_PRICES), or use --max-tokens")
