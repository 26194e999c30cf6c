"""The runner: real harness runs, crash-safe records, resume after kills without loss or duplication."""

from __future__ import annotations

import http.server
import json
import os
import random
import signal
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from serialkit.eval.bank import load_bank
from serialkit.eval.runner import EvalConfig, plan_runs, run_eval
from serialkit.eval.store import RunStore
from serialkit.eval.summary import summarize
from tests.eval.helpers import CLI, run_cli, small_bank

VARIANTS = ("raw", "harness", "self-refine", "soft-rules")


def _check_complete(run_dir: Path, expected: set[str]) -> None:
    lines = (run_dir / "runs.jsonl").read_bytes().splitlines()
    keys = [json.loads(line)["key"] for line in lines]
    dups = [k for k, n in Counter(keys).items() if n > 1]
    assert not dups, f"duplicated runs: {dups}"
    assert set(keys) == expected, f"missing: {expected - set(keys)}; unexpected: {set(keys) - expected}"
    for line in lines:
        record = json.loads(line)
        folder = run_dir / record["dir"]
        assert (folder / "candidate.json").is_file(), folder
        json.loads((folder / "candidate.json").read_text())
    assert not [p for p in (run_dir / "runs").iterdir() if p.name.startswith(".tmp-")]


def test_run_records_every_planned_run_once(tmp_path: Path) -> None:
    bank = small_bank(tmp_path, ("mono-line-01", "canon-02"))
    config = EvalConfig(bank=str(bank), runs=2)
    summary = run_eval(config, tmp_path / "run")
    planned = {s.key for s in plan_runs(load_bank(str(bank)), config)}
    assert summary.finished == len(planned) == 16 and not summary.errors
    _check_complete(tmp_path / "run", planned)
    for name in ("mono-line-01", "canon-02"):  # tasks are pinned into the run directory
        assert (tmp_path / "run" / "tasks" / f"{name}.json").read_bytes() == (bank / f"{name}.json").read_bytes()
    records = RunStore(tmp_path / "run").records()
    for r in records:
        assert set(r["counts"]) >= {"ROW", "ORDER", "COLL", "PC", "RANGE", "CROSS", "SCHED"}
        assert r["metrics"]["events"] == len(json.loads((tmp_path / "run" / r["dir"] / "candidate.json").read_text())["events"])
        assert r["strict"] == (sum(r["counts"].values()) == 0)
    # paired seeds: every variant of a (task, run) gets the same proposer seed
    seeds = {(r["task"], r["run"]): set() for r in records}
    for r in records:
        seeds[(r["task"], r["run"])].add(r["seed"])
    assert all(len(s) == 1 for s in seeds.values())
    # resuming a complete directory does nothing
    again = run_eval(config, tmp_path / "run", resume=True)
    assert (again.skipped, again.finished) == (16, 0)


def test_resume_with_other_settings_is_refused_naming_them(tmp_path: Path) -> None:
    bank = small_bank(tmp_path, ("mono-line-01", "mono-line-02"))
    run_dir = tmp_path / "run"
    base = ("eval", "run", str(bank), "--variant", "raw", "--runs", "1", "-o", str(run_dir))
    run_cli(*base)
    manifest = (run_dir / "manifest.json").read_bytes()
    records = (run_dir / "runs.jsonl").read_bytes()
    for changed, words in ((["--runs", "2"], "runs 1 → 2"), (["--seed", "5"], "seed 0 → 5"),
                           (["--tasks", "mono-line-01"], "tasks (all) → mono-line-01"),
                           (["-O", "profile=paper-raw"], 'options {} → {"profile": "paper-raw"}')):
        args = list(base)
        if changed[0] in args:
            args[args.index(changed[0]) + 1] = changed[1]
        else:
            args += changed
        proc = run_cli(*args, "--resume", check=False)
        assert proc.returncode == 2, (changed, proc.stderr)
        lines = proc.stderr.splitlines()
        assert len(lines) == 1 and words in lines[0] and "--extend" in lines[0], (changed, proc.stderr)
        # nothing was run or rewritten
        assert (run_dir / "manifest.json").read_bytes() == manifest
        assert (run_dir / "runs.jsonl").read_bytes() == records
    # pacing, budgets and the environment's timeout may change on resume
    proc = run_cli(*base, "--resume", "--jobs", "2", "--max-tokens", "10", "--timeout", "9", "--rate-limit", "50/s")
    assert "0 finished now" in proc.stdout
    # --extend adds the runs and records the change; status counts every planned run once
    proc = run_cli(*[a if a != "1" else "2" for a in base], "--extend")
    manifest_now = json.loads((run_dir / "manifest.json").read_text())
    assert manifest_now["planned"] == 4 and manifest_now["config"]["runs"] == 1
    assert manifest_now["extended"][0]["changes"] == ["runs 1 → 2"]
    status = run_cli("eval", "status", str(run_dir), "--json")
    assert json.loads(status.stdout)["done"] == json.loads(status.stdout)["planned"] == 4
    # a plain --resume now compares with the extension's settings
    assert run_cli(*[a if a != "1" else "2" for a in base], "--resume").returncode == 0


