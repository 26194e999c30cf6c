"""-o means the same in every command that writes a score (outside tester, issue 15's round):
an existing directory gets one score under its own name, as it gets each of several, and so does
a new one written with a trailing slash (``-o new/``: made one level, like mkdir); a missing
directory is an error naming it (exit 2, nothing made), never a folder made silently."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from serialkit.cli import cli
from tests.conftest import FIXTURES
from tests.planted import EXERCISE_ROW

BEN = FIXTURES / "classroom" / "ben.musicxml"  # a dropped sharp: repair writes a copy

COMMANDS = {  # command → its arguments besides SCORE and -o, and the name one score gets in -o DIR
    "render": (["--to", "svg"], "ben.svg"),
    "convert": (["--to", "mei"], "ben.mei"),
    "annotate": (["--row", EXERCISE_ROW], "ben.musicxml"),
    "repair": (["--row", EXERCISE_ROW], "ben.musicxml"),
    "check": ([], "ben.musicxml.json"),
}


def _invoke(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, args)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_existing_directory_gets_one_score_as_it_gets_several(command: str, tmp_path: Path) -> None:
    extra, name = COMMANDS[command]
    score = tmp_path / "ben.musicxml"
    shutil.copy(BEN, score)
    one, several = tmp_path / "one", tmp_path / "several"
    one.mkdir()
    code, _, err = _invoke([command, str(score), *extra, "-o", str(one)])
    assert code in (0, 1) and err.count("error:") == 0, err
    assert name in {p.name for p in one.iterdir()}
    other = tmp_path / "other" / "anna.musicxml"
    other.parent.mkdir()
    shutil.copy(FIXTURES / "classroom" / "anna.musicxml", other)
    code, _, err = _invoke([command, str(score), str(other), *extra, "-o", str(several)])
    assert code in (0, 1), err
    assert {p.name for p in one.iterdir()} <= {p.name for p in several.iterdir()}  # the same names


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_missing_directory_is_named_and_not_made(command: str, tmp_path: Path) -> None:
    extra, name = COMMANDS[command]
    missing = tmp_path / "no" / "such"
    target = missing if command == "check" else missing / name  # check's -o is a folder
    code, out, err = _invoke([command, str(BEN), *extra, "-o", str(target)])
    assert code == 2, (out, err)
    assert err == f"error: cannot write {target}: no directory {target.parent}\n"
    assert out == "" and not (tmp_path / "no").exists()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_trailing_slash_names_a_new_directory(command: str, tmp_path: Path) -> None:
    """``-o new/`` with one score: the directory is made (one level) and gets the score under its
    own name — the same names an existing directory gets — never a file called ``new``."""
    extra, name = COMMANDS[command]
    new = tmp_path / "new"
    code, _, err = _invoke([command, str(BEN), *extra, "-o", f"{new}/"])
    assert code in (0, 1) and "error:" not in err, err
    assert new.is_dir() and name in {p.name for p in new.iterdir()}
    deeper = tmp_path / "no" / "such"
    code, _, err = _invoke([command, str(BEN), *extra, "-o", f"{deeper}/"])
    assert code == 2 and err == f"error: cannot write {deeper}: no directory {deeper.parent}\n", err
    assert not (tmp_path / "no").exists()


def test_a_trailing_slash_is_not_made_by_a_dry_run_or_before_the_options_are_checked(tmp_path: Path) -> None:
    code, out, _ = _invoke(["repair", str(BEN), "--row", EXERCISE_ROW, "--dry-run", "-o", f"{tmp_path / 'dry'}/"])
    assert code in (0, 1) and "dry run" in out and not (tmp_path / "dry").exists()
    code, _, err = _invoke(["repair", str(BEN), "--row", "no row", "-o", f"{tmp_path / 'bad'}/"])
    assert code == 2 and "--row" in err and not (tmp_path / "bad").exists()
    code, _, err = _invoke(["render", str(BEN), "-o", f"{tmp_path / 'noformat'}/"])
    assert code == 2 and "give --to FORMAT" in err and not (tmp_path / "noformat").exists()


@pytest.mark.parametrize("command", ["render", "convert"])
def test_a_directory_needs_the_format(command: str, tmp_path: Path) -> None:
    code, _, err = _invoke([command, str(BEN), "-o", str(tmp_path)])
    assert code == 2 and "give --to FORMAT" in err and "-o DIR" in err
    assert list(tmp_path.iterdir()) == []


def test_one_score_into_a_directory_never_overwrites_its_source(tmp_path: Path) -> None:
    score = tmp_path / "ben.musicxml"
    shutil.copy(BEN, score)
    before = score.read_bytes()
    code, _, err = _invoke(["annotate", str(score), "--row", EXERCISE_ROW, "-o", str(tmp_path)])
    assert code == 2 and "refusing to overwrite the source score" in err
    assert score.read_bytes() == before


REPORTING = {  # command → its arguments besides SCORE (an output of its own where it needs one)
    "render": ["-o", "{tmp}/out.svg"],
    "convert": ["-o", "{tmp}/out.mei"],
    "annotate": ["--row", EXERCISE_ROW, "-o", "{tmp}/out.musicxml"],
    "repair": ["--row", EXERCISE_ROW, "-o", "{tmp}/out.musicxml"],
    "check": [],
}


@pytest.mark.parametrize("folder", [False, True], ids=["file", "folder"])
@pytest.mark.parametrize("command", sorted(REPORTING))
def test_no_report_is_written_over_a_score_the_command_reads(command: str, folder: bool, tmp_path: Path) -> None:
    """--report naming an input (given as a file, one of several, or found in a folder given) is one line, exit 2,
    nothing written and the score byte-identical (check --report score.json overwrote it)."""
    work = tmp_path / "scores"
    work.mkdir()
    score = work / "ben.musicxml"
    shutil.copy(BEN, score)
    before = score.read_bytes()
    args = [a.format(tmp=tmp_path) for a in REPORTING[command]]
    inputs = [str(work if folder else score)]
    if folder and command == "render":  # render reads a folder as a run: several scores instead
        shutil.copy(BEN, work / "other.musicxml")
        inputs = [str(score), str(work / "other.musicxml")]
    if folder and command != "check":
        args = [a if not a.startswith(str(tmp_path)) else str(tmp_path / "outdir") for a in args]
        if command in ("render", "convert"):
            args += ["--to", "svg" if command == "render" else "mei"]
    code, _, err = _invoke([command, *inputs, *args, "--report", str(score)])
    assert code == 2, err
    assert err.strip() == f"error: {score}: refusing to overwrite the source score {score}; give another path"
    assert score.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scores"]  # no output, no output folder


@pytest.mark.parametrize("command", ["render", "convert", "annotate", "repair"])
def test_no_score_is_written_over_its_source(command: str, tmp_path: Path) -> None:
    score = tmp_path / "ben.musicxml"
    shutil.copy(BEN, score)
    before = score.read_bytes()
    extra = {"annotate": ["--row", EXERCISE_ROW], "repair": ["--row", EXERCISE_ROW]}.get(command, [])
    code, _, err = _invoke([command, str(score), *extra, "-o", str(score)])
    assert code == 2 and "refusing to overwrite the source score" in err and "\n" not in err.strip()
    assert score.read_bytes() == before


def test_check_into_a_folder_never_writes_a_report_over_another_input(tmp_path: Path) -> None:
    """`check ben.musicxml ben.musicxml.json -o .`: ben's report would be ben.musicxml.json, the
    second score (outside tester: the piece was replaced by ben's report)."""
    shutil.copy(BEN, tmp_path / "ben.musicxml")
    piece = tmp_path / "ben.musicxml.json"
    shutil.copy(FIXTURES / "pieces" / "demo-piece.json", piece)
    before = piece.read_bytes()
    code, _, err = _invoke(["check", str(tmp_path / "ben.musicxml"), str(piece), "-o", str(tmp_path)])
    assert code == 2 and err.strip() == f"error: {piece}: refusing to overwrite the source score {piece}"
    assert piece.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["ben.musicxml",
                                                                                         "ben.musicxml.json"]


@pytest.mark.parametrize("source,given,out", [
    ("r.review.html", BEN, "r.musicxml"),  # a MusicXML file named as the review page of r.musicxml
    ("p.certificate.json", FIXTURES / "pieces" / "demo-piece.json", "p.json"),  # a JSON piece: its certificate
])
def test_repair_never_writes_its_certificate_or_review_page_over_the_source(tmp_path: Path, source: str,
                                                                             given: Path, out: str) -> None:
    """(outside tester: the source became its own review page or certificate)"""
    score = tmp_path / source
    shutil.copy(given, score)
    before = score.read_bytes()
    extra = ["--row", EXERCISE_ROW] if given == BEN else []
    code, _, err = _invoke(["repair", str(score), *extra, "-o", str(tmp_path / out)])
    assert code == 2 and err.strip() == (f"error: {score}: refusing to overwrite the source score {score}; "
                                         "give another path")
    assert score.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == [source]


def test_repair_refuses_a_report_where_its_certificate_goes(tmp_path: Path) -> None:
    code, _, err = _invoke(["repair", str(BEN), "--row", EXERCISE_ROW, "-o", str(tmp_path / "x.musicxml"),
                            "--report", str(tmp_path / "x.certificate.json")])
    assert code == 2 and "the report and the repaired score's files would share this path" in err
    assert list(tmp_path.iterdir()) == []
