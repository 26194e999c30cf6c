"""Reports of experiments whose runs errored or delivered nothing (outside tester, round 1900, #15):
a run directory holding only errored runs is reported; an errored run keeps its task, variant and
model in ``eval run --json``; a variant that delivered no notes has no predicate pass rate; calls
are counted in whole numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from serialkit.cli import cli
from serialkit.eval.report import tables
from serialkit.eval.runner import PREDICATE_CODES
from serialkit.eval.store import RunStore
from serialkit.eval.summary import summarize
from serialkit.harness import load_task
from tests.eval.helpers import small_bank
from tests.harness.fake_openai import FakeOpenAI


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERIALKIT_API_KEY", "sk-serialkit-test-key")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_a_run_directory_of_errored_runs_is_reported(tmp_path: Path) -> None:
    bank = small_bank(tmp_path, ("mono-line-01",))
    run = tmp_path / "run"
    with FakeOpenAI([load_task(str(bank / "mono-line-01.json"))], ["401"]) as server:
        result = CliRunner().invoke(cli, ["eval", "run", str(bank), "--variant", "harness", "--runs", "1",
                                          "--proposer", "openai", "--base-url", server.base_url,
                                          "--model", "m1", "-o", str(run), "--json"])
    assert result.exit_code == 2, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    (errored,) = [e for e in events if e.get("errored")]
    assert (errored["task"], errored["variant"], errored["model"], errored["run"]) == ("mono-line-01", "harness", "m1", 0)
    assert RunStore(run).records() == [] and len(RunStore(run).errored()) == 1

    report = CliRunner().invoke(cli, ["eval", "report", str(run), "-o", str(tmp_path / "r.md"), "--json"])
    assert report.exit_code == 0, report.stderr
    summary = json.loads(report.stdout)
    assert summary["runs"] == 0 and summary["errored"] == {"harness": 1}
    text = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "0 finished runs and 1 errored" in text and "| harness | 0 | – | – | – | 1 |" in text


def test_a_folder_that_is_no_run_directory_is_still_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["eval", "report", str(tmp_path), "-o", str(tmp_path / "r.md")])
    assert result.exit_code == 2 and "is this a run directory?" in result.stderr


def _record(variant: str, events: int, counts: dict[str, int] | None = None, family: str = "f") -> dict[str, Any]:
    return {"key": f"t|{variant}|{events}|{family}", "task": "t", "family": family, "variant": variant, "run": 0,
            "proposer": "p", "model": None, "strict": events > 0, "relaxed": events > 0, "released": events > 0,
            "counts": {**dict.fromkeys(PREDICATE_CODES, 0), **(counts or {})},
            "usage": {"calls": 2, "prompt_tokens": 10, "completion_tokens": 5, "seconds": 0.1},
            "metrics": {"events": events, "collisions": 0, "opportunities": 0, "degeneracy": None,
                        "pitch_line": []}}


def test_no_notes_is_no_predicate_pass() -> None:
    records = [_record("raw", 0), _record("raw", 0, family="g"),
               _record("harness", 24), _record("harness", 24, {"COLL": 1}, family="g")]
    s = summarize(records)
    assert s["with_notes"] == {"raw": 0, "harness": 2}
    assert all(s["predicates"]["raw"][c]["n"] == 0 and s["predicates"]["raw"][c]["value"] is None
               for c in PREDICATE_CODES)
    assert s["predicates"]["harness"]["COLL"]["value"] == pytest.approx(0.5)
    assert s["predicates"]["harness"]["ROW"]["value"] == pytest.approx(1.0)
    (_, (header, rows)), = [t for t in tables(s) if t[0].startswith("Predicate")]
    by_variant = {row[0]: row for row in rows}
    assert header[1] == "runs with notes" and by_variant["raw"][1] == "0 of 2"
    assert set(by_variant["raw"][2:]) == {"–"} and "100%" not in by_variant["raw"]


def test_usage_counts_are_whole_numbers(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["eval", "run", str(small_bank(tmp_path, ("mono-line-01",))), "--variant",
                                      "harness", "--runs", "1", "-o", str(tmp_path / "run"), "--json"])
    assert result.exit_code == 0, result.stderr
    (run,) = [json.loads(line) for line in result.stdout.splitlines() if '"event": "run"' in line]
    assert isinstance(run["calls"], int) and isinstance(run["prompt_tokens"], int)
    (record,) = RunStore(tmp_path / "run").records()
    assert all(isinstance(record["usage"][k], int) for k in ("calls", "prompt_tokens", "completion_tokens"))


def test_every_code_that_fails_a_run_has_a_column() -> None:
    """raw: the seven predicates all pass, yet 7 of 10 runs fail strict delivery, on GRID only (and
    one on COMPLETE): those codes get columns, so the table explains the delivery rate."""
    records = [_record("raw", 24, {"GRID": 5} if i < 6 else {}, family=f"f{i}") for i in range(10)]
    records[6] = _record("raw", 24, {"COMPLETE": 1}, family="f6")
    for r in records:
        r["strict"] = r["relaxed"] = r["released"] = not any(r["counts"].values())
    s = summarize(records)
    assert s["predicate_codes"] == [*PREDICATE_CODES, "GRID", "COMPLETE"]
    (_, (header, rows)), = [t for t in tables(s) if t[0].startswith("Predicate")]
    assert header[2:] == s["predicate_codes"]
    row = dict(zip(header, rows[0], strict=True))
    assert all(row[c].startswith("100%") for c in PREDICATE_CODES)
    assert row["GRID"].startswith("40%") and row["COMPLETE"].startswith("90%")
    # every run that failed strict delivery fails some column
    assert all(any(r["counts"].get(c) for c in s["predicate_codes"]) for r in records if not r["strict"])
    # a code no run failed adds no column; nor does a code the runs do not count
    assert summarize([_record("raw", 24)])["predicate_codes"] == list(PREDICATE_CODES)
