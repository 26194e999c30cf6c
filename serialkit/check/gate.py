"""The one gate every candidate passes through, whoever wrote it (harness, raw, self-refine,
soft-rules, or a file given to ``serialkit check --task``).

A candidate is a piece framed by its task (row, voices, sections, blueprint) whose notes may carry
the tags their writer claimed (form, position, pitch class). The gate checks

* the **claims**, where the candidate makes them: ROW (the claimed form's pitch class at the
  claimed position is the sounding one), ORDER (claimed positions advance), PC (a claimed pitch
  class is the sounding one and the claimed position's), SCHED (claimed forms follow the
  blueprint; strict only), with COLL, RANGE and CROSS over the notes themselves;
* the **inferred reading**: the notes stripped of every claim, labelled by ``core.analysis`` from
  their pitches alone and checked by the same predicates (a note no statement explains fails ROW);
* **sections**: every voice the blueprint schedules in a section has notes there and no
  section's reply was unreadable (both modes);
* **time** (both modes, where the task's limits are given): SPAN (a note outside the piece or
  its section's span), GRID (an onset off the task's grid), DUR (a duration outside the task's
  shortest and longest note), MONO (two notes of one voice sounding together);
* **completeness** (strict only): every scheduled statement is present with all twelve notes,
  counted on the verified labels (a harness drop leaves its place empty).

Strict release needs all of it. Relaxed release ignores SCHED and completeness: other row forms
than the blueprint's and a tag-preserving subsequence of the statements (dropped notes or
statements) are accepted, but never a missing or unreadable section.

The verified labels (``labels``) are the only labels a released run may export: the claimed tag of
every note whose claim passed ROW, PC and ORDER, or, for a candidate that claims nothing, the
inferred label.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from serialkit.check.report import (
    analyze_notes,
    bare_notes,
    check_piece,
    claims_violations,
    regrouped_note,
)
from serialkit.core.piece import Piece, Tag
from serialkit.core.predicates import Columns, Limits, Rules, check_time, tagged_statements
from serialkit.core.predicates.statements import statements_from_labels
from serialkit.core.rows import position_label

if TYPE_CHECKING:
    from serialkit.core.analysis import Analysis

__all__ = ["GATE_CODES", "GATE_STRICT_ONLY", "GateVerdict", "gate_candidate"]

GATE_CODES = ("ROW", "ORDER", "COLL", "PC", "RANGE", "CROSS", "SCHED", "SPAN", "GRID", "DUR", "MONO", "UNEXPLAINED",
         "SECTION", "EXTRA", "COMPLETE")
"""Every code the gate reports: the seven predicates (``PREDICATE_CODES``), the four time predicates, UNEXPLAINED (no notes at all), SECTION (a
missing or unreadable section), EXTRA (more statements in a voice and section than the blueprint
schedules there) and COMPLETE (a scheduled statement short of notes)."""

TAG_CODES = frozenset({"ROW", "ORDER", "SCHED"})
"""Codes that judge a reading (claimed or inferred tags) rather than the notes themselves."""

GATE_STRICT_ONLY = frozenset({"SCHED", "COMPLETE"})
"""Gate codes only a strict release counts: SCHED (the blueprint's forms) and COMPLETE (every
scheduled note delivered); a relaxed release ignores both."""

CHECKER = "serialkit.check"
ANALYSIS = "serialkit.core.analysis"


@dataclass(frozen=True)
class GateVerdict:
    """The gate's answer for one candidate: strict and relaxed, every violation, the verified
    labels, and how much of the schedule was delivered."""

    strict: bool
    relaxed: bool
    violations: tuple[dict[str, Any], ...] = ()
    unexplained: tuple[str, ...] = ()
    coverage: Fraction = Fraction(1)
    checker: str = CHECKER
    analysis: str = ANALYSIS
    notes: tuple[str, ...] = field(default=())
    labels: Mapping[str, str | None] = field(default_factory=dict)
    """Event id → verified label (``P0:3``), None where the gate accepted no label."""
    delivered: int = 0
    """Scheduled notes present with a verified label in their scheduled statement."""
    scheduled: int = 0
    short: tuple[dict[str, Any], ...] = ()
    """Scheduled statements short of notes: section, voice, statement (1-based), form, missing."""
    claimed: bool = False
    """True when the candidate's notes carry claimed tags (checked as well as the inferred reading)."""

    @property
    def complete(self) -> bool:
        """Every scheduled note delivered and no section missing or unreadable."""
        return self.delivered == self.scheduled and not any(v["code"] == "SECTION" for v in self.violations)

    def passed(self, mode: str) -> bool:
        """The verdict in ``strict`` or ``relaxed`` mode."""
        return self.strict if mode == "strict" else self.relaxed

    def counts(self) -> dict[str, int]:
        """Violations per code."""
        out: dict[str, int] = {}
        for v in self.violations:
            out[v["code"]] = out.get(v["code"], 0) + 1
        return out

    def predicates(self) -> dict[str, bool]:
        """Pass (True) or fail per code."""
        counts = self.counts()
        return {code: counts.get(code, 0) == 0 for code in GATE_CODES}

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "strict": self.strict,
            "relaxed": self.relaxed,
            "checker": self.checker,
            "analysis": self.analysis,
            "coverage": str(self.coverage),
            "predicates": self.predicates(),
            "counts": self.counts(),
            "unexplained": list(self.unexplained),
            "claimed": self.claimed,
            "complete": self.complete,
            "delivered": self.delivered,
            "scheduled": self.scheduled,
            "short": [dict(s) for s in self.short],
        }


