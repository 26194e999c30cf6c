"""The model's rungs: one batched call per section for every note the rungs before could not fix.

``patch`` (both ladders) shows the model each flagged note with its free window, its problems and the
same-pitch-class notes in its way; ``segment`` (the paper's rung 5) asks again with the whole
statement of each note in view. A note the model answers for is placed like a proposed note (the
timing rungs chained on it, kept if clean); the others stay pending for the next rung. The harness never asks for a note in a
window too short to hold it, and asks once more, in a changed form, when a reply brought nothing
or the server failed the call after the proposer's retries (a re-askable endpoint error).
"""

from __future__ import annotations

from typing import Any

from serialkit.core.errors import EndpointError
from serialkit.core.piece import fraction_str
from serialkit.harness.ladder.context import Ladder
from serialkit.harness.ladder.room import make_room
from serialkit.harness.outcome import event_id
from serialkit.harness.proposers.base import parse_proposal
from serialkit.harness.tasks import Slot
from serialkit.harness.verify import ProposedNote, Verifier


def model_patch(pending: list[ProposedNote], ctx: Ladder) -> list[ProposedNote]:
    """The ``patch`` rung (both ladders): one model call for the section's pending notes; returns
    the notes still pending."""
    return ask_model(pending, ctx, "patch")


def model_segment(pending: list[ProposedNote], ctx: Ladder) -> list[ProposedNote]:
    """The ``segment`` rung (the paper's rung 5): the same call with each note's whole statement in
    view; returns the notes still pending."""
    return ask_model(pending, ctx, "segment")


def ask_model(pending: list[ProposedNote], ctx: Ladder, rung: str) -> list[ProposedNote]:
    """One patch call for the pending notes whose windows can hold a note (asked again once if the
    reply is unusable or the server failed it); each answer is placed like a proposed note
    (``Ladder.place``)."""
    ver, task = ctx.verifier, ctx.verifier.task
    shortest = max(task.texture.min_duration, task.texture.grid)
    for cand in pending:  # never ask for a note in a window too short to hold it
        lo, hi = ver.window(cand.slot)
        if hi - lo < shortest:
            make_room(ver, [cand.slot], need_steps=shortest)
    # making room for one note may have moved another's neighbours: windows are read once more
    askable = [c for c in pending if (w := ver.window(c.slot))[1] - w[0] >= shortest]
    if not askable:
        return pending
    items = tuple(patch_item(ver, c, segment=rung == "segment") for c in askable)
    for ask in range(2):  # an unusable reply or a server error is asked again once, under a new attempt number
        try:
            reply, call_id = ctx.session.call("patch", ctx.section, ctx.attempt + ask, soft_rules=True,
                                              patches=items)
        except EndpointError as exc:
            if not exc.reaskable or ask:
                raise
            continue
        parsed = parse_proposal(reply, task)
        ctx.errors += [f"{call_id} ({ctx.section}, {rung}): {e}" for e in parsed.errors]
        if parsed.events:
            break
    by_id = {pe.id: pe for pe in parsed.events if pe.id}
    still = []
    for cand in pending:
        pe = by_id.get(cand.id)
        if pe is not None and pe.voice == cand.voice:
            patched = cand.changed(rung, onset=pe.onset, duration=pe.duration, midi=pe.midi,
                                   claimed_pc=pe.pc, calls=(*cand.calls, call_id), until=None)
            if ctx.place(patched):
                continue
        still.append(cand)
    return still


def patch_item(ver: Verifier, cand: ProposedNote, segment: bool = False) -> dict[str, Any]:
    """What the model is shown of one flagged note."""
    lo, hi = ver.window(cand.slot)
    conflicts = [
        {"voice": o.voice, "midi": o.midi, "onset": fraction_str(o.onset), "end": fraction_str(o.end)}
        for o in (k.cand for k in ver.kept.values())
        if o.voice != cand.voice and o.midi % 12 == cand.slot.pc and o.onset < hi and o.end > lo
    ]
    item = {
        "id": cand.id, "voice": cand.voice, "form": cand.slot.form.label, "position": cand.slot.position,
        "pc": cand.slot.pc, "midi": cand.midi, "onset": fraction_str(cand.onset),
        "duration": fraction_str(cand.duration), "window": [fraction_str(lo), fraction_str(hi)],
        "problems": sorted(ver.problems(cand)), "conflicts": conflicts,
    }
    if segment:
        item["segment"] = statement_of(ver, cand.slot)
    return item


def statement_of(ver: Verifier, slot: Slot) -> list[dict[str, Any]]:
    """The statement around a note, for the row-segment rewrite: each position's pitch class and
    the note kept there (if any)."""
    out = []
    for s in ver.task.slots(slot.section, slot.voice):
        if s.statement != slot.statement:
            continue
        kept = ver.kept.get(event_id(s))
        out.append({"position": s.position, "pc": s.pc,
                    "kept": None if kept is None else {"midi": kept.cand.midi, "onset": fraction_str(kept.cand.onset)}})
    return out


__all__ = ["ask_model", "model_patch", "model_segment", "patch_item", "statement_of"]
