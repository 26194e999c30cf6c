"""A server error that outlasts the SDK's retries is re-asked once, in a changed form, within K.

The server here (``StickyOpenAI``) fails a request body every time it is sent, so the SDK's retries
cannot get past it; only a changed request (a new attempt number in the prompt's payload) can.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path
from typing import Any

import pytest

from serialkit.core.errors import (
    EndpointAuthError,
    EndpointNotFound,
    EndpointServerError,
)
from serialkit.harness import run
from tests.harness.fake_openai import FakeOpenAI, StickyOpenAI, run_openai

pytestmark = pytest.mark.usefixtures("api_key")

_run = functools.partial(run_openai, timeout=2.0, max_retries=1)


def _transcript(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (directory / "transcript.jsonl").read_text().splitlines()][1:]


def test_a_request_failing_every_retry_succeeds_when_re_asked_changed(task: Any, tmp_path: Path) -> None:
    first = task.sections[0].id
    with StickyOpenAI(task, failing=1) as server:
        result = _run(server, task, tmp_path)
    assert result.released, result.report["failures"]
    # the condemned body was sent twice (the SDK's retry), then the re-ask under attempt 2 went through
    assert server.statuses[:3] == [500, 500, 200]
    assert [server.attempts(k) for k in server.seen[:2]] == [("section", first, 1), ("section", first, 2)]
    assert server.received[0]["messages"][:-1] == server.received[2]["messages"][:-1]  # only the payload changed
    calls = _transcript(tmp_path)
    assert calls[0]["attempt"] == 1 and calls[0]["response"] is None and calls[0]["usage"]["status"] == "errored"
    assert calls[0]["endpoint"] == {"kind": "server", "status": 500, "reaskable": True}
    assert calls[1]["attempt"] == 2 and calls[1]["request"]["attempt"] == 2 and calls[1]["error"] is None
    # the failed call is counted: calls, HTTP tries, failed calls
    assert result.usage.calls == len(calls) and result.usage.failed_calls == 1
    assert result.usage.http_tries == len(server.received)
    assert result.report["calls"][0]["status"] == "errored" and result.report["calls"][0]["tries"] == 2


def test_the_re_ask_counts_against_the_budget_k(task: Any, tmp_path: Path) -> None:
    first = task.sections[0].id
    with StickyOpenAI(task, failing=1) as server:
        result = _run(server, task, tmp_path)
    section = next(s for s in result.report["sections"] if s["id"] == first)
    assert section["attempts"] == 2  # the failed call and its re-ask, both of the section's K calls
    # with K = 1 there is no call left to re-ask with: the run ends as an error after one call
    once = dataclasses.replace(task, attempts=1)
    with StickyOpenAI(once, failing=1) as server:
        with pytest.raises(EndpointServerError) as info:
            _run(server, once, tmp_path / "k1")
    assert server.statuses == [500, 500] and len(server.seen) == 1
    assert info.value.tries == 2 and [c["attempt"] for c in _transcript(tmp_path / "k1")] == [1]


def test_a_re_ask_that_fails_too_ends_the_run(task: Any, tmp_path: Path) -> None:
    """Re-asked once, not K times: two failed calls end the run though K = 3 has a call left."""
    assert task.attempts == 3
    with StickyOpenAI(task, failing=2) as server:
        with pytest.raises(EndpointServerError) as info:
            _run(server, task, tmp_path)
    assert server.statuses == [500] * 4 and len(server.seen) == 2
    assert "HTTP 500 after 2 tries" in str(info.value)
    calls = _transcript(tmp_path)
    assert [c["attempt"] for c in calls] == [1, 2]
    assert all(c["usage"]["status"] == "errored" for c in calls)


@pytest.mark.parametrize(("behaviour", "error"), [
    ("401", EndpointAuthError), ("403", EndpointAuthError), ("404", EndpointNotFound),
])
def test_auth_and_not_found_are_not_re_asked(task: Any, tmp_path: Path, behaviour: str, error: type) -> None:
    with FakeOpenAI(task, [behaviour, "ok"]) as server:
        with pytest.raises(error):
            _run(server, task, tmp_path, max_retries=2)
    assert len(server.received) == 1  # neither retried nor re-asked, though the next one would pass
    assert [c["endpoint"]["reaskable"] for c in _transcript(tmp_path)] == [False]


def test_a_patch_call_failing_every_retry_is_re_asked_changed(task: Any, tmp_path: Path) -> None:
    """The patch rung asks again once under the next attempt number when the server failed its call."""
    with FakeOpenAI(task, ["out_of_range"]) as probe:
        plain = _run(probe, task, tmp_path / "plain")
    patch_calls = [c for c in plain.report["calls"] if c["kind"] == "patch"]
    assert patch_calls  # out-of-range notes make the harness ask for patches
    with _PatchSticky(task, script=["out_of_range"]) as server:
        result = _run(server, task, tmp_path / "sticky")
    calls = _transcript(tmp_path / "sticky")
    errored = [c for c in calls if c["usage"]["status"] == "errored"]
    assert len(errored) == 1 and errored[0]["kind"] == "patch"
    after = calls[calls.index(errored[0]) + 1]
    assert after["kind"] == "patch" and after["attempt"] == errored[0]["attempt"] + 1 and after["error"] is None
    assert result.released


class _PatchSticky(StickyOpenAI):
    """Fails the first patch request body it sees, every time it is sent."""

    def _answer(self, path: str, body: dict[str, Any]) -> Any:
        key = json.dumps(body, sort_keys=True)
        with self._lock:
            if not self.condemned and self.attempts(key)[0] == "patch":
                self.condemned.append(key)
            failing = key in self.condemned
        if failing:
            return 500, {"error": {"message": "internal error"}}, {}
        return FakeOpenAI._answer(self, path, body)


def test_a_replay_of_a_re_asked_run_takes_the_same_turn(task: Any, tmp_path: Path) -> None:
    with StickyOpenAI(task, failing=1) as server:
        first = _run(server, task, tmp_path / "a")
    replayed = run(task, proposer="replay", proposer_options={"transcript": str(tmp_path / "a/transcript.jsonl")},
                   seed=11, out_dir=tmp_path / "b")
    assert replayed.released == first.released
    assert (tmp_path / "b/transcript.jsonl").read_text().splitlines()[1:] == (
        tmp_path / "a/transcript.jsonl").read_text().splitlines()[1:]
