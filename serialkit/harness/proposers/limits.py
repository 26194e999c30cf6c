"""Rate limits per endpoint: requests and tokens per window, pauses the server asks for.

Every HTTP try (the SDK's own retries included) takes a token before it is sent and holds it until
one window after its answer came back (or its failure was seen). A request waits while ``rpm``
tokens are held, or while the tokens held plus its own (its prompt estimate and the expected
completion, settled to the real count once the reply is in) would pass ``tpm``. Since a token is
held until a window after the server answered, no window of that length — wherever it starts, on
the server's clock too — sees more requests than the limit. A 429's ``Retry-After`` and
``x-ratelimit-remaining-* = 0`` with ``x-ratelimit-reset-*`` pause the whole endpoint.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from typing import Any

from serialkit.core.errors import ProposerError

#: guard against clock granularity: a token comes back slightly late
MARGIN = 0.01
#: how often a waiting request looks again while every held token is still in flight
POLL = 0.02


@dataclass(frozen=True)
class RateLimits:
    """Requests and tokens per ``window`` seconds (60: per minute); None = no limit."""

    rpm: int | None = None
    tpm: int | None = None
    window: float = 60.0

    def __post_init__(self) -> None:
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ProposerError(f"--{name} must be at least 1, not {value}")
        if self.window <= 0:
            raise ProposerError(f"rate window must be positive, not {self.window}")

    @property
    def active(self) -> bool:
        """True when some limit is set."""
        return self.rpm is not None or self.tpm is not None


class Reservation:
    """One HTTP try's token: when it was taken, when its answer came (None: in flight), its tokens."""

    __slots__ = ("at", "done", "tokens")

    def __init__(self, at: float, tokens: int) -> None:
        self.at = at
        self.done: float | None = None
        self.tokens = tokens


class RateLimiter:
    """Thread-safe; :meth:`try_acquire` gives a token or the time to wait before asking again
    (:meth:`acquire` sleeps, :meth:`acquire_async` awaits)."""

    def __init__(self, limits: RateLimits, clock: Any = time.monotonic) -> None:
        self.limits = limits
        self.clock = clock
        self._held: list[Reservation] = []
        self._lock = threading.Lock()
        self.paused_until = 0.0
        self.pauses = 0
        self.waits = 0

    def try_acquire(self, tokens: int = 0) -> tuple[Reservation | None, float]:
        """(token, 0) when the request may go now, else (None, seconds to wait before asking again)."""
        lim = self.limits
        span = lim.window + MARGIN
        with self._lock:
            now = self.clock()
            self._held = [r for r in self._held if r.done is None or r.done + span > now]
            if now < self.paused_until:
                return None, self.paused_until - now
            releases = sorted(r.done + span for r in self._held if r.done is not None)
            wait = 0.0
            if lim.rpm is not None and len(self._held) >= lim.rpm:
                # the earliest release that brings the count under the limit (or look again soon)
                excess = len(self._held) - lim.rpm
                wait = releases[excess] - now if excess < len(releases) else POLL
            if lim.tpm is not None:
                held = sum(r.tokens for r in self._held)
                need = min(tokens, lim.tpm)
                if held + need > lim.tpm:
                    wait = max(wait, (releases[0] - now) if releases else POLL)
            if wait > 0:
                self.waits += 1
                return None, max(wait, 0.001)
            res = Reservation(now, tokens)
            self._held.append(res)
            return res, 0.0

    def acquire(self, tokens: int = 0) -> Reservation:
        """A token, sleeping until one is free."""
        while True:
            res, wait = self.try_acquire(tokens)
            if res is not None:
                return res
            time.sleep(min(wait, 1.0))

    async def acquire_async(self, tokens: int = 0) -> Reservation:
        """A token, awaiting until one is free."""
        import asyncio

        while True:
            res, wait = self.try_acquire(tokens)
            if res is not None:
                return res
            await asyncio.sleep(min(wait, 1.0))

    def finish(self, res: Reservation, tokens: int | None = None) -> None:
        """The try was answered (or failed) now: its token comes back one window later."""
        with self._lock:
            if res.done is None:
                res.done = self.clock()
            if tokens is not None:
                res.tokens = tokens

    def pause(self, seconds: float) -> None:
        """No request starts for ``seconds`` (the server asked)."""
        if seconds <= 0:
            return
        with self._lock:
            until = self.clock() + seconds
            if until > self.paused_until:
                self.paused_until = until
                self.pauses += 1

    def observe(self, status: int, headers: Any) -> float:
        """Pause as a response's headers ask; returns the pause taken (0 when none)."""
        delay = 0.0
        if status == 429:
            delay = retry_after(headers) or 0.0
        for kind in ("requests", "tokens"):
            remaining = headers.get(f"x-ratelimit-remaining-{kind}")
            if remaining is not None and remaining.strip() in ("0", "0.0"):
                delay = max(delay, duration(headers.get(f"x-ratelimit-reset-{kind}")) or 0.0)
        self.pause(delay)
        return delay


def retry_after(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (number of seconds), if given."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            continue
    return None


_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration(text: str | None) -> float | None:
    """Seconds of an ``x-ratelimit-reset-*`` value: ``1s``, ``6m0s``, ``20ms``, ``0.5``."""
    if not text:
        return None
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        pass
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text)
    if not parts:
        return None
    return sum(float(n) * _UNITS[u] for n, u in parts)
