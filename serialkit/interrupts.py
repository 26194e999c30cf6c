"""Ctrl-C and SIGTERM while work is in flight: counted, not raised, so that the work finishes and is
recorded; a second one (where asked) abandons it at once. Pool workers leave both to their parent.

A ``KeyboardInterrupt`` raised wherever the main thread happens to be drops the run whose model
request is in flight and, in a worker pool, can land inside ``concurrent.futures`` while it holds
a future's lock (the runner then waits for ever). ``eval run`` and ``generate`` note the signals
here instead.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any


class Interruptions:
    """Ctrl-C (SIGINT) and SIGTERM counted instead of raised while :meth:`noted` is active.

    ``count`` says how many came, ``last`` which one came last (``exit_code`` is 128 + it, as
    shells report it). With ``abort_at`` the one that brings the count there raises
    ``KeyboardInterrupt`` (a second Ctrl-C abandons the work at once). A handler already installed
    (the CLI's SIGTERM bookkeeping) still runs; a signal ignored (SIGINT in a background job) stays
    ignored; a SIGTERM left at its default stays so unless ``terminate`` (then it is counted too).
    Outside the main thread (no handlers can be installed there) nothing is changed."""

    def __init__(self, abort_at: int | None = None, terminate: bool = False) -> None:
        self.count = 0
        self.last: int | None = None
        self.abort_at = abort_at
        self.terminate = terminate

    @property
    def exit_code(self) -> int:
        """130 after Ctrl-C, 143 after SIGTERM (the last signal's 128 + number)."""
        return 128 + (self.last or signal.SIGINT)

    @contextlib.contextmanager
    def noted(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous: dict[int, Any] = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

        def note(signum: int, frame: Any) -> None:
            self.count += 1
            self.last = signum
            before = previous.get(signum)
            if callable(before) and before is not signal.default_int_handler:
                with contextlib.suppress(KeyboardInterrupt):
                    before(signum, frame)
            if self.abort_at is not None and self.count >= self.abort_at:
                raise KeyboardInterrupt

        def taken(sig: int, handler: Any) -> bool:
            if handler is signal.default_int_handler:
                return True
            return sig == signal.SIGTERM and (callable(handler) or (self.terminate and handler == signal.SIG_DFL))

        installed = [sig for sig, h in previous.items() if taken(sig, h)]
        for sig in installed:
            signal.signal(sig, note)
        try:
            yield
        finally:
            for sig in installed:
                signal.signal(sig, previous[sig])


#: the signals a pool worker leaves to its parent
HELD = frozenset({signal.SIGINT, signal.SIGTERM})


def ignore_in_worker() -> None:
    """A pool worker's first act: leave Ctrl-C and SIGTERM sent to the whole group to the parent
    (which lets the runs in flight finish and records them), then let them through again (held
    back by :func:`held_back` while the worker was forked)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD)


@contextlib.contextmanager
def held_back(hold: bool = True) -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM back in this thread while workers may be forked: a worker forked
    with them blocked cannot be interrupted before :func:`ignore_in_worker` runs (a Ctrl-C inside
    the fork's own bookkeeping would leave a broken worker and a runner that never exits). The
    parent gets them after."""
    if not hold:
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


__all__ = ["HELD", "Interruptions", "held_back", "ignore_in_worker"]
