"""Pinned outputs of the commands a user runs: check reports, annotated files (MusicXML and MEI),
repaired scores and generated run directories (score, certificate, report).

A refactoring must leave every one of these bytes alone. A change meant to alter an output rewrites
the pins with ``SERIALKIT_REPIN=1 pytest tests/test_output_pins.py``; the diff of
``tests/pins/outputs.json`` is then the review of what changed.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from serialkit.cli import cli
from tests.eval.test_run_dir_pin import _blank

ROOT = Path(__file__).resolve().parents[1]
PINS = Path(__file__).parent / "pins" / "outputs.json"
REPIN = os.environ.get("SERIALKIT_REPIN") == "1"

SCORES = [
    "fixtures/pieces/demo-piece.json",
    "fixtures/pieces/clean-piece.json",
    "fixtures/scores/features.musicxml",
    "fixtures/scores/features.mei",
    "fixtures/scores/horn-piano.musicxml",
    "fixtures/classroom/anna.musicxml",
    "fixtures/classroom/carla.musicxml",
    "fixtures/repair/carried-sharp.musicxml",
    "fixtures/repair/twin-adjacent.musicxml",
    "fixtures/musescore/three-voices.musicxml",
]
REPAIRS = [
    "fixtures/repair/carried-sharp.musicxml",
    "fixtures/repair/tied-wrong.musicxml",
    "fixtures/repair/hexachord-chord.musicxml",
    "fixtures/repair/clarinet-wrong.musicxml",
]
CORPUS = ROOT.parent / "shared" / "corpus"
CORPUS_SCORES = ["webern-op21-i-mm1-25.mei", "webern-op27-ii-mm1-11.mei"]
TASKS = [("duo-berg", 0), ("trio-schoenberg", 3)]


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:24]


def _score(score: str) -> Path:
    if score.startswith("corpus/"):
        path = CORPUS / score.removeprefix("corpus/")
        if not path.exists():
            pytest.skip("the shared corpus is not here")
        return path
    return ROOT / score


def _run(args: list[str]) -> int:
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    return result.exit_code


def _json_digest(path: Path) -> str:
    """The digest of a JSON or JSON-lines file with its clock fields blanked and its paths cut to names."""
    if not path.exists():
        return "-"
    text = path.read_text()
    if path.suffix == ".jsonl":
        lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    else:
        lines = [json.loads(text)]
    text = json.dumps(_blank(lines), sort_keys=True).replace(str(path.parent), "<tmp>")
    text = text.replace(str(CORPUS.resolve()), "<corpus>").replace(str(CORPUS), "<corpus>")
    return _digest(text.replace(str(ROOT), "<root>").encode())


def _check(tmp: Path, score: str) -> dict[str, str]:
    report = tmp / "report.json"
    code = _run(["check", str(_score(score)), "--report", str(report)])
    return {"exit": str(code), "report": _json_digest(report)}


def _annotate(tmp: Path, score: str, suffix: str) -> dict[str, str]:
    out = tmp / f"annotated{suffix}"
    code = _run(["annotate", str(_score(score)), "-o", str(out)])
    return {"exit": str(code), "file": _digest(out.read_bytes()) if out.exists() else "-"}


def _repair(tmp: Path, score: str) -> dict[str, str]:
    out = tmp / "repaired.musicxml"
    code = _run(["repair", str(_score(score)), "-o", str(out), "--no-review"])
    return {"exit": str(code), "file": _digest(out.read_bytes()) if out.exists() else "-"}


def _generate(tmp: Path, task: str, seed: int) -> dict[str, str]:
    out = tmp / "run"
    code = _run(["generate", task, "-o", str(out), "--seed", str(seed), "--no-review"])
    digests = {"exit": str(code)}
    for name in ("score.musicxml", "certificate.json", "report.json", "transcript.jsonl"):
        path = out / name
        digests[name] = _json_digest(path) if name.endswith(("json", "jsonl")) else _digest(path.read_bytes())
    return digests


def _cases() -> list[tuple[str, object]]:
    cases: list[tuple[str, object]] = []
    for score in SCORES:
        cases.append((f"check {score}", lambda t, s=score: _check(t, s)))
        cases.append((f"annotate {score} musicxml", lambda t, s=score: _annotate(t, s, ".musicxml")))
        cases.append((f"annotate {score} mei", lambda t, s=score: _annotate(t, s, ".mei")))
    for name in CORPUS_SCORES:
        score = f"corpus/{name}"
        cases.append((f"check {score}", lambda t, s=score: _check(t, s)))
        cases.append((f"annotate {score} musicxml", lambda t, s=score: _annotate(t, s, ".musicxml")))
    for score in REPAIRS:
        cases.append((f"repair {score}", lambda t, s=score: _repair(t, s)))
    for task, seed in TASKS:
        cases.append((f"generate {task} {seed}", lambda t, a=task, b=seed: _generate(t, a, b)))
    return cases


CASES = _cases()


@pytest.mark.parametrize("name", [name for name, _ in CASES])
def test_output_is_pinned(name: str, tmp_path: Path) -> None:
    make = dict(CASES)[name]
    got = make(tmp_path)  # type: ignore[operator]
    pins = json.loads(PINS.read_text()) if PINS.exists() else {}
    if REPIN:
        pins[name] = got
        PINS.parent.mkdir(exist_ok=True)
        PINS.write_text(json.dumps(pins, indent=1, sort_keys=True) + "\n")
        return
    assert name in pins, f"no pin for {name!r}: run with SERIALKIT_REPIN=1"
    assert got == pins[name]
