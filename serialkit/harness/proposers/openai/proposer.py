"""The ``openai`` proposer: one chat completion per call on the official SDK, alone (its own
synchronous client) or on an experiment's shared :class:`Endpoint` (the async client).

Both paths run one exchange (:meth:`OpenAIProposer._exchange`, a generator): it builds each
request, sets up the per-call state the HTTP hooks share, falls back to prose when the server
answers 400 to ``response_format``, maps what the server could not answer to an
:class:`~serialkit.core.errors.EndpointError` and reads the reply. The sync and async
drivers only send the requests it yields, with ``create`` or ``await create``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Generator
from typing import Any

from serialkit.core.errors import ProposerError
from serialkit.harness.prompts import estimate_tokens, messages
from serialkit.harness.proposers.base import CallUsage, Reply, Request
from serialkit.harness.proposers.limits import RateLimiter, RateLimits
from serialkit.harness.proposers.openai.endpoint import Endpoint
from serialkit.harness.proposers.openai.env import (
    COMPLETION_GUESS,
    DEFAULT_MAX_REPLY_BYTES,
    DEFAULT_MODEL,
    api_key,
    endpoint_url,
)
from serialkit.harness.proposers.openai.replies import endpoint_error, read_reply, server_message
from serialkit.harness.proposers.openai.transport import CALL, CallState, make_client, release
from serialkit.harness.schemas import load_schema

#: what :meth:`OpenAIProposer._exchange` yields (a request body) and is sent back (the response)
Exchange = Generator[dict[str, Any], Any, Reply]


class OpenAIProposer:
    """Chat completions over the ``openai`` SDK, alone (sync client) or on a shared :class:`Endpoint`."""

    def __init__(self, base_url: str | None = None, model: str | None = None, temperature: float = 0.7,
                 seed: int | None = 0, timeout: float = 60.0, max_retries: int = 2, structured: bool = True,
                 max_tokens: int | None = None, endpoint: Endpoint | None = None,
                 limits: RateLimits | None = None, max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES) -> None:
        if max_retries < 0:
            raise ProposerError(f"openai proposer: max_retries must be 0 or more, not {max_retries}")
        if isinstance(max_reply_bytes, bool) or not isinstance(max_reply_bytes, int) or max_reply_bytes < 1:
            raise ProposerError(f"openai proposer: max_reply_bytes must be a whole number of bytes, 1 or more, "
                                f"not {max_reply_bytes!r}")
        if timeout <= 0:
            raise ProposerError(f"openai proposer: timeout must be positive, not {timeout}")
        self.endpoint = endpoint
        self.base_url = endpoint.base_url if endpoint is not None else endpoint_url(base_url)
        self.model: str | None = model or os.environ.get("SERIALKIT_MODEL") or DEFAULT_MODEL
        self.name = "openai"
        self.temperature = temperature
        self.seed = seed
        self.timeout = timeout
        self.max_retries = max_retries
        self.structured = structured and (endpoint is None or endpoint.structured)
        self.max_tokens = max_tokens
        self.max_reply_bytes = max_reply_bytes
        self._limiter = endpoint.limiter if endpoint is not None else (
            RateLimiter(limits) if limits is not None and limits.active else None)
        self._client: Any = None

    # request ----------------------------------------------------------------------
    def _body(self, request: Request, structured: bool) -> dict[str, Any]:
        import openai

        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages(request),
            "temperature": self.temperature,
        }
        if self.seed is not None:
            body["seed"] = self.seed
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if api_key() is None and hasattr(openai, "Omit"):
            body["extra_headers"] = {"Authorization": openai.Omit()}
        if structured:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "proposal", "schema": load_schema("proposal"), "strict": False},
            }
        return body

    def _expected_tokens(self, body: dict[str, Any]) -> int:
        prompt = estimate_tokens("".join(str(m["content"]) for m in body["messages"]))
        return prompt + (self.max_tokens or COMPLETION_GUESS)

    # the call -------------------------------------------------------------------------
    def propose(self, request: Request) -> Reply:
        """One chat completion; a malformed answer is a Reply with ``error``; a server that
        cannot answer raises :class:`EndpointError`."""
        if self.endpoint is not None:
            endpoint = self.endpoint
            return endpoint.submit(endpoint.limited(lambda: self._propose_async(request)))
        return self._propose_sync(request)

    def _exchange(self, request: Request) -> Exchange:
        """The call's one retry loop, shared by both clients: yields each request body to send;
        is sent the response, or has the SDK's exception thrown in. Returns the Reply; raises
        the :class:`EndpointError` of a failure (after the prose fallback, if the server refused
        JSON-schema output). The per-call state lives in a context variable from the yield to
        the answer, so the HTTP hooks of that very request see it."""
        stats = self.endpoint.stats if self.endpoint is not None else None
        started = time.perf_counter()
        usage = CallUsage(tries=0)
        while True:
            body = self._body(request, self.structured)
            state = CallState(self._limiter, stats, self._expected_tokens(body), self.max_reply_bytes)
            token = CALL.set(state)
            try:
                response = yield body
            except Exception as exc:  # noqa: BLE001 - mapped to serialkit's errors below
                usage.tries += state.tries
                if self._fallback(exc):
                    continue
                raise endpoint_error(exc, self.base_url, self.model, self.timeout, usage.tries, state) from None
            finally:
                CALL.reset(token)
                release(state)
            usage.tries += state.tries
            return read_reply(response, request, usage, started, state, where=self.base_url, model=self.model,
                              max_tokens=self.max_tokens, limiter=self._limiter)

    def _propose_sync(self, request: Request) -> Reply:
        if self._client is None:
            self._client = make_client(False, self.base_url, self.timeout, self.max_retries)
        steps = self._exchange(request)
        try:
            body = next(steps)
            while True:
                try:
                    response = self._client.chat.completions.create(**body)
                except Exception as exc:  # noqa: BLE001 - the exchange maps it (or asks again)
                    body = steps.throw(exc)
                    continue
                body = steps.send(response)
        except StopIteration as done:
            reply: Reply = done.value
            return reply
        finally:
            steps.close()

    async def _propose_async(self, request: Request) -> Reply:
        assert self.endpoint is not None
        client = self.endpoint.client()
        stats = self.endpoint.stats
        stats.enter()
        prompt = completion = 0
        steps = self._exchange(request)
        try:
            body = next(steps)
            while True:
                try:
                    response = await client.chat.completions.create(**body)
                except Exception as exc:  # noqa: BLE001 - the exchange maps it (or asks again)
                    body = steps.throw(exc)
                    continue
                body = steps.send(response)
        except StopIteration as done:
            reply: Reply = done.value
            prompt, completion = reply.usage.prompt_tokens, reply.usage.completion_tokens
            return reply
        finally:
            steps.close()
            stats.leave(prompt, completion)

    def _fallback(self, exc: Exception) -> bool:
        """True (and prose from now on) when the server refused JSON-schema output."""
        import openai

        if (self.structured and isinstance(exc, openai.BadRequestError)
                and "response_format" in server_message(exc)):
            self.structured = False
            if self.endpoint is not None:
                self.endpoint.structured = False
            return True
        return False
