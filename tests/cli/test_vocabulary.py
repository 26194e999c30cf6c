"""One set of habits: the same option names everywhere, unwritable outputs, colour, pipes, stdin."""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from serialkit.cli import cli
from serialkit.core.errors import ProposerError
from serialkit.harness.proposers.options import parse_options

SERIALKIT = str(Path(sys.executable).parent / "serialkit")
ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "fixtures" / "pieces" / "demo-piece.json"
CLEAN = ROOT / "fixtures" / "pieces" / "clean-piece.json"
MEI = ROOT / "fixtures" / "scores" / "features.mei"
DUET = ROOT / "fixtures" / "render" / "duet.musicxml"
CLASSROOM = ROOT / "fixtures" / "classroom"
CLASS_ROW = "C B G Ab Eb Db D Bb F# F E A"
ANSI = "\x1b["


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    out: list[tuple[str, click.Command]] = []
    for name, cmd in sorted(group.commands.items()):
        out.append((f"{prefix}{name}", cmd))
        if isinstance(cmd, click.Group):
            out.extend(_commands(cmd, f"{prefix}{name} "))
    return out


COMMANDS = _commands(cli)


def _options(cmd: click.Command) -> list[click.Option]:
    return [p for p in cmd.params if isinstance(p, click.Option) and not p.hidden]


def test_every_command_uses_the_shared_option_names() -> None:
    """-o is --output; --json is a flag; --report names a file the command writes; no --out."""
    seen_o = 0
    for name, cmd in COMMANDS:
        for opt in _options(cmd):
            names = set(opt.opts) | set(opt.secondary_opts)
            assert "--out" not in names, name
            assert "--format" not in names, f"{name}: output format is --to"
            if "-o" in names:
                seen_o += 1
                assert opt.opts == ["-o", "--output"], (name, opt.opts)
            if "--output" in names:
                assert "-o" in names, name
            if "--json" in names:
                assert opt.is_flag and opt.name == "as_json", name
            if "--option" in names:
                assert opt.opts == ["-O", "--option"] and opt.multiple, name
            if "--jobs" in names:
                assert opt.opts == ["-j", "--jobs"], name
            if "--recursive" in names:
                assert opt.is_flag, name
        assert any("--color" in p.opts for p in cmd.params), f"{name} has no --color/--no-color"
    assert seen_o >= 8


def test_commands_that_take_a_proposer_share_its_options() -> None:
    by_name = dict(COMMANDS)
    for name in ("generate", "eval run"):
        opts = {o for p in _options(by_name[name]) for o in p.opts}
        assert {"--proposer", "--model", "--base-url", "--option", "-O", "--variant"} <= opts, name


# --- unwritable outputs ------------------------------------------------------------------------

def _writers(tmp: Path, bad: str) -> dict[str, list[str]]:
    """Every command that writes, with ``bad`` (an unwritable path) as its output."""
    return {
        "check --report": ["check", str(DEMO), "--report", f"{bad}/r.json"],
        "check -o DIR": ["check", str(DEMO), str(CLEAN), "-o", f"{bad}/dir"],
        "annotate -o": ["annotate", str(MEI), "--row", "0 1 2 3 4 5 6 7 8 9 10 11", "-o", f"{bad}/a.musicxml"],
        "annotate --report": ["annotate", str(MEI), "--identify", "--report", f"{bad}/a.json"],
        "annotate -o DIR": ["annotate", str(MEI), str(MEI.with_suffix(".musicxml")), "--identify",
                            "-o", f"{bad}/dir"],
        "convert -o": ["convert", str(MEI), "-o", f"{bad}/a.musicxml"],
        "convert -o DIR": ["convert", str(MEI), str(DEMO), "--to", "mei", "-o", f"{bad}/dir"],
        "convert --report": ["convert", str(MEI), "-o", str(tmp / "ok.musicxml"), "--report", f"{bad}/r.json"],
        "repair -o": ["repair", str(CLASSROOM / "ben.musicxml"), "--row", CLASS_ROW, "-o", f"{bad}/a.musicxml"],
        "repair -o DIR": ["repair", str(CLASSROOM), "--row", CLASS_ROW, "-o", f"{bad}/dir"],
        "repair --report": ["repair", str(CLASSROOM / "ben.musicxml"), "--row", CLASS_ROW, "--dry-run",
                            "--report", f"{bad}/r.json"],
        "render -o": ["render", str(DUET), "-o", f"{bad}/a.svg"],
        "render --report": ["render", str(DUET), "-o", str(tmp / "ok.svg"), "--report", f"{bad}/r.json"],
        "generate -o": ["generate", "duo-berg", "-o", f"{bad}/run"],
        "eval run -o": ["eval", "run", "builtin", "--tasks", "mono-line-01", "--runs", "1", "--variant", "raw",
                        "-o", f"{bad}/run"],
        "eval report -o": ["eval", "report", str(tmp), "-o", f"{bad}/r.html"],
        "panel build -o": ["panel", "build", str(tmp), "-o", f"{bad}/packet"],
    }


