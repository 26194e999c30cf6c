"""The check report: tag (when needed), run every predicate, and build what ``serialkit check`` prints."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from serialkit.core import findings
from serialkit.core.analysis.identify import MIN_COVERAGE
from serialkit.core.errors import PluginError, RowError, SerialkitError
from serialkit.core.piece import Piece, Tag
from serialkit.core.predicates import (
    PREDICATE_CODES,
    PREDICATE_STRICT_ONLY,
    UNTAGGED_CODES,
    Columns,
    PredicateVerdict,
    Rules,
    Violation,
    check_order,
    run_predicates,
    tagged_statements,
)
from serialkit.core.predicates.statements import statements_from_labels
from serialkit.core.rows import Row, _check_convention, position_label

if TYPE_CHECKING:
    from serialkit.check.profiles import Profile
    from serialkit.core.analysis import Analysis, Identification
    from serialkit.core.suggest import NoteSuggestions, Readings

__all__ = ["CheckReport", "analyze_notes", "bare_notes", "check_piece", "claims_violations", "regrouped_note", "require_row", "row_for"]

Predicate = Callable[[Piece, Rules], list[Violation]]
ROW_CODES = ("ROW", "ORDER")
"""Codes that need a row (or the piece's own tags) to be checked at all."""


@dataclass(frozen=True, slots=True)
class CheckReport:
    """Everything ``serialkit check`` knows about a piece: verdicts, violations, labels, statements."""

    verdict: PredicateVerdict
    source: str | None = None
    row: Row | None = None
    convention: str = "relative"
    coverage: Fraction | None = None
    labels: Mapping[str, str | None] = field(default_factory=dict)
    unexplained: tuple[str, ...] = ()
    ambiguities: tuple[dict[str, Any], ...] = ()
    statements: tuple[dict[str, Any], ...] = ()
    events: int = 0
    voices: tuple[str, ...] = ()
    voice_names: Mapping[str, str] = field(default_factory=dict)
    """Voice id → the name messages use (``Piano, staff 1, voice 2``: ``Piece.voice_names``)."""
    rules: Rules = Rules()
    analysed: bool = False
    noteheads: tuple[Mapping[str, Any], ...] | None = None
    """Per-notehead places, labels and colours (``serialkit annotate``); None: not computed."""
    identification: Mapping[str, Any] | None = None
    """Which catalogue row ``--identify`` found, and the runner-up; None: the row was given."""
    observations: tuple[Violation, ...] = ()
    """Findings the profile reports without counting them against the verdict (COLL, CROSS and
    RANGE under ``analysis``)."""
    profile: Mapping[str, Any] | None = None
    """The rule profile the verdict follows (name, violations, observations, rules); None: every
    predicate as a violation (the library default)."""
    suggestions: tuple[Mapping[str, Any], ...] | None = None
    """Suggested corrections per reported note (``core.suggest``); None: not computed."""

    @property
    def strict(self) -> bool:
        """True when every predicate passed."""
        return self.verdict.strict

    @property
    def relaxed(self) -> bool:
        """True when everything but SCHED passed."""
        return self.verdict.relaxed

    @property
    def violations(self) -> tuple[Violation, ...]:
        """Every violation, in predicate order."""
        return self.verdict.violations

    @property
    def notes(self) -> tuple[str, ...]:
        """What was not checked, and why."""
        return self.verdict.notes

    def passed(self, mode: str = "strict") -> bool:
        """The verdict of one mode (``strict`` or ``relaxed``)."""
        return self.verdict.passed(mode)

    def _word(self, ok: bool) -> str:
        """A verdict as ``check`` prints it: ``pass``, ``fail``, or ``not checked`` (no violation,
        but rules the profile asks for could not run: no row)."""
        if ok:
            return "pass"
        return "not checked" if not self.violations and self.verdict.unchecked else "fail"

    def to_dict(self) -> dict[str, Any]:
        """The check report JSON (``schemas/report.schema.json``)."""
        cov = self.coverage
        data = {
            "format": "serialkit-check-report",
            "version": 1,
            "source": self.source,
            "row": None if self.row is None else list(self.row.pcs),
            "row_names": None if self.row is None else self.row.names(),
            "convention": self.convention,
            "strict": self.strict,
            "relaxed": self.relaxed,
            "verdicts": {"strict": self._word(self.strict), "relaxed": self._word(self.relaxed)},
            "coverage": None if cov is None else round(float(cov), 6),
            "coverage_exact": None if cov is None else f"{cov.numerator}/{cov.denominator}",
            "events": self.events,
            "voices": list(self.voices),
            "voice_names": dict(self.voice_names),
            "checked": list(self.verdict.checked),
            "unchecked": list(self.verdict.unchecked),
            "rules": self.rules.to_dict(),
            "counts": self.verdict.counts(),
            "violations": [v.to_dict() for v in self.violations],
            "labels": dict(self.labels),
            "unexplained": list(self.unexplained),
            "ambiguities": list(self.ambiguities),
            "statements": list(self.statements),
            "notes": list(self.notes),
        }
        if self.noteheads is not None:
            data["noteheads"] = [dict(n) for n in self.noteheads]
        if self.identification is not None:
            data["identification"] = dict(self.identification)
        if self.profile is not None:
            data["profile"] = dict(self.profile)
            data["observations"] = [v.to_dict() for v in self.observations]
        if self.suggestions is not None:
            data["suggestions"] = [dict(n) for n in self.suggestions]
        return data


def bare_notes(piece: Piece) -> Piece:
    """The piece without the tags its notes claim: what the analysis reads."""
    return piece.with_events(e.copy(tag=None) if e.tag is not None else e for e in piece.events)


def analyze_notes(piece: Piece, row: Row, convention: str) -> Analysis:
    """The analysis of the piece's notes from their pitches alone (claimed tags set aside)."""
    from serialkit.core.analysis import analyze

    return analyze(bare_notes(piece), row=row, convention=_check_convention(convention))


def _identify(piece: Piece) -> Identification:
    from serialkit.core.analysis import identify

    return identify(piece)


def _plugin_predicates() -> list[tuple[str, Predicate, bool, bool]]:
    """Predicates registered by plugins other than this module: (code, fn, strict_only, needs_tags)."""
    from serialkit.plugins import registry

    try:
        entries = list(registry("predicates"))
    except SerialkitError:
        raise
    except Exception as exc:  # a plugin that cannot even load must say so, not crash the checker
        raise PluginError(f"loading the predicate plugins failed: {type(exc).__name__}: {exc}") from exc
    from serialkit.plugins.builtins import BUILTIN_PREDICATES

    found = []
    for entry in entries:
        if entry.plugin == "serialkit.plugins.builtins" or entry.obj is BUILTIN_PREDICATES.get(entry.name):
            continue
        found.append(
            (entry.name, entry.obj, bool(entry.meta.get("strict_only")), bool(entry.meta.get("needs_tags", True)))
        )
    return found


def _run_plugins(
    plugins: list[tuple[str, Predicate, bool, bool]], piece: Piece, rules: Rules, tagged: bool
) -> list[Violation]:
    out: list[Violation] = []
    for code, fn, _strict_only, needs_tags in plugins:
        if needs_tags and not tagged:
            continue
        try:
            found = list(fn(piece, rules))
        except SerialkitError:
            raise
        except Exception as exc:  # a broken plugin must name itself, not crash the checker
            raise PluginError(f"predicate {code!r} failed: {type(exc).__name__}: {exc}") from exc
        out += [v if isinstance(v, Violation) else Violation.from_dict(dict(v)) for v in found]
    return out


def _own_statements(piece: Piece) -> tuple[dict[str, Any], ...]:
    cols = Columns(piece)
    out = []
    for stmt in tagged_statements(cols):
        slots: list[str | None] = [None] * 12
        voices: dict[str, None] = {}
        for i in stmt.indices:
            tag = cols.tags[i]
            assert tag is not None
            if slots[tag.position] is None:
                slots[tag.position] = cols.ids[i]
            voices.setdefault(cols.events[i].voice, None)
        out.append(
            {
                "id": stmt.key,
                "form": stmt.form.label,
                "event_ids": slots,
                "voices": list(voices),
                "complete": all(s is not None for s in slots),
            }
        )
    return tuple(out)


def claims_violations(piece: Piece, rules: Rules = Rules(), plugins: bool = True) -> tuple[Violation, ...]:
    """Every predicate over the tags the piece's notes claim (its row, its blueprint), without
    the analysis: what the gate checks of a candidate's own claims."""
    extra = _plugin_predicates() if plugins else []
    found = run_predicates(piece, rules) + _order_without_ids(piece, rules) + _run_plugins(extra, piece, rules, True)
    return _dedupe(found)


def _dedupe(violations: Iterable[Violation]) -> tuple[Violation, ...]:
    seen: set[tuple[str, tuple[str, ...]]] = set()
    out = []
    for v in violations:
        key = (v.code, v.event_ids)
        if key not in seen:
            seen.add(key)
            out.append(v)
    order = {code: k for k, code in enumerate(PREDICATE_CODES)}
    return tuple(sorted(out, key=lambda v: order.get(v.code, len(order))))


def check_piece(
    piece: Piece,
    row: Row | str | None = None,
    convention: str | None = None,
    rules: Rules = Rules(),
    identify: bool | None = None,
    source: str | None = None,
    plugins: bool = True,
    analysis: Analysis | None = None,
    profile: Profile | None = None,
    suggest: bool = False,
    readings: Readings | None = None,
) -> CheckReport:
    """Check a piece against every hard predicate and return the full report.

    ``analysis`` is one already computed for this piece's bare notes under the same row and
    convention (e.g. by ``serialkit annotate``); it is used instead of running the inference again.
    ``suggest``: also propose a correction for every unexplained note and every ROW/ORDER finding
    (``core.suggest``; the report's ``suggestions``). ``readings``: the analyses the suggestions
    make, shared with other checks of the same notes (``core.suggest.Readings``; a repair's).

    The row is ``row``, else the piece's own, else the one the analysis finds (``identify``: True
    always looks, raising ``RowError`` when no row fits; False never; None, the default, looks
    when the rules judge ROW or ORDER and the piece has no tags of its own). When the rules judge
    ROW or ORDER and no row is known, those codes are ``unchecked`` and the verdict is no pass.
    With a row, the notes are labelled by ``core.analysis`` from their pitches alone, so a
    candidate is never judged on the tags it wrote about itself alone: untagged pieces are checked
    on the inferred labels; tagged pieces on their own tags, with ORDER re-run over each voice's
    runs of one form (ignoring declared statement ids), and in both cases every note the inferred
    statements cannot explain is a ROW violation.
    With a ``profile`` (``serialkit.check.profiles``) its allowances replace ``rules``, its
    observed codes (COLL, CROSS, RANGE, COMPLETE under ``analysis``) go to ``observations`` instead of the
    verdict, and codes it does not name are not reported.
    Without a row and without tags only the predicates that need no tags run (COLL, PC, RANGE,
    CROSS); the report's ``notes`` say so.
    """
    if profile is not None:
        rules = profile.rules
    conv = _check_convention(convention or piece.convention)
    the_row = Row.parse(row) if row is not None else piece.row
    own_tagged = any(e.tag is not None for e in piece.events)
    needs_row = tuple(c for c in ROW_CODES if profile is None or profile.judges(c))
    identified, no_row = None, "no row was given and the score names none"
    failed: Mapping[str, Any] | None = None  # the identification's decision when no row was found
    if the_row is None and (identify or (identify is None and needs_row and not own_tagged)):
        try:
            identified = _identify(piece)
        except RowError as exc:
            if identify:
                raise RowError(f"{source}: {exc}" if source else str(exc)) from None
            no_row = str(exc)
            failed = getattr(exc, "record", None)
        else:
            the_row = identified.row
    if the_row is not None:
        piece = piece.copy(row=the_row, convention=conv)
    elif conv != piece.convention:
        piece = piece.copy(convention=conv)
    extra = _plugin_predicates() if plugins else []
    notes: list[str] = []
    if own_tagged:  # the labels, not how a file names statement ids, decide the statements
        piece, regrouped = statements_from_labels(piece)
        if regrouped is not None:
            notes.append(regrouped_note(regrouped))
    violations: list[Violation] = []
    strict_only: set[str] = set()  # COMPLETE, when reported: the relaxed verdict ignores it
    structural: list[Violation] = []  # about statements, not about one note: no suggestion for them
    checked: list[str] = []
    unchecked: tuple[str, ...] = ()
    given, analysis = analysis, None
    if the_row is not None:
        bare = bare_notes(piece)
        if given is not None and given.row == the_row and given.convention == conv:
            analysis = given
        else:
            analysis = analyze_notes(bare, the_row, conv)
        inferred = analysis.tagged(bare)
        icols = Columns(inferred)  # one view of the inferred reading for every finding below
        if own_tagged:
            violations += run_predicates(piece, rules)
            violations += _order_without_ids(piece, rules)
            violations += _run_plugins(extra, piece, rules, True)
        else:
            violations += run_predicates(icols, rules)
            violations += _run_plugins(extra, inferred, rules, True)
        fragments = findings.fragments(icols, analysis) if piece.blueprint is None else []
        shape: list[Violation] = []
        absorbed: set[str] = set()  # unexplained notes a hole (or edge-repeat) finding names
        short_as_row = False  # statements stopping short mid-piece reported as ROW (missing notes)
        ends = None  # the statements' open ends, read once for ROW and COMPLETE
        if piece.blueprint is None and (profile is None or profile.judges("ROW")):
            if fragments:
                structural = shape = fragments
            else:
                holes, absorbed = findings.holes(icols, analysis)
                structural = [v for v in holes if not set(v.event_ids) & absorbed]
                edges, rest = findings.edge_repeats(icols, analysis)
                absorbed |= rest
                ends = findings.open_ends(icols, analysis)
                stops = findings.stops_short(icols, analysis, ends)
                structural += stops
                short_as_row = True
                shape = (holes + stops + edges + findings.scraps(icols, analysis)
                         + findings.borrowed_out_of_time(icols, analysis) + findings.exchanged(icols, analysis))
        violations += findings.unexplained(icols, set(analysis.unexplained) - absorbed) + shape
        if piece.blueprint is None and not fragments and profile is not None and profile.runs("COMPLETE"):
            violations += findings.cut_short(icols, analysis, mid_piece=not short_as_row, ends=ends)
            strict_only = {"COMPLETE"}
        checked = list(PREDICATE_CODES)
        if piece.blueprint is None:
            notes.append("SCHED had nothing to check: the piece has no blueprint")
    elif own_tagged:
        violations += run_predicates(piece, rules, [c for c in PREDICATE_CODES if c != "ROW"])
        violations += _order_without_ids(piece, rules)
        violations += _run_plugins(extra, piece, rules, True)
        checked = [c for c in PREDICATE_CODES if c != "ROW"]
        unchecked = tuple(c for c in needs_row if c == "ROW")
        notes.append("ROW not checked: the piece has tags but no row (give --row or --identify)")
        if piece.blueprint is None:
            notes.append("SCHED had nothing to check: the piece has no blueprint")
    else:
        violations += run_predicates(piece, rules, UNTAGGED_CODES)
        violations += _run_plugins(extra, piece, rules, False)
        checked = list(UNTAGGED_CODES)
        unchecked = needs_row
        if needs_row:
            notes.append(f"{' and '.join(needs_row)} not checked: {_reason(no_row)}; give --row ROW")
    doubt = row_doubt(analysis.coverage) if analysis is not None and identified is None else None
    if doubt:
        notes.append(doubt)
    if suggest and analysis is not None and _too_many(analysis):
        suggest = False
        notes.append(
            f"no suggested corrections: {len(analysis.unexplained)} of {len(analysis.tags)} notes are "
            "unexplained, more than wrong notes would leave"
        )
    checked += [code for code, *_ in extra if code not in checked]
    strict_only |= PREDICATE_STRICT_ONLY | {code for code, _fn, only, _tags in extra if only}
    found = _dedupe(violations)
    observed: tuple[Violation, ...] = ()
    if profile is not None:
        observed = tuple(v for v in found if v.code in profile.observed)
        found = tuple(v for v in found if profile.judges(v.code))
        checked = [c for c in checked if profile.judges(c)]
        if profile.observed:
            notes.append(f"{', '.join(profile.observed)}: reported as observations under the "
                         f"{profile.name} profile, not as violations")
    verdict = PredicateVerdict(found, tuple(checked), tuple(notes), frozenset(strict_only), unchecked)
    suggested = _suggestions(piece, analysis, verdict, structural, readings) if suggest and analysis is not None else None
    if analysis is not None:
        labels: dict[str, str | None] = analysis.labels()
        statements = tuple(s.to_dict() for s in analysis.statements)
        locator = piece.locator()
        by_id = {e.id: e for e in piece.events}
        ambiguities = tuple({**a.to_dict(), "one_reading": a.one_reading,
                             "location": locator.describe(by_id[a.event_id])} for a in analysis.ambiguities)
        unexplained = tuple(analysis.unexplained)
        coverage: Fraction | None = Fraction(analysis.coverage)
    else:
        labels = {e.id: _label(e.tag) for e in piece.events}
        statements = _own_statements(piece) if own_tagged else ()
        ambiguities, unexplained, coverage = (), (), None
    return CheckReport(
        verdict=verdict,
        source=source if source is not None else _source(piece),
        row=the_row,
        convention=conv,
        coverage=coverage,
        labels=labels,
        unexplained=unexplained,
        ambiguities=ambiguities,
        statements=statements,
        events=len(piece.events),
        voices=piece.voice_ids,
        voice_names=piece.voice_names(),
        rules=rules,
        analysed=analysis is not None,
        identification=failed if identified is None else identified.to_dict(),
        observations=observed,
        profile=None if profile is None else profile.to_dict(),
        suggestions=None if suggested is None else _named(piece, suggested),
    )


SUGGEST_NOTES = 16
"""At most this many reported notes get suggestions in one report."""
SUGGEST_BUDGET = 48
"""At most this many candidate corrections are verified in one report (each is one analysis)."""

SUGGEST_WIDE = 48
"""And at most this many more round trouble none of those clears (``suggest``'s wide pass: a wrong
note the analysis absorbs, the correct notes round it left unexplained)."""


def _too_many(analysis: Analysis) -> bool:
    """More notes unexplained than wrong notes would leave: a wrong row, not wrong notes."""
    return len(analysis.unexplained) > max(4, len(analysis.tags) // 8)


def _suggestions(piece: Piece, analysis: Analysis, verdict: PredicateVerdict,
                 structural: Iterable[Violation] = (), readings: Readings | None = None) -> tuple[NoteSuggestions, ...]:
    """The suggestions for the report's findings (``SUGGEST_NOTES``, ``SUGGEST_BUDGET``,
    ``SUGGEST_WIDE``), without those that follow from another's (``_not_following``)."""
    from serialkit.core.suggest import Readings, suggest

    bare = bare_notes(piece)
    own = {e.id: e.tag for e in piece.events if e.tag is not None}
    skip = set(structural)
    findings = [v for v in verdict.violations if v.code in ("ROW", "ORDER") and v not in skip]
    if own:  # a tagged note's finding is about its own claim
        bare = bare.with_events(e.copy(tag=own.get(e.id)) for e in bare.events)
    readings = readings if readings is not None else Readings()
    found = suggest(bare, analysis, findings, max_notes=SUGGEST_NOTES, budget=SUGGEST_BUDGET,
                    wide=SUGGEST_WIDE, suspects=False, readings=readings)  # notes nothing flags stay out
    return _not_following(bare, analysis, found, readings)


def _named(piece: Piece, found: Sequence[NoteSuggestions]) -> tuple[dict[str, Any], ...]:
    """The suggestions as the report gives them: named as the score writes them."""
    from serialkit.core.notenames import NoteNames

    return tuple(NoteNames(piece).suggestions(n.to_dict() for n in found))


FOLLOWING_TRIED = 6
"""At most this many confident corrections are tried against one another (one analysis each)."""
FOLLOWING_WHOLE = 400
"""A piece longer than this is read round each change only (FOLLOWING_WINDOW notes either side),
as ``suggest`` verifies its candidates: two corrections further apart do not follow one another."""
FOLLOWING_WINDOW = 96


def _not_following(bare: Piece, analysis: Analysis, found: Sequence[Any], readings: Readings) -> tuple[Any, ...]:
    """The suggestions without those whose trouble another confident correction clears while its
    own stays: one wrong note can unsettle the reading of bars far from it (Op. 21 with two notes of
    bars 3-4 swapped: statements of bar 14 read with holes, and a correct Bb3 there "corrected" at
    100 %). Each correction at least as confident as a repair needs (at most ``FOLLOWING_TRIED``)
    is made alone and the piece analysed; B follows A when A's change leaves B's note untroubled
    (explained, beside no hole) and B's change leaves A's note troubled. The notes whose
    suggestions follow from another's are left out of the report; ``repair`` puts the first right
    and judges again."""
    from serialkit.core.suggest import DEFAULT_THRESHOLD

    sure = sorted((n for n in found if n.best is not None and n.best.confidence >= DEFAULT_THRESHOLD),
                  key=lambda n: -n.best.confidence)[:FOLLOWING_TRIED]
    if len(sure) < 2:
        return tuple(found)
    troubled: dict[str, set[str]] = {}
    seen: dict[str, set[str]] = {}  # the notes each trial read (a window of a long piece)
    order = sorted(bare.events, key=lambda e: (e.onset, e.voice, e.midi, e.id))
    index = {e.id: i for i, e in enumerate(order)}
    for n in sure:
        edits = {e.event_id: e.after for e in n.best.edits}
        sub, edges = bare, (False, False)
        if len(order) > FOLLOWING_WHOLE:  # a long piece: the window round the change, not all of it
            ixs = [index[e] for e in edits]
            lo, hi = max(0, min(ixs) - FOLLOWING_WINDOW), max(ixs) + FOLLOWING_WINDOW + 1
            sub, edges = bare.with_events(order[lo:hi]), (lo > 0, hi < len(order))
        changed = sub.with_events(e.copy(midi=edits[e.id]) if e.id in edits else e for e in sub.events)
        reading = readings.read(changed, analysis.row, analysis.convention, cut=edges)
        seen[n.event_id] = {e.id for e in changed.events}
        troubled[n.event_id] = set(reading.analysis.unexplained) | {
            e for h in reading.holes for e in h.around | h.members}
    follows = {
        b.event_id for b in sure for a in sure
        if a is not b and b.event_id in seen[a.event_id] and a.event_id in seen[b.event_id]
        and b.event_id not in troubled[a.event_id] and a.event_id in troubled[b.event_id]
        and not {e.event_id for e in a.best.edits} & {e.event_id for e in b.best.edits}
    }
    return tuple(n for n in found if n.event_id not in follows)


def is_ambiguity(entry: Mapping[str, Any]) -> bool:
    """Whether an entry of a report's ``ambiguities`` is an *ambiguity* as ``check`` and ``render``
    count them: a note with more than one reading (an elision, a pivot, a note fitting two
    statements). An entry with ``one_reading`` (a symmetric row's two names for one reading,
    ``P0:3`` is also ``R6:3``) is listed so that every label is known, and is not one. A report
    written before the flag is judged by its reason."""
    if "one_reading" in entry:
        return not entry["one_reading"]
    return not str(entry.get("reason") or "").startswith("symmetric row")


def ambiguity_kinds(entries: Iterable[Mapping[str, Any]]) -> Counter[str]:
    """The ambiguities among ``entries`` by kind (``elision``, ``pivot``, ``fits two statements``:
    the first reason that is not a symmetric row's other name)."""
    kinds: Counter[str] = Counter()
    for entry in entries:
        if is_ambiguity(entry):
            reasons = [r.split(":")[0].strip() for r in str(entry.get("reason") or "").split("; ")]
            kinds[next((r for r in reasons if r != "symmetric row"), "several readings")] += 1
    return kinds


def row_doubt(coverage: float | Fraction) -> str | None:
    """The question a given row explaining under MIN_COVERAGE of the notes raises (identification
    never takes a row explaining so little), or None."""
    if coverage >= MIN_COVERAGE:
        return None
    return (f"the row explains only {float(coverage):.1%} of the notes, below the {float(MIN_COVERAGE):.0%} "
            "a twelve-tone work's row explains (is the row right? without --row the row the music "
            "shows is identified)")


def regrouped_note(why: str) -> str:
    """The note a report carries when a piece's statement ids were set aside for its labels."""
    return (f"statement ids set aside: {why}; statements were read from the labels (each voice's "
            "runs of one form in time order)")


def _reason(message: str) -> str:
    """An identification failure as a clause: its first sentence, without advice."""
    return message.split(";")[0].removeprefix("cannot identify the row: ")


def _label(tag: Tag | None) -> str | None:
    return None if tag is None else position_label(tag.form, tag.position)


def _source(piece: Piece) -> str | None:
    value = piece.metadata.get("source_path") if piece.metadata else None
    return None if value is None else str(value)


def _order_without_ids(piece: Piece, rules: Rules) -> list[Violation]:
    """ORDER again over each voice's runs of one form, ignoring the statement ids the piece
    declares: ids that cut a statement into pieces cannot hide a recurring pitch class."""
    if not any(e.tag is not None and e.tag.statement is not None for e in piece.events):
        return []
    cols = Columns(piece)
    return check_order(cols, rules, tagged_statements(cols, use_ids=False))


def row_for(piece: Piece, source: object, row: Row | str | None = None) -> tuple[Row, Identification | None]:
    """The row to label ``piece`` by: ``row``, else the piece's own, else the one the music shows
    (with the identification). ``RowError`` names ``source`` when no row fits."""
    if row is not None:
        return Row.parse(row), None
    if piece.row is not None:
        return piece.row, None
    try:
        found = _identify(piece)
    except RowError as exc:
        raise RowError(f"{source}: {exc}") from None
    return found.row, found


def require_row(row: Row | None, what: str) -> Row:
    """The row, or a RowError saying ``what`` needs one."""
    if row is None:
        raise RowError(f"{what} needs a row: give --row ROW or --identify")
    return row
