"""A task-bound candidate is analysed once: ``check`` and the gate share one analysis of its notes."""

from __future__ import annotations

from pathlib import Path

import pytest

import serialkit.core.analysis as analysis_module
from serialkit.batch import ScoreInput
from serialkit.check.gate import gate_candidate
from serialkit.check.report import analyze_notes
from serialkit.core.rows import Row
from serialkit.harness import load_task, run
from serialkit.harness.judging import limits_for, rules_for
from serialkit.io import write_score
from serialkit.jobs import check_source


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = analysis_module.analyze

    def analyze(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(analysis_module, "analyze", analyze)
    return calls


def test_checking_a_candidate_against_its_task_analyses_it_once(tmp_path: Path, counted: list[int]) -> None:
    task = load_task("duo-berg")
    piece = run(task, variant="raw", seed=1).piece
    path = tmp_path / "candidate.json"
    write_score(piece, path)
    counted.clear()
    checked = check_source(ScoreInput(str(path), path), {"task": "duo-berg", "suggest": False})
    assert len(counted) == 1
    assert "gate" in checked.data


def test_the_gate_reuses_a_matching_analysis_and_redoes_another(counted: list[int]) -> None:
    task = load_task("duo-berg")
    framed = task.frame(run(task, variant="raw", seed=1).piece.events)
    assert framed.row is not None
    given = analyze_notes(framed, framed.row, framed.convention)
    counted.clear()
    once = gate_candidate(framed, rules_for(task), limits=limits_for(task), analysis=given)
    assert counted == []
    other = analyze_notes(framed, Row.parse(list(reversed(framed.row.pcs))), framed.convention)
    counted.clear()
    again = gate_candidate(framed, rules_for(task), limits=limits_for(task), analysis=other)
    assert len(counted) == 1  # an analysis under another row is not the candidate's
    assert again.to_dict() == once.to_dict()
