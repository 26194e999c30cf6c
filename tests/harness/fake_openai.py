"""A real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions API, for the proposer tests.

Each request takes the next behaviour from a script (the last one repeats): ``ok``, ``prose``,
``malformed``, ``out_of_range``, ``429`` (with ``Retry-After: retry_after``), ``500``, ``401``,
``403``, ``404`` (unknown model), ``slow`` (answers after ``delay`` seconds), ``no_schema`` (400
when asked for a JSON-schema response format), ``garbage`` (200 with a body that is no chat
completion), ``no_choices`` (a chat completion with an empty ``choices`` list), ``length`` (an
answer cut off mid-JSON with ``finish_reason: "length"``), ``bad_usage`` / ``negative_usage`` (a
good answer whose ``usage`` counts are a string / negative), ``html`` (a 200 page of text/html),
``stream`` (a good answer streamed as text/event-stream chunks, though stream=false was asked),
``cut_json`` (a JSON body that breaks off), ``no_message`` (a first choice without a message),
``huge`` (a good answer followed by ``huge_events`` copies of one event, a body of megabytes; sent
with its Content-Length, or chunked without one when ``chunked``). Good answers are written by the stochastic proposer with the clean profile from the
REQUEST payload of the prompt, so they follow the task; with several tasks the server finds the
task from the payload. ``reply_delay`` holds every answer back (a model's latency); the server
records each request's arrival time and the peak number of requests in flight.
"""

from __future__ import annotations

import json
import threading
import time
import zlib
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from serialkit.harness import run
from serialkit.harness.proposers.base import Request
from serialkit.harness.proposers.stochastic import StochasticProposer
from serialkit.harness.tasks import Task

SECRET = "sk-serialkit-test-secret-0123456789"
"""The API key the proposer tests set (the ``api_key`` fixture): no file a run writes may hold it."""


def run_openai(server: FakeOpenAI, task: Task, out: Path | None, variant: str = "harness", **opts: Any) -> Any:
    """One run of ``task`` by the openai proposer against ``server`` into ``out``; ``opts`` are
    proposer options over the defaults (5 s timeout, no retries, seed 11)."""
    options = {"base_url": server.base_url, "model": "test-model", "timeout": 5.0, "max_retries": 0, "seed": 11}
    options.update(opts)
    return run(task, variant=variant, proposer="openai", proposer_options=options, seed=11, out_dir=out)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the listen backlog: many clients connect at once

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (it would not read a reply to the end) is no error of the server's;
        anything else is printed, as the standard server does."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _fingerprint(payload: dict[str, Any]) -> str:
    keys = ("row", "section", "span", "meter", "convention", "voices")
    return json.dumps([payload.get(k) for k in keys], sort_keys=True)


