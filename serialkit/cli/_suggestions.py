"""Text lines for suggested corrections (``check``, ``annotate``, ``repair``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import click

from serialkit.core.suggest import describe


def suggestion_lines(report: Mapping[str, Any], event_ids: Sequence[str], top: int = 2) -> Iterable[str]:
    """``suggest: D#3 (P5:7 of S11; accidental, 82 %) or …`` for the notes a finding names."""
    by_id = {n["event_id"]: n for n in report.get("suggestions") or ()}
    notes = [by_id[eid] for eid in event_ids if eid in by_id]
    some = any(n["candidates"] for n in notes)  # a finding naming several notes: show those with one
    for note in notes:
        if not note["candidates"]:
            if not some:
                yield click.style(
                    "suggest: nothing plausible (no statement nearby wants another note here)"
                    if note.get("complete", True) else
                    "suggest: none among those tried (a report verifies a limited number of corrections; "
                    "`serialkit repair --dry-run` tries every likely one)", dim=True)
                some = True  # said once per finding
            continue
        parts = [describe(c) for c in note["candidates"][:top]]
        # the finding names several notes: which one, as the score shows it
        which = (f" (for the {note.get('name')} at {note['at']})" if note.get("at") else f" (for {note['event_id']})"
                 ) if len(event_ids) > 1 else ""
        yield click.style("suggest: ", fg="cyan") + " or ".join(parts) + which



_HOLE = re.compile(r"^statement (\S+) \(.*?\) lacks position (\d+) ")


def hole_notes(report: Mapping[str, Any], finding: Mapping[str, Any]) -> list[str]:
    """The notes standing in the hole a finding reports (``statement S1 (RI0) lacks position 5``)
    that the report suggests a correction for: not among the finding's own notes (its
    neighbours), so the finding's suggestion lines would not show them."""
    found = _HOLE.match(str(finding.get("message") or ""))
    if found is None:
        return []
    statement, position = found.group(1), int(found.group(2))
    return [n["event_id"] for n in report.get("suggestions") or ()
            if n.get("finding") == "hole" and n["event_id"] not in finding["event_ids"] and n["candidates"]
            and n["candidates"][0].get("statement") == statement and n["candidates"][0].get("position") == position]
