"""The ``openai`` proposer: any OpenAI-compatible chat-completions endpoint, over plain HTTP.

The API key is read from the environment only (``SERIALKIT_API_KEY`` or ``OPENAI_API_KEY``) and is
never logged, recorded in a transcript or written to an output file.
"""

from __future__ import annotations

import json
import os
import random
import time
import urllib.error
import urllib.request
from typing import Any

from serialkit.core.errors import ProposerError
from serialkit.harness.prompts import estimate_tokens, messages
from serialkit.harness.proposers.base import CallUsage, Reply, Request
from serialkit.harness.schemas import load_schema

KEY_VARIABLES = ("SERIALKIT_API_KEY", "OPENAI_API_KEY")
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


def api_key() -> str | None:
    """The API key from the environment (None when unset: local servers often need none)."""
    for name in KEY_VARIABLES:
        value = os.environ.get(name)
        if value:
            return value
    return None


def configured() -> bool:
    """True when an endpoint or key is configured in the environment."""
    return bool(api_key() or os.environ.get("SERIALKIT_BASE_URL") or os.environ.get("OPENAI_BASE_URL"))


class OpenAIProposer:
    """Chat completions with structured output where offered, retries with backoff and jitter."""

    def __init__(self, base_url: str | None = None, model: str | None = None, temperature: float = 0.7,
                 seed: int | None = 0, timeout: float = 60.0, max_retries: int = 4, backoff: float = 1.0,
                 backoff_cap: float = 30.0, structured: bool = True, max_tokens: int | None = None) -> None:
        url = base_url or os.environ.get("SERIALKIT_BASE_URL") or os.environ.get("OPENAI_BASE_URL")
        self.base_url = (url or "https://api.openai.com/v1").rstrip("/")
        if not self.base_url.startswith(("http://", "https://")):
            raise ProposerError(f"openai proposer: base URL {self.base_url!r} must start with http:// or https://")
        self.model: str | None = model or os.environ.get("SERIALKIT_MODEL") or "gpt-4o-mini"
        self.name = "openai"
        self.temperature = temperature
        self.seed = seed
        self.timeout = timeout
        self.max_retries = max(0, max_retries)
        self.backoff = backoff
        self.backoff_cap = backoff_cap
        self.structured = structured
        self.max_tokens = max_tokens
        self._jitter = random.Random(seed)

    # request ----------------------------------------------------------------------
    def _body(self, request: Request, structured: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages(request),
            "temperature": self.temperature,
        }
        if self.seed is not None:
            body["seed"] = self.seed
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if structured:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "proposal", "schema": load_schema("proposal"), "strict": False},
            }
        return body

    def _post(self, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        data = json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        req = urllib.request.Request(f"{self.base_url}/chat/completions", data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310 - the user's endpoint
                return resp.status, dict(resp.headers.items()), resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, dict(exc.headers.items()) if exc.headers else {}, exc.read() or b""

    def _delay(self, attempt: int, headers: dict[str, str]) -> float:
        retry_after = {k.lower(): v for k, v in headers.items()}.get("retry-after")
        if retry_after is not None:
            try:
                return min(self.backoff_cap, max(0.0, float(retry_after)))
            except ValueError:
                pass
        base = float(min(self.backoff_cap, self.backoff * 2.0 ** attempt))
        return base / 2 + self._jitter.uniform(0, base / 2)

    # the call -------------------------------------------------------------------------
    def propose(self, request: Request) -> Reply:
        """One chat completion; failures end as a Reply with ``error`` and the usage so far."""
        started = time.perf_counter()
        usage = CallUsage(tries=0)
        structured = self.structured
        error = "no attempt made"
        attempt = 0
        while attempt <= self.max_retries:
            usage.tries += 1
            try:
                status, headers, raw = self._post(self._body(request, structured))
            except TimeoutError as exc:
                status, headers, raw, error = 0, {}, b"", f"timed out after {self.timeout:g} s ({exc})"
            except urllib.error.URLError as exc:
                reason = exc.reason
                timed_out = isinstance(reason, TimeoutError)
                status, headers, raw = 0, {}, b""
                error = f"timed out after {self.timeout:g} s" if timed_out else f"cannot reach {self.base_url}: {reason}"
            except (ConnectionError, OSError) as exc:
                status, headers, raw, error = 0, {}, b"", f"connection failed: {exc}"
            if status == 200:
                return self._reply(raw, request, usage, started)
            if status == 400 and structured and b"response_format" in raw:
                structured = False  # this server does not offer JSON-schema output: ask in prose
                self.structured = False
                continue
            if status:
                error = f"HTTP {status}: {_message(raw)}"
            if status and status not in RETRY_STATUS:
                usage.status = "error"
                break
            if attempt == self.max_retries:
                usage.status = "exhausted"
                error = f"{error} (gave up after {usage.tries} tries)"
                break
            time.sleep(self._delay(attempt, headers))
            attempt += 1
        if usage.status == "ok":
            usage.status = "error"
        usage.seconds = time.perf_counter() - started
        return Reply(None, usage, error)

    def _reply(self, raw: bytes, request: Request, usage: CallUsage, started: float) -> Reply:
        usage.seconds = time.perf_counter() - started
        try:
            data = json.loads(raw)
            text = data["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            usage.status = "error"
            return Reply(None, usage, f"unreadable chat-completions response ({type(exc).__name__}: {exc})")
        counts = data.get("usage") or {}
        prompt = "".join(m["content"] for m in messages(request))
        usage.prompt_tokens = int(counts.get("prompt_tokens") or estimate_tokens(prompt))
        usage.completion_tokens = int(counts.get("completion_tokens") or estimate_tokens(text or ""))
        if not isinstance(text, str):
            usage.status = "error"
            return Reply(None, usage, "the response has no message content")
        return Reply(text, usage)


def _message(raw: bytes) -> str:
    """The error message of an error body, shortened."""
    try:
        data = json.loads(raw)
        msg = data.get("error", {}).get("message") if isinstance(data.get("error"), dict) else data.get("error")
        text = str(msg or data)
    except (ValueError, AttributeError):
        text = raw.decode("utf-8", "replace")
    return text.strip().replace("\n", " ")[:200] or "(empty body)"
