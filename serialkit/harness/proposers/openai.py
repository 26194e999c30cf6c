"""The ``openai`` proposer: any OpenAI-compatible chat-completions endpoint, on the official SDK.

``OpenAIProposer`` asks one chat completion per call: JSON-schema structured output where the
server offers it (prose with JSON extraction where it answers 400 to ``response_format``), seed
and temperature forwarded, usage from the response. The SDK retries 408/409/429/5xx, timeouts and
connection errors itself (``max_retries``, honouring ``Retry-After``) — but not a refused
connection, which its transport turns into an error at once (nothing listens there: trying again
only waits); an event hook on its HTTP
client counts every try and passes it through the endpoint's limits. What the server cannot
answer ends the call with an :class:`~serialkit.harness.proposers.errors.EndpointError` (an error
of the environment, never a verdict about the candidate).

Alone (``generate``) a proposer uses the synchronous client. In an experiment the runner gives
every run's proposer the same :class:`Endpoint`: one asyncio loop and ``AsyncOpenAI`` client per
endpoint, at most ``concurrency`` requests in flight across runs, one :class:`RateLimiter`.

The API key is read from the environment only (``SERIALKIT_API_KEY`` or ``OPENAI_API_KEY``) and is
never logged, recorded in a transcript, written to an output file or put in an error message.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
import re
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from serialkit.core.errors import ProposerError
from serialkit.harness.prompts import estimate_tokens, messages, upper_bound_tokens
from serialkit.harness.proposers.base import CallUsage, Reply, Request
from serialkit.harness.proposers.errors import (
    EndpointAuthError,
    EndpointError,
    EndpointNotFound,
    EndpointRateLimited,
    EndpointRefused,
    EndpointRequestError,
    EndpointResponseError,
    EndpointServerError,
    EndpointTimeout,
    EndpointUnreachable,
)
from serialkit.harness.proposers.limits import Limits, RateLimiter, Reservation
from serialkit.harness.schemas import load_schema

KEY_VARIABLES = ("SERIALKIT_API_KEY", "OPENAI_API_KEY")
DEFAULT_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"
#: expected completion tokens of a call before any reply was seen (the TPM limit's first guess)
COMPLETION_GUESS = 600
#: the largest reply body read (``max_reply_bytes``): the bank's longest section answer is under 9 kB,
#: so this leaves a verbose model a hundredfold room; a reply over it is an error of the server's
DEFAULT_MAX_REPLY_BYTES = 1_000_000
T = TypeVar("T")


def api_key() -> str | None:
    """The API key from the environment (None when unset: local servers often need none)."""
    for name in KEY_VARIABLES:
        value = os.environ.get(name)
        if value:
            return value
    return None


def base_url_from_env() -> str | None:
    """``SERIALKIT_BASE_URL`` or ``OPENAI_BASE_URL``."""
    return os.environ.get("SERIALKIT_BASE_URL") or os.environ.get("OPENAI_BASE_URL")


def configured() -> bool:
    """True when an endpoint or key is configured in the environment."""
    return bool(api_key() or base_url_from_env())


def redact(text: str) -> str:
    """``text`` without the API key or anything shaped like one."""
    key = api_key()
    if key:
        text = text.replace(key, "[key]")
    return re.sub(r"\bsk-[A-Za-z0-9_*.\-]{6,}", "[key]", text)


# ---------------------------------------------------------------------------------------------
# per-call state shared with the HTTP client's hooks (a context variable: one per thread / task)


@dataclass
class _CallState:
    limiter: RateLimiter | None
    endpoint: Endpoint | None
    tokens: int
    max_bytes: int | None = None
    tries: int = 0
    reservations: list[Reservation] = field(default_factory=list)
    content_type: str | None = None  # of the latest answer (what a reply that is no JSON was)


_CALL: contextvars.ContextVar[_CallState | None] = contextvars.ContextVar("serialkit_openai_call", default=None)


def _count(state: _CallState) -> None:
    state.tries += 1
    if state.endpoint is not None:
        state.endpoint.stats.sent()


def _after(response: Any) -> None:
    """The answer to the latest try: count it, give its token back, pause if the server asks, and
    bound its body (before it is read) to ``max_reply_bytes``."""
    state = _CALL.get()
    if state is None:
        return
    if state.endpoint is not None:
        state.endpoint.stats.answered(response.status_code)
    if state.limiter is not None:
        if state.reservations:
            state.limiter.finish(state.reservations[-1])
        state.limiter.observe(response.status_code, response.headers)
    state.content_type = response.headers.get("content-type")
    if state.max_bytes is not None:
        _cap_body(response, state.max_bytes)


class ReplyTooLarge(Exception):
    """A reply body longer than ``max_reply_bytes`` (raised as the SDK's own error class, see
    :func:`_too_large`, so that it neither retries nor wraps it)."""

    def __init__(self, limit: int, announced: int | None = None) -> None:
        self.limit = limit
        self.announced = announced
        said = f"is {announced:,} bytes, over" if announced is not None else "went past"
        super().__init__(f"the reply {said} the limit of {limit:,} bytes (-O max_reply_bytes=N); "
                         "it was not read further")


_TOO_LARGE: dict[str, type[ReplyTooLarge]] = {}


def _too_large(limit: int, announced: int | None = None) -> ReplyTooLarge:
    """A :class:`ReplyTooLarge` that is also an ``openai.OpenAIError``: the SDK passes its own
    errors on as they are (any other exception while reading a body it retries, then wraps)."""
    cls = _TOO_LARGE.get("cls")
    if cls is None:
        import openai

        cls = _TOO_LARGE["cls"] = type("ReplyTooLarge", (ReplyTooLarge, openai.OpenAIError), {})
    return cls(limit, announced)


def _cap_body(response: Any, limit: int) -> None:
    """Refuse a body announced longer than ``limit`` at once; stop reading one that grows past it
    (a body without a length, or one longer than it said)."""
    import importlib

    try:
        announced = int(response.headers.get("content-length", ""))
    except ValueError:
        announced = None
    if announced is not None and announced > limit:  # the client closes the response
        raise _too_large(limit, announced)
    httpx = importlib.import_module(type(response).__module__.split(".")[0])  # httpx, or the SDK's httpx2
    inner = response.stream

    class Sync(httpx.SyncByteStream):  # type: ignore[name-defined,misc]
        def __iter__(self) -> Any:
            seen = 0
            for chunk in inner:
                seen += len(chunk)
                if seen > limit:
                    raise _too_large(limit)
                yield chunk

        def close(self) -> None:
            inner.close()

    class Async(httpx.AsyncByteStream):  # type: ignore[name-defined,misc]
        async def __aiter__(self) -> Any:
            seen = 0
            async for chunk in inner:
                seen += len(chunk)
                if seen > limit:
                    raise _too_large(limit)
                yield chunk

        async def aclose(self) -> None:
            await inner.aclose()

    response.stream = Async() if isinstance(inner, httpx.AsyncByteStream) else Sync()


def _sync_request_hook(request: Any) -> None:
    state = _CALL.get()
    if state is None:
        return
    if state.limiter is not None:
        state.reservations.append(state.limiter.acquire(state.tokens))
    _count(state)


def _sync_response_hook(response: Any) -> None:
    _after(response)


async def _async_request_hook(request: Any) -> None:
    state = _CALL.get()
    if state is None:
        return
    if state.limiter is not None:
        state.reservations.append(await state.limiter.acquire_async(state.tokens))
    _count(state)


async def _async_response_hook(response: Any) -> None:
    _after(response)


def _release(state: _CallState) -> None:
    """Tries that never got an answer (timeouts, broken connections) give their tokens back now."""
    if state.limiter is not None:
        for res in state.reservations:
            state.limiter.finish(res)


# ---------------------------------------------------------------------------------------------


@dataclass
class EndpointStats:
    """What an endpoint saw: requests sent, answered, in flight (and the peak), pauses."""

    requests: int = 0
    answered_ok: int = 0
    failed: int = 0
    in_flight: int = 0
    peak: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def sent(self) -> None:
        with self._lock:
            self.requests += 1

    def answered(self, status: int) -> None:
        with self._lock:
            if status == 200:
                self.answered_ok += 1
            else:
                self.failed += 1

    def enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)

    def leave(self, prompt: int, completion: int) -> None:
        with self._lock:
            self.in_flight -= 1
            self.prompt_tokens += prompt
            self.completion_tokens += completion

    def to_dict(self) -> dict[str, int]:
        """JSON form."""
        with self._lock:
            return {"requests": self.requests, "ok": self.answered_ok, "failed": self.failed,
                    "in_flight": self.in_flight, "peak_in_flight": self.peak,
                    "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens}


class Endpoint:
    """One server for many runs: an asyncio loop in its own thread, an ``AsyncOpenAI`` client, at
    most ``concurrency`` requests in flight, one rate limiter. Proposers of runs in worker threads
    hand it their request coroutines and wait for the answers."""

    def __init__(self, base_url: str | None = None, concurrency: int = 8, limits: Limits | None = None,
                 timeout: float = 60.0, max_retries: int = 2) -> None:
        if concurrency < 1:
            raise ProposerError(f"--concurrency must be at least 1, not {concurrency}")
        self.base_url = _url(base_url)
        self.concurrency = concurrency
        self.limits = limits or Limits()
        # always: without limits it still pauses the endpoint when the server asks (429, x-ratelimit-*)
        self.limiter = RateLimiter(self.limits)
        self.timeout = timeout
        self.max_retries = max_retries
        self.stats = EndpointStats()
        #: False once the server refused JSON-schema output: every run asks in prose from then on
        self.structured = True
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="serialkit-endpoint", daemon=True)
        self._thread.start()
        self._semaphore = self.submit(self._make_semaphore())
        self._client: Any = None
        self._client_lock = threading.Lock()

    async def _make_semaphore(self) -> asyncio.Semaphore:
        return asyncio.Semaphore(self.concurrency)

    def client(self) -> Any:
        """The shared ``AsyncOpenAI`` client (created on first use)."""
        with self._client_lock:
            if self._client is None:
                self._client = _make_client(True, self.base_url, self.timeout, self.max_retries)
            return self._client

    def submit(self, coro: Awaitable[T]) -> T:
        """Run a coroutine on the endpoint's loop; block this thread until it is done."""
        async def wrapped() -> T:
            return await coro
        return asyncio.run_coroutine_threadsafe(wrapped(), self._loop).result()

    async def limited(self, fn: Callable[[], Awaitable[T]]) -> T:
        """``fn()`` within the concurrency limit, counted in flight."""
        async with self._semaphore:
            return await fn()

    def close(self) -> None:
        """Cancel requests still in flight (their runs were abandoned, e.g. by Ctrl-C or SIGTERM),
        close the client and stop the loop. Cancelling them on the loop lets each unwind in its
        own task; a loop stopped under pending tasks would leave them to be destroyed later
        ("Task was destroyed but it is pending!", a context variable reset in a foreign context)."""
        try:
            self.submit(self._cancel_pending())
        except Exception:  # noqa: BLE001 - closing must not hide the experiment's own outcome
            pass
        if self._client is not None:
            try:
                self.submit(self._client.close())
            except Exception:  # noqa: BLE001 - closing must not hide the experiment's own outcome
                pass
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)

    async def _cancel_pending(self) -> None:
        current = asyncio.current_task()
        pending = [t for t in asyncio.all_tasks() if t is not current]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    def __enter__(self) -> Endpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _url(base_url: str | None) -> str:
    url = (base_url or base_url_from_env() or DEFAULT_URL).rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ProposerError(f"openai proposer: base URL {url!r} must start with http:// or https://")
    return url


