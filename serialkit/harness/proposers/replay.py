"""The replay proposer: answers a run's calls from a recorded transcript, exactly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from serialkit.core.errors import EndpointError, ProposerError
from serialkit.harness.proposers.base import CallUsage, Reply, Request


def read_transcript(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(header, call records) of a transcript file."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ProposerError(f"{path}: cannot read transcript ({exc.strerror})") from exc
    header: dict[str, Any] | None = None
    calls: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ProposerError(f"{path}: line {number}: invalid JSON ({exc.msg})") from exc
        if record.get("type") == "header":
            header = record
        elif record.get("type") == "call":
            calls.append(record)
        else:
            raise ProposerError(f"{path}: line {number}: unknown record type {record.get('type')!r}")
    if header is None:
        raise ProposerError(f"{path}: no header line (is this a serialkit transcript?)")
    return header, calls


class ReplayProposer:
    """Returns the recorded reply of each call in order; a diverging request is an error."""

    def __init__(self, transcript: str | Path, seed: int | None = None) -> None:
        self.path = Path(transcript)
        self.header, self.records = read_transcript(self.path)
        self.name = "replay"
        self.model: str | None = self.header.get("model")
        self.identity = (str(self.header.get("proposer", "replay")), self.header.get("model"))
        self._next = 0

    def propose(self, request: Request) -> Reply:
        """The recorded reply to this call."""
        if self._next >= len(self.records):
            raise ProposerError(f"{self.path}: transcript has {len(self.records)} calls; the run asked for more")
        record = self.records[self._next]
        self._next += 1
        asked = request.payload()
        if (record.get("kind"), record.get("section"), record.get("attempt")) != (
                request.kind, request.section, request.attempt) or record.get("request") != asked:
            raise ProposerError(
                f"{self.path}: call {record.get('call_id')} diverges from the run "
                f"(recorded {record.get('kind')} {record.get('section')} attempt {record.get('attempt')}, "
                f"asked {request.kind} {request.section} attempt {request.attempt})"
            )
        if record.get("usage", {}).get("status") == "errored":
            raise _replayed_error(record)
        return Reply(record.get("response"), CallUsage.from_dict(record.get("usage", {})), record.get("error"),
                     cut_off=record.get("cut_off") is True)


def _replayed_error(record: dict[str, Any]) -> EndpointError:
    """The endpoint failure a call recorded, raised again as it was (kind, status, tries, and
    whether the harness re-asks it), so that a replayed run takes the same turn."""
    seen = record.get("endpoint") or {}
    usage = record.get("usage", {})
    error = EndpointError("replay", str(record.get("error") or "the server failed"), seen.get("status"),
                          int(usage.get("tries", 1)))
    error.kind = str(seen.get("kind", "server"))
    error.reaskable = seen.get("reaskable") is True
    error.args = (str(record.get("error") or "the server failed"),)
    return error
