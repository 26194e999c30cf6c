"""Text lines for suggested corrections (``check``, ``annotate``, ``repair``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import click

from serialkit.core.suggest import describe


def suggestion_lines(report: Mapping[str, Any], event_ids: Sequence[str], top: int = 2) -> Iterable[str]:
    """``suggest: D#3 (P5:7 of S11; accidental, 82 %) or …`` for the notes a finding names."""
    by_id = {n["event_id"]: n for n in report.get("suggestions") or ()}
    for eid in event_ids:
        note = by_id.get(eid)
        if note is None:
            continue
        if not note["candidates"]:
            yield click.style("suggest: nothing plausible (no statement nearby wants another note here)", dim=True)
            continue
        parts = [describe(c) for c in note["candidates"][:top]]
        yield click.style("suggest: ", fg="cyan") + " or ".join(parts)