def test_existing_run_dir_needs_resume_and_bad_bank_is_exit_2(tmp_path: Path) -> None:
    bank = small_bank(tmp_path, ("mono-line-01",))
    run_cli("eval", "run", str(bank), "--variant", "raw", "--runs", "1", "-o", str(tmp_path / "run"))
    proc = run_cli("eval", "run", str(bank), "--variant", "raw", "--runs", "1", "-o", str(tmp_path / "run"),
                   check=False)
    assert proc.returncode == 2 and "--resume" in proc.stderr
    proc = run_cli("eval", "run", str(tmp_path / "nope"), "-o", str(tmp_path / "r2"), check=False)
    assert proc.returncode == 2 and "nope" in proc.stderr
    for bad in (["--variant", "raw,bogus"], ["--proposer", "nope"], ["--runs", "0"]):
        proc = run_cli("eval", "run", str(bank), *bad, "-o", str(tmp_path / "r4"), check=False)
        assert proc.returncode == 2 and bad[1].split(",")[-1] in proc.stderr
        assert not (tmp_path / "r4").exists()
    (tmp_path / "badbank").mkdir()
    (tmp_path / "badbank" / "t.json").write_text('{"row": [0, 1]')
    proc = run_cli("eval", "run", str(tmp_path / "badbank"), "-o", str(tmp_path / "r3"), check=False)
    assert proc.returncode == 2 and "t.json" in proc.stderr


def test_torn_last_line_is_ignored_and_repaired_on_resume(tmp_path: Path) -> None:
    bank = small_bank(tmp_path, ("mono-line-01",))
    config = EvalConfig(bank=str(bank), variants=("raw", "harness"), runs=2)
    run_dir = tmp_path / "run"
    run_eval(config, run_dir)
    path = run_dir / "runs.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    # simulate a kill in the middle of appending the last record
    path.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    store = RunStore(run_dir)
    assert len(store.records()) == len(lines) - 1
    summary = run_eval(config, run_dir, resume=True)
    assert summary.finished == 1
    _check_complete(run_dir, {s.key for s in plan_runs(load_bank(str(bank)), config)})


def _running(run_dir: Path, since: float) -> bool:
    """Whether this start of the runner has written its status file (it then has its handlers set)."""
    status = run_dir / "status.json"
    try:
        return status.stat().st_mtime >= time.time() - (time.monotonic() - since)
    except OSError:
        return False


