"""The endpoint limiter: no window holds more than the limit, wherever it starts and whatever the
latencies; pauses from Retry-After and x-ratelimit-* headers."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from serialkit.core.errors import ProposerError
from serialkit.harness.proposers.limits import RateLimiter, RateLimits, duration, retry_after
from tests.harness.fake_openai import max_in_window


def _simulate(limits: RateLimits, latencies: list[tuple[float, float]], tokens: list[int], concurrency: int,
              ) -> tuple[list[float], list[tuple[float, int]]]:
    """Requests sent as fast as the limiter and ``concurrency`` allow, on a simulated clock; each
    arrives at the server ``share`` of its latency after it was sent. (arrivals, (arrival, tokens))."""
    now = [0.0]
    limiter = RateLimiter(limits, clock=lambda: now[0])
    todo = list(zip(latencies, tokens, strict=True))
    flight: list[tuple[float, object, int]] = []
    arrivals: list[float] = []
    spent: list[tuple[float, int]] = []
    while todo or flight:
        next_send = math.inf
        if todo and len(flight) < concurrency:
            (latency, share), count = todo[0]
            res, wait = limiter.try_acquire(count)
            if res is not None:
                todo.pop(0)
                arrival = now[0] + share * latency
                arrivals.append(arrival)
                spent.append((arrival, count))
                flight.append((now[0] + latency, res, count))
                continue
            next_send = now[0] + wait
        next_done = min((d for d, _, _ in flight), default=math.inf)
        now[0] = min(next_send, next_done)
        for item in [f for f in flight if f[0] <= now[0]]:
            flight.remove(item)
            limiter.finish(item[1], item[2])  # type: ignore[arg-type]
    return arrivals, spent


requests = st.lists(st.tuples(st.floats(0.0, 3.0), st.floats(0.0, 1.0)), min_size=1, max_size=60)


@settings(max_examples=60, deadline=None)
@given(requests, st.integers(1, 8), st.integers(1, 12), st.floats(0.5, 5.0))
def test_no_window_holds_more_requests_than_the_limit(reqs: list[tuple[float, float]], rpm: int,
                                                      concurrency: int, window: float) -> None:
    arrivals, _ = _simulate(RateLimits(rpm=rpm, window=window), reqs, [0] * len(reqs), concurrency)
    assert len(arrivals) == len(reqs)  # every request is sent in the end
    assert max_in_window(arrivals, window) <= rpm


@settings(max_examples=60, deadline=None)
@given(requests, st.integers(100, 1000), st.data())
def test_no_window_holds_more_tokens_than_the_limit(reqs: list[tuple[float, float]], tpm: int,
                                                    data: st.DataObject) -> None:
    tokens = data.draw(st.lists(st.integers(1, tpm), min_size=len(reqs), max_size=len(reqs)))
    _, spent = _simulate(RateLimits(tpm=tpm, window=2.0), reqs, tokens, 6)
    spent.sort()
    for i, (start, _) in enumerate(spent):
        inside = sum(n for t, n in spent[i:] if t <= start + 2.0)
        assert inside <= tpm


def test_retry_after_and_ratelimit_headers_pause_the_endpoint() -> None:
    now = [10.0]
    limiter = RateLimiter(RateLimits(), clock=lambda: now[0])
    assert limiter.observe(429, {"retry-after": "2"}) == 2.0
    res, wait = limiter.try_acquire()
    assert res is None and wait == pytest.approx(2.0)
    now[0] = 12.0
    assert limiter.try_acquire()[0] is not None
    assert limiter.observe(200, {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1m30s"}) == 90
    assert limiter.observe(200, {"x-ratelimit-remaining-tokens": "5", "x-ratelimit-reset-tokens": "1s"}) == 0
    assert limiter.observe(429, {"retry-after-ms": "250"}) == 0.25


@pytest.mark.parametrize(("text", "seconds"), [("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("0.5", 0.5),
                                               ("1h2m", 3720.0), ("", None), ("soon", None)])
def test_reset_durations(text: str, seconds: float | None) -> None:
    assert duration(text) == seconds


def test_retry_after_forms_and_bad_limits() -> None:
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None
    assert retry_after({}) is None
    with pytest.raises(ProposerError, match="--rpm must be at least 1"):
        RateLimits(rpm=0)
