"""The openai proposer against a real local HTTP server: every failure mode ends in a defined outcome."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from serialkit.harness import load_task, run
from serialkit.harness.proposers.openai import OpenAIProposer
from tests.harness.fake_openai import FakeOpenAI

SECRET = "sk-serialkit-test-secret-0123456789"


@pytest.fixture()
def task() -> Any:
    return load_task("duo-berg")


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERIALKIT_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def _run(server: FakeOpenAI, task: Any, tmp_path: Path, variant: str = "harness", **opts: Any) -> Any:
    options = {"base_url": server.base_url, "model": "test-model", "timeout": 2.0, "backoff": 0.01,
               "max_retries": 2, "temperature": 0.3, "seed": 11}
    options.update(opts)
    return run(task, variant=variant, proposer="openai", proposer_options=options, seed=11, out_dir=tmp_path)


def _files_text(directory: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in sorted(directory.iterdir()) if p.is_file())


def test_normal_path_releases_and_records_usage(task: Any, tmp_path: Path) -> None:
    with FakeOpenAI(task, ["ok"]) as server:
        result = _run(server, task, tmp_path)
    assert result.released, result.report["failures"]
    assert (tmp_path / "score.musicxml").exists()
    calls = result.report["calls"]
    assert result.usage.calls == len(calls) == len(server.received)
    # tokens are the server's own counts, summed per call
    assert result.usage.prompt_tokens == sum(100 + i for i in range(1, len(calls) + 1))
    assert result.usage.completion_tokens == sum(50 + i for i in range(1, len(calls) + 1))
    assert all(c["seconds"] > 0 and c["tries"] == 1 and c["status"] == "ok" for c in calls)
    body = server.received[0]
    assert body["model"] == "test-model" and body["temperature"] == 0.3 and body["seed"] == 11
    assert body["response_format"]["type"] == "json_schema"
    assert server.headers[0]["Authorization"] == f"Bearer {SECRET}"
    assert SECRET not in _files_text(tmp_path)
    assert result.certificate["run"]["model"] == "test-model"


def test_malformed_json_abstains_with_reasons(task: Any, tmp_path: Path) -> None:
    with FakeOpenAI(task, ["malformed"]) as server:
        result = _run(server, task, tmp_path)
    assert not result.released
    assert not (tmp_path / "score.musicxml").exists()
    # every section used its whole attempt budget, each call counted
    assert result.usage.calls == len(task.sections) * task.attempts == len(server.received)
    assert all("malformed output" in e for e in result.report["errors"])
    assert result.report["failures"]
    assert all(not s["complete"] for s in result.report["sections"])


def test_json_wrapped_in_prose_is_extracted(task: Any, tmp_path: Path) -> None:
    with FakeOpenAI(task, ["prose"]) as server:
        result = _run(server, task, tmp_path)
    assert result.released
    assert "```json" in result.transcript
    assert len(result.piece.events) == len(task.all_slots())


def test_out_of_range_pitches_are_repaired_by_harness_but_fail_raw(task: Any, tmp_path: Path) -> None:
    with FakeOpenAI(task, ["out_of_range"]) as server:
        harness = _run(server, task, tmp_path / "h")
    with FakeOpenAI(task, ["out_of_range"]) as server:
        raw = _run(server, task, tmp_path / "r", variant="raw")
    assert harness.released
    assert harness.report["repairs"].get("patch", 0) + harness.report["repairs"].get("rewrite", 0) > 0
    voices = {v.id: v for v in task.voices}
    assert all(voices[e.voice].low <= e.midi <= voices[e.voice].high for e in harness.piece.events)
    assert not raw.released
    assert raw.verdict.predicates()["RANGE"] is False


def test_429_then_success_retries(task: Any, tmp_path: Path) -> None:
    with FakeOpenAI(task, ["429", "ok"]) as server:
        result = _run(server, task, tmp_path)
    first = result.report["calls"][0]
    assert first["tries"] == 2 and first["status"] == "ok" and first["error"] is None
    assert result.usage.http_tries == result.usage.calls + 1 == len(server.received)
    assert result.released


def test_500_until_retries_are_exhausted(task: Any, tmp_path: Path) -> None:
    with FakeOpenAI(task, ["500"]) as server:
        result = _run(server, task, tmp_path, max_retries=2)
    assert not result.released
    calls = result.report["calls"]
    assert len(calls) == len(task.sections) * task.attempts
    assert all(c["status"] == "exhausted" and c["tries"] == 3 for c in calls)
    assert all("HTTP 500" in c["error"] and "gave up after 3 tries" in c["error"] for c in calls)
    assert len(server.received) == 3 * len(calls)
    assert result.usage.failed_calls == len(calls)
    assert result.report["failures"]
    assert (tmp_path / "report.json").exists() and not (tmp_path / "score.musicxml").exists()


def test_response_slower_than_timeout(task: Any, tmp_path: Path) -> None:
    short = dataclasses.replace(task, attempts=1)
    with FakeOpenAI(short, ["slow"], delay=1.5) as server:
        result = _run(server, short, tmp_path, timeout=0.25, max_retries=1)
    assert not result.released
    calls = result.report["calls"]
    assert len(calls) == len(short.sections)
    assert all(c["status"] == "exhausted" and "timed out" in c["error"] for c in calls)
    assert all(c["tries"] == 2 and c["seconds"] >= 0.5 for c in calls)
    assert result.usage.seconds >= 0.5 * len(calls)


def test_server_without_json_schema_gets_prose_requests(task: Any, tmp_path: Path) -> None:
    with FakeOpenAI(task, ["no_schema"]) as server:
        result = _run(server, task, tmp_path)
    assert result.released
    assert "response_format" in server.received[0]
    assert all("response_format" not in body for body in server.received[1:])


def test_unreachable_endpoint_is_an_error_reply(task: Any) -> None:
    proposer = OpenAIProposer(base_url="http://127.0.0.1:9/v1", timeout=0.5, max_retries=1, backoff=0.01)
    result = run(dataclasses.replace(task, attempts=1), proposer=proposer)
    assert not result.released
    assert all(c["status"] == "exhausted" for c in result.report["calls"])
    assert "cannot reach" in result.report["calls"][0]["error"]