class FakeOpenAI:
    """The server, its script and what it received."""

    def __init__(self, task: Task | Sequence[Task], script: list[str], delay: float = 1.0,
                 reply_delay: float = 0.0, retry_after: str | None = "0",
                 headers: dict[str, str] | None = None, port: int = 0, huge_events: int = 20000,
                 chunked: bool = False) -> None:
        tasks = [task] if isinstance(task, Task) else list(task)
        self.task = tasks[0]
        self._tasks = {}
        for t in tasks:
            for sec in t.sections:
                self._tasks[_fingerprint(Request("x", "section", t, sec.id, 1).payload())] = t
        self.script = list(script)
        self.delay = delay
        self.reply_delay = reply_delay
        self.retry_after = retry_after
        self.extra_headers = dict(headers or {})
        self.huge_events = huge_events
        self.chunked = chunked
        self.received: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.times: list[float] = []  # arrival (time.monotonic) of every request
        self.statuses: list[int] = []
        self.answered = 0
        self.in_flight = 0
        self.peak = 0
        self._lock = threading.Lock()
        self._writer = StochasticProposer(seed=7, profile="clean")
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                with server._lock:
                    server.in_flight += 1
                    server.peak = max(server.peak, server.in_flight)
                try:
                    status, payload, extra = server.answer(self.path, dict(self.headers.items()), body)
                    if server.reply_delay:
                        time.sleep(server.reply_delay)
                finally:
                    with server._lock:
                        server.in_flight -= 1
                try:
                    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                    headers = {"Content-Type": "application/json", **server.extra_headers, **extra}
                    chunked = headers.pop("Transfer-Encoding", None) == "chunked"
                    self.send_response(status)
                    if not chunked:
                        self.send_header("Content-Length", str(len(data)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    if chunked:
                        self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    if chunked:
                        for i in range(0, len(data), 65536):
                            piece = data[i:i + 65536]
                            self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                        self.wfile.write(b"0\r\n\r\n")
                    else:
                        self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test, or a reply it would not read to the end)

        self.httpd = _Server(("127.0.0.1", port), Handler)  # port 0: any free one
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The endpoint's base URL."""
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _next(self) -> str:
        with self._lock:
            behaviour = self.script[0] if len(self.script) == 1 else self.script.pop(0)
        return behaviour

    def answer(self, path: str, headers: dict[str, str], body: dict[str, Any]
               ) -> tuple[int, dict[str, Any] | bytes, dict[str, str]]:
        """(status, JSON body, extra headers) for one request."""
        with self._lock:
            self.received.append(body)
            self.headers.append(headers)
            self.times.append(time.monotonic())
        status, payload, extra = self._answer(path, body)
        with self._lock:
            self.statuses.append(status)
        return status, payload, extra

    def _answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any] | bytes, dict[str, str]]:
        if path != "/v1/chat/completions":
            return 404, {"error": {"message": f"no route {path}"}}, {}
        behaviour = self._next()
        if behaviour == "429":
            return 429, {"error": {"message": "rate limited"}}, (
                {"Retry-After": self.retry_after} if self.retry_after is not None else {})
        if behaviour == "500":
            return 500, {"error": {"message": "internal error"}}, {}
        if behaviour in ("401", "403"):
            return int(behaviour), {"error": {"message": "Incorrect API key provided: sk-serialkit-te**...**89",
                                              "type": "invalid_request_error", "code": "invalid_api_key"}}, {}
        if behaviour == "404":
            return 404, {"error": {"message": f"The model `{body.get('model')}` does not exist",
                                   "code": "model_not_found"}}, {}
        if behaviour == "no_schema" and "response_format" in body:
            return 400, {"error": {"message": "response_format json_schema is not supported"}}, {}
        if behaviour == "garbage":
            return 200, b"<html>gateway</html>", {}
        if behaviour == "html":
            return 200, b"<html><body>Gateway</body></html>", {"Content-Type": "text/html; charset=utf-8"}
        if behaviour == "cut_json":
            return 200, b'{"id": "x", "choices": [{"message": {"content": "{\\"events\\": [', {}
        if behaviour == "no_message":
            return 200, {"id": "x", "object": "chat.completion", "choices": [{"index": 0}]}, {}
        if behaviour == "stream":
            text = self._content(body, "ok")
            chunks = [{"id": "x", "object": "chat.completion.chunk",
                       "choices": [{"index": 0, "delta": {"content": text[i:i + 50]}, "finish_reason": None}]}
                      for i in range(0, len(text), 50)]
            sse = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
            return 200, sse.encode(), {"Content-Type": "text/event-stream"}
        if behaviour == "slow":
            time.sleep(self.delay)
        content = self._content(body, behaviour)
        with self._lock:
            self.answered += 1
            n = self.answered
        usage: dict[str, Any] = {"prompt_tokens": 100 + n, "completion_tokens": 50 + n}
        if behaviour == "bad_usage":
            usage = {"prompt_tokens": "lots", "completion_tokens": None}
        elif behaviour == "negative_usage":
            usage = {"prompt_tokens": -500000, "completion_tokens": -3, "total_tokens": -500003}
        if behaviour == "huge":  # a good answer, then the same event over and over
            data = json.loads(content)
            data["events"] += [dict(data["events"][0])] * self.huge_events
            content = json.dumps(data)
        message = {"role": "assistant", "content": content}
        choices = [{"index": 0, "message": message, "finish_reason": "length" if behaviour == "length" else "stop"}]
        extra = {"Transfer-Encoding": "chunked"} if behaviour == "huge" and self.chunked else {}
        return 200, {"id": f"cmpl-{n}", "object": "chat.completion", "created": 0, "model": body.get("model"),
                     "choices": [] if behaviour == "no_choices" else choices, "usage": usage}, extra

    def _content(self, body: dict[str, Any], behaviour: str) -> str:
        if behaviour == "malformed":
            return '{"section": "A", "events": [{"voice": "vn", "onset": 0, "dur'
        if behaviour == "length":
            return '{"events": [{"voice": "vn", "onset": 0, "dur'
        user = body["messages"][-1]["content"]
        payload = json.loads(user[user.rindex("REQUEST ") + len("REQUEST "):])
        task = self._tasks.get(_fingerprint(payload), self.task)
        request = Request(
            # the answer depends on the request only, not on the order requests arrive in
            call_id=f"srv{zlib.crc32(user.encode())}", kind=payload["kind"], task=task,
            section=payload["section"], attempt=payload["attempt"], missing=tuple(payload.get("missing", ())),
            context=tuple(payload.get("keep", ())), patches=tuple(payload.get("patches", ())),
        )
        text = self._writer.propose(request).text or ""
        data = json.loads(text[text.index("{"): text.rindex("}") + 1])
        if behaviour == "out_of_range" and payload["kind"] == "section":
            for i, event in enumerate(data["events"]):
                if i % 5 == 0:
                    event["midi"] = min(127, event["midi"] + 36)
        text = json.dumps(data)
        if behaviour == "prose":
            return f"Sure! Here are the notes for this section.\n\n```json\n{text}\n```\nLet me know if you need changes."
        return text


