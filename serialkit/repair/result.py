"""What a repair did to one score: each changed note (``Change``) and the whole result
(``RepairResult``), with the certificate and the ``--json`` record made from them."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from serialkit.core.notenames import sounding_name
from serialkit.core.piece import fraction_str
from serialkit.core.rows import Row
from serialkit.core.suggest import DEFAULT_THRESHOLD

__all__ = ["REWRITE_RUNG", "Change", "RepairResult", "Time"]

REWRITE_RUNG = "rewrite"
"""The ladder's rung a pitch correction belongs to (the generator's segment rewrite)."""

Time = tuple[Fraction, Fraction, str]
"""A note's onset and duration (quarter notes) and where the onset is (``bar 3, beat 2``)."""


@dataclass(frozen=True, slots=True)
class Change:
    """One changed note: where, its pitch before and after, the rung, and why; for a note a timing
    rung changed, its onset and duration before and after (``time``) and the timing rung (``rung``,
    after ``rewrite`` in ``rungs`` when its pitch changed too)."""

    event_id: str
    location: str
    before: int
    after: int
    label: str
    statement: str | None
    model: str | None
    confidence: float | None
    reason: str
    rung: str = REWRITE_RUNG
    time: tuple[Time, Time] | None = None
    rungs: tuple[str, ...] = (REWRITE_RUNG,)

    @property
    def text(self) -> str:
        """The label the written score carries by the note: ``rewrite P5:7``, ``trim COLL``,
        ``rewrite P5:7, yield`` (a corrected pitch whose time changed too)."""
        if len(self.rungs) > 1:
            return f"{self.rungs[0]} {self.label}, {', '.join(self.rungs[1:])}"
        return f"{self.rung} {self.label}"

    def to_dict(self) -> dict[str, Any]:
        """The certificate's entry (``render`` reads ``id``, ``rung`` and ``label``)."""
        before: dict[str, Any] = {"midi": self.before, "name": sounding_name(self.before),
                                  "sounding": sounding_name(self.before)}
        after: dict[str, Any] = {"midi": self.after, "name": sounding_name(self.after),
                                 "sounding": sounding_name(self.after)}
        if self.time is not None:
            for side, (onset, duration, at) in zip((before, after), self.time, strict=True):
                side.update(onset=fraction_str(onset), duration=fraction_str(duration), at=at)
        return {
            "id": self.event_id,
            "location": self.location,
            "rung": self.rung,
            "rungs": list(self.rungs),
            "before": before,
            "after": after,
            "label": self.label,
            "statement": self.statement,
            "model": self.model,
            "confidence": None if self.confidence is None else round(self.confidence, 3),
            "why": self.reason,
        }


@dataclass
class RepairResult:
    """What ``repair_score`` did to one score."""

    source: Path
    out: Path | None
    changes: tuple[Change, ...]
    before: Mapping[str, Any]
    after: Mapping[str, Any]
    row: Row
    dry_run: bool = False
    certificate_path: Path | None = None
    review_path: Path | None = None
    withdrawn: tuple[str, ...] = field(default=())
    """Changes taken back because the gate found something new on the changed note."""
    notes: tuple[str, ...] = field(default=())
    """Why something was not done."""
    held: tuple[Change, ...] = field(default=())
    """Suggestions left unapplied because they are below the threshold (not applied, not written)."""
    threshold: float = DEFAULT_THRESHOLD
    name: str | None = None
    """What the source is called in reports (``-``: standard input), when not its path."""
    written: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Each changed (or held) note's pitch as the score writes it, before and after (``Eb4``,
    a transposing part's written pitch): the spelling and transposition of the score."""
    noteheads: dict[str, list[str]] = field(default_factory=dict)
    """A changed tied note's noteheads in the written score (the first one's id is the note's)."""
    _digest: str | None = field(default=None, repr=False, compare=False)

    @property
    def passed(self) -> bool:
        """True when the repaired score passes the gate (relaxed: SCHED aside)."""
        return bool(self.after.get("relaxed"))

    @property
    def source_sha256(self) -> str:
        """The SHA-256 of the source's bytes (read once)."""
        if self._digest is None:
            self._digest = _sha256(self.source)
        return self._digest

    def certificate(self) -> dict[str, Any]:
        """The repair certificate: source (and its SHA-256), row, every changed note, verdicts."""
        return {
            "format": "serialkit-repair-certificate",
            "version": 1,
            "source": self.name or str(self.source),
            "source_sha256": self.source_sha256,
            "output": None if self.out is None else str(self.out),
            "row": list(self.row.pcs),
            "row_names": self.row.names(),
            "profile": self.after.get("profile"),
            "threshold": self.threshold,
            "events": [dict(self._entry(c), noteheads=self.noteheads.get(c.event_id, [c.event_id]))
                       for c in self.changes],
            "withdrawn": list(self.withdrawn),
            "before": _verdict(self.before),
            "after": _verdict(self.after),
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON form for ``repair --json``."""
        return {
            "source": self.name or str(self.source),
            "output": None if self.out is None or self.dry_run else str(self.out),
            "certificate": None if self.certificate_path is None else str(self.certificate_path),
            "review": None if self.review_path is None else str(self.review_path),
            "dry_run": self.dry_run,
            "changes": [self._entry(c) for c in self.changes],
            "withdrawn": list(self.withdrawn),
            "held": [self._entry(c) for c in self.held],
            "threshold": self.threshold,
            "notes": list(self.notes),
            "before": _verdict(self.before),
            "after": _verdict(self.after),
            "passed": self.passed,
        }

    def _entry(self, change: Change) -> dict[str, Any]:
        """``change.to_dict()`` with each side named as the score writes it (``name``; ``sounding``
        beside it, and ``midi`` the sounding MIDI pitch, as everywhere in serialkit)."""
        data = change.to_dict()
        names = self.written.get(change.event_id)
        if names is not None:
            for side, name in zip(("before", "after"), names, strict=True):
                data[side] = dict(data[side], name=name)
        return data


def _verdict(report: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "strict": report.get("strict"),
        "relaxed": report.get("relaxed"),
        "counts": report.get("counts"),
        "unexplained": len(report.get("unexplained") or ()),
        "coverage": report.get("coverage"),
    }


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()
