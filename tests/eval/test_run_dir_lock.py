"""One runner per run directory: a second ``eval run`` is refused at once (one line, exit 2, the
holder's pid) while status and report keep reading; the kernel drops the lock of a killed runner."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from serialkit.cli import cli
from serialkit.core.errors import RunDirError
from serialkit.eval.runner import EvalConfig, run_eval
from serialkit.eval.store import LOCK, lock_run_dir
from tests.eval.helpers import small_bank

HOLD = ("import sys\nfrom serialkit.eval.store import lock_run_dir\n"
        "with lock_run_dir(sys.argv[1]):\n    print('locked', flush=True)\n    sys.stdin.read()\n")


def _holder(run_dir: Path) -> subprocess.Popen[str]:
    """Another process holding the run directory's lock until its stdin closes."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(run_dir)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def test_a_second_runner_is_refused_while_readers_go_on(tmp_path: Path) -> None:
    bank = small_bank(tmp_path, ("mono-line-01",))
    run_dir = tmp_path / "run"
    args = ["eval", "run", str(bank), "--variant", "raw", "--runs", "2", "-o", str(run_dir)]
    assert CliRunner().invoke(cli, [*args[:-2], "--runs", "1", "-o", str(run_dir)]).exit_code == 0
    holder = _holder(run_dir)
    try:
        result = CliRunner().invoke(cli, [*args, "--resume"])
        assert result.exit_code == 2
        assert result.stderr.strip().splitlines() == [
            f"error: {run_dir}: another eval run (pid {holder.pid}) is using this directory"]
        assert len((run_dir / "runs.jsonl").read_text().splitlines()) == 1  # nothing written by it
        forced = CliRunner().invoke(cli, [*args, "--force"])  # nor cleared under the running one
        assert forced.exit_code == 2 and "another eval run" in forced.stderr
        assert len((run_dir / "runs.jsonl").read_text().splitlines()) == 1
        with pytest.raises(RunDirError, match="another eval run"):  # the library refuses too
            run_eval(EvalConfig(bank=str(bank), variants=("raw",), runs=2), run_dir, resume=True)
        assert CliRunner().invoke(cli, ["eval", "status", str(run_dir)]).exit_code == 0
        report = CliRunner().invoke(cli, ["eval", "report", str(run_dir), "-o", str(tmp_path / "r.md")])
        assert report.exit_code == 0, report.output
    finally:
        holder.kill()  # SIGKILL: no clean-up of its own; the kernel releases the lock
        holder.wait()
    resumed = CliRunner().invoke(cli, [*args, "--extend"])
    assert resumed.exit_code == 0, resumed.stderr
    assert len((run_dir / "runs.jsonl").read_text().splitlines()) == 2
    assert not (run_dir / LOCK).exists()  # a runner that ends removes its lock file


def test_the_lock_is_reentrant_in_a_process_and_exclusive_across_processes(tmp_path: Path) -> None:
    with lock_run_dir(tmp_path), lock_run_dir(tmp_path):
        assert (tmp_path / LOCK).read_text().strip() == str(os.getpid())
        proc = subprocess.run([sys.executable, "-c", HOLD, str(tmp_path)], input="", capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode != 0 and f"another eval run (pid {os.getpid()})" in proc.stderr
    holder = _holder(tmp_path)  # free again once the outer block is left
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    with lock_run_dir(tmp_path):  # a killed holder's file is left behind, its lock is not
        assert (tmp_path / LOCK).read_text().strip() == str(os.getpid())
