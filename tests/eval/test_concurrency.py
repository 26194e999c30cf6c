"""Experiments against a real local OpenAI-compatible server: requests in flight across runs,
rate limits, Retry-After, budgets, progress, status and several models."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from serialkit.cli import cli
from serialkit.eval.bank import load_bank
from serialkit.eval.report import tables
from serialkit.eval.runner import EvalConfig, experiment_status, plan_runs, run_eval
from serialkit.eval.store import RunStore
from serialkit.eval.summary import summarize
from serialkit.harness import load_task, run
from tests.eval.helpers import small_bank
from tests.harness.fake_openai import FakeOpenAI, max_in_window

MONO = ("mono-line-01", "mono-line-02", "mono-line-03", "mono-line-04", "mono-line-05")


@pytest.fixture(autouse=True)
def _no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SERIALKIT_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def _bank(tmp_path: Path, names: tuple[str, ...] = MONO) -> tuple[Path, list[Any]]:
    bank = small_bank(tmp_path, names)
    return bank, [load_task(str(bank / f"{n}.json")) for n in names]


def _config(bank: Path, server: FakeOpenAI, **fields: Any) -> EvalConfig:
    base: dict[str, Any] = {"bank": str(bank), "variants": ("harness",), "runs": 2, "proposer": "openai",
                            "model": "test-model", "base_url": server.base_url,
                            "proposer_options": {"max_retries": 2, "timeout": 10.0}}
    return EvalConfig(**{**base, **fields})


def _unique_complete(run_dir: Path, expected: set[str]) -> list[dict[str, Any]]:
    keys = [json.loads(line)["key"] for line in (run_dir / "runs.jsonl").read_bytes().splitlines()]
    assert not [k for k, n in Counter(keys).items() if n > 1], "a run was recorded twice"
    assert set(keys) == expected, f"lost: {expected - set(keys)}"
    return RunStore(run_dir).records()


@pytest.mark.slow
def test_200_runs_keep_16_requests_in_flight_and_replay_byte_for_byte(tmp_path: Path) -> None:
    bank, tasks = _bank(tmp_path)
    run_dir = tmp_path / "run"
    with FakeOpenAI(tasks, ["ok"], reply_delay=0.05) as server:
        config = _config(bank, server, runs=40, concurrency=16)
        summary = run_eval(config, run_dir)
        peak = server.peak
    assert summary.planned == summary.finished == 200 and not summary.errors
    assert peak >= 8, f"the server saw at most {peak} requests at once"
    assert summary.peak_in_flight <= 16 and summary.requests == len(server.received)
    records = _unique_complete(run_dir, {s.key for s in plan_runs(load_bank(str(bank)), config)})
    assert sum(r["usage"]["calls"] for r in records) == len(server.received)
    # each run is deterministic given its transcript: replaying it rewrites every file byte for byte
    for record in records:
        folder = run_dir / record["dir"]
        again = tmp_path / "replay" / folder.name
        task = load_task(str(run_dir / "tasks" / f"{record['task']}.json"))
        run(task, variant=record["variant"], proposer="replay", seed=record["seed"], out_dir=again,
            proposer_options={"transcript": folder / "transcript.jsonl"})
        for path in sorted(folder.iterdir()):
            assert path.read_bytes() == (again / path.name).read_bytes(), (record["key"], path.name)


def test_requests_per_window_never_exceed_the_limit(tmp_path: Path) -> None:
    """--rpm 10 on a 1-second window (a minute, shortened): no window of the server's clock holds more."""
    bank, tasks = _bank(tmp_path, MONO[:2])
    with FakeOpenAI(tasks, ["ok"]) as server:
        summary = run_eval(_config(bank, server, runs=8, concurrency=8, rpm=10, window=1.0), tmp_path / "run")
        times = list(server.times)
    assert summary.finished == 16 and len(times) == 32
    assert max_in_window(times, 1.0) <= 10
    assert max_in_window(times, 1.0) >= 8  # the limit, not the server, set the pace
    assert times[-1] - times[0] >= 2.9  # 32 requests at 10 a second take three windows


def test_a_429_with_retry_after_pauses_the_whole_endpoint(tmp_path: Path) -> None:
    bank, tasks = _bank(tmp_path, MONO[:2])
    with FakeOpenAI(tasks, ["ok", "ok", "ok", "ok", "429", "ok"], retry_after="1", reply_delay=0.02) as server:
        summary = run_eval(_config(bank, server, runs=4, concurrency=4), tmp_path / "run")
        times, statuses = list(server.times), list(server.statuses)
    assert summary.finished == 8 and not summary.errors
    assert statuses.count(429) == 1
    t429 = times[statuses.index(429)]
    # requests sent after the 429 came back wait out its Retry-After, whichever run they belong to
    later = [t - t429 for t in times if t > t429 + 0.5]  # slack for requests already on their way
    assert later and min(later) >= 0.95, later[:5]
    records = RunStore(tmp_path / "run").records()
    assert sum(r["usage"]["calls"] for r in records) + 1 == len(times)  # the retried try is counted