def _as_in_a_terminal() -> None:
    """The runner as a terminal starts it: Ctrl-C not ignored. A suite launched in the background
    by a non-interactive shell inherits SIGINT ignored (POSIX), and the runner rightly keeps that
    disposition — which is why its Ctrl-C exits never landed in such runs."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _kill_round(bank: Path, run_dir: Path, rng: random.Random) -> tuple[int, int, list[tuple[int, int, int]]]:
    """Start the runner on ``run_dir`` and kill it at random points of progress until it has been
    killed six times or the work is done; resume to completion; check nothing was lost or repeated.
    Returns (kills, orderly Ctrl-C exits, starts that ended by themselves)."""
    args = [*CLI, "eval", "run", str(bank), "--runs", "16", "-o", str(run_dir), "--jobs", "2"]
    config = EvalConfig(bank=str(bank), runs=16)
    expected = {s.key for s in plan_runs(load_bank(str(bank)), config)}
    kills = interrupted = 0
    attempt = 0
    ended: list[tuple[int, int, int]] = []  # (attempt, records before, after) of starts that ended by themselves
    # Kill at random points of progress until the runner has been killed six times (SIGKILL and
    # SIGINT alternately) or the work is done; a start that finished by itself must have succeeded.
    while kills < 6 and attempt < 24:
        before = len(RunStore(run_dir).records()) if run_dir.exists() else 0
        if before == len(expected):
            break
        target = before + rng.randint(1, 3)
        jobs = ["--jobs", "1"] if attempt % 4 in (2, 3) else []  # the in-process path is killed too
        proc = subprocess.Popen([*args, *jobs, "--resume"] if attempt else args, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                preexec_fn=_as_in_a_terminal)
        started = time.monotonic()
        sig = signal.SIGKILL if kills % 2 == 0 else signal.SIGINT
        # Kill after a few more records, or at a random moment (the runner may record in bursts): a
        # SIGKILL at any moment, a Ctrl-C once the runner shows it is in its loop (its handlers are set).
        kill_at = started + rng.uniform(0.5, 2.5)
        while proc.poll() is None and time.monotonic() < started + 60:
            done = len(RunStore(run_dir).records()) if (run_dir / "runs.jsonl").exists() else 0
            if done >= target:
                time.sleep(rng.uniform(0, 0.05))
                break
            if time.monotonic() >= kill_at and (sig == signal.SIGKILL or done > before or _running(run_dir, started)):
                break
            time.sleep(0.005)
        if proc.poll() is None:
            os.killpg(proc.pid, sig)  # the whole group, like Ctrl-C in a terminal or kill -9 of a job
            kills += 1
            _, err = proc.communicate(timeout=120)
            if sig == signal.SIGINT and proc.returncode != 0:
                assert proc.returncode == 130, (proc.returncode, err)  # Ctrl-C anywhere: 130
                interrupted += 1
            elif sig == signal.SIGINT:  # the Ctrl-C came as the runner was exiting, its work done
                assert len(RunStore(run_dir).records()) == len(expected), err
                ended.append((attempt, before, len(expected)))
        else:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, (proc.returncode, err)
            ended.append((attempt, before, len(RunStore(run_dir).records())))
        attempt += 1
        if (run_dir / "runs.jsonl").exists():
            keys = [r["key"] for r in RunStore(run_dir).records()]
            assert len(keys) == len(set(keys)) and set(keys) <= expected
    final = subprocess.run([*args, "--resume", "--json"], capture_output=True, text=True, timeout=600)
    assert final.returncode == 0, final.stderr
    _check_complete(run_dir, expected)
    return kills, interrupted, ended


@pytest.mark.slow
def test_killed_at_random_points_resumes_without_loss_or_duplication(tmp_path: Path) -> None:
    """SIGKILL and SIGINT the runner (and its workers) several times, then resume to completion.
    The runner may record in bursts and finish before enough kills land: then another experiment
    in a fresh directory is killed too (at most four), each one checked whole."""
    bank = small_bank(tmp_path)
    rng = random.Random(20261129)
    kills = interrupted = 0
    ended: list[tuple[int, int, int]] = []
    for round_ in range(4):
        k, i, e = _kill_round(bank, tmp_path / f"run{round_}", rng)
        kills, interrupted, ended = kills + k, interrupted + i, ended + e
        if kills >= 3 and interrupted >= 1:
            break
    # (Once xfailed: a suite launched with SIGINT ignored handed that to the runner, so no Ctrl-C
    # could land; the runner is now started as a terminal starts it, see _as_in_a_terminal.)
    assert kills >= 3 and interrupted >= 1, (kills, interrupted, ended)



def test_rate_limit_spaces_run_starts_with_threads(tmp_path: Path) -> None:
    bank = small_bank(tmp_path, ("mono-line-01", "canon-02"))
    config = EvalConfig(bank=str(bank), variants=("raw", "soft-rules"), runs=2, jobs=3,
                        executor="thread", rate_limit=5.0)
    summary = run_eval(config, tmp_path / "run")
    assert summary.finished == 8
    starts = sorted(r["start_time"] for r in RunStore(tmp_path / "run").records())
    # 8 runs at 5 starts per second take at least 7 intervals; no 1-second window holds more than 5 + 1
    assert starts[-1] - starts[0] >= 7 * 0.2 - 0.1, starts
    assert max(sum(1 for t in starts if s0 <= t < s0 + 1.0) for s0 in starts) <= 6


class _ChatServer(http.server.ThreadingHTTPServer):
    """A local server speaking the OpenAI chat-completions API (empty proposals, fixed usage)."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _ChatHandler)
        self.models: list[str] = []
        self.lock = threading.Lock()


