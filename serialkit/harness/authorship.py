"""Who wrote each released note: the model untouched, or which kind of repair changed it.

One category per note, from the rungs its certificate lists (highest first): ``rewrite`` (its pitch
written by the harness), ``reflow`` (moved by reflow), ``patch`` (rewritten by the model: the batched
patch or the paper's row-segment rewrite), ``timing`` (trimmed, yielded or retimed only), ``model``
(as the model wrote it). A rung a plugin adds counts as ``other``. The shares of a run add up to 1.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

AUTHORS: tuple[str, ...] = ("model", "timing", "patch", "rewrite", "reflow", "other")
TIMING_RUNGS = frozenset({"snap", "trim", "yield", "retime"})
MODEL_RUNGS = frozenset({"patch", "segment"})


def author_of(rungs: Sequence[str]) -> str:
    """The category of one note from the rungs that changed it."""
    names = set(rungs)
    if "rewrite" in names:
        return "rewrite"
    if "reflow" in names:
        return "reflow"
    if names - TIMING_RUNGS - MODEL_RUNGS:
        return "other"
    if names & MODEL_RUNGS:
        return "patch"
    return "timing" if names else "model"


def authorship(authors: Iterable[str]) -> dict[str, Any]:
    """Counts and shares of the categories over a run's notes (shares 0 when there is no note)."""
    counts = dict.fromkeys(AUTHORS, 0)
    for author in authors:
        counts[author] = counts.get(author, 0) + 1
    notes = sum(counts.values())
    shares = {a: round(c / notes, 6) if notes else 0.0 for a, c in counts.items()}
    return {"notes": notes, "counts": counts, "shares": shares}


__all__ = ["AUTHORS", "author_of", "authorship"]