def refused(exc: BaseException) -> bool:
    """True when ``exc`` (or what caused it) is a refused connection."""
    import errno

    seen: BaseException | None = exc
    for _ in range(20):  # a cause chain, never a cycle
        if seen is None:
            return False
        if isinstance(seen, ConnectionRefusedError) or getattr(seen, "errno", None) == errno.ECONNREFUSED:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _refusing_transport(client_cls: Any, asynchronous: bool) -> Any:
    """The SDK's default transport, wrapped so that a refused connection raises the SDK's own
    ``APIConnectionError`` at once: the SDK passes its own errors on without retrying (it
    retries every other failure to connect)."""
    import importlib

    import openai

    base = next(c for c in client_cls.__mro__ if c.__name__ in ("Client", "AsyncClient"))
    httpx = importlib.import_module(base.__module__.split(".")[0])  # httpx, or the SDK's httpx2
    inner = (httpx.AsyncHTTPTransport if asynchronous else httpx.HTTPTransport)(
        limits=getattr(openai, "DEFAULT_CONNECTION_LIMITS", None) or httpx.Limits())

    def refusal(exc: Exception, request: Any) -> Exception | None:
        return openai.APIConnectionError(message="Connection refused.", request=request) if refused(exc) else None

    if asynchronous:
        class _Async(httpx.AsyncBaseTransport):  # type: ignore[name-defined,misc]
            async def handle_async_request(self, request: Any) -> Any:
                try:
                    return await inner.handle_async_request(request)
                except Exception as exc:
                    error = refusal(exc, request)
                    if error is None:
                        raise  # anything else: the SDK's to retry, as it always did
                    raise error from exc

            async def aclose(self) -> None:
                await inner.aclose()

        return _Async()

    class _Sync(httpx.BaseTransport):  # type: ignore[name-defined,misc]
        def handle_request(self, request: Any) -> Any:
            try:
                return inner.handle_request(request)
            except Exception as exc:
                error = refusal(exc, request)
                if error is None:
                    raise  # anything else: the SDK's to retry, as it always did
                raise error from exc

        def close(self) -> None:
            inner.close()

    return _Sync()