def gate_candidate(
    piece: Piece,
    rules: Rules = Rules(),
    *,
    unreadable: Iterable[str] = (),
    plugins: bool = True,
    limits: Limits | None = None,
    analysis: Analysis | None = None,
) -> GateVerdict:
    """Judge one candidate (a piece with row, sections and blueprint; notes with or without claimed
    tags). ``unreadable`` names sections whose reply could not be read (a mapping: with why, which
    the SECTION finding says). ``limits``: the task's
    time limits (None: the piece's sections bound the notes and every voice is monophonic, with
    no grid or duration limits). ``analysis``: one already made of the candidate's notes under its
    row and convention (``analyze_notes``), used instead of reading them again."""
    row = piece.row
    if row is None:
        raise ValueError("gate_candidate needs a piece with a row (frame the candidate by its task)")
    piece, regrouped = statements_from_labels(piece)  # the labels, not how a file names ids, decide
    bare = bare_notes(piece)
    if analysis is None or analysis.row != row or analysis.convention != piece.convention:
        analysis = analyze_notes(bare, row, piece.convention)
    inferred = check_piece(bare, row=piece.row, convention=piece.convention, rules=rules, plugins=plugins,
                           analysis=analysis)
    claimed = any(e.tag is not None for e in piece.events)
    violations: list[dict[str, Any]] = []
    notes: list[str] = [] if regrouped is None else [regrouped_note(regrouped)]
    labels: dict[str, str | None]
    if claimed:
        refused: set[str] = set()
        cols = Columns(piece)
        for i in cols.order:
            e = cols.events[i]
            if e.tag is None:
                refused.add(e.id)
                violations.append({"code": "ROW", "event_ids": [e.id], "location": cols.where(i), "tags": "claims",
                                   "message": "the note claims no row form and position (its neighbours do)"})
        for v in claims_violations(piece, rules, plugins):
            if v.code in ("ROW", "ORDER", "PC"):  # SCHED does not make a label wrong
                refused.update(v.event_ids)
            violations.append(dict(v.to_dict(), tags="claims"))
        seen = {(v["code"], tuple(v["event_ids"]), v["message"]) for v in violations}
        overruled = 0
        for v in inferred.violations:
            if (v.code, v.event_ids, v.message) in seen:
                continue
            if v.code in TAG_CODES and not set(v.event_ids) & refused:
                overruled += 1  # the analysis reads verified claims otherwise: the claims stand
                continue
            violations.append(dict(v.to_dict(), tags="inferred"))
        if overruled:
            notes.append(f"the analysis read {overruled} finding(s) differently from verified claims; "
                         "the claims stand (each was checked against the row)")
        labels = {e.id: None if e.tag is None or e.id in refused else _label(e.tag) for e in piece.events}
        accepted = piece.with_events(
            e if e.tag is None or e.id not in refused else e.copy(tag=None) for e in piece.events
        )
    else:
        violations += [dict(v.to_dict(), tags="inferred") for v in inferred.violations]
        labels = {e.id: inferred.labels.get(e.id) for e in piece.events}
        accepted = analysis.tagged(bare)
    violations += [dict(v.to_dict(), tags="time") for v in check_time(piece, limits or Limits())]
    violations += _sections(piece, unreadable)
    violations += _extra(piece if claimed else analysis.tagged(bare))
    if not piece.events:
        violations.append({"code": "UNEXPLAINED", "event_ids": [], "message": "the candidate has no notes",
                           "location": None, "tags": "inferred"})
    delivered, scheduled, short = _completeness(accepted)
    for s in short:
        missing = s["missing"]
        what = ("is missing" if len(missing) == 12
                else f"lacks position{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))}")
        violations.append({
            "code": "COMPLETE", "event_ids": [], "location": f"section {s['section']}, voice {s['voice']}",
            "tags": "schedule",
            "message": f"scheduled statement {s['statement']} ({s['form']}) of voice {s['voice']} in section "
                       f"{s['section']} {what}",
        })
    strict = not violations
    relaxed = all(v["code"] in GATE_STRICT_ONLY for v in violations)
    notes.insert(0, f"delivered {delivered} of {scheduled} scheduled notes")
    return GateVerdict(
        strict, relaxed, tuple(violations), tuple(inferred.unexplained),
        Fraction(inferred.coverage) if inferred.coverage is not None else Fraction(1),
        CHECKER, ANALYSIS, tuple(notes), labels, delivered, scheduled, tuple(short), claimed,
    )


