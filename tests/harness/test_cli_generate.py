"""``serialkit generate``: outputs, exit codes 0/1/2, JSON record, replay, no partial output."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from serialkit.cli import cli
from serialkit.harness.schemas import validation_errors
from serialkit.io import read_score


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_released_run_writes_every_output(tmp_path: Path) -> None:
    out = tmp_path / "run"
    code, stdout, _ = _invoke("generate", "duo-berg", "-o", str(out), "--seed", "2")
    assert code == 0, stdout
    assert stdout.startswith("released: duo-berg")
    names = {p.name for p in out.iterdir()}
    assert {"score.musicxml", "certificate.json", "report.json", "transcript.jsonl", "candidate.json",
            "annotated.musicxml", "review.html"} <= names
    annotated = (out / "annotated.musicxml").read_text()
    from serialkit.io import read_annotations

    labels = [a.label for a in read_annotations(out / "annotated.musicxml").values() if a.label]
    assert len(labels) == 48 and "P0:0" in annotated  # carried as words (the default carrier)
    piece = read_score(out / "score.musicxml")
    assert len(piece.events) == 48
    certificate = json.loads((out / "certificate.json").read_text())
    report = json.loads((out / "report.json").read_text())
    assert validation_errors("certificate", certificate) == []
    assert validation_errors("run-report", report) == []
    assert report["released"] and report["verdict"]["strict"] and report["verdict"]["relaxed"]
    # note ids survive into the score, so each notehead can be traced to its certificate record
    assert {e.id: e.midi for e in piece.events} == {r["id"]: r["midi"] for r in certificate["events"]}


def test_abstained_run_exits_1_with_a_failure_report(tmp_path: Path) -> None:
    out = tmp_path / "run"
    code, stdout, _ = _invoke("generate", "duo-berg", "-o", str(out), "-O", "rates.malformed=1", "--attempts", "2")
    assert code == 1
    assert stdout.startswith("abstained: duo-berg")
    assert not (out / "score.musicxml").exists()
    report = json.loads((out / "report.json").read_text())
    assert report["failures"] and not report["released"]
    assert report["usage"]["calls"] == 4  # 2 sections x K=2


def test_json_record_and_relaxed_mode(tmp_path: Path) -> None:
    code, stdout, _ = _invoke("generate", "trio-schoenberg", "-o", str(tmp_path), "--variant", "raw",
                              "--relaxed", "--json", "-O", "profile=paper-raw")
    record = json.loads(stdout)
    assert record["variant"] == "raw" and record["mode"] == "relaxed"
    assert code == (0 if record["relaxed"] else 1)
    assert record["calls"] == 3 and record["repairs"] == {}


def test_bad_input_exits_2_without_output(tmp_path: Path) -> None:
    out = tmp_path / "never"
    code, _, stderr = _invoke("generate", str(tmp_path / "missing.json"), "-o", str(out))
    assert code == 2 and "missing.json" in stderr and "cannot read task" in stderr
    assert not out.exists()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"row": [0, 1, 2], "voices": [], "bars": 2, "blueprint": []}))
    code, _, stderr = _invoke("generate", str(bad), "-o", str(out))
    assert code == 2 and "bad.json" in stderr
    assert not out.exists()
    code, _, stderr = _invoke("generate", "duo-berg", "-o", str(out), "--proposer", "replay")
    assert code == 2 and "transcript=FILE" in stderr
    code, _, stderr = _invoke("generate", "duo-berg", "-o", str(out), "--proposer", "nonesuch")
    assert code == 2 and "nonesuch" in stderr
    assert not out.exists()


def test_cli_replay_reproduces_the_run(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    code1, _, _ = _invoke("generate", "trio-schoenberg", "-o", str(first), "--seed", "5", "-O", "profile=paper-raw")
    code2, _, _ = _invoke("generate", "trio-schoenberg", "-o", str(second), "--proposer", "replay",
                          "-O", f"transcript={first / 'transcript.jsonl'}")
    assert code1 == code2
    for path in sorted(first.iterdir()):
        assert path.read_bytes() == (second / path.name).read_bytes(), path.name
    code, _, stderr = _invoke("generate", "duo-berg", "-o", str(tmp_path / "c"), "--proposer", "replay",
                              "-O", f"transcript={first / 'transcript.jsonl'}")
    assert code == 2 and "recorded for task 'trio-schoenberg'" in stderr


def test_list_tasks() -> None:
    code, stdout, _ = _invoke("generate", "--list-tasks")
    assert code == 0
    assert [line.split()[0] for line in stdout.splitlines()] == ["duo-berg", "quartet-webern", "trio-schoenberg"]
