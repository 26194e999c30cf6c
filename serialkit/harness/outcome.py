"""What a variant produced (``VariantOutcome``), and the ids of scheduled notes.

The proposed notes themselves (``ProposedNote``, ``Kept``) live with the verifier that checks them
(``verify.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from serialkit.core.piece import Event
from serialkit.harness.tasks import Slot


@dataclass
class VariantOutcome:
    """What a variant produced: the events, whether they carry a trace, and what happened."""

    events: list[Event]
    trace: bool
    certificates: list[dict[str, Any]] = field(default_factory=list)
    sections: list[dict[str, Any]] = field(default_factory=list)
    drops: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    ladder: str | None = None


def event_id(slot: Slot) -> str:
    """The id of the note that fills a slot: ``voice-section-index``."""
    return f"{slot.voice}-{slot.section}-{slot.index:02d}"


__all__ = ["VariantOutcome", "event_id"]
