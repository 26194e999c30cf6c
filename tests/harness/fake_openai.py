"""A real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions API, for the proposer tests.

Each request takes the next behaviour from a script (the last one repeats): ``ok``, ``prose``,
``malformed``, ``out_of_range``, ``429``, ``500``, ``slow``, ``no_schema`` (400 when asked for a
JSON-schema response format). Good answers are written by the stochastic proposer with the clean
profile from the REQUEST payload of the prompt, so they follow the task.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from serialkit.harness.proposers.base import Request
from serialkit.harness.proposers.stochastic import StochasticProposer
from serialkit.harness.tasks import Task


class FakeOpenAI:
    """The server, its script and what it received."""

    def __init__(self, task: Task, script: list[str], delay: float = 1.0) -> None:
        self.task = task
        self.script = list(script)
        self.delay = delay
        self.received: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.answered = 0
        self._lock = threading.Lock()
        self._writer = StochasticProposer(seed=7, profile="clean")
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                status, payload, extra = server.answer(self.path, dict(self.headers.items()), body)
                try:
                    data = json.dumps(payload).encode()
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in extra.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
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

    def answer(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        """(status, JSON body, extra headers) for one request."""
        self.received.append(body)
        self.headers.append(headers)
        if path != "/v1/chat/completions":
            return 404, {"error": {"message": f"no route {path}"}}, {}
        behaviour = self._next()
        if behaviour == "429":
            return 429, {"error": {"message": "rate limited"}}, {"Retry-After": "0"}
        if behaviour == "500":
            return 500, {"error": {"message": "internal error"}}, {}
        if behaviour == "no_schema" and "response_format" in body:
            return 400, {"error": {"message": "response_format json_schema is not supported"}}, {}
        if behaviour == "slow":
            time.sleep(self.delay)
        content = self._content(body, behaviour)
        self.answered += 1
        usage = {"prompt_tokens": 100 + self.answered, "completion_tokens": 50 + self.answered}
        message = {"role": "assistant", "content": content}
        return 200, {"id": f"cmpl-{self.answered}", "object": "chat.completion",
                     "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                     "usage": usage}, {}

    def _content(self, body: dict[str, Any], behaviour: str) -> str:
        if behaviour == "malformed":
            return '{"section": "A", "events": [{"voice": "vn", "onset": 0, "dur'
        user = body["messages"][-1]["content"]
        payload = json.loads(user[user.rindex("REQUEST ") + len("REQUEST "):])
        request = Request(
            call_id=f"srv{self.answered}", kind=payload["kind"], task=self.task, section=payload["section"],
            attempt=payload["attempt"], missing=tuple(payload.get("missing", ())),
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