def _label(tag: Tag) -> str:
    return position_label(tag.form, tag.position)


def _section_of(piece: Piece, event: Any) -> str | None:
    return event.section if event.section is not None else piece.section_of(event.onset)


def _sections(piece: Piece, unreadable: Iterable[str]) -> list[dict[str, Any]]:
    """SECTION: an unreadable reply, or a voice the blueprint schedules in a section with no notes there."""
    out: list[dict[str, Any]] = []
    bad = set(unreadable)
    why = dict(unreadable) if isinstance(unreadable, Mapping) else {}
    blueprint = piece.blueprint
    if blueprint is None:
        return out
    present = {(_section_of(piece, e), e.voice) for e in piece.events}
    for sec in sorted(piece.sections, key=lambda s: s.start):
        if sec.id in bad:
            out.append({"code": "SECTION", "event_ids": [], "location": f"section {sec.id}", "tags": "schedule",
                        "message": f"section {sec.id}: the reply could not be read"
                                   + (f" ({why[sec.id]})" if why.get(sec.id) else "")})
        empty = [v for v in piece.voice_ids if blueprint.forms_for(sec.id, v) and (sec.id, v) not in present]
        if empty and sec.id not in bad:
            voices = ", ".join(empty)
            out.append({"code": "SECTION", "event_ids": [], "location": f"section {sec.id}", "tags": "schedule",
                        "message": f"section {sec.id} is missing: voice{'s' if len(empty) > 1 else ''} {voices} "
                                   f"{'have' if len(empty) > 1 else 'has'} no notes there"})
    return out


def _extra(piece: Piece) -> list[dict[str, Any]]:
    """EXTRA: a voice holds more statements in a section than the blueprint schedules there (in
    either mode: the relaxed gate accepts other forms and fewer notes, never more statements)."""
    blueprint = piece.blueprint
    if blueprint is None:
        return []
    cols = Columns(piece)
    count: dict[tuple[str | None, str], list[str]] = {}
    for stmt in tagged_statements(cols):
        places = {(_section_of(piece, cols.events[i]), cols.events[i].voice) for i in stmt.indices}
        for place in places:
            count.setdefault(place, []).append(cols.ids[stmt.indices[0]])
    out = []
    for (section, voice), firsts in sorted(count.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        k = len(blueprint.forms_for(section, voice))
        if len(firsts) > k:
            out.append({"code": "EXTRA", "event_ids": firsts[k:], "location": f"section {section}, voice {voice}",
                        "tags": "claims" if any(e.tag is not None for e in piece.events) else "inferred",
                        "message": f"voice {voice} has {len(firsts)} statements in section {section}, "
                                   f"where the blueprint schedules {k}"})
    return out


def _completeness(piece: Piece) -> tuple[int, int, list[dict[str, Any]]]:
    """(delivered, scheduled, short statements) over the verified tags of ``piece``.

    Each (section, voice)'s statements are ordered by their first note; the n-th is matched with
    the n-th scheduled statement there, and each of its order positions heard counts once.
    """
    blueprint = piece.blueprint
    if blueprint is None:
        return 0, 0, []
    cols = Columns(piece)
    by_place: dict[tuple[str | None, str], list[tuple[Fraction, set[int]]]] = {}
    for stmt in tagged_statements(cols):
        first = stmt.indices[0]
        event = cols.events[first]
        positions = {t.position for i in stmt.indices if (t := cols.tags[i]) is not None}
        by_place.setdefault((_section_of(piece, event), event.voice), []).append((event.onset, positions))
    delivered = scheduled = 0
    short: list[dict[str, Any]] = []
    for sec in sorted(piece.sections, key=lambda s: s.start):
        for voice in piece.voice_ids:
            forms = blueprint.forms_for(sec.id, voice)
            found = sorted(by_place.get((sec.id, voice), []), key=lambda x: x[0])
            for n, form in enumerate(forms):
                scheduled += 12
                heard = found[n][1] if n < len(found) else set()
                delivered += len(heard & set(range(12)))
                missing = sorted(set(range(12)) - heard)
                if missing:
                    short.append({"section": sec.id, "voice": voice, "statement": n + 1,
                                  "form": form.label, "missing": missing})
    return delivered, scheduled, short
