"""The openai proposer against a real local HTTP server: every failure mode ends in a defined outcome."""

from __future__ import annotations

import dataclasses
import functools
import json
import time
from pathlib import Path
from typing import Any

import pytest

from serialkit.core.errors import (
    EndpointAuthError,
    EndpointNotFound,
    EndpointRefused,
    EndpointResponseError,
    EndpointServerError,
    EndpointTimeout,
    EndpointUnreachable,
)
from serialkit.harness import run
from serialkit.harness.proposers import openai as openai_module
from serialkit.harness.proposers.openai import OpenAIProposer
from tests.harness.fake_openai import SECRET, FakeOpenAI, run_openai

pytestmark = pytest.mark.usefixtures("api_key")

# the failure modes want retries to count and short timeouts to reach
_run = functools.partial(run_openai, timeout=2.0, max_retries=2, temperature=0.3)


def _files_text(directory: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in sorted(directory.iterdir()) if p.is_file())


def test_normal_path_releases_and_records_usage(task: Any, tmp_path: Path) -> None:
    with FakeOpenAI(task, ["ok"]) as server:
        result = _run(server, task, tmp_path)
    assert result.released, result.report["failures"]
    assert (tmp_path / "score.musicxml").exists()
    calls = result.report["calls"]
    assert result.usage.calls == len(calls) == len(server.received)
    # tokens are the server's own counts, summed per call
    assert result.usage.prompt_tokens == sum(100 + i for i in range(1, len(calls) + 1))
    assert result.usage.completion_tokens == sum(50 + i for i in range(1, len(calls) + 1))
    assert all(c["seconds"] > 0 and c["tries"] == 1 and c["status"] == "ok" for c in calls)
    body = server.received[0]
    assert body["model"] == "test-model" and body["temperature"] == 0.3 and body["seed"] == 11
    assert body["response_format"]["type"] == "json_schema"
    headers = {k.lower(): v for k, v in server.headers[0].items()}
    assert headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in _files_text(tmp_path)
    assert result.certificate["run"]["model"] == "test-model"


def test_malformed_json_abstains_with_reasons(task: Any, tmp_path: Path) -> None:
    with FakeOpenAI(task, ["malformed"]) as server:
        result = _run(server, task, tmp_path)
    assert not result.released
    assert not (tmp_path / "score.musicxml").exists()
    # every section used its whole attempt budget K (unusable replies are re-asked within it)
    assert result.usage.calls == len(task.sections) * task.attempts == len(server.received)
    assert all("malformed output" in e for e in result.report["errors"])
    assert result.report["failures"]
    assert all(not s["complete"] for s in result.report["sections"])


def test_json_wrapped_in_prose_is_extracted(task: Any, tmp_path: Path) -> None:
    with FakeOpenAI(task, ["prose"]) as server:
        result = _run(server, task, tmp_path)
    assert result.released
    assert "```json" in result.transcript
    assert len(result.piece.events) == len(task.all_slots())


def test_out_of_range_pitches_are_repaired_by_harness_but_fail_raw(task: Any, tmp_path: Path) -> None:
    with FakeOpenAI(task, ["out_of_range"]) as server:
        harness = _run(server, task, tmp_path / "h")
    with FakeOpenAI(task, ["out_of_range"]) as server:
        raw = _run(server, task, tmp_path / "r", variant="raw")
    assert harness.released
    assert harness.report["repairs"].get("patch", 0) + harness.report["repairs"].get("rewrite", 0) > 0
    voices = {v.id: v for v in task.voices}
    assert all(voices[e.voice].low <= e.midi <= voices[e.voice].high for e in harness.piece.events)
    assert not raw.released
    assert raw.verdict.predicates()["RANGE"] is False


def test_429_then_success_retries(task: Any, tmp_path: Path) -> None:
    with FakeOpenAI(task, ["429", "ok"]) as server:
        result = _run(server, task, tmp_path)
    first = result.report["calls"][0]
    assert first["tries"] == 2 and first["status"] == "ok" and first["error"] is None
    assert result.usage.http_tries == result.usage.calls + 1 == len(server.received)
    assert result.released


