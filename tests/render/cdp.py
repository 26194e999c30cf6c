"""Headless Chromium driven over the DevTools protocol through a pipe (standard library only):
open a page, evaluate script in it (awaiting promises), read the values back."""

from __future__ import annotations

import fcntl
import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any

FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--remote-debugging-pipe",
)


class BrowserError(RuntimeError):
    """Chromium answered a command with an error, died, or did not answer in time."""


class Browser:
    """One headless Chromium with one page; ``evaluate`` runs an expression in it. ``console``
    collects what the page logs, its uncaught errors and the browser's errors and warnings about it
    (a Content Security Policy violation, a resource that failed to load)."""

    def __init__(self, exe: str, profile: Path, size: tuple[int, int] = (1400, 900), timeout: float = 60) -> None:
        self.timeout = timeout
        self._to_chrome_r, self._to_chrome_w = os.pipe()
        self._from_chrome_r, self._from_chrome_w = os.pipe()
        # Chromium reads commands on its fd 3 and writes answers on its fd 4: the child's ends are
        # copied above 9 first, so that putting them on 3 and 4 cannot overwrite one another.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (self._to_chrome_r, self._from_chrome_w)]

        def _onto_3_and_4() -> None:
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        args = [*FLAGS, f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}", "about:blank"]
        try:
            self.proc = subprocess.Popen(
                [exe, *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                preexec_fn=_onto_3_and_4, close_fds=False,
            )
        finally:
            for fd in high:
                os.close(fd)
        os.close(self._to_chrome_r)
        os.close(self._from_chrome_w)
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []
        self.console: list[str] = []
        self.session = ""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.send("Page.enable")
        self.send("Runtime.enable")
        self.send("Log.enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": False})

    def _message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("Chromium did not answer in time")
            ready, _, _ = select.select([self._from_chrome_r], [], [], left)
            if ready:
                chunk = os.read(self._from_chrome_r, 1 << 20)
                if not chunk:
                    raise BrowserError("Chromium closed its pipe: " + self._stderr())
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        if message.get("method") == "Runtime.consoleAPICalled":
            args = message["params"].get("args", [])
            self.console.append(" ".join(str(a.get("value", a.get("description", ""))) for a in args))
        elif message.get("method") == "Log.entryAdded" and message["params"]["entry"]["level"] in ("error", "warning"):
            self.console.append(message["params"]["entry"].get("text", ""))  # a CSP violation, a failed load
        elif message.get("method") == "Runtime.exceptionThrown":
            self.console.append("Uncaught " + json.dumps(message["params"].get("exceptionDetails", {}))[:500])
        return message

    def _stderr(self) -> str:
        if self.proc.poll() is None or self.proc.stderr is None:
            return ""
        return self.proc.stderr.read().decode(errors="replace")[-2000:]

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one command and wait for its answer (events that arrive meanwhile are kept)."""
        self._next += 1
        command: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if self.session:
            command["sessionId"] = self.session
        os.write(self._to_chrome_w, json.dumps(command).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._message(deadline)
            if message.get("id") == self._next:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self.events.append(message)

    def wait_for(self, event: str) -> dict[str, Any]:
        """The first event of that name (already arrived, or the next to arrive)."""
        deadline = time.monotonic() + self.timeout
        while True:
            for i, message in enumerate(self.events):
                if message.get("method") == event:
                    return self.events.pop(i)
            self.events.append(self._message(deadline))

    def open(self, url: str) -> None:
        """Navigate to ``url`` and wait for its load event."""
        for target in ("about:blank", url):  # from a blank page: a new fragment alone would not load
            self.events.clear()
            self.send("Page.navigate", {"url": target})
            self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of a script expression in the page (a promise is awaited)."""
        result = self.send("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                                "returnByValue": True})
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def close(self) -> None:
        """Stop Chromium."""
        try:
            self.session = ""
            self.send("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_chrome_w, self._from_chrome_r):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.proc.stderr is not None:
            self.proc.stderr.close()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
