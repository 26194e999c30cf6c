"""Who wrote the released notes (issue 12): per-note authors in the certificate, shares in the run
report, the ``--json`` record, the eval report and the review page; the paper's ladder beside
serialkit's."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from serialkit.cli import cli
from serialkit.harness import run
from serialkit.harness.authorship import AUTHORS, author_of
from serialkit.harness.ladder import ladder_rungs
from serialkit.harness.schemas import validation_errors
from serialkit.harness.seeded_tasks import generate_task
from tests.eval.helpers import run_cli, small_bank


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(task_seed=st.integers(0, 400), seed=st.integers(0, 10_000),
       profile=st.sampled_from(["default", "paper-raw", "hostile"]),
       variant=st.sampled_from(["harness", "harness", "harness-paper", "raw"]))
def test_shares_add_up_to_the_notes_and_agree_with_the_certificate(
        task_seed: int, seed: int, profile: str, variant: str) -> None:
    task = generate_task(task_seed)
    result = run(task, variant=variant, seed=seed, proposer_options={"profile": profile})
    authors = result.report["authorship"]
    assert authors["notes"] == sum(authors["counts"].values()) == len(result.piece.events)
    assert sum(authors["shares"].values()) == pytest.approx(1.0 if authors["notes"] else 0.0, abs=1e-5)
    assert result.to_record()["authorship"] == authors["shares"]
    assert not validation_errors("run-report", result.report)
    records = result.certificate["events"]
    if variant == "raw":
        assert authors["counts"]["model"] == authors["notes"]
        return
    assert Counter(r["author"] for r in records) == Counter({a: n for a, n in authors["counts"].items() if n})
    for record in records:
        assert record["author"] == author_of(record["rungs"])
        if record["author"] == "model":
            assert record["rungs"] == [] and record["calls"]
    if variant == "harness-paper":  # the paper's ladder writes no pitch and reflows nothing
        assert authors["counts"]["rewrite"] == authors["counts"]["reflow"] == 0
        assert not any({"rewrite", "reflow"} & set(r["rungs"]) for r in records)
        assert result.report["ladder"] == "paper"


def test_author_precedence() -> None:
    assert author_of([]) == "model"
    assert author_of(["trim", "yield"]) == "timing"
    assert author_of(["retime", "patch"]) == "patch"
    assert author_of(["segment"]) == "patch"
    assert author_of(["patch", "reflow"]) == "reflow"
    assert author_of(["reflow", "rewrite"]) == "rewrite"
    assert author_of(["trim", "my-plugin-rung"]) == "other"


def test_the_two_ladders_come_from_the_registry_in_rank_order() -> None:
    serialkit = [r.name for r in ladder_rungs("serialkit")]
    paper = [r.name for r in ladder_rungs("paper")]
    assert serialkit == ["trim", "yield", "retime", "patch", "rewrite", "reflow", "complete"]
    assert paper == ["trim", "yield", "retime", "patch", "segment"]
    assert [r.rank for r in ladder_rungs("paper")] == sorted(r.rank for r in ladder_rungs("paper"))


def test_generate_json_record_and_summary_report_authorship(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(cli, ["generate", "quartet-webern", "-o", str(tmp_path / "p"), "--ladder", "paper",
                              "--json", "--no-review", "-O", "profile=hostile", "--seed", "1"])
    record = json.loads(res.stdout)
    assert record["variant"] == "harness-paper" and record["ladder"] == "paper"
    assert set(record["authorship"]) == set(AUTHORS) and record["authorship"]["rewrite"] == 0
    report = json.loads((tmp_path / "p" / "report.json").read_text())
    assert report["authorship"]["shares"] == record["authorship"]
    res = runner.invoke(cli, ["generate", "quartet-webern", "-o", str(tmp_path / "s"), "--no-review", "--seed", "1"])
    assert "authorship: model " in res.stdout and "(ladder serialkit)" in res.stdout
    res = runner.invoke(cli, ["generate", "quartet-webern", "-o", str(tmp_path / "x"), "--ladder", "nope"])
    assert res.exit_code == 2


@pytest.mark.slow
def test_eval_report_has_an_authorship_table_per_variant(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_cli("eval", "run", str(small_bank(tmp_path)), "--runs", "1", "-o", str(out),
            "--variant", "raw,harness,harness-paper")
    report = tmp_path / "report.md"
    run_cli("eval", "report", str(out), "-o", str(report))
    text = report.read_text()
    assert "Authorship of released notes" in text
    table = text[text.index("Authorship of released notes"):]
    rows = {line.split("|")[1].strip(): line for line in table.splitlines()[:12] if line.startswith("|")}
    assert {"harness", "harness-paper"} <= set(rows)


@pytest.mark.slow
def test_review_page_says_who_wrote_the_notes(tmp_path: Path) -> None:
    from serialkit.render import render

    out = tmp_path / "run"
    CliRunner().invoke(cli, ["generate", "quartet-webern", "-o", str(out), "--seed", "1", "--no-review"])
    cert = json.loads((out / "certificate.json").read_text())
    render(out, tmp_path / "review.html")
    html = (tmp_path / "review.html").read_text()
    assert 'id="sk-authorship"' in html
    counts = Counter(e["author"] for e in cert["events"])
    assert f"Who wrote the notes ({sum(counts.values())})" in html
    assert f"the model, unchanged: {counts['model']} (" in html
