"""``run``: one generation run of a variant on a task, judged by the same gate, traced to files."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from serialkit.check.gate import GateVerdict
from serialkit.core.errors import EndpointError, TaskError
from serialkit.core.piece import Piece
from serialkit.harness.baselines import run_self_refine, run_single
from serialkit.harness.certificate import (
    build_certificate,
    build_report,
    transcript_text,
    write_errored,
    write_outputs,
)
from serialkit.harness.judging import judge_candidate
from serialkit.harness.loop import run_harness
from serialkit.harness.outcome import VariantOutcome
from serialkit.harness.proposers.base import Proposer
from serialkit.harness.session import Session, Usage, make_proposer
from serialkit.harness.tasks import Task, load_task

VARIANTS = ("harness", "harness-paper", "raw", "self-refine", "soft-rules")
# ``harness-paper`` is the harness on the paper's ladder (``run(..., ladder="paper")``): trim, yield,
# retime, model patch, model row-segment rewrite; no deterministic pitch writing, no reflow.
LADDER_VARIANTS = {"harness": "serialkit", "harness-paper": "paper"}
MODES = ("strict", "relaxed")


@dataclass
class RunResult:
    """A run's candidate, verdict, certificate, report and usage (``to_record`` for experiments)."""

    task: Task
    variant: str
    mode: str
    released: bool
    verdict: GateVerdict
    piece: Piece
    certificate: dict[str, Any]
    report: dict[str, Any]
    usage: Usage
    transcript: str
    wall_seconds: float = 0.0
    outputs: dict[str, str] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        """A flat JSON-ready record of the run."""
        run = self.certificate["run"]
        return {
            "task": self.task.name,
            "variant": self.variant,
            "proposer": run["proposer"],
            "model": run["model"],
            "seed": run["seed"],
            "mode": self.mode,
            "released": self.released,
            "strict": self.verdict.strict,
            "relaxed": self.verdict.relaxed,
            "predicates": self.verdict.predicates(),
            "counts": self.verdict.counts(),
            "coverage": str(self.verdict.coverage),
            "notes": len(self.piece.events),
            "scheduled": len(self.task.all_slots()),
            "delivered": self.verdict.delivered,
            "complete": self.verdict.complete,
            "repairs": self.report["repairs"],
            "ladder": self.report.get("ladder"),
            "authorship": self.report["authorship"]["shares"],
            "drops": self.report["drop_counts"]["total"],
            **self.usage.to_dict(),
            "wall_seconds": round(self.wall_seconds, 6),
            "outputs": dict(self.outputs),
        }


def verified_labels(records: list[dict[str, Any]], verdict: GateVerdict) -> None:
    """Write the gate's verified label into every certificate record (``form``, ``position``;
    None where the gate accepted no label); what the writer claimed stays in ``claimed``."""
    for record in records:
        label = verdict.labels.get(record["id"])
        if label is None:
            record["form"] = record["position"] = None
        else:
            form, _, position = label.rpartition(":")
            record["form"], record["position"] = form, int(position)


def run(task: Task | str | Path, variant: str = "harness", proposer: str | Proposer = "stochastic",
        proposer_options: dict[str, Any] | None = None, seed: int = 0, out_dir: str | Path | None = None,
        mode: str = "strict", ladder: str | None = None) -> RunResult:
    """Run one variant on one task with one proposer; write the run directory if ``out_dir``.
    ``ladder`` (``serialkit`` or ``paper``) picks the harness's repair ladder; ``paper`` turns the
    variant ``harness`` into ``harness-paper``."""
    if ladder is not None and variant in LADDER_VARIANTS:
        from serialkit.harness.ladder import LADDERS

        if ladder not in LADDERS:
            raise TaskError(f"unknown ladder {ladder!r} (known: {', '.join(LADDERS)})")
        variant = "harness-paper" if ladder == "paper" else "harness"
    if variant not in VARIANTS:
        raise TaskError(f"unknown variant {variant!r} (known: {', '.join(VARIANTS)})")
    if mode not in MODES:
        raise TaskError(f"unknown gate mode {mode!r} (known: strict, relaxed)")
    task = load_task(task)
    started = time.perf_counter()
    session = Session(task, make_proposer(proposer, proposer_options, seed), variant, seed)
    outcome: VariantOutcome
    try:
        if variant in LADDER_VARIANTS:
            outcome = run_harness(session, LADDER_VARIANTS[variant])
        elif variant == "self-refine":
            outcome = run_self_refine(session)
        else:
            outcome = run_single(session, soft_rules=variant == "soft-rules")
    except EndpointError as exc:
        # the model server failed: an error of the environment, not a verdict; keep the transcript
        if out_dir is not None:
            raise exc.with_run_dir(str(write_errored(Path(out_dir), transcript_text(session)))) from None
        raise
    unreadable = {s["id"]: s.get("unreadable") or "" for s in outcome.sections if s.get("readable") is False}
    verdict = judge_candidate(task, outcome.events, unreadable=unreadable)
    released = verdict.passed(mode)
    verified_labels(outcome.certificates, verdict)
    piece = task.frame(tuple(sorted(outcome.events, key=lambda e: (e.onset, e.voice, e.id))))
    if unreadable:  # candidate.json carries them, so `serialkit check` gives the run's own verdict
        piece = piece.copy(metadata={**piece.metadata, "unreadable_sections": list(unreadable)})
    certificate = build_certificate(session, outcome.certificates, released, mode)
    report = build_report(session, verdict, released, mode, outcome)
    transcript = transcript_text(session)
    result = RunResult(task, variant, mode, released, verdict, piece, certificate, report, session.usage,
                       transcript)
    if out_dir is not None:
        result.outputs = write_outputs(Path(out_dir), piece, certificate, report, transcript, released)
    result.wall_seconds = time.perf_counter() - started
    return result
