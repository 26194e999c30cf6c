"""The generate–verify–repair–trace loop: propose a section, verify, repair, replan, gate."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace
from fractions import Fraction
from typing import Any

from serialkit.core.piece import fraction_str
from serialkit.harness.authorship import TIMING_RUNGS, author_of
from serialkit.harness.model import Outcome, event_id
from serialkit.harness.patch import Batch
from serialkit.harness.proposers.base import ProposedEvent, parse_proposal
from serialkit.harness.reflow import reflow, reflow_pushing, relax_section
from serialkit.harness.repair import RepairContext, RungSpec, ladder, rewrite_segment, shift_run
from serialkit.harness.session import Session
from serialkit.harness.tasks import Slot, Task
from serialkit.harness.verify import Candidate, Verifier

COMPLETE_PER_STATEMENT = 3  # notes the deterministic completion may write per scheduled statement
REASKS = 0  # extra section calls beyond the attempt budget K (none: re-asks stay within K)


def snap(cand: Candidate, task: Task) -> Candidate:
    """The snap rung: a proposed note put on the task's grid (nearest step) and its duration into the
    task's shortest..longest note (whole grid steps), before it is verified — the gate rejects
    off-grid onsets and out-of-range durations (GRID, DUR), so the harness never keeps one."""
    tex = task.texture
    grid = tex.grid
    onset = max(Fraction(0), Fraction(math.floor(cand.onset / grid + Fraction(1, 2))) * grid)
    end = Fraction(math.floor((cand.onset + cand.duration) / grid + Fraction(1, 2))) * grid
    shortest = Fraction(math.ceil(tex.min_duration / grid)) * grid
    longest = Fraction(math.floor(tex.max_duration / grid)) * grid
    duration = min(max(end - onset, shortest), longest)
    if (onset, duration) == (cand.onset, cand.duration):
        return cand
    return cand.changed("snap", onset=onset, duration=duration)


def align(proposed: list[ProposedEvent], slots: tuple[Slot, ...]) -> list[int | None]:
    """Bind a voice's proposed events (in time order) to its scheduled slots, in order, each slot at
    most once: the binding that agrees best with what was sounded and claimed. A note scores 3 on a
    slot whose pitch class it sounds and whose form and position it claims, 2 on one whose pitch
    class it sounds, 1 on one it claims (or any slot when it claims nothing). So a model that lost
    its place (a position off by one, two neighbours swapped, a note left out and the rest claimed
    one too low) is bound by what it sang, and a transposed statement by what it claimed. Unbound
    events (None) are dropped as ORDER."""
    n, m = len(proposed), len(slots)
    scheduled = {s.form for s in slots}

    def score(pe: ProposedEvent, slot: Slot) -> int:
        if pe.form is None and pe.position is None:
            claim = True
        elif pe.form is not None and pe.form not in scheduled:  # a drifted form: its order position
            claim = pe.position == slot.position
        else:
            claim = (pe.form is None or pe.form == slot.form) and (pe.position is None or pe.position == slot.position)
        return (2 if pe.midi % 12 == slot.pc else 0) + (1 if claim else 0)

    best = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            here = score(proposed[i], slots[j])
            take = here + best[i + 1][j + 1] if here else -1
            best[i][j] = max(take, best[i + 1][j], best[i][j + 1])
    out: list[int | None] = []
    i = j = 0
    while i < n:
        if j < m:
            here = score(proposed[i], slots[j])
            if here and best[i][j] == here + best[i + 1][j + 1]:
                out.append(j)
                i, j = i + 1, j + 1
                continue
            if best[i][j] == best[i][j + 1]:
                j += 1
                continue
        out.append(None)
        i += 1
    return out


class Harness:
    """One harness run over a task: verifier state, ladder and per-section bookkeeping."""

    def __init__(self, session: Session, rungs: list[RungSpec] | None = None, ladder_name: str = "serialkit") -> None:
        self.session = session
        self.task = session.task
        self.ver = Verifier(self.task)
        self.rungs = rungs if rungs is not None else ladder(ladder_name)
        self.ctx = RepairContext(self.ver, timing=tuple((r.name, r.fn) for r in self.rungs
                                                      if not r.batch and r.name in TIMING_RUNGS))
        first_batch = next((i for i, r in enumerate(self.rungs) if r.batch), len(self.rungs))
        self.immediate, self.later = self.rungs[:first_batch], self.rungs[first_batch:]
        self.outcome = Outcome([], trace=True, ladder=ladder_name)
        # serialkit's ladder goes beyond the paper's: it writes pitches (rewrite, the completion of
        # holes) and re-places a voice's notes (reflow); the paper's ladder does neither
        self.deterministic = ladder_name == "serialkit"
        self.complete_holes = self.deterministic
        self.completed: list[str] = []  # notes the completion wrote in the current section

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
        """Ask for the section, then for what is still missing, up to the attempt budget; a reply
        that brought nothing usable (an endpoint failure, an empty or unreadable answer) does not use
        up an attempt but is asked again in a changed form (a new attempt number, a replan of what
        is missing), within ``REASKS`` extra calls. Holes left after the attempts are completed by
        the ladder (serialkit's rewrite and reflow), and asked for again within the same budget."""
        used = calls = 0
        self.completed = []
        completed = self.completed
        budget = self.task.attempts + REASKS
        while calls < budget:
            missing = self._missing(section)
            if not missing:
                break
            if used >= self.task.attempts - 1 and calls:
                # before the last call: complete what the ladder can, ask only for what is left
                completed += self._completion(section, calls)
                if not self._missing(section):
                    break
            calls += 1
            if self._attempt(section, calls, late=used >= 2):
                used += 1
        if self._missing(section):
            completed += self._completion(section, calls)
        left = self._missing(section)
        self.outcome.sections.append({
            "id": section, "attempts": calls, "complete": not left,
            "missing": [f"{s.voice} {s.label}" for s in left], "completed": completed,
        })

    def _attempt(self, section: str, attempt: int, late: bool) -> bool:
        """One section call; True when the reply was usable (it could be read)."""
        missing = self._missing(section)
        total = sum(len(self.task.slots(section, v)) for v in self.task.voice_ids)
        fields: dict[str, Any] = {"soft_rules": True}
        trial = None
        if late and len(missing) < total:
            # late attempts re-propose every voice that still has gaps, kept only if better
            trial = (self.ctx.checkpoint(), len(missing))
            gaps = {s.voice for s in missing}
            for cand in [k.cand for k in self.ver.kept.values()]:
                if cand.voice in gaps and cand.slot.section == section:
                    self.ver.remove(cand.id)
            missing = self._missing(section)
        if len(missing) < total:
            self._make_room(missing)
            missing = self._feasible(section, missing)
            fields["missing"] = tuple(self._missing_payload(missing))
            fields["context"] = tuple(self._context(section))
        reply, call_id = self.session.call("section", section, attempt, **fields)
        parsed = parse_proposal(reply, self.task)
        self.outcome.errors += [f"{call_id} ({section}, attempt {attempt}): {e}" for e in parsed.errors]
        pending = self._bind(parsed.events, section, attempt, call_id)
        self._finish(pending, section, attempt)
        if trial is not None:
            # the re-proposed voices are judged after the ladder's completion, as the old ones were
            completed = self._completion(section, attempt)
            if len(self._missing(section)) > trial[1]:
                self.ctx.restore(trial[0])
            else:
                self.completed += completed
        return bool(parsed.events)

    def _completion(self, section: str, attempt: int) -> list[str]:
        """The deterministic completion may write at most one note per scheduled statement, never a
        section the proposer did not write: the candidate stays the model's."""
        if not self.complete_holes:
            return []
        holes = self._missing(section)
        statements = sum(len(self.task.blueprint.forms_for(section, v)) for v in self.task.voice_ids)
        per = Counter((s.voice, s.statement) for s in holes)
        if len(holes) > COMPLETE_PER_STATEMENT * statements or max(per.values(), default=0) > COMPLETE_PER_STATEMENT:
            return []
        return [event_id(s) for s in holes if self._complete(s, attempt)]

    def _feasible(self, section: str, missing: list[Slot]) -> list[Slot]:
        """Never ask for a note in a window too short to hold it: a run of missing slots whose free
        window cannot hold them at the shortest duration gives the model the neighbouring kept notes
        of its voice to write again, until it can (the model then writes the run afresh)."""
        shortest = max(self.task.texture.min_duration, self.task.texture.grid)
        for _ in range(4 * len(self.task.voice_ids) * 12):
            runs: dict[tuple[str, Fraction, Fraction], list[Slot]] = {}
            for slot in missing:
                runs.setdefault((slot.voice, *self.ver.window(slot)), []).append(slot)
            short = next(((k, v) for k, v in runs.items() if k[2] - k[1] < len(v) * shortest), None)
            if short is None:
                return missing
            (_voice, lo, hi), slots = short
            before, after = self.ver.neighbours(slots[0])[0], self.ver.neighbours(slots[-1])[1]
            sec = self.task.section(section)
            options = [e for e in (before, after) if e is not None and self.ver.kept[e].cand.slot.section == section]
            if not options:
                return [s for s in missing if s not in slots] if hi - lo < len(slots) * shortest and (
                    lo, hi) == (sec.start, sec.end) else missing
            # give back the neighbour on the side with less room (the longer note first on a tie)
            eid = max(options, key=lambda e: self.ver.kept[e].cand.duration)
            self.ver.remove(eid)
            missing = self._missing(section)
        return missing

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
                if self.ctx.settle(rewrite_segment(cand, self.ver.problems(cand), self.ctx)):
                    return True
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
        if self.ctx.settle(reflow(self.ctx, cand, midis) if midis else None):
            return True
        return bool(midis) and (reflow_pushing(self.ctx, cand, midis) or relax_section(self.ctx, cand, midis))

    def _bind(self, proposed: list[ProposedEvent], section: str, attempt: int, call_id: str) -> list[Candidate]:
        """Map proposed events onto slots in lockstep, verify each, and repair it or defer it."""
        pending: list[Candidate] = []
        for voice in self.task.voice_ids:
            slots = self.task.slots(section, voice)
            mine = sorted((p for p in proposed if p.voice == voice), key=lambda p: p.onset)
            for k, (pe, j) in enumerate(zip(mine, align(mine, slots), strict=True)):
                if j is None:
                    self._drop(None, section, voice, attempt, ["ORDER"], pe)
                    continue
                slot = slots[j]
                if self.ver.filled(slot):
                    continue
                claimed = None if pe.form is None or pe.position is None else f"{pe.form.label}:{pe.position}"
                until = next((q.onset for q in mine[k + 1:] if q.onset > pe.onset), None)
                cand = Candidate(event_id(slot), slot, pe.onset, pe.duration, pe.midi, pe.pc, claimed,
                                 (), attempt, (call_id,), until)
                cand = snap(cand, self.task)
                if not self._try_immediate(cand):
                    pending.append(cand)
        return pending

    def _try_immediate(self, cand: Candidate) -> bool:
        """The rungs before the first batched one, in registry order, on one note; kept if clean."""
        problems = self.ver.problems(cand)
        current = cand
        mark = self.ctx.mark()
        for rung in self.immediate:
            if not problems:
                break
            fixed = rung.fn(current, problems, self.ctx)
            if fixed is not None:
                current = fixed
                problems = self.ver.problems(current)
        return self.ctx.settle(None if problems else current, mark, crossing_ok=False)

    def _finish(self, pending: list[Candidate], section: str, attempt: int) -> None:
        """The later rungs (model patch, rewrite, plugins) for notes the timing rungs could not fix."""
        for rung in self.later:
            if not pending:
                break
            if rung.batch:  # a model rung: one call for every pending note of the section
                pending = rung.fn(pending, Batch(self, section, attempt))
                continue
            still = []
            for cand in pending:
                if not self.ctx.settle(rung.fn(cand, self.ver.problems(cand), self.ctx)):
                    still.append(cand)
            pending = still
        for cand in pending:
            if not (self.deterministic and self._reflow_pending(cand)):
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
        # the scheduled pitch class written by the harness (rewrite) or the model's, moved (reflow)
        base = cand.changed("rewrite", claimed_pc=cand.slot.pc, until=None) if cand.midi % 12 != cand.slot.pc \
            else replace(cand, until=None)
        if self.ctx.settle(reflow(self.ctx, base, midis)):
            return True
        return reflow_pushing(self.ctx, base, midis)

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
            "author": author_of(cand.rungs), "attempts": cand.attempt, "calls": list(cand.calls),
        })
    return out


def run_harness(session: Session, ladder_name: str = "serialkit") -> Outcome:
    """The full harness variant, on serialkit's ladder or the paper's."""
    harness = Harness(session, ladder_name=ladder_name)
    outcome = harness.run()
    outcome.certificates = certificates(harness.ver)
    return outcome


__all__ = ["Harness", "Outcome", "certificates", "event_id", "run_harness"]
