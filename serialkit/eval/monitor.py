"""What a running experiment is doing: runs done, requests in flight, tokens, cost and ETA, kept by
the runner and written to ``RUN_DIR/status.json`` every so often for ``eval status``."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from serialkit.eval.models import ModelSpec
from serialkit.eval.store import STATUS, RunStore
from serialkit.io.files.atomic import atomic_write


class Monitor:
    """What an experiment is doing right now: runs done, requests in flight, tokens, cost, ETA.
    Written to ``RUN_DIR/status.json`` (for ``eval status``) and shown by the CLI."""

    def __init__(self, store: RunStore, planned: int, done: int, models: tuple[ModelSpec, ...],
                 endpoints: dict[int, Any]) -> None:
        self.store = store
        self.planned = planned
        self.done_before = done
        self.models = models
        self.endpoints = endpoints
        self.finished = 0
        self.errored = 0
        self.running = 0
        self.tokens = [0, 0]  # prompt, completion of runs recorded now (local proposers)
        self.cost_local = 0.0
        self.started = time.monotonic()
        self.state = "running"
        self.stopped: str | None = None
        self._lock = threading.Lock()

    def spent(self) -> tuple[int, int, float | None]:
        """(prompt tokens, completion tokens, USD or None) spent by this invocation so far."""
        prompt, completion = self.tokens
        cost: float | None = self.cost_local
        for index, endpoint in self.endpoints.items():
            stats = endpoint.stats.to_dict()
            prompt += stats["prompt_tokens"]
            completion += stats["completion_tokens"]
            c = self.models[index].cost(stats["prompt_tokens"], stats["completion_tokens"])
            cost = None if c is None or cost is None else cost + c
        return prompt, completion, cost

    def add(self, record: dict[str, Any], remote: bool) -> None:
        with self._lock:
            if "error" in record:
                self.errored += 1
                return
            self.finished += 1
            if not remote:
                usage = record.get("usage", {})
                self.tokens[0] += int(usage.get("prompt_tokens", 0))
                self.tokens[1] += int(usage.get("completion_tokens", 0))
                if record.get("cost") is not None:
                    self.cost_local += float(record["cost"])

    def snapshot(self) -> dict[str, Any]:
        """The status as JSON-ready data."""
        prompt, completion, cost = self.spent()
        elapsed = time.monotonic() - self.started
        done = self.done_before + self.finished
        left = max(0, self.planned - done)
        eta = elapsed / self.finished * left if self.finished and self.state == "running" else None
        requests = in_flight = peak = 0
        for endpoint in self.endpoints.values():
            stats = endpoint.stats.to_dict()
            requests += stats["requests"]
            in_flight += stats["in_flight"]
            peak = max(peak, stats["peak_in_flight"])
        return {
            "state": self.state, "stopped": self.stopped, "pid": os.getpid(),
            "updated": datetime.now(UTC).isoformat(timespec="seconds"),
            "planned": self.planned, "done": done, "finished_now": self.finished, "errored": self.errored,
            "runs_in_flight": self.running, "requests": requests, "requests_in_flight": in_flight,
            "peak_requests_in_flight": peak, "prompt_tokens": prompt, "completion_tokens": completion,
            "cost": None if cost is None else round(cost, 6), "elapsed": round(elapsed, 1),
            "eta": None if eta is None else round(eta, 1),
        }

    def write(self) -> dict[str, Any]:
        snap = self.snapshot()
        try:
            atomic_write(self.store.root / STATUS, json.dumps(snap, indent=2))
        except OSError:
            pass  # the status file is a convenience; the records are what count
        return snap


class StatusTicker:
    """Writes the status file (and calls back) every ``every`` seconds until stopped."""

    def __init__(self, monitor: Monitor, callback: Callable[[dict[str, Any]], None] | None,
                 every: float) -> None:
        self.monitor = monitor
        self.callback = callback
        self.every = every
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="serialkit-status", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            snap = self.monitor.write()
            if self.callback is not None:
                self.callback(snap)
            if self._done.wait(self.every):
                return

    def stop(self) -> None:
        self._done.set()
        self._thread.join(timeout=5)
        snap = self.monitor.write()
        if self.callback is not None:
            self.callback(snap)
