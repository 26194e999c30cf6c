"""The openai proposer's package: small modules on the SDK, and one exchange that the synchronous
client (alone) and the shared asynchronous one (an experiment's Endpoint) both run."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from serialkit.harness import run
from serialkit.harness.proposers import openai as package
from serialkit.harness.proposers.openai import Endpoint, OpenAIProposer
from tests.harness.fake_openai import FakeOpenAI, StickyOpenAI

pytestmark = pytest.mark.usefixtures("api_key")

MODULES = ("__init__", "env", "transport", "endpoint", "replies", "proposer")


def test_the_package_is_split_by_concern_on_the_sdk() -> None:
    folder = Path(package.__file__).parent
    assert sorted(p.stem for p in folder.glob("*.py")) == sorted(MODULES)
    texts = {name: (folder / f"{name}.py").read_text(encoding="utf-8") for name in MODULES}
    assert all(len(text.splitlines()) <= 400 for text in texts.values())
    assert not any("urllib" in text for text in texts.values())
    assert "import openai" in texts["transport"] and "import openai" in texts["proposer"]
    # one call site per client, one retry loop: both drivers run the same exchange
    proposer = texts["proposer"]
    assert proposer.count("chat.completions.create(") == 2 and proposer.count("self._exchange(request)") == 2
    assert proposer.count("self._fallback(exc)") == 1 and proposer.count("endpoint_error(") == 1


def _proposer(server: FakeOpenAI, endpoint: Endpoint | None) -> OpenAIProposer:
    return OpenAIProposer(base_url=server.base_url, model="test-model", timeout=5.0, max_retries=2, seed=11,
                          endpoint=endpoint)


def _both(task: Any, make: Any, script: list[str]) -> list[tuple[Any, FakeOpenAI]]:
    """The same run with the synchronous client and on an Endpoint: (result, server) of each."""
    out = []
    for shared in (False, True):
        with make(task, script) as server:
            endpoint = Endpoint(server.base_url, concurrency=2, max_retries=2, timeout=5.0) if shared else None
            try:
                out.append((run(task, proposer=_proposer(server, endpoint), seed=11), server))
            finally:
                if endpoint is not None:
                    endpoint.close()
    return out


def test_sync_and_async_take_the_same_turns(task: Any) -> None:
    """Prose fallback on a 400 to response_format, a 429 retried, then answers: both clients send
    the same requests and record the same calls."""
    (alone, s1), (shared, s2) = _both(dataclasses.replace(task, attempts=2), FakeOpenAI, ["no_schema", "429", "ok"])
    assert s1.statuses == s2.statuses and s1.statuses[:3] == [400, 429, 200]
    assert ["response_format" in b for b in s1.received] == ["response_format" in b for b in s2.received]
    assert [b["messages"] for b in s1.received] == [b["messages"] for b in s2.received]
    keep = ("call_id", "kind", "attempt", "tries", "status", "prompt_tokens", "completion_tokens")
    assert [{k: c[k] for k in keep} for c in alone.report["calls"]] == [
        {k: c[k] for k in keep} for c in shared.report["calls"]]
    assert alone.report["calls"][0]["tries"] == 3 and alone.released and shared.released


def test_sync_and_async_both_re_ask_a_request_that_keeps_failing(task: Any) -> None:
    def sticky(t: Any, script: list[str]) -> StickyOpenAI:
        return StickyOpenAI(t, failing=1, script=script)

    for result, server in _both(task, sticky, ["ok"]):
        assert result.released and server.statuses[:4] == [500, 500, 500, 200]
        assert result.report["calls"][0]["status"] == "errored" and result.report["calls"][1]["attempt"] == 2
