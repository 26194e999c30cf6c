"""The reply's envelope is the server's, not the music's: unreadable usage counts never cost an answer
(they are charged at their upper bound and marked), an empty ``choices`` list and a reply cut off at
the token limit are named in plain words."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from serialkit.cli import cli
from serialkit.core.errors import EndpointResponseError
from serialkit.harness import run
from serialkit.harness.prompts import estimate_tokens
from tests.harness.fake_openai import FakeOpenAI, run_openai

pytestmark = pytest.mark.usefixtures("api_key")


def _calls(out: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in (out / "transcript.jsonl").read_text().splitlines()]
    return [line for line in lines if line["type"] == "call"]


@pytest.mark.parametrize("behaviour", ["bad_usage", "negative_usage"])
def test_unreadable_usage_keeps_the_answer_and_is_marked(task: Any, tmp_path: Path, behaviour: str) -> None:
    with FakeOpenAI(task, [behaviour]) as server:
        result = run_openai(server, task, tmp_path)
    # the answer was read: the clean server's music passes, as with readable usage
    assert result.released, result.report["failures"]
    assert not result.report["errors"]
    calls = _calls(tmp_path)
    assert calls and all(c["error"] is None and c["usage"]["status"] == "ok" for c in calls)
    # every call says what could not be read; the run counts those calls
    assert all("prompt_tokens" in c["usage"]["unreadable"] for c in calls)
    assert result.usage.unreadable_calls == len(calls) == result.report["usage"]["unreadable_usage"]
    # counts are never negative, and an unreadable one is charged at least the estimate (its upper bound)
    for c in calls:
        prompt = "".join(m["content"] for m in server.received[calls.index(c)]["messages"])
        assert c["usage"]["prompt_tokens"] >= len(prompt.encode()) > estimate_tokens(prompt)
        assert c["usage"]["completion_tokens"] >= 0
    assert result.usage.prompt_tokens > 0 and result.usage.completion_tokens > 0


def test_readable_usage_is_believed_and_not_marked(task: Any, tmp_path: Path) -> None:
    with FakeOpenAI(task, ["ok"]) as server:
        result = run_openai(server, task, tmp_path)
    assert result.usage.unreadable_calls == 0
    assert all("unreadable" not in c["usage"] for c in _calls(tmp_path))


def test_generate_with_unreadable_usage_releases_and_says_so(task: Any, tmp_path: Path) -> None:
    with FakeOpenAI(task, ["bad_usage"]) as server:
        result = CliRunner().invoke(cli, ["generate", "duo-berg", "-o", str(tmp_path / "run"), "--proposer",
                                          "openai", "--base-url", server.base_url, "--model", "test-model"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("released:")
    notes = [line for line in result.stderr.splitlines() if "usage" in line]
    assert len(notes) == 1 and "unreadable" in notes[0] and "upper bound" in notes[0]
    assert "Traceback" not in result.output and "ValueError" not in result.output


def test_replay_keeps_the_unreadable_mark(task: Any, tmp_path: Path) -> None:
    with FakeOpenAI(task, ["bad_usage"]) as server:
        first = run_openai(server, task, tmp_path / "a")
    replayed = run(task, proposer="replay", proposer_options={"transcript": str(tmp_path / "a/transcript.jsonl")},
                   seed=11, out_dir=tmp_path / "b")
    assert replayed.usage.unreadable_calls == first.usage.unreadable_calls > 0
    assert (tmp_path / "a/transcript.jsonl").read_bytes() == (tmp_path / "b/transcript.jsonl").read_bytes()


def test_empty_choices_is_named_in_plain_words(task: Any, tmp_path: Path) -> None:
    with FakeOpenAI(task, ["no_choices"]) as server:
        with pytest.raises(EndpointResponseError) as info:
            run_openai(server, task, tmp_path)
    text = str(info.value)
    assert "the reply has no choices" in text
    assert "IndexError" not in text and "list index" not in text


def test_reply_cut_off_at_the_token_limit_says_so(task: Any, tmp_path: Path) -> None:
    short = dataclasses.replace(task, attempts=1)
    with FakeOpenAI(short, ["length"]) as server:
        result = run_openai(server, short, tmp_path, variant="raw", max_tokens=20)
    assert not result.released
    errors = result.report["errors"]
    assert errors and all("cut off at the token limit" in e and "max_tokens" in e for e in errors)
    assert not any("no JSON object found" in e for e in errors)
    assert all(c.get("cut_off") is True for c in _calls(tmp_path))


def test_a_whole_answer_is_not_called_cut_off(task: Any, tmp_path: Path) -> None:
    short = dataclasses.replace(task, attempts=1)
    with FakeOpenAI(short, ["malformed"]) as server:
        result = run_openai(server, short, tmp_path, variant="raw")
    assert not any("token limit" in e for e in result.report["errors"])
    assert all("cut_off" not in c for c in _calls(tmp_path))
