"""Ctrl-C or SIGTERM while a model request is in flight (outside tester 0405, defect 4): the run
whose request is in flight finishes and is recorded, no further run starts, the runner exits 130 or
143, and --resume goes on with none lost or run twice; a second signal abandons the run at once.
``generate`` likewise finishes and writes its run before it exits 130 or 143."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from serialkit.eval.store import RunStore
from serialkit.harness import load_task
from tests.eval.helpers import CLI, small_bank
from tests.eval.test_signals import _env, _records, _wait_for
from tests.harness.fake_openai import FakeOpenAI

CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}


def _popen(args: list[str]) -> subprocess.Popen[str]:
    # as a terminal starts it: SIGINT at its default (a suite run in the background ignores it)
    return subprocess.Popen([*CLI, *args], env=_env(), text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])
def test_the_run_in_flight_finishes_and_is_recorded(tmp_path: Path, sig: int) -> None:
    bank = small_bank(tmp_path, ("mono-line-01",))
    run_dir = tmp_path / "run"
    args = ["eval", "run", str(bank), "--variant", "harness", "--runs", "2", "--proposer", "openai",
            "--model", "test-model", "-O", "max_retries=0", "-o", str(run_dir)]
    with FakeOpenAI(load_task(str(bank / "mono-line-01.json")), ["ok"], reply_delay=0.5) as server:
        proc = _popen([*args, "--base-url", server.base_url])
        _wait_for(lambda: server.in_flight >= 1, proc, "a request in flight")  # the first run's first call
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == CODES[sig], err
        assert err.strip().splitlines() == ["interrupted: finished runs are saved; continue with --resume"]
        # the run whose request was in flight finished and is recorded; the next one never started
        records = RunStore(run_dir).records()
        assert len(records) == 1 and records[0]["run"] == 0
        assert records[0]["released"] and records[0]["usage"]["calls"] >= 1
        assert not (run_dir / "errors.jsonl").exists()
        again = subprocess.run([*CLI, *args, "--base-url", server.base_url, "--resume"], env=_env(), text=True,
                               capture_output=True, timeout=600)
    assert again.returncode == 0, again.stderr
    keys = [r["key"] for r in RunStore(run_dir).records()]
    assert len(keys) == len(set(keys)) == len((run_dir / "runs.jsonl").read_text().splitlines()) == 2


def test_a_second_signal_abandons_the_run_in_flight(tmp_path: Path) -> None:
    bank = small_bank(tmp_path, ("mono-line-01",))
    run_dir = tmp_path / "run"
    args = ["eval", "run", str(bank), "--variant", "harness", "--runs", "1", "--proposer", "openai",
            "--model", "test-model", "-O", "max_retries=0", "-o", str(run_dir)]
    with FakeOpenAI(load_task(str(bank / "mono-line-01.json")), ["ok"], reply_delay=30.0) as server:
        proc = _popen([*args, "--base-url", server.base_url])
        _wait_for(lambda: server.in_flight >= 1, proc, "a request in flight")
        for _ in range(40):  # the second must come after the first was taken (a pending signal is one bit)
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                pass
        _, err = proc.communicate(timeout=10)  # left within 20 s, before the reply: abandoned, not waited for
        assert proc.returncode == 130, err
        assert "Traceback" not in err and _records(run_dir) == 0
        server.reply_delay = 0.0
        again = subprocess.run([*CLI, *args, "--base-url", server.base_url, "--resume"], env=_env(), text=True,
                               capture_output=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert len(RunStore(run_dir).records()) == 1


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])
def test_generate_finishes_and_writes_its_run_before_it_exits(tmp_path: Path, sig: int) -> None:
    out = tmp_path / "run"
    with FakeOpenAI(load_task("duo-berg"), ["ok"], reply_delay=0.5) as server:
        proc = _popen(["generate", "duo-berg", "--proposer", "openai", "--base-url", server.base_url,
                       "--model", "test-model", "-O", "max_retries=0", "-o", str(out), "--no-review"])
        _wait_for(lambda: server.in_flight >= 1, proc, "a request in flight")
        proc.send_signal(sig)
        stdout, err = proc.communicate(timeout=300)
    assert proc.returncode == CODES[sig], err
    assert stdout.startswith("released:")
    assert err.strip().splitlines()[-1] == f"interrupted: the run finished and is saved in {out}/"
    names = {p.name for p in out.iterdir()}
    assert {"score.musicxml", "candidate.json", "certificate.json", "report.json", "transcript.jsonl"} <= names
    report = json.loads((out / "report.json").read_text())
    assert report["released"] and report["usage"]["calls"] == len(server.received)
    assert os.path.getsize(out / "transcript.jsonl") > 0
