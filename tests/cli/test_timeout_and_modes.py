"""One vocabulary: ``--timeout SECONDS`` means seconds per model request in generate and eval run
alike (the same as ``-O timeout=SECONDS``); contradictory flags are refused, not resolved by order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from serialkit.cli import cli
from serialkit.core.errors import ProposerError
from serialkit.harness import load_task
from tests.eval.helpers import small_bank
from tests.harness.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "fixtures" / "pieces" / "demo-piece.json"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERIALKIT_API_KEY", "sk-serialkit-test-secret-0123456789")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_generate_timeout_is_seconds_per_request(tmp_path: Path) -> None:
    with FakeOpenAI(load_task("duo-berg"), ["slow"], delay=5.0) as server:
        result = CliRunner().invoke(cli, ["generate", "duo-berg", "-o", str(tmp_path / "run"), "--proposer",
                                          "openai", "--base-url", server.base_url, "--model", "test-model",
                                          "--timeout", "0.5", "-O", "max_retries=0"])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "no answer within 0.5 s" in lines[0], result.stderr


def test_eval_run_timeout_is_seconds_per_request(tmp_path: Path) -> None:
    bank = small_bank(tmp_path, ("mono-line-01",))
    run_dir = tmp_path / "run"
    with FakeOpenAI(load_task(str(bank / "mono-line-01.json")), ["slow"], delay=5.0) as server:
        result = CliRunner().invoke(cli, ["eval", "run", str(bank), "--variant", "raw", "--runs", "1",
                                          "--proposer", "openai", "--model", "test-model", "--base-url",
                                          server.base_url, "--timeout", "0.5", "-O", "max_retries=0",
                                          "-o", str(run_dir)])
    assert result.exit_code == 2
    errors = [json.loads(line) for line in (run_dir / "errors.jsonl").read_text().splitlines()]
    assert errors and all("no answer within 0.5 s" in e["error"] for e in errors), errors
    assert json.loads((run_dir / "manifest.json").read_text())["config"]["proposer_options"]["timeout"] == 0.5


@pytest.mark.parametrize("command", [["generate", "duo-berg"], ["eval", "run", "builtin"]])
def test_timeout_given_twice_or_not_positive_is_a_usage_error(tmp_path: Path, command: list[str]) -> None:
    both = CliRunner().invoke(cli, [*command, "-o", str(tmp_path / "a"), "--timeout", "2", "-O", "timeout=3"])
    assert both.exit_code == 2 and "give --timeout or -O timeout=SECONDS, not both" in both.stderr
    zero = CliRunner().invoke(cli, [*command, "-o", str(tmp_path / "b"), "--timeout", "0"])
    assert zero.exit_code == 2 and "--timeout" in zero.stderr
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_the_timeout_option_reads_the_same_in_every_command() -> None:
    helps = set()
    for path in (["generate"], ["eval", "run"]):
        group = cli
        for name in path:
            group = group.commands[name]  # type: ignore[attr-defined]
        option = next(p for p in group.params if "--timeout" in getattr(p, "opts", ()))
        helps.add((option.help, option.metavar, repr(option.type)))
    assert len(helps) == 1


@pytest.mark.parametrize("flags", [["--strict", "--relaxed"], ["--relaxed", "--strict"]])
def test_check_strict_and_relaxed_together_is_a_usage_error(flags: list[str]) -> None:
    result = CliRunner().invoke(cli, ["check", str(DEMO), *flags])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == ["error: give --strict or --relaxed, not both"]
    assert result.stdout == ""


@pytest.mark.parametrize(("flags", "mode"), [([], "strict"), (["--strict"], "strict"), (["--relaxed"], "relaxed")])
def test_check_one_mode_flag_still_chooses_the_gate(flags: list[str], mode: str) -> None:
    # --no-suggest: the gate's mode is set before any suggestion (the demo's are most of its check)
    result = CliRunner().invoke(cli, ["check", str(DEMO), "--json", "--no-suggest", *flags])
    assert result.exit_code in (0, 1), result.stderr
    assert json.loads(result.stdout)["mode"] == mode


# --timeout (and -O timeout=) belongs to the environment, not to one proposer: every proposer takes
# it (an offline one ignores it). An option the chosen proposer does not take is one line, exit 2,
# naming the proposer and the option, before anything is written or run.

ENVIRONMENT = [["--timeout", "2"], ["-O", "timeout=2"]]


@pytest.mark.parametrize("proposer", ["stochastic", "example"])
@pytest.mark.parametrize("flags", ENVIRONMENT)
def test_generate_every_proposer_takes_the_timeout(tmp_path: Path, proposer: str, flags: list[str]) -> None:
    result = CliRunner().invoke(cli, ["generate", "duo-berg", "-o", str(tmp_path / "run"),
                                      "--proposer", proposer, *flags])
    assert result.exit_code in (0, 1), result.stderr
    assert (tmp_path / "run" / "certificate.json").exists()


def test_replay_takes_the_timeout_too(tmp_path: Path) -> None:
    first = CliRunner().invoke(cli, ["generate", "duo-berg", "-o", str(tmp_path / "a"), "--proposer", "stochastic"])
    assert first.exit_code in (0, 1), first.stderr
    again = CliRunner().invoke(cli, ["generate", "duo-berg", "-o", str(tmp_path / "b"), "--proposer", "replay",
                                     "-O", f"transcript={tmp_path / 'a' / 'transcript.jsonl'}", "--timeout", "2"])
    assert again.exit_code == first.exit_code, again.stderr


@pytest.mark.parametrize(("proposer", "option"), [("stochastic", "bogus=1"), ("example", "seed=3"),
                                                  ("example", "rates.wrong_pc=0.1")])
def test_generate_option_the_proposer_does_not_take_is_one_line(tmp_path: Path, proposer: str,
                                                               option: str) -> None:
    result = CliRunner().invoke(cli, ["generate", "duo-berg", "-o", str(tmp_path / "run"),
                                      "--proposer", proposer, "-O", option])
    key = option.split("=")[0].split(".")[0]
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: proposer {proposer!r} takes no option {key!r} "
                                                   "(its options: "), result.stderr
    assert result.stdout == "" and not (tmp_path / "run").exists()


@pytest.mark.parametrize("flags", ENVIRONMENT)
def test_eval_run_stochastic_takes_the_timeout(tmp_path: Path, flags: list[str]) -> None:
    bank = small_bank(tmp_path, ("mono-line-01",))
    run_dir = tmp_path / "run"
    result = CliRunner().invoke(cli, ["eval", "run", str(bank), "--variant", "raw", "--runs", "1", *flags,
                                      "-o", str(run_dir)])
    assert result.exit_code == 0, result.stderr
    assert not (run_dir / "errors.jsonl").exists()
    assert len((run_dir / "runs.jsonl").read_text().splitlines()) == 1


def test_eval_run_refuses_an_option_the_proposer_does_not_take_before_any_run(tmp_path: Path) -> None:
    bank = small_bank(tmp_path, ("mono-line-01",))
    run_dir = tmp_path / "run"
    result = CliRunner().invoke(cli, ["eval", "run", str(bank), "--variant", "raw", "--runs", "1",
                                      "-O", "bogus=1", "--jobs", "2", "-o", str(run_dir)])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: proposer 'stochastic' takes no option 'bogus' (its options: model, profile, rates, seed)"]
    assert not run_dir.exists()


def test_factory_options_drop_the_environment_only_where_not_taken() -> None:
    from serialkit.harness.session import factory_options

    def takes_timeout(timeout: float = 1.0, seed: int = 0) -> None: ...
    def takes_anything(**options: object) -> None: ...
    def takes_little(model: str | None = None) -> None: ...

    assert factory_options("a", takes_timeout, {"timeout": 2}, 5) == {"timeout": 2, "seed": 5}
    assert factory_options("b", takes_anything, {"timeout": 2, "x": 1}, 5) == {"timeout": 2, "x": 1, "seed": 5}
    assert factory_options("c", takes_little, {"timeout": 2, "model": "m"}, 5) == {"model": "m"}
    with pytest.raises(ProposerError, match=r"proposer 'c' takes no option 'x' \(its options: model\)"):
        factory_options("c", takes_little, {"x": 1}, 5)
