"""Usage errors are one line with exit 2; a closed pipe never decides the exit status; only one of
-o -, --report - and --json may use standard output (outside tester, round 1900: #1, #2, #9, #13)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from serialkit.cli import cli

ROOT = Path(__file__).resolve().parents[2]
CLEAN = ROOT / "fixtures" / "pieces" / "clean-piece.json"
DEMO = ROOT / "fixtures" / "pieces" / "demo-piece.json"  # fails its check (exit 1)
DUET = ROOT / "fixtures" / "render" / "duet.musicxml"
MAIN = [sys.executable, "-c", "from serialkit.cli import main; main()"]


def _commands(group: click.Group, prefix: str = "serialkit") -> list[tuple[str, click.Command]]:
    out: list[tuple[str, click.Command]] = []
    for name, cmd in sorted(group.commands.items()):
        out.append((f"{prefix} {name}", cmd))
        if isinstance(cmd, click.Group):
            out.extend(_commands(cmd, f"{prefix} {name}"))
    return out


# --- required options (#1) ---------------------------------------------------------------------

def test_every_required_option_left_out_is_missing_not_none() -> None:
    """An option marked [required] in --help is refused when left out (click 8.3+ reads an explicit
    default=None as given: `eval report DIR --json` without -o ran on with None)."""
    required = [(name, p) for name, cmd in _commands(cli) for p in cmd.params
                if isinstance(p, click.Option) and p.required]
    assert len(required) >= 4  # eval run, eval report, generate, render, panel build, convert …
    for name, param in required:
        ctx = click.Context(click.Command(name))
        with pytest.raises(click.MissingParameter):
            param.process_value(ctx, param.get_default(ctx))


def test_eval_report_without_output_is_one_line_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["eval", "report", str(tmp_path), "--json"], prog_name="serialkit")
    assert result.exit_code == 2, result.output
    assert result.stderr == "error: missing option '-o' / '--output' (see serialkit eval report --help)\n"
    assert result.stdout == ""


# --- one-line usage errors (#13) ---------------------------------------------------------------

USAGE_CASES = {
    "bad value": (["check", str(CLEAN), "--tolerance", "abc"], "serialkit check", "'abc'"),
    "missing -o": (["generate", "duo-berg"], "serialkit generate", "--output"),
    "no argument after -o": (["check", str(CLEAN), "-o"], "serialkit check", "requires an argument"),
    "no such option": (["row", "show", "--bogus"], "serialkit row show", "--bogus"),
    "no such command": (["eval", "bogus"], "serialkit eval", "bogus"),
    "root option": (["--bogus"], "serialkit", "--bogus"),
    "missing argument": (["eval", "report"], "serialkit eval report", "RUN_DIR"),
    "command's own": (["annotate", str(DUET)], "serialkit annotate", "give -o OUT"),
}


@pytest.mark.parametrize("case", sorted(USAGE_CASES))
def test_usage_errors_are_one_line_exit_2(case: str) -> None:
    args, path, words = USAGE_CASES[case]
    result = CliRunner().invoke(cli, args, prog_name="serialkit")
    assert result.exit_code == 2, (case, result.output)
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    assert words in result.stderr and result.stderr.endswith(f" (see {path} --help)\n"), result.stderr
    assert "Usage:" not in result.stderr and "Try " not in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_group_without_a_command_still_shows_its_help() -> None:
    result = CliRunner().invoke(cli, ["eval"], prog_name="serialkit")
    assert "Commands:" in result.output and "error:" not in result.output


def test_a_usage_error_in_a_real_process_is_one_line() -> None:
    proc = subprocess.run([*MAIN, "check", str(CLEAN), "--tolerance", "abc"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr


# --- standard output used once (#9) ------------------------------------------------------------

STDOUT_CASES = {
    "render -o - --report -": ["render", str(DUET), "--to", "svg", "-o", "-", "--report", "-"],
    "render -o - --json": ["render", str(DUET), "--to", "svg", "-o", "-", "--json"],
    "convert --json --report -": ["convert", str(DUET), "-o", "{tmp}/x.mei", "--json", "--report", "-"],
    "check --json --report -": ["check", str(CLEAN), "--json", "--report", "-"],
    "annotate -o - --json": ["annotate", str(DUET), "--identify", "-o", "-", "--json"],
}


@pytest.mark.parametrize("case", sorted(STDOUT_CASES))
def test_two_outputs_on_standard_output_are_refused(case: str, tmp_path: Path) -> None:
    args = [a.replace("{tmp}", str(tmp_path)) for a in STDOUT_CASES[case]]
    result = CliRunner().invoke(cli, args, prog_name="serialkit")
    assert result.exit_code == 2, (case, result.output)
    assert result.stdout == "" and result.stderr.count("\n") == 1, result.stderr
    assert "can use standard output" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_batch_report_on_standard_output_is_alone_there(tmp_path: Path) -> None:
    """`check A B --report -`: standard output is the JSON report only; the lines go to stderr."""
    import json

    # --no-suggest: where the report and the lines go does not depend on the suggestions (the demo's
    # are most of its check)
    result = CliRunner().invoke(cli, ["check", str(CLEAN), str(DEMO), "--report", "-", "--no-suggest"],
                                prog_name="serialkit")
    assert result.exit_code == 1, result.stderr
    assert len(json.loads(result.stdout)["scores"]) == 2
    assert "2 scores: 1 passed, 1 failed" in result.stderr


# --- a closed pipe keeps the verdict (#2) ------------------------------------------------------

def _closed_pipe(args: list[str]) -> tuple[int, str]:
    """Run the console entry point with its standard output a pipe whose reader has gone."""
    proc = subprocess.Popen([*MAIN, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.close()  # the reader is gone before the first line is written (`| true`)
    _, err = proc.communicate(timeout=300)
    return proc.returncode, err.decode()


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    """A folder whose first score passes and whose second fails: the verdict comes at the end."""
    d = tmp_path / "class"
    d.mkdir()
    shutil.copy(CLEAN, d / "a-clean.json")
    shutil.copy(DEMO, d / "b-demo.json")
    return d


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_a_closed_pipe_keeps_a_batch_verdict(folder: Path, extra: list[str]) -> None:
    code, err = _closed_pipe(["check", str(folder), *extra])
    assert code == 1, err
    assert "Traceback" not in err and "Exception ignored" not in err


def test_a_closed_pipe_keeps_bad_input_exit_2(folder: Path) -> None:
    (folder / "c-broken.musicxml").write_text("<score-partwise><part", encoding="utf-8")
    code, err = _closed_pipe(["check", str(folder)])
    assert code == 2, err
    assert "Traceback" not in err and err.startswith("error: ")


def test_a_closed_pipe_after_binary_output_is_quiet(tmp_path: Path) -> None:
    code, err = _closed_pipe(["convert", str(DUET), "--to", "mei", "-o", "-"])
    assert code == 0 and err == "", err


def test_a_closed_pipe_keeps_the_verdict_of_a_generation(tmp_path: Path) -> None:
    """`generate … | true` of a run that abstains exits as the run does alone."""
    alone = subprocess.run([*MAIN, "generate", "duo-berg", "-o", str(tmp_path / "a"), "--variant", "raw",
                            "-O", "profile=hostile", "--seed", "5"], capture_output=True, timeout=300)
    code, err = _closed_pipe(["generate", "duo-berg", "-o", str(tmp_path / "b"), "--variant", "raw",
                              "-O", "profile=hostile", "--seed", "5"])
    assert alone.returncode != 0 and code == alone.returncode, err
    assert "Traceback" not in err


@pytest.mark.parametrize("path", [name for name, _ in _commands(cli)])
def test_every_command_says_a_usage_error_in_one_line(path: str) -> None:
    """An unknown option on any command (built-in or plugin): one line naming the command, exit 2."""
    result = CliRunner().invoke(cli, [*path.split()[1:], "--zzzz"], prog_name="serialkit")
    assert result.exit_code == 2, (path, result.output)
    assert result.stderr == f"error: no such option '--zzzz' (see {path} --help)\n", result.stderr