class StickyOpenAI(FakeOpenAI):
    """A server whose failures stick to the request: the first ``failing`` distinct request bodies
    it sees get a 500 every time they are sent (the SDK's retries send the same body again), while
    any other body, a re-ask in a changed form among them, is answered by the script."""

    def __init__(self, task: Task | Sequence[Task], failing: int = 1, script: Sequence[str] = ("ok",),
                 **kwargs: Any) -> None:
        super().__init__(task, list(script), **kwargs)
        self.failing = failing
        self.condemned: list[str] = []  # the bodies that fail, in the order first seen
        self.seen: list[str] = []  # every distinct body, in the order first seen

    def _answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any] | bytes, dict[str, str]]:
        key = json.dumps(body, sort_keys=True)
        with self._lock:
            if key not in self.seen:
                self.seen.append(key)
                if len(self.condemned) < self.failing:
                    self.condemned.append(key)
            failing = key in self.condemned
        if failing:
            return 500, {"error": {"message": "internal error"}}, {}
        return super()._answer(path, body)

    def attempts(self, key: str) -> tuple[str, str, int]:
        """(kind, section, attempt) of a body this server saw, read from its prompt's payload."""
        user = json.loads(key)["messages"][-1]["content"]
        payload = json.loads(user[user.rindex("REQUEST ") + len("REQUEST "):])
        return payload["kind"], payload["section"], payload["attempt"]


def max_in_window(times: Sequence[float], window: float) -> int:
    """The most arrivals within any window of ``window`` seconds (closed at both ends)."""
    ordered = sorted(times)
    best = 0
    j = 0
    for i, t in enumerate(ordered):
        while ordered[j] < t - window:
            j += 1
        best = max(best, i - j + 1)
    return best


class HostileOpenAI(FakeOpenAI):
    """The ``hostile`` server profile (issue 12): answers written by the stochastic proposer's
    ``hostile`` profile (wrong statements, lost places, fences, prose, truncation, numbers as
    strings, empty answers, repeated patches, replans outside their windows), plus the endpoint's
    own habits: a 429 or 500 that clears on the next try (``transient``, with ``Retry-After: 0``),
    and a request that gets an unusable answer (an empty message) every time it is asked unchanged
    (``persistent``). With ``persistent_status`` (e.g. 500) such a request gets that HTTP status
    instead, every time it is sent unchanged: a failure that outlasts every retry."""

    def __init__(self, task: Task | Sequence[Task], seed: int = 0, transient: float = 0.15,
                 persistent: float = 0.08, persistent_status: int | None = None) -> None:
        super().__init__(task, ["ok"])
        self.persistent_status = persistent_status
        self._writer = StochasticProposer(seed=seed, profile="hostile", rates={"transient": 0, "persistent": 0})
        self.transient, self.persistent, self.seed = transient, persistent, seed
        self._tries: dict[int, int] = {}
        self.failed_tries = 0

    def _answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any] | bytes, dict[str, str]]:
        user = body["messages"][-1]["content"] if body.get("messages") else ""
        key = zlib.crc32(user.encode())
        with self._lock:
            tries = self._tries[key] = self._tries.get(key, 0) + 1
        draw = zlib.crc32(f"{self.seed}/{key}".encode()) / 2**32
        if tries == 1 and draw < self.transient:
            with self._lock:
                self.failed_tries += 1
            status = 429 if key % 2 else 500
            return status, {"error": {"message": "rate limited" if status == 429 else "internal error"}}, {
                "Retry-After": "0"}
        payload = json.loads(user[user.rindex("REQUEST ") + len("REQUEST "):])
        ident = json.dumps([payload.get("kind"), payload.get("section"), payload.get("attempt"),
                            [m.get("slot") for m in payload.get("missing", ())],
                            [p.get("id") for p in payload.get("patches", ())]])
        if zlib.crc32(f"{self.seed}/{ident}".encode()) / 2**32 < self.persistent:
            if self.persistent_status is not None:
                return self.persistent_status, {"error": {"message": "internal error"}}, {}
            return self._message(body, "")
        return super()._answer(path, body)

    def _content(self, body: dict[str, Any], behaviour: str) -> str:
        """The hostile writer's answer as it is: fenced, with prose, cut off, or empty."""
        user = body["messages"][-1]["content"]
        payload = json.loads(user[user.rindex("REQUEST ") + len("REQUEST "):])
        task = self._tasks.get(_fingerprint(payload), self.task)
        request = Request(
            call_id=f"srv{zlib.crc32(user.encode())}", kind=payload["kind"], task=task,
            section=payload["section"], attempt=payload["attempt"], missing=tuple(payload.get("missing", ())),
            context=tuple(payload.get("keep", ())), patches=tuple(payload.get("patches", ())),
        )
        return self._writer.propose(request).text or ""

    def _message(self, body: dict[str, Any], content: str) -> tuple[int, dict[str, Any], dict[str, str]]:
        with self._lock:
            self.answered += 1
            n = self.answered
        message = {"role": "assistant", "content": content}
        return 200, {"id": f"cmpl-{n}", "object": "chat.completion", "created": 0, "model": body.get("model"),
                     "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                     "usage": {"prompt_tokens": 100 + n, "completion_tokens": 50 + n}}, {}
