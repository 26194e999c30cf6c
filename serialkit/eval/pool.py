"""Runs in parallel: a pool of processes (local proposers) or threads (remote ones) that keeps
``jobs`` runs in flight, run starts paced by :class:`StartPacer`; the parent alone records them.
Ctrl-C and SIGTERM stop new starts and let the runs in flight finish; a second one abandons them."""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import os
import signal
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from serialkit.eval.execute import attempt, shared_options
from serialkit.eval.monitor import Monitor
from serialkit.eval.plan import RunSpec
from serialkit.eval.store import RunStore
from serialkit.interrupts import Interruptions, held_back, ignore_in_worker

POLL = 0.2  # seconds between looks at the interruption flag while runs are in flight


class StartPacer:
    """At most ``rate`` run starts per second (a token bucket of size 1), thread-safe."""

    def __init__(self, rate: float | None) -> None:
        self.interval = 1.0 / rate if rate else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        """Sleep until the next run may start."""
        if not self.interval:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            time.sleep(start - now)


def run_pool(todo: Sequence[RunSpec], jobs: int, threads: bool, pacer: StartPacer,
             store: RunStore, record: Callable[[RunSpec, Path, dict[str, Any]], None],
             may_start: Callable[[], bool], endpoints: dict[int, Any], monitor: Monitor) -> bool:
    """Keep ``jobs`` runs in flight; the parent alone writes records. True when interrupted."""
    pool: cf.Executor
    if threads:
        pool = cf.ThreadPoolExecutor(max_workers=jobs)
    else:
        pool = cf.ProcessPoolExecutor(max_workers=jobs, initializer=ignore_in_worker)
    pending = iter(todo)
    flight: dict[cf.Future[dict[str, Any]], tuple[RunSpec, Path]] = {}
    interrupted = False

    def submit() -> bool:
        if not may_start():
            return False
        spec = next(pending, None)
        if spec is None:
            return False
        pacer.wait()
        tmp = store.tmp_dir(spec.key, uuid.uuid4().hex[:8])
        with held_back(not threads):  # a worker forked here starts with Ctrl-C held back
            future = pool.submit(attempt, spec, str(tmp), shared_options(spec, endpoints))
        flight[future] = (spec, tmp)
        monitor.running = len(flight)
        return True

    signals = Interruptions()
    try:
        with signals.noted():  # Ctrl-C and SIGTERM only set a flag here, never interrupt a lock
            while len(flight) < jobs and not signals.count and submit():
                pass
            while flight and signals.count < 2:  # a second Ctrl-C abandons the runs in flight
                ready, _ = cf.wait(flight, timeout=POLL, return_when=cf.FIRST_COMPLETED)
                for future in ready:
                    spec, tmp = flight.pop(future)
                    monitor.running = len(flight)
                    record(spec, tmp, _result(spec, future))
                    if not signals.count:
                        submit()
        interrupted = bool(signals.count)
    except KeyboardInterrupt:  # not the main thread (no handlers of ours), or from a callback
        interrupted = True
        try:  # finish and record what is in flight; a second Ctrl-C abandons it
            for future in cf.as_completed(list(flight)):
                spec, tmp = flight.pop(future)
                record(spec, tmp, _result(spec, future))
        except KeyboardInterrupt:
            pass
    finally:
        workers = list(getattr(pool, "_processes", None) or {}) if interrupted else []
        pool.shutdown(wait=not interrupted, cancel_futures=True)
        _end_workers(workers)
        monitor.running = 0
    return interrupted


def _end_workers(pids: Sequence[int]) -> None:
    """End the process workers of an interrupted pool: the runs they held are recorded (or were
    abandoned by a second Ctrl-C), and a worker left behind — one that cannot end by itself — must
    not keep the runner (joining its pool at exit) or the machine waiting."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _result(spec: RunSpec, future: cf.Future[dict[str, Any]]) -> dict[str, Any]:
    try:
        return future.result()
    except Exception as exc:  # a worker that died (BrokenProcessPool) fails only its runs
        return {"key": spec.key, "error": f"{type(exc).__name__}: {exc}"}