def test_budget_stop_then_resume_loses_and_repeats_nothing(tmp_path: Path) -> None:
    bank, tasks = _bank(tmp_path, MONO[:3])
    run_dir = tmp_path / "run"
    with FakeOpenAI(tasks, ["ok"]) as server:
        args = ["eval", "run", str(bank), "--variant", "raw,harness", "--runs", "3", "--proposer", "openai",
                "--model", "test-model", "--base-url", server.base_url, "--concurrency", "2", "-o", str(run_dir)]
        first = CliRunner().invoke(cli, [*args, "--max-tokens", "2000"])
        assert first.exit_code == 3, first.output
        assert "budget" in first.stderr and "--resume" in first.stderr
        done = RunStore(run_dir).records()
        assert 0 < len(done) < 18
        status = experiment_status(run_dir)
        assert status["state"] == "stopped" and status["done"] == len(done) and status["planned"] == 18
        assert status["prompt_tokens"] + status["completion_tokens"] >= 2000
        shown = CliRunner().invoke(cli, ["eval", "status", str(run_dir)])
        assert shown.exit_code == 0 and f"runs {len(done)}/18" in shown.output and "stopped" in shown.output
        second = CliRunner().invoke(cli, [*args, "--resume", "--json"])
        assert second.exit_code == 0, second.output
    lines = [json.loads(line) for line in second.stdout.splitlines()]
    assert [line["event"] for line in lines] == ["run"] * (18 - len(done)) + ["summary"]
    assert lines[-1]["skipped"] == len(done)
    config = EvalConfig(bank=str(bank), variants=("raw", "harness"), runs=3, proposer="openai", model="test-model")
    _unique_complete(run_dir, {s.key for s in plan_runs(load_bank(str(bank)), config)})
    assert experiment_status(run_dir)["state"] == "finished"


@pytest.mark.parametrize("behaviour", ["negative_usage", "bad_usage"])
def test_unreadable_usage_still_counts_against_the_budget(tmp_path: Path, behaviour: str) -> None:
    """Negative or non-numeric counts are not believed: each call is charged its upper bound, so
    --max-tokens and --max-cost stop the experiment as they would on honest counts (or sooner)."""
    bank, tasks = _bank(tmp_path, MONO[:2])
    models = tmp_path / "models.toml"
    models.write_text('[[model]]\nname = "test-model"\ninput_price = 1000\noutput_price = 1000\n')
    with FakeOpenAI(tasks, [behaviour]) as server:
        for budget in (["--max-tokens", "500"], ["--max-cost", "0.001"]):
            run_dir = tmp_path / budget[0].strip("-")
            result = CliRunner().invoke(cli, ["eval", "run", str(bank), "--variant", "raw", "--runs", "5",
                                              "--proposer", "openai", "--models", str(models), "--base-url",
                                              server.base_url, "-o", str(run_dir), *budget])
            assert result.exit_code == 3, result.output
            assert "budget" in result.stderr
            records = RunStore(run_dir).records()
            assert 0 < len(records) < 10
            for record in records:
                assert record["usage"]["prompt_tokens"] > 0 and record["usage"]["completion_tokens"] >= 0
                assert record["cost"] > 0 and record["usage"]["unreadable_usage"] == record["usage"]["calls"]
            status = experiment_status(run_dir)
            assert status["prompt_tokens"] > 0 and status["cost"] > 0


def test_max_cost_needs_a_price(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["eval", "run", "builtin", "--proposer", "openai", "--model", "no-such-model",
                                      "--max-cost", "1", "-o", str(tmp_path / "never")])
    assert result.exit_code == 2 and "no price for no-such-model" in result.stderr
    assert not (tmp_path / "never").exists()


