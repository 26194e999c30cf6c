"""The ladder at work: its registered rungs in rank order (``ladder_rungs``) and ``Ladder``, the
context they work in, with ``settle``, the one keep-or-roll-back. The deterministic rungs are in
``timing`` (trim, yield, retime) and ``rewrite``; the model's batched rungs in ``patch``; reflow and
the completion of holes in ``reflow``; making room in a voice in ``room``; the verifier and its
trials in ``harness.verify``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import partial
from typing import Any

from serialkit.harness.tasks import Slot
from serialkit.harness.verify import ProposedNote, Verifier

Problems = dict[str, list[ProposedNote]]
Rung = Callable[[ProposedNote, Problems, "Ladder"], "ProposedNote | None"]
Try = Callable[[], "ProposedNote | None"]
LADDERS = ("serialkit", "paper")
SCOPES = ("note", "batch", "holes")


@dataclass(frozen=True)
class RungSpec:
    """A registered rung: its name, rank (the ladder's order), scope and the ladders it belongs to.

    ``note`` rungs are called ``fn(candidate, problems, ctx)`` and return the mended candidate (not
    yet kept; they may move other notes to make room) or None; ``batch`` rungs (the model's) run once
    per section call, ``fn(pending, ctx)``, and return the notes still pending; ``holes`` rungs run
    after the attempts, ``fn(slots, ctx)``, and return the slots still empty."""

    name: str
    rank: int
    fn: Any
    scope: str = "note"
    ladders: frozenset[str] = frozenset({"serialkit"})


def ladder_rungs(name: str = "serialkit") -> list[RungSpec]:
    """The rungs of a ladder from the plugin registry, in their explicit rank order. A rung
    registered without ``ladders`` belongs to serialkit's ladder only (the paper's is fixed)."""
    from serialkit.core.errors import PluginError, TaskError
    from serialkit.plugins import ordered

    if name not in LADDERS:
        raise TaskError(f"unknown ladder {name!r} (known: {', '.join(LADDERS)})")
    specs = []
    for e in ordered("repair_rungs"):
        scope = str(e.meta.get("scope", "batch" if e.meta.get("batch") else "note"))
        if scope not in SCOPES:
            raise PluginError(f"repair rung {e.name!r} of {e.plugin}: unknown scope {scope!r} "
                              f"(known: {', '.join(SCOPES)})")
        specs.append(RungSpec(e.name, int(e.meta["rank"]), e.load(), scope,
                              frozenset(str(e.meta.get("ladders", "serialkit")).split())))
    return [r for r in specs if name in r.ladders]


@dataclass
class Ladder:
    """The ladder at work: its rungs in registry order over the run's verifier, and what the model's
    rungs need (the session, the section and attempt being written, where reply errors go).

    A note climbs the ladder in three places, each in rank order: as it arrives (``place``: the note
    rungs before the first batched rung, chained on the note), after its section call (``climb``:
    the rungs from the first batched one on, over the call's pending notes) and, for a slot still
    empty after the attempts, the ``holes`` rungs (``complete``). Every placement goes through
    ``settle``, the ladder's one keep-or-roll-back on a ``Verifier.trial``."""

    verifier: Verifier
    rungs: list[RungSpec] = field(default_factory=lambda: ladder_rungs("serialkit"))
    session: Any = None  # serialkit.harness.session.Session, for the model's rungs
    section: str = ""
    attempt: int = 1
    errors: list[str] = field(default_factory=list)

    @property
    def grid(self) -> Fraction:
        """The task's onset grid."""
        return self.verifier.task.texture.grid

    @property
    def first(self) -> list[RungSpec]:
        """The note rungs before the first batched rung (trim, yield, retime): deterministic timing."""
        out = []
        for rung in self.rungs:
            if rung.scope == "batch":
                break
            if rung.scope == "note":
                out.append(rung)
        return out

    def at(self, section: str, attempt: int) -> Ladder:
        """The ladder for one section call."""
        return replace(self, section=section, attempt=attempt)

    def settle(self, *tries: Try, crossing_ok: bool = True, add: bool = True) -> ProposedNote | None:
        """The ladder's one keep-or-roll-back. Each try proposes the note (moving other notes if it
        must; pushing and relaxing keep it themselves, in place before the notes in its way move)
        inside a verifier trial; the first whose note is clean is kept — added to the kept notes, or
        with ``add=False`` handed back to a caller that judges it again (a rung made of tries) — and
        every other try is rolled back. Returns the kept note or None."""
        ver = self.verifier
        for make in tries:
            with ver.trial() as trial:
                fixed = make()
                if fixed is not None and trial.keep(not ver.problems(fixed, crossing_ok=crossing_ok)):
                    if add and fixed.id not in ver.kept:
                        ver.add(fixed)
                    return fixed
        return None

    def retimed(self, cand: ProposedNote, problems: Problems, crossing_ok: bool = False) -> ProposedNote | None:
        """The first clean result of the timing rungs (``first``) on one note, each tried alone;
        changes to other notes stay for the caller to keep."""
        return self.settle(*(partial(r.fn, cand, problems, self) for r in self.first),
                           crossing_ok=crossing_ok, add=False)

    def place(self, cand: ProposedNote) -> bool:
        """A note as it arrives: the timing rungs chained on it (each works on what the one before
        left), kept if it then has no problem and crosses nothing."""
        def chain() -> ProposedNote | None:
            current, problems = cand, self.verifier.problems(cand)
            for rung in self.first:
                if not problems:
                    break
                fixed = rung.fn(current, problems, self)
                if fixed is not None:
                    current, problems = fixed, self.verifier.problems(fixed)
            return None if problems else current

        return self.settle(chain, crossing_ok=False) is not None

    def climb(self, pending: list[ProposedNote]) -> list[ProposedNote]:
        """The rungs from the first batched one on (model patch, rewrite, reflow, plugins), in rank
        order, over a section call's pending notes; returns the notes no rung could keep."""
        first = self.first
        for rung in self.rungs:
            if not pending:
                break
            if rung.scope == "batch":
                pending = rung.fn(pending, self)
            elif rung.scope == "note" and rung not in first:
                pending = [c for c in pending
                           if self.settle(partial(rung.fn, c, self.verifier.problems(c), self)) is None]
        return pending

    def complete(self, holes: list[Slot]) -> list[Slot]:
        """The ``holes`` rungs, in rank order, on the slots still empty after the attempts; returns
        the slots still empty."""
        for rung in self.rungs:
            if rung.scope == "holes" and holes:
                holes = rung.fn(holes, self)
        return holes
