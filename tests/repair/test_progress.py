"""A repair's progress runs forward: each planned correction is judged by the gate as it is
planned, so a refused one never sends the plan back to round 1 (the rounds and the corrections
counted so far never go down), and the count is of the corrections kept."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from serialkit.cli import cli
from serialkit.cli.repair import _Progress
from serialkit.repair import repair_score

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "fixtures" / "pieces" / "demo-piece.json"
"""The README's repair: the F#4 of bar 2 put right, then the B4 of bar 13 refused by the gate."""


def _forward(calls: list[tuple[int, int]]) -> None:
    rounds = [n for n, _ in calls]
    assert rounds == list(range(1, len(rounds) + 1)), calls
    counts = [k for _, k in calls]
    assert counts == sorted(counts), calls


def test_progress_runs_forward_past_a_refused_correction() -> None:
    calls: list[tuple[int, int]] = []
    result = repair_score(DEMO, dry_run=True, progress=lambda n, k: calls.append((n, k)))
    assert result.withdrawn  # a correction was planned and refused: the case that ran backwards
    assert [c.after for c in result.changes] == [65]
    _forward(calls)
    assert calls[-1][1] == len(result.changes)  # the corrections counted are the ones kept


def test_progress_lines_on_stderr_run_forward(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_Progress, "AFTER", 0.0)
    result = CliRunner().invoke(cli, ["repair", str(DEMO), "--dry-run"], catch_exceptions=False)
    lines = re.findall(r"repair \S*demo-piece\.json: round (\d+) \((\d+) corrections? so far\), \d+ s", result.stderr)
    assert len(lines) >= 3, result.stderr
    _forward([(int(n), int(k)) for n, k in lines])