@pytest.mark.parametrize("where", ["under-a-file", "proc"])
@pytest.mark.parametrize("case", sorted(_writers(Path("/t"), "/x")))
def test_unwritable_output_is_one_line_exit_2(tmp_path: Path, case: str, where: str) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a directory")
    bad = str(blocker) if where == "under-a-file" else "/proc/serialkit-nowhere"
    args = _writers(tmp_path, bad)[case]
    before = sorted(p.name for p in tmp_path.iterdir())
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, (case, result.output, result.stderr)
    assert result.stderr.startswith("error: cannot write "), (case, result.stderr)
    assert bad in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing partial left behind


def test_unwritable_output_in_a_real_process_has_no_traceback(tmp_path: Path) -> None:
    proc = subprocess.run([SERIALKIT, "render", str(DUET), "-o", "/proc/x.svg"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: cannot write /proc/x.svg: ")
    assert "Traceback" not in proc.stderr


# --- run directories ------------------------------------------------------------------------------

def test_existing_run_directory_is_refused_unless_force(tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = CliRunner().invoke(cli, ["generate", "duo-berg", "-o", str(out), "--seed", "2"])
    assert first.exit_code == 0, first.stderr
    transcript = (out / "transcript.jsonl").read_bytes()
    again = CliRunner().invoke(cli, ["generate", "duo-berg", "-o", str(out), "--seed", "3"])
    assert again.exit_code == 2 and "already exists" in again.stderr and "--force" in again.stderr
    assert (out / "transcript.jsonl").read_bytes() == transcript  # the earlier run is untouched
    forced = CliRunner().invoke(cli, ["generate", "duo-berg", "-o", str(out), "--seed", "3", "--force"])
    assert forced.exit_code == 0, forced.stderr
    assert (out / "transcript.jsonl").read_bytes() != transcript


def test_eval_run_refuses_an_existing_directory_unless_resume_or_force(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    args = ["eval", "run", "builtin", "--tasks", "mono-line-01", "--runs", "1", "--variant", "raw", "-o", str(out)]
    refused = CliRunner().invoke(cli, args)
    assert refused.exit_code == 2 and "--resume" in refused.stderr and "--force" in refused.stderr
    done = CliRunner().invoke(cli, [*args, "--force", "--json"])
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["finished"] == 1
    assert (out / "notes.txt").read_text() == "mine"  # --force removes only the runs' own files


# --- proposer options ------------------------------------------------------------------------------

def test_proposer_options_parse_json_strings_and_dotted_keys() -> None:
    opts = parse_options(["temperature=0.2", "profile=paper-raw", "rates.wrong_pc=0.01", "rates.collision=0",
                          "structured=false", 'extra={"a": [1]}'])
    assert opts == {"temperature": 0.2, "profile": "paper-raw", "rates": {"wrong_pc": 0.01, "collision": 0},
                    "structured": False, "extra": {"a": [1]}}
    for bad in ("noequals", "=1", "a..b=1"):
        with pytest.raises(ProposerError, match="KEY=VALUE"):
            parse_options([bad])
    with pytest.raises(ProposerError, match="already given a value"):
        parse_options(["rates=1", "rates.x=2"])


keys = st.text(alphabet="abcdefghij_", min_size=1, max_size=6)


@given(st.dictionaries(keys, st.one_of(st.integers(), st.booleans(), st.floats(allow_nan=False, allow_infinity=False),
                                       st.dictionaries(keys, st.integers(), min_size=1, max_size=3)),
                       max_size=5))
def test_proposer_options_round_trip(options: dict[str, object]) -> None:
    """Any options written as KEY=JSON (a mapping as one dotted item per entry) parse back equal."""
    items = []
    for key, value in options.items():
        if isinstance(value, dict):
            items.extend(f"{key}.{k}={json.dumps(v)}" for k, v in value.items())
        else:
            items.append(f"{key}={json.dumps(value)}")
    assert parse_options(items) == options


def test_generate_and_eval_take_proposer_options_the_same_way(tmp_path: Path) -> None:
    gen = CliRunner().invoke(cli, ["generate", "duo-berg", "-o", str(tmp_path / "g"), "-O", "rates.malformed=1",
                                   "--attempts", "1", "--json"])
    assert gen.exit_code == 1 and json.loads(gen.stdout)["released"] is False
    run = CliRunner().invoke(cli, ["eval", "run", "builtin", "--tasks", "mono-line-01", "--runs", "1", "--variant",
                                   "raw", "-O", "rates.malformed=1", "-o", str(tmp_path / "e"), "--json"])
    assert run.exit_code == 0, run.stderr
    record = json.loads((tmp_path / "e" / "runs.jsonl").read_text().splitlines()[0])
    assert record["released"] is False
    bad = CliRunner().invoke(cli, ["generate", "duo-berg", "-o", str(tmp_path / "b"), "-O", "nonsense=1"])
    assert bad.exit_code == 2 and "nonsense" in bad.stderr and not (tmp_path / "b").exists()


# --- colour ------------------------------------------------------------------------------------------

def _on_a_terminal(args: list[str], env: dict[str, str]) -> str:
    """Run serialkit with stdout on a pseudo-terminal and return what it printed."""
    main, sub = pty.openpty()
    proc = subprocess.Popen([SERIALKIT, *args], stdout=sub, stderr=subprocess.DEVNULL,
                            env={**os.environ, **env})
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
    proc.wait(timeout=120)
    os.close(main)
    return b"".join(chunks).decode("utf-8", "replace")


def test_colour_follows_the_terminal_no_color_and_the_flags() -> None:
    env = {k: "" for k in ("NO_COLOR",)}
    # --no-suggest where the verdict's and findings' colour says it all (the suggestions are most
    # of a check's time on the demo); the NO_COLOR run keeps them: no suggestion line is coloured
    quick = ["check", str(DEMO), "--no-suggest"]
    assert ANSI in _on_a_terminal(quick, env)
    assert ANSI not in _on_a_terminal(["check", str(DEMO)], {"NO_COLOR": "1"})
    assert ANSI not in _on_a_terminal([*quick, "--no-color"], env)
    assert ANSI not in _on_a_terminal(["--no-color", *quick], env)
    assert ANSI in _on_a_terminal([*quick, "--color"], {"NO_COLOR": "1"})


def test_color_flag_forces_colour_into_a_pipe() -> None:
    piped = CliRunner().invoke(cli, ["check", str(DEMO)])  # suggestion lines too: none coloured
    forced = CliRunner().invoke(cli, ["check", str(DEMO), "--color", "--no-suggest"])  # the verdict's colour
    assert ANSI not in piped.stdout and ANSI in forced.stdout


# --- pipes and standard input --------------------------------------------------------------------

def test_closed_pipe_ends_quietly_with_exit_0() -> None:
    proc = subprocess.Popen([SERIALKIT, "row", "show", "webern-op21"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    code = proc.wait(timeout=120)
    err = proc.stderr.read().decode()
    assert first and code == 0 and err == ""


def test_check_reads_standard_input(fixtures: Path) -> None:
    data = MEI.read_bytes()
    proc = subprocess.run([SERIALKIT, "check", "-", "--json"], input=data, capture_output=True, timeout=120)
    report = json.loads(proc.stdout)
    assert proc.returncode in (0, 1) and report["source"] == "-"
    direct = json.loads(CliRunner().invoke(cli, ["check", str(MEI), "--json"]).stdout)
    assert report["events"] == direct["events"] and report["counts"] == direct["counts"]


def test_bad_standard_input_names_dash_not_a_temporary_file() -> None:
    result = CliRunner().invoke(cli, ["check", "-"], input=b"<mei xmlns='http://www.music-encoding.org/ns/mei'>")
    assert result.exit_code == 2 and result.stderr.startswith("error: -")
    assert "serialkit-stdin" not in result.stderr
    empty = CliRunner().invoke(cli, ["check", "-"], input=b"")
    assert empty.exit_code == 2 and "standard input is empty" in empty.stderr


def test_convert_and_render_stream_through_standard_input_and_output(tmp_path: Path) -> None:
    conv = subprocess.run([SERIALKIT, "convert", "-", "--to", "musicxml", "-o", "-"], input=MEI.read_bytes(),
                          capture_output=True, timeout=120)
    assert conv.returncode == 0, conv.stderr
    assert b"<score-partwise" in conv.stdout[:2000]
    svg = subprocess.run([SERIALKIT, "render", "-", "--to", "svg", "-o", "-"], input=conv.stdout,
                         capture_output=True, timeout=120)
    assert svg.returncode == 0, svg.stderr
    assert svg.stdout.lstrip().startswith(b"<") and b"<svg" in svg.stdout[:5000]
    no_format = CliRunner().invoke(cli, ["convert", str(MEI), "-o", "-"])
    assert no_format.exit_code == 2 and "--to" in no_format.stderr


def test_annotate_writes_to_standard_output(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["annotate", str(DUET), "--identify", "-o", "-"])
    assert result.exit_code in (0, 1), result.stderr
    assert "<score-partwise" in result.stdout
    assert re.search(r">(?:P|I|R|RI)\d+:\d+<", result.stdout)  # the labels, whatever carries them
    assert "notes" in result.stderr  # the one-line summary moves to stderr


def test_help_documents_shell_completion() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert "_SERIALKIT_COMPLETE" in result.stdout
    assert shutil.which(SERIALKIT) or Path(SERIALKIT).exists()


@pytest.mark.parametrize("command,extra", [
    ("check", ["-o", "{out}"]), ("annotate", ["-o", "{out}"]), ("repair", ["-o", "{out}"]),
    ("render", ["--to", "svg", "-o", "{out}"]),
])
@pytest.mark.parametrize("option,value,words", [
    ("--row", "C D", "error: --row 'C D': 2 pitch classes given"),
    ("--rules", "XYZ", "error: --rules 'XYZ': unknown predicate XYZ"),
])
def test_a_bad_row_or_profile_is_one_error_before_any_score(command: str, extra: list[str], option: str,
                                                            value: str, words: str, tmp_path: Path) -> None:
    """--row and --rules mean the same in every command that takes them: a bad one is one line
    naming the option, before any score is read or any folder made (annotate and render gave one
    error per score and made -o DIR)."""
    out = tmp_path / "out"
    scores = [str(CLASSROOM / "anna.musicxml"), str(CLASSROOM / "ben.musicxml")]
    result = CliRunner().invoke(cli, [command, *scores, option, value, *[a.format(out=out) for a in extra]])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith(words) and result.stderr.count("\n") == 1, result.stderr
    assert not out.exists()
