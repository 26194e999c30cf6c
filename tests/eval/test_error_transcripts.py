"""An errored run's message names a transcript that exists: ``RUN_DIR/errors/<run>.transcript.jsonl``
(its private attempt folder under ``runs/`` is gone by the time anyone reads the message)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from serialkit.cli import cli
from serialkit.eval.runner import EvalConfig, run_eval
from serialkit.eval.store import ERROR_TRANSCRIPTS, RunStore
from serialkit.harness import load_task
from tests.eval.helpers import small_bank
from tests.harness.fake_openai import FakeOpenAI

NAMED = re.compile(r"transcript so far in (\S+?)\)")


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERIALKIT_API_KEY", "sk-serialkit-test-secret-0123456789")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def _named(message: str) -> Path:
    match = NAMED.search(message)
    assert match, message
    return Path(match.group(1))


def test_errored_runs_name_a_transcript_that_exists(tmp_path: Path) -> None:
    bank = small_bank(tmp_path, ("mono-line-01",))
    run_dir = tmp_path / "run"
    with FakeOpenAI(load_task(str(bank / "mono-line-01.json")), ["ok", "500"]) as server:
        config = EvalConfig(bank=str(bank), variants=("raw", "harness"), runs=1, proposer="openai",
                            model="test-model",
                            proposer_options={"base_url": server.base_url, "timeout": 5.0, "max_retries": 0})
        summary = run_eval(config, run_dir)
    assert summary.errors
    store = RunStore(run_dir)
    logged = store.errored()
    assert {e["key"] for e in logged} == {e["key"] for e in summary.errors}
    for err in [*summary.errors, *logged]:
        path = _named(err["error"])
        assert path.is_file() and path.parent == run_dir / ERROR_TRANSCRIPTS
        assert ".tmp-" not in err["error"]
        header = json.loads(path.read_text().splitlines()[0])
        assert isinstance(header, dict)
    for err in logged:
        assert (run_dir / err["transcript"]).is_file()
        assert ".tmp-" not in err["endpoint"]["message"]
    assert not [p for p in (run_dir / "runs").iterdir() if p.name.startswith(".tmp-")]


def test_the_cli_names_the_kept_transcript_and_force_clears_it(tmp_path: Path) -> None:
    bank = small_bank(tmp_path, ("mono-line-01",))
    run_dir = tmp_path / "run"
    with FakeOpenAI(load_task(str(bank / "mono-line-01.json")), ["500"]) as server:
        args = ["eval", "run", str(bank), "--variant", "raw", "--runs", "1", "--proposer", "openai",
                "--model", "test-model", "--base-url", server.base_url, "-O", "max_retries=0", "-o", str(run_dir)]
        result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert _named(result.stderr).is_file()
    forced = CliRunner().invoke(cli, ["eval", "run", str(bank), "--variant", "raw", "--runs", "1",
                                      "-o", str(run_dir), "--force"])
    assert forced.exit_code == 0, forced.stderr
    assert not (run_dir / ERROR_TRANSCRIPTS).exists()
