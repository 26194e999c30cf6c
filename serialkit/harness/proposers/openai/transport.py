"""The HTTP layer under the ``openai`` SDK: per-call state the client's event hooks share, the
hooks (count every try, pass it through the rate limiter, bound the reply body), the transport
that turns a refused connection into an error at once, and the client built with them.

The SDK retries 408/409/429/5xx, timeouts and connection errors itself (``max_retries``, honouring
``Retry-After``), but not a refused connection: nothing listens there, so trying again only waits.
"""

from __future__ import annotations

import contextvars
import threading
from dataclasses import dataclass, field
from typing import Any

from serialkit.harness.proposers.limits import RateLimiter, Reservation
from serialkit.harness.proposers.openai.env import api_key


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


# ---------------------------------------------------------------------------------------------
# per-call state shared with the HTTP client's hooks (a context variable: one per thread / task)


@dataclass
class CallState:
    """What the hooks need to know of the call in progress, and what they saw of it."""

    limiter: RateLimiter | None
    stats: EndpointStats | None
    tokens: int
    max_bytes: int | None = None
    tries: int = 0
    reservations: list[Reservation] = field(default_factory=list)
    content_type: str | None = None  # of the latest answer (what a reply that is no JSON was)


CALL: contextvars.ContextVar[CallState | None] = contextvars.ContextVar("serialkit_openai_call", default=None)


def _count(state: CallState) -> None:
    state.tries += 1
    if state.stats is not None:
        state.stats.sent()


def _after(response: Any) -> None:
    """The answer to the latest try: count it, give its token back, pause if the server asks, and
    bound its body (before it is read) to ``max_reply_bytes``."""
    state = CALL.get()
    if state is None:
        return
    if state.stats is not None:
        state.stats.answered(response.status_code)
    if state.limiter is not None:
        if state.reservations:
            state.limiter.finish(state.reservations[-1])
        state.limiter.observe(response.status_code, response.headers)
    state.content_type = response.headers.get("content-type")
    if state.max_bytes is not None:
        _cap_body(response, state.max_bytes)


class ReplyTooLarge(Exception):
    """A reply body longer than ``max_reply_bytes`` (raised as the SDK's own error class, see
    :func:`too_large`, so that it neither retries nor wraps it)."""

    def __init__(self, limit: int, announced: int | None = None) -> None:
        self.limit = limit
        self.announced = announced
        said = f"is {announced:,} bytes, over" if announced is not None else "went past"
        super().__init__(f"the reply {said} the limit of {limit:,} bytes (-O max_reply_bytes=N); "
                         "it was not read further")


_TOO_LARGE: dict[str, type[ReplyTooLarge]] = {}


def too_large(limit: int, announced: int | None = None) -> ReplyTooLarge:
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
        raise too_large(limit, announced)
    httpx = importlib.import_module(type(response).__module__.split(".")[0])  # httpx, or the SDK's httpx2
    inner = response.stream

    class Sync(httpx.SyncByteStream):  # type: ignore[name-defined,misc]
        def __iter__(self) -> Any:
            seen = 0
            for chunk in inner:
                seen += len(chunk)
                if seen > limit:
                    raise too_large(limit)
                yield chunk

        def close(self) -> None:
            inner.close()

    class Async(httpx.AsyncByteStream):  # type: ignore[name-defined,misc]
        async def __aiter__(self) -> Any:
            seen = 0
            async for chunk in inner:
                seen += len(chunk)
                if seen > limit:
                    raise too_large(limit)
                yield chunk

        async def aclose(self) -> None:
            await inner.aclose()

    response.stream = Async() if isinstance(inner, httpx.AsyncByteStream) else Sync()


def _sync_request_hook(request: Any) -> None:
    state = CALL.get()
    if state is None:
        return
    if state.limiter is not None:
        state.reservations.append(state.limiter.acquire(state.tokens))
    _count(state)


def _sync_response_hook(response: Any) -> None:
    _after(response)


async def _async_request_hook(request: Any) -> None:
    state = CALL.get()
    if state is None:
        return
    if state.limiter is not None:
        state.reservations.append(await state.limiter.acquire_async(state.tokens))
    _count(state)


async def _async_response_hook(response: Any) -> None:
    _after(response)


def release(state: CallState) -> None:
    """Tries that never got an answer (timeouts, broken connections) give their tokens back now."""
    if state.limiter is not None:
        for res in state.reservations:
            state.limiter.finish(res)


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


def make_client(asynchronous: bool, base_url: str, timeout: float, max_retries: int) -> Any:
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
