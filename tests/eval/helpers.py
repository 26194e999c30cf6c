"""Shared helpers for eval and panel tests: a small bank copied from the shipped one, a real run."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from serialkit.eval.bank import BANK_DIR

SMALL_BANK = ("mono-line-01", "canon-02", "piano-chords-01")
CLI = [sys.executable, "-c", "from serialkit.cli import main; main()"]


def small_bank(tmp: Path, names: tuple[str, ...] = SMALL_BANK) -> Path:
    """A bank directory holding a few of the shipped task files."""
    bank = tmp / "bank"
    bank.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(BANK_DIR / f"{name}.json", bank / f"{name}.json")
    return bank


def run_cli(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``serialkit`` in a subprocess."""
    proc = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError(f"serialkit {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}")
    return proc


def real_run_dir(tmp: Path, runs: int = 2, jobs: int = 2) -> Path:
    """A finished run directory: the small bank, all four variants, stochastic proposer."""
    out = tmp / "run"
    run_cli("eval", "run", str(small_bank(tmp)), "--runs", str(runs), "-o", str(out), "--jobs", str(jobs))
    return out
