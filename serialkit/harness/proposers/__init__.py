"""Proposers: the built-in ``stochastic``, ``openai`` and ``replay``; plugins register more."""

from __future__ import annotations

from serialkit.harness.proposers.base import (
    CallUsage,
    ProposedEvent,
    Proposer,
    Reply,
    Request,
    extract_json,
    parse_proposal,
)

__all__ = ["CallUsage", "ProposedEvent", "Proposer", "Reply", "Request", "extract_json", "parse_proposal"]
