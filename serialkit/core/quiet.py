"""Pausing the cyclic garbage collector over work that builds many small acyclic objects."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def quiet_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (reference counting still frees what the
    block drops): work that builds thousands of small acyclic containers which live as long as it
    does (a piece's events, a score's notes and labels) would otherwise set off collections that
    walk them all for nothing. The collector runs again after the block if it ran before."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