def _make_client(asynchronous: bool, base_url: str, timeout: float, max_retries: int) -> Any:
    import openai

    key = api_key()
    hooks: dict[str, list[Any]]
    if asynchronous:
        hooks = {"request": [_async_request_hook], "response": [_async_response_hook]}
        http: Any = openai.DefaultAsyncHttpxClient(
            event_hooks=hooks, transport=_refusing_transport(openai.DefaultAsyncHttpxClient, True))
    else:
        hooks = {"request": [_sync_request_hook], "response": [_sync_response_hook]}
        http = openai.DefaultHttpxClient(event_hooks=hooks,
                                         transport=_refusing_transport(openai.DefaultHttpxClient, False))
    # connecting may take at most 5 s (an unreachable host is not silent for minutes)
    options: dict[str, Any] = {
        "base_url": base_url, "max_retries": max_retries, "http_client": http,
        "timeout": openai.Timeout(timeout, connect=min(timeout, 5.0)),
    }
    cls = openai.AsyncOpenAI if asynchronous else openai.OpenAI
    if key:
        return cls(api_key=key, **options)
    try:  # a local server needs no key: no Authorization header (omitted per request, see _body)
        return cls(api_key=None, _enforce_credentials=False, **options)
    except TypeError:  # an SDK without that switch: a placeholder, as vLLM's documentation does
        return cls(api_key="EMPTY", **options)


