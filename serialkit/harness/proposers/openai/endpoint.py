"""The :class:`Endpoint`: one model server shared by an experiment's runs (one asyncio loop and
``AsyncOpenAI`` client, at most ``concurrency`` requests in flight across runs, one rate limiter)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from serialkit.core.errors import ProposerError
from serialkit.harness.proposers.limits import RateLimiter, RateLimits
from serialkit.harness.proposers.openai.env import endpoint_url
from serialkit.harness.proposers.openai.transport import EndpointStats, make_client

T = TypeVar("T")


class Endpoint:
    """One server for many runs: an asyncio loop in its own thread, an ``AsyncOpenAI`` client, at
    most ``concurrency`` requests in flight, one rate limiter. Proposers of runs in worker threads
    hand it their request coroutines and wait for the answers."""

    def __init__(self, base_url: str | None = None, concurrency: int = 8, limits: RateLimits | None = None,
                 timeout: float = 60.0, max_retries: int = 2) -> None:
        if concurrency < 1:
            raise ProposerError(f"--concurrency must be at least 1, not {concurrency}")
        self.base_url = endpoint_url(base_url)
        self.concurrency = concurrency
        self.limits = limits or RateLimits()
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
                self._client = make_client(True, self.base_url, self.timeout, self.max_retries)
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