def test_two_models_side_by_side(tmp_path: Path) -> None:
    bank, tasks = _bank(tmp_path, ("mono-line-01", "mono-line-02", "canon-01", "canon-02"))
    with FakeOpenAI(tasks, ["ok"]) as server:
        models = tmp_path / "models.toml"
        models.write_text(f"""
[[model]]
name = "model-a"
base_url = "{server.base_url}"
input_price = 1.0
output_price = 2.0
concurrency = 4

[[model]]
name = "model-b"
base_url = "{server.base_url}"
input_price = 3.0
output_price = 6.0
rpm = 600
""")
        result = CliRunner().invoke(cli, ["eval", "run", str(bank), "--variant", "raw,harness", "--runs", "2",
                                          "--models", str(models), "-o", str(tmp_path / "run")])
        assert result.exit_code == 0, result.output
        used = Counter(body["model"] for body in server.received)
    assert set(used) == {"model-a", "model-b"} and used["model-a"] == used["model-b"]
    records = RunStore(tmp_path / "run").records()
    assert Counter(r["model"] for r in records) == {"model-a": 16, "model-b": 16}
    for r in records:
        price = (1.0, 2.0) if r["model"] == "model-a" else (3.0, 6.0)
        usage = r["usage"]
        assert r["cost"] == pytest.approx((usage["prompt_tokens"] * price[0] + usage["completion_tokens"] * price[1]) / 1e6)
    report = CliRunner().invoke(cli, ["eval", "report", str(tmp_path / "run"), "-o", str(tmp_path / "r.md"),
                                      "--json"])
    assert report.exit_code == 0, report.output
    summary = json.loads(report.stdout[report.stdout.index("{"):])
    assert summary["models"] == {"raw": {"model-a": "raw@model-a", "model-b": "raw@model-b"},
                                 "harness": {"model-a": "harness@model-a", "model-b": "harness@model-b"}}
    for condition in ("harness@model-a", "harness@model-b"):
        strict = summary["delivery"][condition]["strict"]
        usd = summary["cost"][condition]["usd"]
        assert strict["n"] == 8 and strict["clusters"] == 2 and strict["low"] is not None
        assert usd["value"] > 0 and usd["low"] is not None and usd["low"] <= usd["value"] <= usd["high"]
    b, a = summary["cost"]["harness@model-b"]["usd"]["value"], summary["cost"]["harness@model-a"]["usd"]["value"]
    assert b > 2 * a  # model-b costs three times as much per token
    text = (tmp_path / "r.md").read_text()
    assert "Models side by side" in text and "model-a strict" in text and "model-b USD/run" in text
    # the harness records who wrote each released note; the report shows it per model
    assert all(isinstance(r.get("authorship"), dict) for r in records if r["variant"] == "harness")
    assert set(summary["authorship"]) >= {"harness@model-a", "harness@model-b"}
    assert "Authorship by model" in text
    # authorship shares, where run records carry them, side by side with their intervals
    shares = {"model-a": {"unchanged": 0.9, "rewrite": 0.1}, "model-b": {"unchanged": 0.5, "rewrite": 0.5}}
    authored = [{**r, "authorship": shares[r["model"]]} for r in records]
    both = summarize(authored)
    assert both["authorship"]["harness@model-a"]["unchanged"]["value"] == pytest.approx(0.9)
    assert both["authorship"]["harness@model-b"]["rewrite"]["value"] == pytest.approx(0.5)
    rows = dict(tables(both))["Authorship by model: share of released notes by who wrote them (95 % CI)"][1]
    assert ["harness", "model-b", "50% [50, 50]", "50% [50, 50]"] in rows


def test_status_of_a_running_experiment_from_its_files(tmp_path: Path) -> None:
    bank, tasks = _bank(tmp_path, MONO[:2])
    run_dir = tmp_path / "run"
    snapshots: list[dict[str, Any]] = []
    seen: list[dict[str, Any]] = []
    with FakeOpenAI(tasks, ["ok"], reply_delay=0.3) as server:
        worker = threading.Thread(target=run_eval, args=(_config(bank, server, runs=3, concurrency=4), run_dir),
                                  kwargs={"status_every": 0.1, "on_status": snapshots.append})
        worker.start()
        while worker.is_alive():
            if (run_dir / "status.json").exists():
                seen.append(experiment_status(run_dir))
            time.sleep(0.05)
        worker.join()
    running = [s for s in seen if s["state"] == "running"]
    assert running and max(s["requests_in_flight"] for s in running) >= 2
    assert any(s["eta"] is not None and s["done"] > 0 for s in running)
    assert all(s["planned"] == 6 for s in seen)
    final = experiment_status(run_dir)
    assert final["state"] == "finished" and final["done"] == 6 and final["requests_in_flight"] == 0
    assert final["prompt_tokens"] > 0 and final["cost"] is None  # test-model has no price
    assert snapshots[-1]["state"] == "finished" and snapshots[-1]["done"] == 6


def test_a_server_without_json_schema_is_asked_in_prose_by_every_run(tmp_path: Path) -> None:
    bank, tasks = _bank(tmp_path, MONO[:2])
    with FakeOpenAI(tasks, ["no_schema"]) as server:
        summary = run_eval(_config(bank, server, runs=2, concurrency=1), tmp_path / "run")
        bodies = list(server.received)
    assert summary.finished == 4 and not summary.errors
    # the first request learns it; no later run asks for response_format again
    assert "response_format" in bodies[0] and all("response_format" not in b for b in bodies[1:])
    assert all(r["released"] for r in RunStore(tmp_path / "run").records())
