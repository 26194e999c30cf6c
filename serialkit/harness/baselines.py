"""Baselines on the same tasks and the same checker: raw, soft-rules and self-refine."""

from __future__ import annotations

from typing import Any

from serialkit.core.errors import PieceError
from serialkit.core.piece import Event, Tag, fraction_str
from serialkit.harness.judging import judge_candidate
from serialkit.harness.outcome import VariantOutcome
from serialkit.harness.proposers.base import ProposedEvent, parse_proposal, unreadable_why
from serialkit.harness.session import Session


def _events(proposed: list[ProposedEvent], section: str, call_id: str,
            errors: list[str]) -> tuple[list[Event], list[dict[str, Any]]]:
    """Proposed events as piece events carrying the model's claims (form, position, pitch class),
    which the gate checks like the harness's trace."""
    events: list[Event] = []
    records: list[dict[str, Any]] = []
    counters: dict[str, int] = {}
    for pe in sorted(proposed, key=lambda p: (p.voice, p.onset)):
        k = counters.get(pe.voice, 0)
        counters[pe.voice] = k + 1
        ident = f"{pe.voice}-{section}-{k:02d}"
        try:
            tag = None if pe.form is None or pe.position is None else Tag(pe.form, pe.position)
            event = Event(ident, pe.voice, pe.onset, pe.duration, pe.midi, section=section, claimed_pc=pe.pc,
                          tag=tag)
        except PieceError as exc:
            errors.append(f"{call_id} ({section}): {exc}")
            continue
        events.append(event)
        records.append({
            "id": ident, "voice": pe.voice, "section": section, "onset": fraction_str(pe.onset),
            "duration": fraction_str(pe.duration), "midi": pe.midi, "pc": pe.midi % 12,
            "form": None if pe.form is None else pe.form.label, "position": pe.position,
            "statement": None, "claimed": None if pe.form is None or pe.position is None
            else f"{pe.form.label}:{pe.position}",
            "rung": None, "rungs": [], "attempts": 1, "calls": [call_id],
        })
    return events, records


def run_single(session: Session, soft_rules: bool) -> VariantOutcome:
    """``raw`` (and ``soft-rules``): one proposal per section, no verifier in the loop, no repair."""
    outcome = VariantOutcome([], trace=False)
    for sec in session.task.sections:
        reply, call_id = session.call("section", sec.id, 1, soft_rules=soft_rules)
        parsed = parse_proposal(reply, session.task)
        outcome.errors += [f"{call_id} ({sec.id}): {e}" for e in parsed.errors]
        events, records = _events(parsed.events, sec.id, call_id, outcome.errors)
        outcome.events += events
        outcome.certificates += records
        outcome.sections.append({"id": sec.id, "attempts": 1, "complete": parsed.ok, "readable": _whole(parsed),
                                 "unreadable": unreadable_why(parsed), "missing": []})
    return outcome


def _whole(parsed: Any) -> bool:
    """A baseline is judged on what the model wrote: a reply read only in part (an event skipped
    as unreadable, an answer cut off mid-JSON) is an unreadable section, as no repair may mend it."""
    return bool(parsed.ok and not parsed.errors)


def feedback_text(violations: list[dict[str, Any]], section_ids: set[str], limit: int = 20) -> str:
    """Violations on a section's notes, as the lines fed back to the model."""
    lines = []
    for v in violations:
        ids = [i for i in v.get("event_ids", []) if i in section_ids]
        if not ids and v.get("event_ids"):
            continue
        where = f" ({v['location']})" if v.get("location") else ""
        lines.append(f"- {v['code']}: {v['message']}{where} [notes {', '.join(ids[:6])}]")
    if len(lines) > limit:
        lines = lines[:limit] + [f"- ... and {len(lines) - limit} more"]
    return "\n".join(lines)


def run_self_refine(session: Session) -> VariantOutcome:
    """``self-refine``: propose a section, feed the checker's violations back as text, up to K times."""
    task = session.task
    outcome = VariantOutcome([], trace=False)
    kept: dict[str, tuple[list[Event], list[dict[str, Any]]]] = {}
    for sec in task.sections:
        reply, call_id = session.call("section", sec.id, 1, soft_rules=False)
        attempts = 1
        while True:
            parsed = parse_proposal(reply, task)
            outcome.errors += [f"{call_id} ({sec.id}): {e}" for e in parsed.errors]
            kept[sec.id] = _events(parsed.events, sec.id, call_id, outcome.errors)
            events = [e for evs, _ in kept.values() for e in evs]
            verdict = judge_candidate(task, events)
            mine = {e.id for e in kept[sec.id][0]}
            text = feedback_text(list(verdict.violations), mine)
            if not parsed.ok:
                text = "- your answer could not be read: " + "; ".join(parsed.errors[:3])
            elif parsed.errors:
                text = "- part of your answer could not be read: " + "; ".join(parsed.errors[:3]) + "\n" + text
            if not text or attempts >= task.attempts:
                break
            attempts += 1
            reply, call_id = session.call("refine", sec.id, attempts - 1, feedback=text)
        outcome.sections.append({"id": sec.id, "attempts": attempts, "complete": parsed.ok,
                                 "readable": _whole(parsed), "unreadable": unreadable_why(parsed), "missing": []})
    for events, records in kept.values():
        outcome.events += events
        outcome.certificates += records
    return outcome
