"""Rule profiles: which predicates are violations, which are observations, and their allowances.

* ``analysis`` (``check``, ``annotate`` and ``render`` on a score without a task): ROW and ORDER
  with the idioms of real scores allowed — immediate repeats (in any octave, so doublings too),
  tremolo/oscillation between two adjacent positions, a pivot note shared by two statements (the
  analysis reads elisions) — plus PC and SCHED where the score gives them something to check;
  COLL, CROSS, RANGE and COMPLETE (a statement cut short at an end) are reported as
  observations, never violations; a statement that stops short mid-piece, where its voice goes on
  at once with another statement, is a missing note: ROW (``check.shapes.stops_short``).
* ``generation`` (a task-bound candidate, and ``--rules generation``): every predicate is a
  violation, under the rules given (the task's, or the command's options).
* a list of codes (``--rules ROW,ORDER``): only those predicates run, all as violations.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from serialkit.core.errors import RulesError
from serialkit.core.predicates import PREDICATE_CODES, Rules

__all__ = ["ANALYSIS_OSCILLATION", "OBSERVED", "PROFILES", "Profile", "profile_for"]

PROFILES = ("analysis", "generation")
OBSERVED = ("COLL", "CROSS", "RANGE", "COMPLETE")
"""Codes the analysis profile reports as observations. COMPLETE is a statement cut short at an end
(an excerpt's edge, a composer's fragment — or a missing note at the piece's edge); the generation
profile judges it. One cut short mid-piece is ROW instead (``check.shapes.stops_short``)."""
ANALYSIS_OSCILLATION = 8
"""Extra notes a tremolo between two adjacent positions may take in the analysis profile."""


@dataclass(frozen=True, slots=True)
class Profile:
    """A rule profile: its name, the codes run as violations, the codes run as observations and
    the allowances (``Rules``)."""

    name: str
    codes: tuple[str, ...] | None
    """Codes whose failures are violations; None: every predicate not observed (plugins' too)."""
    observed: tuple[str, ...]
    rules: Rules

    def judges(self, code: str) -> bool:
        """True when a failure of ``code`` is a violation under this profile."""
        return code not in self.observed and (self.codes is None or code in self.codes)

    def runs(self, code: str) -> bool:
        """True when ``code`` is checked at all (as a violation or an observation)."""
        return code in self.observed or self.judges(code)

    def to_dict(self) -> dict[str, object]:
        """JSON form (the check report's ``profile``)."""
        return {"name": self.name, "violations": None if self.codes is None else list(self.codes),
                "observations": list(self.observed), "rules": self.rules.to_dict()}


def known_codes() -> tuple[str, ...]:
    """Every predicate code: the built-in seven, then those plugins register."""
    from serialkit.plugins import registry

    extra = [e.name for e in registry("predicates") if e.name not in PREDICATE_CODES]
    return (*PREDICATE_CODES, *extra)


def profile_for(spec: str | None, rules: Rules = Rules(), task_bound: bool = False,
                known: tuple[str, ...] | None = None) -> Profile:
    """The profile a ``--rules`` value names (None: ``generation`` for a task-bound candidate,
    else ``analysis``). ``rules`` are the command's allowances; the analysis profile widens them to
    the idioms of real scores. ``known``: every predicate code (built-in and plugins')."""
    name = (spec or ("generation" if task_bound else "analysis")).strip()
    if name == "analysis":
        wide = replace(rules, immediate_repeats=True, octave_repeats=True,
                       oscillation_window=max(rules.oscillation_window, ANALYSIS_OSCILLATION))
        return Profile("analysis", None, OBSERVED, wide)
    if name == "generation":
        return Profile("generation", None, (), rules)
    known = known_codes() if known is None else known
    picked = [c.strip().upper() for c in name.split(",") if c.strip()]
    unknown = [c for c in picked if c not in known]
    if not picked or unknown:
        what = f"unknown predicate {', '.join(unknown)}" if unknown else "no predicate named"
        raise RulesError(f"--rules {spec!r}: {what}; give analysis, generation or codes from "
                         f"{', '.join(known)}")
    return Profile(",".join(picked), tuple(c for c in known if c in picked), (), rules)
