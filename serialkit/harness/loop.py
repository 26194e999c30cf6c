"""The generate–verify–repair–trace loop: propose a section, verify, repair, replan, gate."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from serialkit.core.piece import Event, fraction_str
from serialkit.harness.proposers.base import ProposedEvent, parse_proposal
from serialkit.harness.reflow import reflow, reflow_pushing
from serialkit.harness.repair import RepairContext, RungSpec, ladder, rewrite_segment, shift_run
from serialkit.harness.session import Session
from serialkit.harness.tasks import Slot
from serialkit.harness.verify import Candidate, Verifier


@dataclass
class Outcome:
    """What a variant produced: the events, whether they carry a trace, and what happened."""

    events: list[Event]
    trace: bool
    certificates: list[dict[str, Any]] = field(default_factory=list)
    sections: list[dict[str, Any]] = field(default_factory=list)
    drops: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def event_id(slot: Slot) -> str:
    """The id of the note that fills a slot: ``voice-section-index``."""
    return f"{slot.voice}-{slot.section}-{slot.index:02d}"


def _match(pe: ProposedEvent, slots: tuple[Slot, ...], cursor: int) -> int | None:
    """Lockstep: the scheduled slot at or after the cursor that a proposed event claims."""
    if pe.form is None and pe.position is None:
        return cursor if cursor < len(slots) else None
    scheduled = {s.form for s in slots}
    for j in range(cursor, len(slots)):
        s = slots[j]
        if (pe.form is None or s.form == pe.form) and (pe.position is None or s.position == pe.position):
            return j
    if pe.form is not None and pe.form not in scheduled and pe.position is not None:
        for j in range(cursor, len(slots)):  # drifted form: bind by order position
            if slots[j].position == pe.position:
                return j
    return None


class Harness:
    """One harness run over a task: verifier state, ladder and per-section bookkeeping."""

    def __init__(self, session: Session, rungs: list[RungSpec] | None = None) -> None:
        self.session = session
        self.task = session.task
        self.ver = Verifier(self.task)
        self.ctx = RepairContext(self.ver)
        self.rungs = rungs if rungs is not None else ladder()
        first_batch = next((i for i, r in enumerate(self.rungs) if r.batch), len(self.rungs))
        self.immediate, self.later = self.rungs[:first_batch], self.rungs[first_batch:]
        self.outcome = Outcome([], trace=True)

    def run(self) -> Outcome:
        """Write, verify and repair every section in order, replanning up to the budget."""
        for sec in self.task.sections:
            self._section(sec.id)
        self.outcome.events = self.ver.events()
        return self.outcome

    # one section ------------------------------------------------------------
    def _missing(self, section: str) -> list[Slot]:
        return [s for v in self.task.voice_ids for s in self.task.slots(section, v) if not self.ver.filled(s)]

    def _section(self, section: str) -> None:
        attempts = 0
        for attempt in range(1, self.task.attempts + 1):
            missing = self._missing(section)
            if not missing:
                break
            attempts = attempt
            total = sum(len(self.task.slots(section, v)) for v in self.task.voice_ids)
            fields: dict[str, Any] = {"soft_rules": True}
            trial = None
            if 2 < attempt and len(missing) < total:
                # late attempts re-propose every voice that still has gaps, kept only if better
                trial = (self.ver.snapshot(), len(missing))
                gaps = {s.voice for s in missing}
                for cand in [k.cand for k in self.ver.kept.values()]:
                    if cand.voice in gaps and cand.slot.section == section:
                        self.ver.remove(cand.id)
                missing = self._missing(section)
            if len(missing) < total:
                self._make_room(missing)
                fields["missing"] = tuple(self._missing_payload(missing))
                fields["context"] = tuple(self._context(section))
            reply, call_id = self.session.call("section", section, attempt, **fields)
            parsed = parse_proposal(reply, self.task)
            self.outcome.errors += [f"{call_id} ({section}, attempt {attempt}): {e}" for e in parsed.errors]
            pending = self._bind(parsed.events, section, attempt, call_id)
            self._finish(pending, section, attempt)
            if trial is not None and len(self._missing(section)) > trial[1]:
                self.ver.restore(trial[0])
        # the deterministic completion may write at most one note per scheduled statement, never
        # a section the proposer did not write: the candidate stays the model's
        holes = self._missing(section)
        statements = sum(len(self.task.blueprint.forms_for(section, v)) for v in self.task.voice_ids)
        completed = ([event_id(s) for s in holes if self._complete(s, attempts)]
                     if len(holes) <= statements and len({s.statement for s in holes}) == len(holes) else [])
        left = self._missing(section)
        self.outcome.sections.append({
            "id": section, "attempts": attempts, "complete": not left,
            "missing": [f"{s.voice} {s.label}" for s in left], "completed": completed,
        })

    def _complete(self, slot: Slot, attempt: int, widen: int = 4) -> bool:
        """After the attempt budget: write a still-missing note deterministically (the rewrite rung
        with no model in it) — its scheduled pitch class, placed in its window, which neighbours
        widen by giving up time or moving their runs into a rest. True when the note is kept."""
        grid = self.task.texture.grid
        voice = self.task.voice(slot.voice)
        assert voice.low is not None and voice.high is not None
        centre = (voice.low + voice.high) // 2
        for _ in range(widen):
            lo, hi = self.ver.window(slot)
            if hi - lo >= grid:
                cand = Candidate(event_id(slot), slot, lo, min(hi - lo, 2 * grid), centre, slot.pc,
                                 None, ("rewrite",), max(attempt, 1), ())
                fixed = rewrite_segment(cand, self.ver.problems(cand), self.ctx)
                if fixed is not None and not self.ver.problems(fixed, crossing_ok=True):
                    self.ctx.undo.clear()
                    self.ver.add(fixed)
                    return True
                self.ctx.rollback()
            if not self._make_room([slot], need_steps=hi - lo + grid):
                break
        return self._reflow(slot, attempt, centre)

    def _reflow(self, slot: Slot, attempt: int, centre: int) -> bool:
        """Re-place the voice's notes around the slot so its scheduled pitch class fits (True when kept)."""
        voice = self.task.voice(slot.voice)
        assert voice.low is not None and voice.high is not None
        midis = sorted((m for m in range(voice.low, voice.high + 1) if m % 12 == slot.pc),
                       key=lambda m: (abs(m - centre), m))
        lo, _ = self.ver.window(slot)
        cand = Candidate(event_id(slot), slot, lo, 2 * self.task.texture.grid, midis[0] if midis else centre,
                         slot.pc, None, ("rewrite",), max(attempt, 1), ())
        fixed = reflow(self.ctx, cand, midis) if midis else None
        if fixed is not None and not self.ver.problems(fixed, crossing_ok=True):
            self.ctx.undo.clear()
            self.ver.add(fixed)
            return True
        self.ctx.rollback()
        return bool(midis) and reflow_pushing(self.ctx, cand, midis)

    def _bind(self, proposed: list[ProposedEvent], section: str, attempt: int, call_id: str) -> list[Candidate]:
        """Map proposed events onto slots in lockstep, verify each, and repair it or defer it."""
        pending: list[Candidate] = []
        for voice in self.task.voice_ids:
            slots = self.task.slots(section, voice)
            cursor = 0
            mine = sorted((p for p in proposed if p.voice == voice), key=lambda p: p.onset)
            for k, pe in enumerate(mine):
                j = _match(pe, slots, cursor)
                if j is None:
                    self._drop(None, section, voice, attempt, ["ORDER"], pe)
                    continue
                cursor = j + 1
                slot = slots[j]
                if self.ver.filled(slot):
                    continue
                claimed = None if pe.form is None or pe.position is None else f"{pe.form.label}:{pe.position}"
                until = next((q.onset for q in mine[k + 1:] if q.onset > pe.onset), None)
                cand = Candidate(event_id(slot), slot, pe.onset, pe.duration, pe.midi, pe.pc, claimed,
                                 (), attempt, (call_id,), until)
                if not self._try_immediate(cand):
                    pending.append(cand)
        return pending

    def _try_immediate(self, cand: Candidate) -> bool:
        problems = self.ver.problems(cand)
        current = cand
        mark = len(self.ctx.undo)
        for rung in self.immediate:
            if not problems:
                break
            fixed = rung.fn(current, problems, self.ctx)
            if fixed is not None:
                current = fixed
                problems = self.ver.problems(current)
        if problems:
            for eid, before in reversed(self.ctx.undo[mark:]):
                self.ver.kept[eid].cand = before
            del self.ctx.undo[mark:]
            return False
        self.ctx.undo.clear()
        self.ver.add(current)
        return True

    def _finish(self, pending: list[Candidate], section: str, attempt: int) -> None:
        """The later rungs (model patch, rewrite, plugins) for notes the timing rungs could not fix."""
        for rung in self.later:
            if not pending:
                break
            if rung.batch:
                pending = self._patch(pending, section, attempt)
                continue
            still = []
            for cand in pending:
                fixed = rung.fn(cand, self.ver.problems(cand), self.ctx)
                if fixed is not None and not self.ver.problems(fixed, crossing_ok=True):
                    self.ctx.undo.clear()
                    self.ver.add(fixed)
                else:
                    self.ctx.rollback()
                    still.append(cand)
            pending = still
        for cand in pending:
            if not self._reflow_pending(cand):
                self._drop(cand, section, cand.voice, attempt, sorted(self.ver.problems(cand)), None)

    def _reflow_pending(self, cand: Candidate) -> bool:
        """Before dropping: keep the proposed note (its scheduled pitch class, nearest octave) by
        re-placing its voice's neighbours on the grid (True when kept)."""
        voice = self.task.voice(cand.voice)
        assert voice.low is not None and voice.high is not None
        midis = sorted((m for m in range(voice.low, voice.high + 1) if m % 12 == cand.slot.pc),
                       key=lambda m: (abs(m - cand.midi), m))
        if not midis or self.ver.filled(cand.slot):
            return False
        base = cand.changed("rewrite", claimed_pc=cand.slot.pc, until=None) if midis[0] != cand.midi else \
            cand.changed("retime", until=None)
        fixed = reflow(self.ctx, base, midis)
        if fixed is not None and not self.ver.problems(fixed, crossing_ok=True):
            self.ctx.undo.clear()
            self.ver.add(fixed)
            return True
        self.ctx.rollback()
        return reflow_pushing(self.ctx, base, midis)

    def _patch(self, pending: list[Candidate], section: str, attempt: int) -> list[Candidate]:
        items = [self._patch_item(c) for c in pending]
        reply, call_id = self.session.call("patch", section, attempt, soft_rules=True, patches=tuple(items))
        parsed = parse_proposal(reply, self.task)
        self.outcome.errors += [f"{call_id} ({section}, patch): {e}" for e in parsed.errors]
        by_id = {pe.id: pe for pe in parsed.events if pe.id}
        still = []
        for cand in pending:
            pe = by_id.get(cand.id)
            if pe is not None and pe.voice == cand.voice:
                patched = cand.changed("patch", onset=pe.onset, duration=pe.duration, midi=pe.midi,
                                       claimed_pc=pe.pc, calls=(*cand.calls, call_id), until=None)
                if self._try_immediate(patched):
                    continue
            still.append(cand)
        return still

    def _patch_item(self, cand: Candidate) -> dict[str, Any]:
        lo, hi = self.ver.window(cand.slot)
        conflicts = [
            {"voice": k.cand.voice, "midi": k.cand.midi, "onset": fraction_str(k.cand.onset),
             "end": fraction_str(k.cand.end)}
            for k in self.ver.kept.values()
            if k.cand.voice != cand.voice and k.cand.midi % 12 == cand.slot.pc
            and k.cand.onset < hi and k.cand.end > lo
        ]
        return {
            "id": cand.id, "voice": cand.voice, "form": cand.slot.form.label, "position": cand.slot.position,
            "pc": cand.slot.pc, "midi": cand.midi, "onset": fraction_str(cand.onset),
            "duration": fraction_str(cand.duration), "window": [fraction_str(lo), fraction_str(hi)],
            "problems": sorted(self.ver.problems(cand)), "conflicts": conflicts,
        }

    def _make_room(self, missing: list[Slot], need_steps: Fraction | None = None) -> bool:
        """Shorten kept neighbours (by whole grid steps) until each run of missing slots has room."""
        grid = self.task.texture.grid
        runs: dict[tuple[Fraction, Fraction], list[Slot]] = {}
        for slot in missing:
            runs.setdefault(self.ver.window(slot), []).append(slot)
        grown = False
        for (lo, hi), slots in runs.items():
            need = 2 * len(slots) * grid - (hi - lo)  # room to dodge a note of another voice
            if need_steps is not None:
                need = need_steps - (hi - lo)
            before, after = self.ver.neighbours(slots[0])[0], self.ver.neighbours(slots[-1])[1]
            while need > 0:
                prev = self.ver.kept[before].cand if before else None
                nxt = self.ver.kept[after].cand if after else None
                if prev is not None and prev.end == lo and prev.duration >= 2 * grid:
                    self.ver.shorten(prev.id, prev.end - grid, "trim")
                    lo -= grid
                elif nxt is not None and nxt.onset == hi and nxt.duration >= 2 * grid:
                    kept = self.ver.kept[nxt.id]
                    kept.cand = nxt.changed("retime", onset=nxt.onset + grid, duration=nxt.duration - grid)
                    hi += grid
                elif shift_run(self.ver, slots[-1], grid):
                    hi += grid
                elif shift_run(self.ver, slots[0], -grid):
                    lo -= grid
                else:
                    break
                need -= grid
                grown = True
        return grown if need_steps is not None else True

    def _missing_payload(self, missing: list[Slot]) -> list[dict[str, Any]]:
        """Missing slots with free windows (a shared gap split evenly between consecutive slots)."""
        out = []
        grid = self.task.texture.grid
        runs: dict[tuple[Fraction, Fraction], list[Slot]] = {}
        for slot in missing:
            runs.setdefault(self.ver.window(slot), []).append(slot)
        for (lo, hi), slots in runs.items():
            units = int((hi - lo) / grid)
            n = len(slots)
            for k, slot in enumerate(slots):
                start = lo + (k * units // n) * grid
                end = hi if k == n - 1 else lo + max((k + 1) * units // n, k * units // n + 1) * grid
                out.append({"voice": slot.voice, "slot": slot.index, "form": slot.form.label,
                            "position": slot.position, "pc": slot.pc,
                            "window": [fraction_str(min(start, hi)), fraction_str(min(end, hi))]})
        return out

    def _context(self, section: str) -> list[dict[str, Any]]:
        sec = self.task.section(section)
        return [
            {"id": k.cand.id, "voice": k.cand.voice, "onset": fraction_str(k.cand.onset),
             "duration": fraction_str(k.cand.duration), "midi": k.cand.midi, "form": k.cand.slot.form.label,
             "position": k.cand.slot.position}
            for k in self.ver.kept.values() if k.cand.onset < sec.end and k.cand.end > sec.start
        ]

    def _drop(self, cand: Candidate | None, section: str, voice: str, attempt: int, problems: list[str],
              pe: ProposedEvent | None) -> None:
        entry: dict[str, Any] = {"section": section, "voice": voice, "attempt": attempt, "problems": problems}
        if cand is not None:
            entry.update(id=cand.id, slot=cand.slot.label, midi=cand.midi, onset=fraction_str(cand.onset))
        elif pe is not None:
            claimed = None if pe.form is None else f"{pe.form.label}:{pe.position}"
            entry.update(id=None, slot=None, claimed=claimed, midi=pe.midi, onset=fraction_str(pe.onset))
        self.outcome.drops.append(entry)


def certificates(ver: Verifier) -> list[dict[str, Any]]:
    """One certificate record per kept note, in voice and slot order."""
    out = []
    for event in ver.events():
        cand = ver.kept[event.id].cand
        out.append({
            "id": cand.id, "voice": cand.voice, "section": cand.slot.section,
            "onset": fraction_str(cand.onset), "duration": fraction_str(cand.duration), "midi": cand.midi,
            "pc": cand.midi % 12, "form": cand.slot.form.label, "position": cand.slot.position,
            "statement": cand.slot.statement, "claimed": cand.claimed,
            "rung": cand.rungs[-1] if cand.rungs else None, "rungs": list(cand.rungs),
            "attempts": cand.attempt, "calls": list(cand.calls),
        })
    return out


def run_harness(session: Session) -> Outcome:
    """The full harness variant."""
    harness = Harness(session)
    outcome = harness.run()
    outcome.certificates = certificates(harness.ver)
    return outcome


__all__ = ["Harness", "Outcome", "certificates", "event_id", "run_harness"]
