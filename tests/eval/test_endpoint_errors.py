"""Failures of the model server are errors, not verdicts: generate exits 2 at once; eval records
errored runs apart, leaves them out of delivery and runs them again on --resume."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from serialkit.cli import cli
from serialkit.eval.bank import load_bank
from serialkit.eval.runner import EvalConfig, plan_runs, run_eval
from serialkit.eval.store import RunStore
from serialkit.eval.summary import summarize
from serialkit.harness import load_task
from tests.eval.helpers import small_bank
from tests.harness.fake_openai import FakeOpenAI

SECRET = "sk-serialkit-test-secret-0123456789"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERIALKIT_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _generate(base_url: str, out: Path) -> tuple[int, str, float]:
    import openai  # noqa: F401 - import costs are not the endpoint's: time the run, not the imports

    import serialkit.harness.proposers.openai  # noqa: F401
    started = time.monotonic()
    result = CliRunner().invoke(cli, ["generate", "duo-berg", "-o", str(out), "--proposer", "openai",
                                      "--base-url", base_url, "--model", "test-model"])
    return result.exit_code, result.stderr, time.monotonic() - started


@pytest.mark.parametrize(("behaviour", "words"), [
    ("401", "HTTP 401: the API key was refused"),
    ("404", "HTTP 404: no such model or URL"),
])
def test_generate_exits_2_naming_endpoint_and_status(tmp_path: Path, behaviour: str, words: str) -> None:
    with FakeOpenAI(load_task("duo-berg"), [behaviour]) as server:
        code, stderr, seconds = _generate(server.base_url, tmp_path / "run")
    assert code == 2 and seconds < 5
    assert len(server.received) == 1  # an auth or URL error is never retried
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {server.base_url} (model test-model): {words}")
    assert SECRET not in stderr and "sk-serialkit" not in stderr and "Traceback" not in stderr
    # the run directory keeps the transcript so far, and no verdict
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["transcript.jsonl"]


def test_generate_refused_connection_exits_2_at_once(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    code, stderr, seconds = _generate(url, tmp_path / "run")
    assert code == 2 and seconds < 5
    port = url.split(":")[-1].split("/")[0]
    assert stderr.count("\n") == 1
    assert stderr.startswith(f"error: {url} (model test-model): connection refused: nothing listens at 127.0.0.1:{port}")
    assert "tries" not in stderr


def test_generate_exhausted_retries_exit_2_keeping_the_transcript(tmp_path: Path) -> None:
    with FakeOpenAI(load_task("duo-berg"), ["ok", "500"]) as server:
        result = CliRunner().invoke(cli, ["generate", "duo-berg", "-o", str(tmp_path / "run"), "--proposer",
                                          "openai", "--base-url", server.base_url, "--option", "max_retries=1"])
    assert result.exit_code == 2, result.output
    assert "HTTP 500 after 2 tries" in result.stderr and "transcript so far" in result.stderr
    lines = (tmp_path / "run" / "transcript.jsonl").read_text().splitlines()
    # the failed call and its re-ask (under the next attempt number) are both kept
    assert len(lines) == 4 and [json.loads(line)["usage"]["status"] for line in lines[2:]] == ["errored"] * 2


def _options(server: FakeOpenAI) -> dict[str, Any]:
    return {"base_url": server.base_url, "timeout": 5.0, "max_retries": 0}


def test_eval_then_resume_against_a_server_that_fails_first(tmp_path: Path) -> None:
    bank = small_bank(tmp_path, ("mono-line-01", "canon-02"))
    tasks = [load_task(str(bank / f"{n}.json")) for n in ("mono-line-01", "canon-02")]
    run_dir = tmp_path / "run"
    config = EvalConfig(bank=str(bank), variants=("raw", "harness"), runs=2, proposer="openai",
                        model="test-model", jobs=2)
    expected = {s.key for s in plan_runs(load_bank(str(bank)), config)}
    with FakeOpenAI(tasks, ["ok", "ok", "500"]) as server:
        config = EvalConfig(**{**config.__dict__, "proposer_options": _options(server)})
        first = run_eval(config, run_dir)
    # the server failed: those runs errored; none is recorded as a verdict
    assert first.errors and first.stopped is None
    assert {e["kind"] for e in first.errors} == {"server"}
    store = RunStore(run_dir)
    errored = store.errored()
    assert {e["key"] for e in errored} == {e["key"] for e in first.errors}
    assert len(store.records()) + len(errored) == len(expected) == 8
    summary = summarize(store.records(), errored=errored)
    assert sum(summary["errored"].values()) == len(errored)
    assert sum(summary["delivery"][v]["strict"]["n"] for v in summary["variants"]) == len(store.records())
    port = server.httpd.server_address[1]  # the server comes back where it was (the same setup)
    with FakeOpenAI(tasks, ["ok"], port=port) as server:
        config = EvalConfig(**{**config.__dict__, "proposer_options": _options(server)})
        second = run_eval(config, run_dir, resume=True)
    assert not second.errors and second.finished == len(errored)
    records = store.records()
    keys = [r["key"] for r in records]
    assert sorted(keys) == sorted(expected) and len(keys) == len(set(keys))  # none lost, none twice
    assert store.errored() == []
    # every run delivered or abstained on its music: the clean server's candidates all pass
    assert all(r["released"] for r in records if r["variant"] == "harness")
    assert summarize(records)["errored"] == {"raw": 0, "harness": 0}


def test_eval_stops_at_a_fatal_error_and_exits_2(tmp_path: Path) -> None:
    bank = small_bank(tmp_path, ("mono-line-01", "canon-02"))
    with FakeOpenAI([load_task(str(bank / "mono-line-01.json"))], ["401"]) as server:
        result = CliRunner().invoke(cli, ["eval", "run", str(bank), "--variant", "raw,harness", "--runs", "2",
                                          "--proposer", "openai", "--base-url", server.base_url,
                                          "-o", str(tmp_path / "run")])
        asked = len(server.received)
    assert result.exit_code == 2
    assert "stopped:" in result.stderr and "HTTP 401" in result.stderr and SECRET not in result.output
    assert asked == 1  # no further run was started against a refused key
    assert RunStore(tmp_path / "run").records() == []
    assert len(RunStore(tmp_path / "run").errored()) == 1
