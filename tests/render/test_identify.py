"""Render without a row: the checker identifies it, as ``serialkit check`` does, and labels notes;
the review page of an existing score speaks the analysis profile's language."""

from __future__ import annotations

from pathlib import Path

import pytest

from serialkit.render import marks_for, render
from serialkit.render.marks import build_marks
from serialkit.render.review import _facts_html

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "render" / "duet.musicxml"
WEBERN = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "webern-op21-i-mm1-25.mei"


def test_marks_without_row_come_from_the_check_report() -> None:
    from serialkit.check import check_piece
    from serialkit.check.profiles import profile_for
    from serialkit.io import read_score

    report = check_piece(read_score(FIXTURE), profile=profile_for(None, task_bound=False)).to_dict()
    assert report["identification"]["name"] == "schoenberg-op37"  # catalogued: check identifies it
    marks = marks_for(FIXTURE)
    labelled = {eid: m.label for eid, m in marks.notes.items() if m.label}
    assert labelled == {eid: lab for eid, lab in report["labels"].items() if lab}
    assert labelled


def test_render_without_row_labels_a_fixture(tmp_path: Path) -> None:
    result = render(FIXTURE, tmp_path / "duet.svg")
    assert result.labels > 0


@pytest.mark.slow
@pytest.mark.skipif(not WEBERN.exists(), reason="../shared/corpus is absent")
def test_render_without_row_labels_webern(tmp_path: Path) -> None:
    result = render(WEBERN, tmp_path / "op21.svg")
    assert result.labels > 40


def _report(**extra: object) -> dict[str, object]:
    data: dict[str, object] = {
        "row": list(range(12)), "strict": False, "relaxed": True, "coverage": 0.992,
        "labels": {}, "unexplained": ["n1"], "violations": [], "observations": [],
        "profile": {"name": "analysis"},
    }
    data.update(extra)
    return data


def test_review_facts_of_an_existing_score_use_analysis_words() -> None:
    text = _facts_html(build_marks(_report()))
    assert "99.2 % explained, 1 unexplained note" in text
    assert "0 violations" in text and "0 observations" in text
    assert "strict" not in text and "relaxed" not in text


def test_review_facts_with_a_certificate_give_strict_and_relaxed() -> None:
    text = _facts_html(build_marks(_report(), certificate=[]))
    assert "strict: fail" in text and "relaxed: pass" in text
    assert "explained," not in text


def test_cli_render_without_row_reports_labels(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from serialkit.cli import cli

    out = tmp_path / "duet.html"
    result = CliRunner().invoke(cli, ["render", str(FIXTURE), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "0 labels" not in result.output
    page = out.read_text()
    assert "% explained" in page and "strict:" not in page
