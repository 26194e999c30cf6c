"""The run directory of a small stochastic bank run, pinned by hash: the runner's files (manifest,
records, task copies, each run's folder) hold the same bytes, wall-clock fields aside, with one job
and with a process pool of two.

The hashes cover the harness's outputs too (transcripts, reports, certificates, scores): a change
meant to alter them updates ``PINNED`` with ``python -m tests.eval.test_run_dir_pin``, which prints
the hashes of a fresh run.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from serialkit.eval import EvalConfig, run_eval
from tests.eval.helpers import small_bank

#: fields holding wall-clock times, measured durations or the runner's pid: blanked before hashing
CLOCK_FIELDS = frozenset({"created", "updated", "finished", "time", "start_time", "wall_seconds", "seconds",
                          "elapsed", "eta", "pid"})
#: files written from the records alone, in completion order: hashed with their lines sorted
UNORDERED = frozenset({"runs.jsonl", "errors.jsonl"})
SEED = 7

PINNED = {
    "manifest.json": "1303d7a49009befc",
    "runs.jsonl": "69da3f42c54d549f",
    "runs/canon-02__harness__0__stochastic__-": "2e875f97c0ec2c4a",
    "runs/canon-02__raw__0__stochastic__-": "d9b6710c7648893e",
    "runs/canon-02__self-refine__0__stochastic__-": "444bc13e0fca1869",
    "runs/canon-02__soft-rules__0__stochastic__-": "5a3d0faf8ae1c0da",
    "runs/mono-line-01__harness__0__stochastic__-": "0fffe0cbab43e2a1",
    "runs/mono-line-01__raw__0__stochastic__-": "306ebf0eb1ced24f",
    "runs/mono-line-01__self-refine__0__stochastic__-": "0cc35b415308d7fd",
    "runs/mono-line-01__soft-rules__0__stochastic__-": "3a1e797ec31d83f9",
    "runs/piano-chords-01__harness__0__stochastic__-": "92440b5de837142e",
    "runs/piano-chords-01__raw__0__stochastic__-": "a4ee242ab7ee1006",
    "runs/piano-chords-01__self-refine__0__stochastic__-": "ba8741745d1ff6e0",
    "runs/piano-chords-01__soft-rules__0__stochastic__-": "c1d361ee8e64fbd6",
    "tasks": "8cad0f9d9d6f074f",
}


def _blank(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: None if k in CLOCK_FIELDS else _blank(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_blank(v) for v in value]
    return value


def normalized(path: Path, root: Path, bank: Path) -> bytes:
    """A file's bytes with its wall-clock fields blanked (key order kept) and the temporary paths replaced."""
    data = path.read_bytes()
    if path.suffix not in (".json", ".jsonl"):
        return data
    text = data.decode().replace(str(bank), "<bank>").replace(str(root), "<run>")
    if path.suffix == ".json":
        return json.dumps(_blank(json.loads(text))).encode()
    lines = [json.dumps(_blank(json.loads(line))) for line in text.splitlines() if line.strip()]
    if path.name in UNORDERED:
        lines.sort()
    return "\n".join(lines).encode()


def tree_hashes(root: Path, bank: Path) -> dict[str, str]:
    """One hash per top-level file and per folder (``tasks``, each run's folder) of a run directory;
    ``status.json`` (the runner's live state) is left out."""
    groups: dict[str, list[Path]] = {}
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.name == "status.json" or path.name.startswith(".lock"):
            continue
        rel = path.relative_to(root)
        group = str(rel.parent) if rel.parts[0] == "runs" else rel.parts[0]
        groups.setdefault(group, []).append(path)
    out = {}
    for group, paths in sorted(groups.items()):
        digest = hashlib.sha256()
        for path in paths:
            digest.update(str(path.relative_to(root)).encode() + b"\0")
            digest.update(normalized(path, root, bank) + b"\0")
        out[group] = digest.hexdigest()[:16]
    return out


def fresh_hashes(tmp: Path, jobs: int) -> dict[str, str]:
    """Run the small bank (every default variant, one run each, seed 7) and hash its run directory."""
    bank = small_bank(tmp)
    run_dir = tmp / "run"
    # one job runs in this process whatever the executor; two run in a process pool
    config = EvalConfig(bank=str(bank), runs=1, seed=SEED, jobs=jobs, executor="process")
    summary = run_eval(config, run_dir, status_every=60.0)
    assert summary.finished == summary.planned == 12 and not summary.errors
    return tree_hashes(run_dir, bank)


@pytest.mark.parametrize("jobs", [1, 2])
def test_run_directory_matches_its_pinned_hashes(tmp_path: Path, jobs: int) -> None:
    got = fresh_hashes(tmp_path, jobs)
    changed = {k: (PINNED.get(k), v) for k, v in got.items() if PINNED.get(k) != v}
    missing = sorted(set(PINNED) - set(got))
    assert not changed and not missing, f"pinned → now: {changed}; missing: {missing}"


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        json.dump(fresh_hashes(Path(tmp), int(sys.argv[1]) if len(sys.argv) > 1 else 1), sys.stdout, indent=4)
        print()
