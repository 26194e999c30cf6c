"""Many scores at once: check, annotate and convert over files and folders, in processes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from serialkit.batch import (
    FAILED,
    PASSED,
    UNCHECKED,
    UNREADABLE,
    WRITES,
    WRITTEN,
    JobOutcome,
    ScoreInput,
    Summary,
    collect,
    output_paths,
)
from serialkit.cli import cli
from serialkit.core.errors import SerialkitError
from serialkit.io import read_score

SERIALKIT = str(Path(sys.executable).parent / "serialkit")
ROOT = Path(__file__).resolve().parents[2]
SCORES = ROOT / "fixtures" / "scores"
PIECES = ROOT / "fixtures" / "pieces"
ROW = "0 1 2 3 4 5 6 7 8 9 10 11"


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    """A folder of scores: two pieces, three scores in a sub-folder, a broken one, and non-scores."""
    root = tmp_path / "in"
    (root / "sub").mkdir(parents=True)
    shutil.copy(PIECES / "clean-piece.json", root / "clean.json")
    shutil.copy(PIECES / "demo-piece.json", root / "demo.json")
    for name in ("features.mei", "features.musicxml", "features.mxl"):
        shutil.copy(SCORES / name, root / "sub" / name)
    (root / "broken.musicxml").write_text("<score-partwise><part-list>")
    (root / "catalogue.json").write_text(json.dumps({"rows": [], "count": 0}))  # not a piece: skipped
    (root / "notes.txt").write_text("not a score")
    (root / ".hidden.mei").write_text("<mei/>")
    return root


def _lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines()]


def test_collect_picks_scores_only(folder: Path) -> None:
    flat = [s.name for s in collect([str(folder)])]
    assert [Path(n).name for n in flat] == ["broken.musicxml", "clean.json", "demo.json"]
    deep = [Path(s.name).relative_to(folder).as_posix() for s in collect([str(folder)], recursive=True)]
    assert deep == ["broken.musicxml", "clean.json", "demo.json", "sub/features.mei", "sub/features.musicxml",
                    "sub/features.mxl"]


def test_check_folder_json_lines_and_summary(folder: Path) -> None:
    result = CliRunner().invoke(cli, ["check", str(folder), "--recursive", "--json"])
    lines = _lines(result.stdout)
    assert len(lines) == 7  # six scores, one summary
    status = {Path(str(line["source"])).name: line["status"] for line in lines[:-1]}
    alone = {0: (PASSED,), 1: (FAILED, UNCHECKED), 2: (UNREADABLE,)}
    # each score alone only for its exit status (--no-suggest: the verdict is made before any
    # suggestion; the folder run above makes them)
    for path in [folder / "broken.musicxml", folder / "clean.json", folder / "demo.json",
                 *sorted((folder / "sub").iterdir())]:
        code = CliRunner().invoke(cli, ["check", str(path), "--no-suggest"]).exit_code
        assert status[path.name] in alone[code], path.name
    assert status["broken.musicxml"] == UNREADABLE and status["clean.json"] == PASSED
    assert status["demo.json"] == FAILED
    counts = {k: list(status.values()).count(k) for k in (PASSED, FAILED, UNCHECKED, UNREADABLE)}
    assert lines[-1] == {"summary": {"scores": 6, **counts}}
    broken = next(line for line in lines if line.get("status") == UNREADABLE)
    assert "broken.musicxml" in str(broken["error"])
    assert result.exit_code == 2  # some score was unreadable


def test_exit_status_says_which(folder: Path) -> None:
    clean, demo = str(folder / "clean.json"), str(folder / "demo.json")
    # --no-suggest: exit status and summary are the verdicts', made before any suggestion
    assert CliRunner().invoke(cli, ["check", clean, clean]).exit_code == 0
    assert CliRunner().invoke(cli, ["check", clean, demo, "--no-suggest"]).exit_code == 1
    both = CliRunner().invoke(cli, ["check", clean, demo, str(folder / "missing.mei"), "--no-suggest"])
    assert both.exit_code == 2
    assert "2 passed" not in both.stdout and "3 scores: 1 passed, 1 failed, 0 unchecked, 1 unreadable" in both.stdout
    assert "missing.mei: no such file" in both.stderr


def test_jobs_give_the_same_lines_in_the_same_order(folder: Path) -> None:
    args = ["check", str(folder), "--recursive", "--json"]
    one = _lines(CliRunner().invoke(cli, [*args, "--jobs", "1"]).stdout)
    two = _lines(subprocess.run([SERIALKIT, *args, "--jobs", "2"], capture_output=True, text=True,
                                timeout=300).stdout)
    for line in one + two:
        line.pop("analysis_seconds", None)
    assert one == two


def test_check_writes_one_report_per_score(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "reports"
    report = tmp_path / "all.json"
    result = CliRunner().invoke(cli, ["check", str(folder), "-r", "-o", str(out), "--report", str(report)])
    assert result.exit_code == 2
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.json"))
    assert written == ["clean.json.json", "demo.json.json", "sub/features.mei.json", "sub/features.musicxml.json",
                       "sub/features.mxl.json"]  # no report for the unreadable score
    assert json.loads((out / "demo.json.json").read_text())["format"] == "serialkit-check-report"
    combined = json.loads(report.read_text())
    assert combined["summary"]["scores"] == 6 and len(combined["scores"]) == 6


def test_two_inputs_that_would_share_an_output_are_refused(tmp_path: Path) -> None:
    srcs = [ScoreInput("a/x.mei", Path("a/x.mei"), relative=Path("x.mei")),
            ScoreInput("b/x.mxl", Path("b/x.mxl"), relative=Path("x.mxl"))]
    with pytest.raises(SerialkitError, match="would both be written"):
        output_paths(srcs, tmp_path, lambda _s: ".json")


def test_recursive_outputs_keep_the_folder_structure(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "converted"
    result = CliRunner().invoke(cli, ["convert", str(folder / "sub"), str(folder / "clean.json"), "--to", "mei",
                                      "-o", str(out), "--json"])
    lines = _lines(result.stdout)
    assert result.exit_code == 2, result.stderr  # features.mei and .musicxml would both be features.mei
    assert "would both be written" in result.stderr and lines == []


def test_convert_folder_one_output_per_input(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "converted"
    shutil.rmtree(folder / "sub")
    result = CliRunner().invoke(cli, ["convert", str(folder), "--to", "musicxml", "-o", str(out), "--json"])
    lines = _lines(result.stdout)
    assert lines[-1] == {"summary": {"scores": 3, "written": 2, "unreadable": 1}}  # convert judges nothing
    assert [line.get("status") for line in lines[:-1]].count("written") == 2
    assert result.exit_code == 2
    assert sorted(p.name for p in out.iterdir()) == ["clean.musicxml", "demo.musicxml"]
    for name in ("clean", "demo"):
        assert len(read_score(out / f"{name}.musicxml").events) == len(read_score(folder / f"{name}.json").events)


def test_annotate_folder_into_a_directory(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "labelled"
    result = CliRunner().invoke(cli, ["annotate", str(folder / "sub"), "--row", ROW, "-o", str(out)])
    assert result.exit_code in (0, 1), result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["features.mei", "features.musicxml", "features.mxl"]
    assert result.stdout.strip().splitlines()[-1].startswith("3 scores: ")
    single = CliRunner().invoke(cli, ["annotate", str(folder / "sub"), "--row", ROW, "-o", str(out / "features.mei")])
    assert single.exit_code == 2  # a folder needs -o DIR; a file path that exists as a file is refused


def test_one_unreadable_score_never_stops_the_rest(folder: Path) -> None:
    inputs = [str(folder / "broken.musicxml"), str(folder / "clean.json"), str(folder / "nope.mei")]
    result = CliRunner().invoke(cli, ["check", *inputs, "--json", "--jobs", "2"])
    lines = _lines(result.stdout)
    assert [line.get("status") for line in lines[:-1]] == [UNREADABLE, PASSED, UNREADABLE]


def test_no_scores_found_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(cli, ["check", str(tmp_path / "empty")])
    assert result.exit_code == 2 and "no scores found" in result.stderr


@pytest.mark.slow
def test_corpus_folder_json_lines(corpus: Path) -> None:
    """The real corpus: one line per score plus a summary; the row catalogues are not scores.
    --no-suggest: the lines' sources, the summary and the exit status are made before any suggestion
    (Op. 21's are most of a check's time on it; a folder's lines with suggestions are
    test_check_folder_json_lines_and_summary's)."""
    proc = subprocess.run([SERIALKIT, "check", str(corpus), "--json", "--no-suggest"], capture_output=True,
                          text=True, timeout=300)
    lines = _lines(proc.stdout)
    scores = sorted(corpus.glob("*.mei"))
    assert [Path(str(line["source"])).name for line in lines[:-1]] == [p.name for p in scores]
    summary = lines[-1]["summary"]
    assert isinstance(summary, dict)
    assert summary["scores"] == len(scores) and summary["unreadable"] == 0
    assert proc.returncode == (1 if summary["failed"] else 0)
    # standard input read as the file is (its events)
    piped = subprocess.run([SERIALKIT, "check", "-", "--json", "--no-suggest"], input=scores[0].read_bytes(),
                           capture_output=True, timeout=300)
    assert json.loads(piped.stdout)["events"] == lines[0]["events"]


statuses = st.lists(st.sampled_from([PASSED, FAILED, UNREADABLE]), max_size=30)
written = st.lists(st.sampled_from([WRITTEN, UNREADABLE]), max_size=30)


@given(statuses)
def test_summary_counts_and_exit_code(items: list[str]) -> None:
    summary = Summary()
    for i, status in enumerate(items):
        summary.add(JobOutcome(f"s{i}", status))
    data = summary.to_dict()
    assert data["scores"] == len(items) == data["passed"] + data["failed"] + data["unreadable"]
    expected = 2 if UNREADABLE in items else 1 if FAILED in items else 0
    assert summary.exit_code == expected


@given(written)
def test_a_writing_batch_counts_written_not_passed(items: list[str]) -> None:
    """convert and render judge nothing: their summary says "written", never "passed" or "failed"."""
    summary = Summary(counts=WRITES)
    for i, status in enumerate(items):
        summary.add(JobOutcome(f"s{i}", status))
    data = summary.to_dict()
    assert set(data) == {"scores", "written", "unreadable"}
    assert data["scores"] == len(items) == data["written"] + data["unreadable"]
    assert summary.exit_code == (2 if UNREADABLE in items else 0)


def test_progress_bar_only_on_a_terminal(folder: Path) -> None:
    import os
    import pty

    # --no-suggest: the bar counts scores, whatever each check reports (the suggestions are the demo
    # score's most time; the folder's JSON lines with them are test_check_folder_json_lines_and_summary's)
    args = [SERIALKIT, "check", str(folder), "-r", "--json", "--no-suggest"]
    main, sub = pty.openpty()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=sub)
    os.close(sub)
    chunks = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    out, _ = proc.communicate(timeout=300)
    os.close(main)
    on_tty = b"".join(chunks).decode("utf-8", "replace")
    assert "scores" in on_tty and "6/6" in on_tty
    assert _lines(out.decode())[-1]["summary"]["scores"] == 6  # stdout stays clean JSON lines
    piped = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert "6/6" not in piped.stderr


def test_scores_that_could_not_be_checked_are_counted_apart(tmp_path: Path) -> None:
    """A folder of music with no row: each score is ``unchecked`` (no violation, ROW and ORDER not
    run), counted apart from the failures, and the batch exits 1 (never a pass)."""
    import music21

    shutil.copy(str(music21.corpus.getWork("bach/bwv66.6")), tmp_path / "bach.mxl")
    result = CliRunner().invoke(cli, ["check", str(tmp_path), "--no-suggest"])
    assert result.exit_code == 1 and "1 score: 0 passed, 0 failed, 1 unchecked, 0 unreadable" in result.stdout
    lines = _lines(CliRunner().invoke(cli, ["check", str(tmp_path), "--no-suggest", "--json"]).stdout)
    assert lines[0]["status"] == UNCHECKED and lines[-1]["summary"]["unchecked"] == 1