class OpenAIProposer:
    """Chat completions over the ``openai`` SDK, alone (sync client) or on a shared :class:`Endpoint`."""

    def __init__(self, base_url: str | None = None, model: str | None = None, temperature: float = 0.7,
                 seed: int | None = 0, timeout: float = 60.0, max_retries: int = 2, structured: bool = True,
                 max_tokens: int | None = None, endpoint: Endpoint | None = None,
                 limits: Limits | None = None, max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES) -> None:
        if max_retries < 0:
            raise ProposerError(f"openai proposer: max_retries must be 0 or more, not {max_retries}")
        if isinstance(max_reply_bytes, bool) or not isinstance(max_reply_bytes, int) or max_reply_bytes < 1:
            raise ProposerError(f"openai proposer: max_reply_bytes must be a whole number of bytes, 1 or more, "
                                f"not {max_reply_bytes!r}")
        if timeout <= 0:
            raise ProposerError(f"openai proposer: timeout must be positive, not {timeout}")
        self.endpoint = endpoint
        self.base_url = endpoint.base_url if endpoint is not None else _url(base_url)
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

    def _propose_sync(self, request: Request) -> Reply:
        if self._client is None:
            self._client = _make_client(False, self.base_url, self.timeout, self.max_retries)
        started = time.perf_counter()
        usage = CallUsage(tries=0)
        while True:
            body = self._body(request, self.structured)
            state = _CallState(self._limiter, None, self._expected_tokens(body), self.max_reply_bytes)
            token = _CALL.set(state)
            try:
                response = self._client.chat.completions.create(**body)
            except Exception as exc:  # noqa: BLE001 - mapped to serialkit's errors below
                usage.tries += state.tries
                if self._fallback(exc):
                    continue
                raise self._error(exc, usage.tries, state) from None
            finally:
                _CALL.reset(token)
                _release(state)
            usage.tries += state.tries
            return self._reply(response, request, usage, started, state)

    async def _propose_async(self, request: Request) -> Reply:
        assert self.endpoint is not None
        client = self.endpoint.client()
        stats = self.endpoint.stats
        started = time.perf_counter()
        usage = CallUsage(tries=0)
        stats.enter()
        prompt = completion = 0
        try:
            while True:
                body = self._body(request, self.structured)
                state = _CallState(self._limiter, self.endpoint, self._expected_tokens(body),
                                   self.max_reply_bytes)
                token = _CALL.set(state)
                try:
                    response = await client.chat.completions.create(**body)
                except Exception as exc:  # noqa: BLE001 - mapped to serialkit's errors below
                    usage.tries += state.tries
                    if self._fallback(exc):
                        continue
                    raise self._error(exc, usage.tries, state) from None
                finally:
                    _CALL.reset(token)
                    _release(state)
                usage.tries += state.tries
                reply = self._reply(response, request, usage, started, state)
                prompt, completion = usage.prompt_tokens, usage.completion_tokens
                return reply
        finally:
            stats.leave(prompt, completion)

    def _fallback(self, exc: Exception) -> bool:
        """True (and prose from now on) when the server refused JSON-schema output."""
        import openai

        if (self.structured and isinstance(exc, openai.BadRequestError)
                and "response_format" in _server_message(exc)):
            self.structured = False
            if self.endpoint is not None:
                self.endpoint.structured = False
            return True
        return False

    def _error(self, exc: Exception, tries: int, state: _CallState | None = None) -> EndpointError:
        """The serialkit error for an SDK exception (the message names endpoint and status, and
        says in plain words what a reply that is no chat completion was)."""
        import openai

        where, model = self.base_url, self.model
        if isinstance(exc, ReplyTooLarge):
            return EndpointResponseError(where, str(exc), 200, tries, model)
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            text = redact(_server_message(exc))
            if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
                source = "no API key set" if api_key() is None else "the API key was refused"
                return EndpointAuthError(where, f"{source} ({text}); the key is read from "
                                                f"{' or '.join(KEY_VARIABLES)}", status, tries, model)
            if isinstance(exc, openai.NotFoundError):
                return EndpointNotFound(where, f"no such model or URL ({text})", status, tries, model)
            if isinstance(exc, openai.RateLimitError):
                return EndpointRateLimited(where, f"rate limited until the retries ran out ({text})",
                                           status, tries, model)
            if status >= 500 or status in (408, 409):
                return EndpointServerError(where, f"server error until the retries ran out ({text})",
                                           status, tries, model)
            return EndpointRequestError(where, f"request refused ({text})", status, tries, model)
        if isinstance(exc, openai.APITimeoutError):
            return EndpointTimeout(where, f"no answer within {self.timeout:g} s", None, tries, model)
        if isinstance(exc, openai.APIConnectionError) and refused(exc):
            url = exc.request.url  # the SDK's request: where the connection was refused
            port = url.port or (443 if url.scheme == "https" else 80)
            return EndpointRefused(where, f"nothing listens at {url.host}:{port} (is the server running?)",
                                   None, tries, model)
        if isinstance(exc, openai.APIConnectionError):
            return EndpointUnreachable(where, f"cannot connect ({redact(_cause(exc))})", None, tries, model)
        if isinstance(exc, ValueError):  # a 200 whose body is not JSON, though it says it is
            ctype = state.content_type if state is not None else None
            doc = exc.doc if isinstance(exc, json.JSONDecodeError) else None
            return EndpointResponseError(where, _not_a_completion(ctype, doc, exc), 200, tries, model)
        # nothing the SDK or serialkit expects: say what failed, as it is (a bug to report)
        return EndpointResponseError(where, redact(f"the reply could not be read ({type(exc).__name__}: {exc})"),
                                     None, tries, model)

    def _reply(self, response: Any, request: Request, usage: CallUsage, started: float,
               state: _CallState) -> Reply:
        usage.seconds = time.perf_counter() - started

        def refuse(detail: str) -> EndpointResponseError:
            return EndpointResponseError(self.base_url, detail, 200, usage.tries, self.model)

        if isinstance(response, str | bytes):  # the SDK hands back the text of a body that is no JSON
            body = response.decode("utf-8", "replace") if isinstance(response, bytes) else response
            raise refuse(_not_a_completion(state.content_type, body)) from None
        choices: Any = getattr(response, "choices", None)
        if choices is None or isinstance(choices, list) and not choices:
            raise refuse("not a chat completion (the reply has no choices)") from None
        if not isinstance(choices, list):
            raise refuse(f"not a chat completion (its choices are {_kind(choices)}, not a list)") from None
        choice = choices[0]
        message = _field(choice, "message")
        if message is None:
            raise refuse("not a chat completion (its first choice has no message)")
        text = _field(message, "content")
        asked = messages(request)
        prompt = "".join(m["content"] for m in asked)
        reported, unreadable = _token_counts(getattr(response, "usage", None))
        # a count the server did not give is estimated; one it gave but that cannot be read is
        # charged at its upper bound (a budget stops early rather than late), and the call says so
        if "prompt_tokens" in unreadable:
            usage.prompt_tokens = upper_bound_tokens(prompt, len(asked))
        else:
            usage.prompt_tokens = reported.get("prompt_tokens") or estimate_tokens(prompt)
        if "completion_tokens" in unreadable:
            usage.completion_tokens = (upper_bound_tokens(text) if isinstance(text, str)
                                       else self.max_tokens or COMPLETION_GUESS)
        else:
            usage.completion_tokens = reported.get("completion_tokens") or estimate_tokens(text or "")
        if unreadable:
            usage.unreadable = ", ".join(f"{k} {v}" for k, v in unreadable.items())
        if self._limiter is not None and state.reservations:
            self._limiter.finish(state.reservations[-1], usage.prompt_tokens + usage.completion_tokens)
        if not isinstance(text, str):
            usage.status = "error"
            return Reply(None, usage, "the response has no message content")
        return Reply(text, usage, cut_off=getattr(choice, "finish_reason", None) == "length")


