"""What a server sends back is bounded and named (outside tester 0405, defects 6 and 14): a reply
body over ``max_reply_bytes`` is an error of the environment (exit 2, the transcript keeps a note,
never a verdict on the music), whether its length is announced or it arrives chunked; a 200 that is
no chat completion says what it was (a page of text/html, a streamed text/event-stream reply, JSON
that breaks off), never a Python exception; and a reply of thousands of stray notes leaves a report
that counts its drops and lists only the first few."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from serialkit.cli import cli
from serialkit.core.errors import EndpointResponseError
from serialkit.eval.runner import EvalConfig, run_eval
from serialkit.eval.store import RunStore
from serialkit.harness import load_task, run
from serialkit.harness.certificate import LISTED
from serialkit.harness.proposers.openai import DEFAULT_MAX_REPLY_BYTES
from serialkit.harness.schemas import load_schema
from tests.eval.helpers import small_bank
from tests.harness.fake_openai import FakeOpenAI

SECRET = "sk-serialkit-test-secret-0123456789"
#: what Python's own errors look like in a message (none may reach the user)
INTERNALS = ("TypeError", "AttributeError", "KeyError", "IndexError", "ValueError", "JSONDecodeError",
             "NoneType", "object is not", "Expecting value", "Traceback")


@pytest.fixture()
def task() -> Any:
    return load_task("duo-berg")


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERIALKIT_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def _run(server: FakeOpenAI, task: Any, out: Path | None, **opts: Any) -> Any:
    options = {"base_url": server.base_url, "model": "test-model", "timeout": 30.0, "max_retries": 0, "seed": 11}
    options.update(opts)
    return run(task, variant="harness", proposer="openai", proposer_options=options, seed=11, out_dir=out)


@pytest.mark.parametrize(("behaviour", "words"), [
    ("html", "the reply is text/html, not a chat completion"),
    ("stream", "a streamed (text/event-stream) reply; serialkit asks for stream=false"),
    ("cut_json", "the reply is not valid JSON: it breaks off after"),
    ("garbage", "the reply is not valid JSON"),
    ("no_message", "not a chat completion (its first choice has no message)"),
    ("no_choices", "not a chat completion (the reply has no choices)"),
])
def test_a_reply_that_is_no_chat_completion_says_what_it_was(task: Any, tmp_path: Path, behaviour: str,
                                                            words: str) -> None:
    with FakeOpenAI(task, [behaviour]) as server:
        with pytest.raises(EndpointResponseError) as info:
            _run(server, task, tmp_path, max_retries=3)
    assert len(server.received) == 1  # a reply of the wrong kind is not asked again
    text = str(info.value)
    assert f"{server.base_url} (model test-model): HTTP 200: {words}" in text, text
    assert not [word for word in INTERNALS if word in text], text
    assert "\n" not in text and SECRET not in text


@pytest.mark.parametrize("behaviour", ["html", "stream"])
def test_generate_names_the_reply_in_one_line_and_exits_2(tmp_path: Path, behaviour: str) -> None:
    with FakeOpenAI(load_task("duo-berg"), [behaviour]) as server:
        result = CliRunner().invoke(cli, ["generate", "duo-berg", "-o", str(tmp_path / "run"), "--proposer",
                                          "openai", "--base-url", server.base_url, "--model", "test-model"])
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and ("text/html" in lines[0] or "text/event-stream" in lines[0]), lines
    assert not [word for word in INTERNALS if word in lines[0]], lines
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["transcript.jsonl"]


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_reply_over_the_size_limit_is_an_error_of_the_environment(tmp_path: Path, chunked: bool) -> None:
    """The tester's 21 MB reply ran for 74 s and left an 84 MB report; over the limit it is not read."""
    out = tmp_path / "run"
    with FakeOpenAI(load_task("duo-berg"), ["huge"], huge_events=20000, chunked=chunked) as server:
        result = CliRunner().invoke(cli, ["generate", "duo-berg", "-o", str(out), "--proposer", "openai",
                                          "--base-url", server.base_url, "--model", "test-model",
                                          "-O", "max_retries=2"])
    assert len(server.received) == 1  # not retried: the same request gets the same reply
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {server.base_url} (model test-model): HTTP 200: ")
    assert f"limit of {DEFAULT_MAX_REPLY_BYTES:,} bytes (-O max_reply_bytes=N)" in lines[0]
    assert ("is 2," in lines[0]) != chunked  # announced: its size; chunked: only that it went past
    # no verdict: only the transcript, whose last call notes the reply and holds none of it
    assert sorted(p.name for p in out.iterdir()) == ["transcript.jsonl"]
    assert (out / "transcript.jsonl").stat().st_size < 100_000
    last = json.loads((out / "transcript.jsonl").read_text().splitlines()[-1])
    assert last["response"] is None and "max_reply_bytes" in last["error"]
    assert last["usage"]["status"] == "errored"


