"""The generate–verify–repair–trace loop, read top to bottom: ``run_harness`` → ``Harness.run``
writes the sections in order → ``_section`` spends the attempt budget K on section calls and then
lets the ladder complete what is still missing → ``_attempt`` (a late one re-proposes the voices
with gaps, kept only if no worse) → ``_ask``: one call, each proposed note bound to its slot
(``align``, ``snap``) and placed as it arrives, the rest repaired after the call, what no rung
keeps dropped. The ladder — the registered rungs in rank order and ``settle``, its one
keep-or-roll-back — is ``ladder.Ladder``. A section call whose server error outlasted the
proposer's retries is asked once more under the next attempt number, as one of the K calls."""

from __future__ import annotations

import math
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from serialkit.core.errors import EndpointError
from serialkit.core.piece import fraction_str
from serialkit.harness.certificate import certificates
from serialkit.harness.ladder import Ladder, RungSpec, ladder_rungs, make_room
from serialkit.harness.outcome import VariantOutcome, event_id
from serialkit.harness.proposers.base import ProposedEvent, Reply, parse_proposal, unreadable_why
from serialkit.harness.session import Session
from serialkit.harness.tasks import Slot, Task
from serialkit.harness.verify import ProposedNote, Verifier

REASKS = 0  # extra section calls beyond the attempt budget K (none: re-asks stay within K)