def _token_counts(counts: Any) -> tuple[dict[str, int], dict[str, str]]:
    """The server's ``usage`` block read: ({field: count} of the counts it gave as whole numbers of
    0 or more, {field: what it gave} of those it gave otherwise). A count left out (or null) is in
    neither; a block that is no object makes both counts unreadable."""
    fields = ("prompt_tokens", "completion_tokens")
    if counts is None:
        return {}, {}
    if isinstance(counts, str | int | float | list | bool):
        shown = _shown(counts)
        return {}, {name: f"(usage {shown})" for name in fields}
    good: dict[str, int] = {}
    bad: dict[str, str] = {}
    for name in fields:
        value = counts.get(name) if isinstance(counts, dict) else getattr(counts, name, None)
        if value is None:
            continue
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            good[name] = value
        else:
            bad[name] = _shown(value)
    return good, bad


def _field(obj: Any, name: str) -> Any:
    """``obj.name`` or ``obj[name]`` (the SDK builds what it can of a reply that does not fit its
    model: an object, or the plain value the server sent); None when there is none."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _kind(value: Any) -> str:
    """What a JSON value is, in words (for a reply of the wrong shape)."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "true or false", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), "an object")


def _not_a_completion(content_type: str | None, body: str | None, exc: Exception | None = None) -> str:
    """What a 200 reply that is no chat completion is, in plain words: a streamed reply, a page of
    another type, JSON that breaks off — never the parser's exception."""
    ctype = (content_type or "").split(";")[0].strip().lower()
    text = (body or "").lstrip()
    if ctype == "text/event-stream" or text.startswith(("data:", "event:")):
        return ("a streamed (text/event-stream) reply; serialkit asks for stream=false and reads one chat "
                "completion (does the server honour stream=false?)")
    start = f", beginning {_shown(redact(' '.join(text[:60].split())))}" if text else ", empty"
    if ctype and not ctype.endswith("json"):
        return f"the reply is {ctype}, not a chat completion{start}"
    if isinstance(exc, json.JSONDecodeError):
        cut = exc.msg.startswith("Unterminated") or exc.pos >= len(exc.doc.rstrip())
        where = f"breaks off after {len(exc.doc):,} characters" if cut else (
            f"is malformed at character {exc.pos + 1:,} of {len(exc.doc):,}")
        return f"the reply is not valid JSON: it {where}{start}"
    if body is not None:
        return f"the reply is not JSON{' (' + ctype + ')' if ctype else ''}, not a chat completion{start}"
    return "the reply is not JSON, not a chat completion"