class _ChatHandler(http.server.BaseHTTPRequestHandler):
    server: _ChatServer

    def do_POST(self) -> None:  # noqa: N802 - the http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            self.server.models.append(body["model"])
        reply = {"id": "x", "object": "chat.completion", "model": body["model"],
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": json.dumps({"events": []})}}],
                 "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def test_remote_proposer_runs_on_threads_and_records_model_and_tokens(tmp_path: Path) -> None:
    server = _ChatServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        bank = small_bank(tmp_path, ("mono-line-01", "canon-02"))
        proc = run_cli("eval", "run", str(bank), "--variant", "raw,harness", "--runs", "1",
                       "--proposer", "openai", "--model", "test-model", "--base-url",
                       f"http://127.0.0.1:{server.server_address[1]}/v1", "--jobs", "2",
                       "-o", str(tmp_path / "run"), "--json", check=False)
        assert proc.returncode == 0, proc.stderr
        records = RunStore(tmp_path / "run").records()
        assert len(records) == 4
        assert {r["model"] for r in records} == {"test-model"} and set(server.models) == {"test-model"}
        served = len(server.models)
        # a second model in the same run directory: refused on --resume, naming what changed ...
        args = ("eval", "run", str(bank), "--variant", "raw", "--runs", "1",
                "--proposer", "openai", "--model", "other-model", "--base-url",
                f"http://127.0.0.1:{server.server_address[1]}/v1", "--jobs", "2", "-o", str(tmp_path / "run"))
        proc = run_cli(*args, "--resume", check=False)
        assert proc.returncode == 2 and len(server.models) == served
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
        assert "variants raw,harness → raw" in proc.stderr and "model 'test-model' → 'other-model'" in proc.stderr
        # ... and added with --extend: new runs, recorded in the manifest, and the report splits conditions
        proc = run_cli(*args, "--extend", check=False)
        assert proc.returncode == 0, proc.stderr
        manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
        assert manifest["config"]["model"] == "test-model" and manifest["planned"] == 6
        assert [e["config"]["model"] for e in manifest["extended"]] == ["other-model"]
        summary = summarize(RunStore(tmp_path / "run").records())
        assert summary["variants"] == ["raw@other-model", "raw@test-model", "harness@test-model"]
        assert summary["delivery"]["raw@other-model"]["strict"]["n"] == 2
    finally:
        server.shutdown()
    assert all(r["key"].endswith("|openai|test-model") for r in records)
    calls = sum(r["usage"]["calls"] for r in records)
    assert calls == served > 0
    assert sum(r["usage"]["completion_tokens"] for r in records) == 20 * calls
    assert not any(r["released"] for r in records)  # empty proposals are never released


def test_progress_bar_on_a_terminal_only(tmp_path: Path) -> None:
    import pty

    bank = small_bank(tmp_path, ("mono-line-01",))
    args = [*CLI, "eval", "run", str(bank), "--variant", "raw,harness", "--runs", "2"]
    quiet = subprocess.run([*args, "-o", str(tmp_path / "a")], capture_output=True, text=True, timeout=300)
    assert quiet.returncode == 0 and quiet.stderr == ""
    master, slave = pty.openpty()
    proc = subprocess.Popen([*args, "-o", str(tmp_path / "b")], stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=300)
    os.close(master)
    text = b"".join(chunks).decode(errors="replace")
    assert proc.returncode == 0 and "runs" in text and "4/4" in text


def test_a_corrupt_middle_record_names_file_and_line(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "runs.jsonl").write_text('{"key": "a"}\nnot json\n{"key": "b"}\n')
    proc = run_cli("eval", "report", str(run_dir), "-o", str(tmp_path / "r.md"), check=False)
    assert proc.returncode == 2 and "runs.jsonl:2" in proc.stderr


def test_task_selection_by_name_or_family(tmp_path: Path) -> None:
    proc = run_cli("eval", "run", "builtin", "--tasks", "mono-line,canon-0[12]", "--variant", "raw",
                   "--runs", "1", "-o", str(tmp_path / "run"), "--json")
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [line["event"] for line in lines] == ["run"] * 7 + ["summary"]  # one line per finished run
    assert lines[-1]["planned"] == 7 and lines[-1]["finished"] == 7
    assert {line["task"] for line in lines[:-1]} == {f"mono-line-0{i}" for i in range(1, 6)} | {"canon-01", "canon-02"}
    names = {r["task"] for r in RunStore(tmp_path / "run").records()}
    assert names == {f"mono-line-0{i}" for i in range(1, 6)} | {"canon-01", "canon-02"}
    assert sorted(p.stem for p in (tmp_path / "run" / "tasks").iterdir()) == sorted(names)
    proc = run_cli("eval", "run", "builtin", "--tasks", "nothing*", "-o", str(tmp_path / "r2"), check=False)
    assert proc.returncode == 2 and "no task" in proc.stderr