def snap(cand: ProposedNote, task: Task) -> ProposedNote:
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
    """One harness run over a task: the verifier's kept notes, the ladder and the run's outcome."""

    def __init__(self, session: Session, rungs: list[RungSpec] | None = None, ladder_name: str = "serialkit") -> None:
        self.session = session
        self.task = session.task
        self.ver = Verifier(self.task)
        self.outcome = VariantOutcome([], trace=True, ladder=ladder_name)
        self.ladder = Ladder(self.ver, rungs if rungs is not None else ladder_rungs(ladder_name), session,
                                    errors=self.outcome.errors)
        self.completed: list[str] = []  # notes the ladder's holes rungs wrote in the current section
        self.unread: list[str] = []  # why each reply of the current section brought no notes
        self.heard = False  # some reply of the current section could be read
        self.calls = 0  # section calls made in the current section (re-asks included), at most K

    def run(self) -> VariantOutcome:
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
        is missing), within ``REASKS`` extra calls; so is a call the server failed (see
        :meth:`_call`). Holes left after the attempts go to the ladder's ``holes`` rungs
        (serialkit's completion) — before the last call too, which then asks only for what is left."""
        used = self.calls = 0
        self.completed = []
        self.unread, self.heard = [], False
        while self.calls < self._budget():
            if not self._missing(section):
                break
            if used >= self.task.attempts - 1 and self.calls:
                self.completed += self._complete(section, self.calls)
                if not self._missing(section):
                    break
            self.calls += 1
            if self._attempt(section, self.calls, late=used >= 2):
                used += 1
        calls = self.calls
        if self._missing(section):
            self.completed += self._complete(section, calls)
        left = self._missing(section)
        record: dict[str, Any] = {
            "id": section, "attempts": calls, "complete": not left,
            "missing": [f"{s.voice} {s.label}" for s in left], "completed": self.completed,
        }
        slots = sum(len(self.task.slots(section, v)) for v in self.task.voice_ids)
        if not self.heard and self.unread and len(left) == slots:
            # no reply could be read and nothing stands in the section: said as the baselines say it
            record.update(readable=False, unreadable=self.unread[-1])
        self.outcome.sections.append(record)

    def _budget(self) -> int:
        """The section calls the current section may make: the task's attempt budget K and the
        ``REASKS`` extra calls for replies that brought nothing."""
        return self.task.attempts + REASKS

    def _call(self, section: str, attempt: int, fields: dict[str, Any]) -> tuple[Reply, str, int]:
        """One section call: (reply, call id, attempt number). A server error the proposer's
        retries did not outlast (:attr:`EndpointError.reaskable`: 5xx, timeout, rate limit, dropped
        connection) is asked once more in a changed form, under the next attempt number, when
        the budget K has a call left; the re-ask is one of the section's calls. Any other endpoint
        error (auth, not found, refused), or a re-ask that fails too, ends the run."""
        try:
            reply, call_id = self.session.call("section", section, attempt, **fields)
            return reply, call_id, attempt
        except EndpointError as exc:
            if not exc.reaskable or self.calls >= self._budget():
                raise
        self.calls += 1
        reply, call_id = self.session.call("section", section, self.calls, **fields)
        return reply, call_id, self.calls

    def _complete(self, section: str, attempt: int) -> list[str]:
        """The ladder's ``holes`` rungs on the section's missing notes; the ids of the notes written."""
        holes = self._missing(section)
        left = {event_id(s) for s in self.ladder.at(section, attempt).complete(holes)}
        return [event_id(s) for s in holes if event_id(s) not in left]

    def _attempt(self, section: str, attempt: int, late: bool) -> bool:
        """One section call; True when the reply was usable (it could be read). A late attempt
        re-proposes every voice that still has gaps, in a trial kept only if, after the ladder's
        completion, no more notes are missing than before."""
        missing = self._missing(section)
        if not late or len(missing) == sum(len(self.task.slots(section, v)) for v in self.task.voice_ids):
            return self._ask(section, attempt)
        gaps = {s.voice for s in missing}
        with self.ver.trial() as trial:
            for cand in self.ver.notes():
                if cand.voice in gaps and cand.slot.section == section:
                    self.ver.remove(cand.id)
            usable = self._ask(section, attempt)
            completed = self._complete(section, self.calls)
            if trial.keep(len(self._missing(section)) <= len(missing)):
                self.completed += completed
        return usable

    def _ask(self, section: str, attempt: int) -> bool:
        """One section call (a replan of the missing notes when some are kept, in windows that can
        hold them); each proposed note is placed as it arrives, the rest go through the later rungs
        and what no rung keeps is dropped. True when the reply was usable."""
        missing = self._missing(section)
        fields: dict[str, Any] = {"soft_rules": True}
        if len(missing) < sum(len(self.task.slots(section, v)) for v in self.task.voice_ids):
            make_room(self.ver, missing)
            missing = self._feasible(section, missing)
            fields["missing"] = tuple(self._missing_payload(missing))
            fields["context"] = tuple(self._context(section))
        reply, call_id, attempt = self._call(section, attempt, fields)
        parsed = parse_proposal(reply, self.task)
        self.outcome.errors += [f"{call_id} ({section}, attempt {attempt}): {e}" for e in parsed.errors]
        why = unreadable_why(parsed)
        if parsed.events:
            self.heard = True
        elif why is not None:
            self.unread.append(why)
        ladder = self.ladder.at(section, attempt)
        pending = [c for c in self._bind(parsed.events, section, attempt, call_id) if not ladder.place(c)]
        for cand in ladder.climb(pending):
            self._drop(cand, section, cand.voice, attempt, sorted(self.ver.problems(cand)), None)
        return bool(parsed.events)

    def _bind(self, proposed: list[ProposedEvent], section: str, attempt: int,
              call_id: str) -> Iterator[ProposedNote]:
        """Map proposed events onto slots in lockstep (snapped to the grid); unbound ones are dropped."""
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
                yield snap(ProposedNote(event_id(slot), slot, pe.onset, pe.duration, pe.midi, pe.pc, claimed,
                                     (), attempt, (call_id,), until), self.task)

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
            {"id": c.id, "voice": c.voice, "onset": fraction_str(c.onset), "duration": fraction_str(c.duration),
             "midi": c.midi, "form": c.slot.form.label, "position": c.slot.position}
            for c in (k.cand for k in self.ver.kept.values()) if c.onset < sec.end and c.end > sec.start
        ]

    def _drop(self, cand: ProposedNote | None, section: str, voice: str, attempt: int, problems: list[str],
              pe: ProposedEvent | None) -> None:
        entry: dict[str, Any] = {"section": section, "voice": voice, "attempt": attempt, "problems": problems}
        if cand is not None:
            entry.update(id=cand.id, slot=cand.slot.label, midi=cand.midi, onset=fraction_str(cand.onset))
        elif pe is not None:
            claimed = None if pe.form is None else f"{pe.form.label}:{pe.position}"
            entry.update(id=None, slot=None, claimed=claimed, midi=pe.midi, onset=fraction_str(pe.onset))
        self.outcome.drops.append(entry)


def run_harness(session: Session, ladder_name: str = "serialkit") -> VariantOutcome:
    """The full harness variant, on serialkit's ladder or the paper's."""
    harness = Harness(session, ladder_name=ladder_name)
    outcome = harness.run()
    outcome.certificates = certificates(harness.ver)
    return outcome


__all__ = ["Harness", "align", "certificates", "run_harness", "snap"]
