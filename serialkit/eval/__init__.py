"""Experiments: the task bank, the resumable runner, metrics with clustered intervals, the report."""

from __future__ import annotations

from serialkit.eval.bank import BankTask, load_bank
from serialkit.eval.plan import EvalConfig, RunSpec, plan_runs
from serialkit.eval.report import write_report
from serialkit.eval.runner import EvalSummary, run_eval
from serialkit.eval.store import load_records
from serialkit.eval.summary import summarize

__all__ = [
    "BankTask",
    "EvalConfig",
    "EvalSummary",
    "RunSpec",
    "load_bank",
    "load_records",
    "plan_runs",
    "run_eval",
    "summarize",
    "write_report",
]