def test_the_size_limit_is_an_option(task: Any, tmp_path: Path) -> None:
    with FakeOpenAI(task, ["ok"]) as server:
        with pytest.raises(EndpointResponseError, match="limit of 500 bytes"):
            _run(server, task, tmp_path / "small", max_reply_bytes=500)
        assert _run(server, task, tmp_path / "ok", max_reply_bytes=50_000).released


def test_an_experiment_records_an_oversized_reply_as_errored(tmp_path: Path) -> None:
    """On the shared async endpoint too: the run errors (kind ``response``), no verdict recorded."""
    bank = small_bank(tmp_path, ("mono-line-01",))
    with FakeOpenAI(load_task(str(bank / "mono-line-01.json")), ["huge"], huge_events=20000, chunked=True) as server:
        config = EvalConfig(bank=str(bank), variants=("raw",), runs=1, proposer="openai", model="test-model",
                            proposer_options={"base_url": server.base_url, "max_retries": 0, "timeout": 30.0})
        summary = run_eval(config, tmp_path / "run")
    assert summary.finished == 0 and [e["kind"] for e in summary.errors] == ["response"]
    assert "max_reply_bytes" in summary.errors[0]["error"]
    assert RunStore(tmp_path / "run").records() == []


def test_thousands_of_stray_notes_are_counted_not_listed(task: Any, tmp_path: Path) -> None:
    with FakeOpenAI(task, ["huge"], huge_events=400) as server:
        result = _run(server, task, tmp_path)
    report = json.loads((tmp_path / "report.json").read_text())
    jsonschema.validate(report, load_schema("run-report"))
    counts = report["drop_counts"]
    calls = len(report["calls"])
    assert counts["total"] >= 400 * calls  # every copy of the repeated note is dropped
    assert counts["problems"] == {"ORDER": counts["total"]}
    assert sum(counts["sections"].values()) == counts["total"]
    assert len(report["drops"]) == counts["listed"] == LISTED
    assert result.to_record()["drops"] == counts["total"]
    assert (tmp_path / "report.json").stat().st_size < 50_000


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False)
                     | st.text(max_size=8) | st.sampled_from(["1/0", "3/2", "x", "1e400", "0.5", "-1", "vn", "P0"]),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                     max_leaves=6)
_FIELDS = ("voice", "onset", "duration", "midi", "form", "position", "pc")


@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(_FIELDS), _JSON, max_size=len(_FIELDS)) | _JSON, max_size=4))
def test_a_reply_of_any_json_events_is_read_in_plain_words(items: list[Any]) -> None:
    """Whatever a model writes as events, reading them never raises and no message is Python's own
    (an exception's name, ``Fraction(1, 0)``, ``Invalid literal for Fraction``, a bare key)."""
    from serialkit.harness.proposers.base import CallUsage, Reply, parse_proposal

    parsed = parse_proposal(Reply(json.dumps({"events": items}), CallUsage()), load_task("duo-berg"))
    for message in parsed.errors:
        assert not [w for w in (*INTERNALS, "Fraction", "Invalid literal") if w in message], message
        assert not re.fullmatch(r"events\[\d+\]: '\w+'", message), message  # a KeyError's text