def _shown(value: Any) -> str:
    """A value the server sent, quoted for a message (shortened)."""
    text = json.dumps(value) if isinstance(value, str | int | float | bool | list | dict) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _server_message(exc: Any) -> str:
    """The message of an error body, shortened to one line."""
    body = getattr(exc, "body", None)
    msg: Any = None
    if isinstance(body, dict):
        err = body.get("error", body)
        msg = err.get("message") if isinstance(err, dict) else err
    if msg is None:
        response = getattr(exc, "response", None)
        try:
            data = json.loads(response.text) if response is not None else None
            err = data.get("error") if isinstance(data, dict) else None
            msg = err.get("message") if isinstance(err, dict) else err
        except (ValueError, AttributeError):
            msg = getattr(response, "text", None)
    text = str(msg or getattr(exc, "message", "") or "no message")
    return " ".join(text.split())[:200]


def _cause(exc: BaseException) -> str:
    """The innermost cause's message (e.g. 'Connection refused')."""
    inner: BaseException = exc
    seen = {id(exc)}
    while (nxt := inner.__cause__ or inner.__context__) is not None and id(nxt) not in seen:  # never a cycle
        seen.add(id(nxt))
        inner = nxt
    text = str(inner) or type(inner).__name__
    return " ".join(text.split())[:200]
