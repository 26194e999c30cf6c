"""Limits per endpoint: requests and tokens per window, pauses the server asks for.

Every HTTP try (the SDK's own retries included) takes a reservation before it is sent. The
reservations of one endpoint are kept in time order; a request waits until fewer than ``rpm``
reservations lie within the last ``window`` seconds and the tokens reserved there leave room for
its own (its prompt estimate plus the expected completion, settled to the real count once the
reply is in). Each token comes back exactly one window after it was taken, so no window of that
length — wherever it starts — holds more than the limit. A 429's ``Retry-After`` and
``x-ratelimit-remaining-* = 0`` with ``x-ratelimit-reset-*`` pause the whole endpoint.
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from serialkit.core.errors import ProposerError

#: guard against clock granularity between client and server: a token returns slightly late
MARGIN = 0.01


@dataclass(frozen=True)
class Limits:
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
    """One HTTP try's place in the window and the tokens it holds."""

    __slots__ = ("at", "tokens")

    def __init__(self, at: float, tokens: int) -> None:
        self.at = at
        self.tokens = tokens


class RateLimiter:
    """Thread-safe; :meth:`reserve` returns how long to wait (sleep it, or ``await`` it)."""

    def __init__(self, limits: Limits, clock: Any = time.monotonic) -> None:
        self.limits = limits
        self.clock = clock
        self._log: deque[Reservation] = deque()
        self._lock = threading.Lock()
        self.paused_until = 0.0
        self.pauses = 0

    def _forget(self, now: float) -> None:
        horizon = now - self.limits.window - MARGIN
        while self._log and self._log[0].at <= horizon:
            self._log.popleft()

    def reserve(self, tokens: int = 0) -> tuple[float, Reservation]:
        """(seconds to wait, reservation) for one request expected to use ``tokens``."""
        lim = self.limits
        with self._lock:
            now = self.clock()
            self._forget(now)
            at = max(now, self.paused_until, self._log[-1].at if self._log else now)
            span = lim.window + MARGIN
            if lim.rpm is not None and len(self._log) >= lim.rpm:
                at = max(at, self._log[-lim.rpm].at + span)
            if lim.tpm is not None:
                need = min(tokens, lim.tpm)
                held = sum(r.tokens for r in self._log if r.at > at - span)
                for r in self._log:  # oldest first: wait until enough of them have left the window
                    if held + need <= lim.tpm:
                        break
                    if r.at > at - span:
                        held -= r.tokens
                        at = max(at, r.at + span)
            res = Reservation(at, tokens)
            self._log.append(res)
            return max(0.0, at - now), res

    def settle(self, res: Reservation, tokens: int) -> None:
        """The real token count of a finished request."""
        with self._lock:
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