def test_500_until_retries_are_exhausted_is_an_error_not_a_verdict(task: Any, tmp_path: Path) -> None:
    with FakeOpenAI(task, ["ok", "500"]) as server:
        with pytest.raises(EndpointServerError) as info:
            _run(server, task, tmp_path, max_retries=1)
    err = info.value
    # the SDK retried once itself, both tries counted; the harness re-asked once (changed), failing too
    assert err.status == 500 and err.tries == 2 and server.statuses == [200, 500, 500, 500, 500]
    assert server.base_url in str(err) and "HTTP 500 after 2 tries" in str(err)
    assert str(tmp_path / "transcript.jsonl") in str(err)
    # the run directory keeps the transcript so far (the failed call last) and nothing else
    assert sorted(p.name for p in tmp_path.iterdir()) == ["transcript.jsonl"]
    lines = [json.loads(line) for line in (tmp_path / "transcript.jsonl").read_text().splitlines()]
    assert [line["type"] for line in lines] == ["header", "call", "call", "call"]
    assert lines[1]["error"] is None and lines[1]["usage"]["status"] == "ok"
    assert lines[2]["attempt"] + 1 == lines[3]["attempt"]
    for line in lines[2:]:
        assert line["response"] is None and line["usage"] == {
            "prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0, "tries": 2, "status": "errored"}
    assert SECRET not in _files_text(tmp_path)


def test_sdk_retries_are_counted_as_tries(task: Any, tmp_path: Path) -> None:
    """The SDK retries 429 and 5xx itself; every HTTP try is counted in the call that made it."""
    with FakeOpenAI(task, ["429", "500", "ok"]) as server:
        result = _run(server, task, tmp_path, max_retries=2)
    first = result.report["calls"][0]
    assert first["tries"] == 3 and first["status"] == "ok" and first["error"] is None
    assert result.usage.http_tries == result.usage.calls + 2 == len(server.received)
    assert result.released


def test_429_retry_after_is_honoured(task: Any, tmp_path: Path) -> None:
    with FakeOpenAI(dataclasses.replace(task, attempts=1), ["429", "ok"], retry_after="1") as server:
        _run(server, server.task, tmp_path, variant="raw")
    assert server.statuses[:2] == [429, 200]
    assert server.times[1] - server.times[0] >= 0.95


def test_response_slower_than_timeout(task: Any, tmp_path: Path) -> None:
    short = dataclasses.replace(task, attempts=1)
    with FakeOpenAI(short, ["slow"], delay=1.5) as server:
        with pytest.raises(EndpointTimeout) as info:
            _run(server, short, tmp_path, timeout=0.25, max_retries=1)
    assert info.value.tries == 2 and "no answer within 0.25 s" in str(info.value)
    assert len(server.received) == 2


def test_server_without_json_schema_gets_prose_requests(task: Any, tmp_path: Path) -> None:
    with FakeOpenAI(task, ["no_schema"]) as server:
        result = _run(server, task, tmp_path)
    assert result.released
    assert "response_format" in server.received[0]
    assert all("response_format" not in body for body in server.received[1:])
    assert result.report["calls"][0]["tries"] == 2


@pytest.mark.parametrize(("behaviour", "error", "words"), [
    ("401", EndpointAuthError, "HTTP 401"), ("403", EndpointAuthError, "HTTP 403"),
    ("404", EndpointNotFound, "HTTP 404: no such model or URL"),
    ("garbage", EndpointResponseError, "the reply is not valid JSON"),
])
def test_fatal_statuses_end_the_run_at_once(task: Any, tmp_path: Path, behaviour: str, error: type,
                                            words: str) -> None:
    with FakeOpenAI(task, [behaviour]) as server:
        started = time.monotonic()
        with pytest.raises(error) as info:
            _run(server, task, tmp_path, max_retries=4)
        assert time.monotonic() - started < 5
    assert len(server.received) == 1  # not retried
    text = str(info.value)
    assert words in text and server.base_url in text and "test-model" in text
    assert SECRET not in text and "sk-serialkit" not in text and "\n" not in text


def test_a_refused_connection_is_said_so_and_not_retried(task: Any) -> None:
    """Nobody listens at the endpoint: the error says the connection was refused and where, after
    one try (outside tester: "connection after 3 tries: cannot connect" — a refusal is an answer,
    the same each time; retrying it only waited)."""
    proposer = OpenAIProposer(base_url="http://127.0.0.1:9/v1", timeout=0.5, max_retries=2)
    started = time.monotonic()
    with pytest.raises(EndpointRefused) as info:
        run(dataclasses.replace(task, attempts=1), proposer=proposer)
    assert time.monotonic() - started < 5
    assert str(info.value).startswith("http://127.0.0.1:9/v1 (model ")
    assert "): connection refused: nothing listens at 127.0.0.1:9 (is the server running?)" in str(info.value)
    assert info.value.tries == 1 and info.value.kind == "connection" and info.value.fatal
    assert "tries" not in str(info.value)


def test_a_connection_dropped_without_an_answer_is_retried(task: Any) -> None:
    """A server that accepts and hangs up is not a refusal: the SDK's retries stand, and the
    message counts them."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    accepted = []

    def hang_up() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            accepted.append(1)
            conn.close()

    threading.Thread(target=hang_up, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    try:
        proposer = OpenAIProposer(base_url=url, timeout=2, max_retries=1)
        with pytest.raises(EndpointUnreachable) as info:
            run(dataclasses.replace(task, attempts=1), proposer=proposer)
    finally:
        listener.close()
    assert not isinstance(info.value, EndpointRefused) and info.value.tries == 2 == len(accepted)
    assert "cannot connect" in str(info.value) and "after 2 tries" in str(info.value)


def test_no_key_sends_no_authorization(task: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SERIALKIT_API_KEY")
    with FakeOpenAI(dataclasses.replace(task, attempts=1), ["ok"]) as server:
        _run(server, server.task, tmp_path, variant="raw")
    assert not any(k.lower() == "authorization" for k in server.headers[0])


def test_the_sdk_is_the_client() -> None:
    source = Path(openai_module.__file__).read_text(encoding="utf-8")
    assert "import openai" in source and "urllib" not in source
