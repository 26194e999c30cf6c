"""What the engraving shows per note: labels, violations, repairs, and the list of findings."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from serialkit.check.report import is_ambiguity
from serialkit.core.errors import RenderInputError

#: The repair rungs in ladder order; each gets its own colour.
RUNGS: tuple[str, ...] = ("trim", "yield", "retime", "patch", "segment", "rewrite", "reflow")

#: Colours chosen so that every pair (and each against plain black notes) stays apart for normal,
#: protan, deutan and tritan vision (Machado et al. 2009 at full severity: CIE76 ΔE ≥ 12; a test
#: checks it). Colour is never the only cue: each kind also has its own outline shape (CUE_SHAPES).
VIOLATION_COLOR = "#d55e00"
UNEXPLAINED_COLOR = "#882255"
AMBIGUOUS_COLOR = "#999933"
RUNG_COLORS: dict[str, str] = {
    "trim": "#0072b2",
    "yield": "#009e73",
    "retime": "#e69f00",
    "patch": "#cc79a7",
    "segment": "#56b4e9",
    "rewrite": "#332288",
    "reflow": "#8c5a2b",
}
OTHER_RUNG_COLOR = "#5f6b7a"

#: The second cue: an outline drawn around the notehead, one shape per kind of mark.
CUE_SHAPES: dict[str, str] = {
    "violation": "square",
    "unexplained": "circle-dashed",
    "ambiguous": "circle-dotted",
    "trim": "triangle-down",
    "yield": "triangle-up",
    "retime": "diamond",
    "patch": "circle",
    "segment": "pentagon",
    "rewrite": "hexagon",
    "reflow": "triangle-right",
    "other": "cross",
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One item of the review list: a violation, an unexplained note, an observation (a finding the
    rule profile reports without judging, e.g. COLL under ``analysis``) or an ambiguity."""

    index: int
    kind: str
    code: str
    event_ids: tuple[str, ...]
    message: str
    location: str = ""
    suggestion: str = ""
    """The correction suggested for the finding's note (``core.suggest``), as one line."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form (used by the review page)."""
        return {
            "index": self.index,
            "kind": self.kind,
            "code": self.code,
            "event_ids": list(self.event_ids),
            "message": self.message,
            "location": self.location,
            "suggestion": self.suggestion,
        }


@dataclass(frozen=True, slots=True)
class NoteMark:
    """Everything the render shows about one note."""

    id: str
    label: str | None = None
    codes: tuple[str, ...] = ()
    unexplained: bool = False
    ambiguous: bool = False
    rung: str | None = None
    certificate: Mapping[str, Any] | None = None
    continuation: bool = False
    aliases: tuple[str, ...] = ()

    @property
    def color(self) -> str | None:
        """The note's colour: violation beats unexplained beats repair rung."""
        if self.codes:
            return VIOLATION_COLOR
        if self.unexplained:
            return UNEXPLAINED_COLOR
        if self.rung:
            return RUNG_COLORS.get(self.rung, OTHER_RUNG_COLOR)
        if self.ambiguous:
            return AMBIGUOUS_COLOR
        return None

    @property
    def cue(self) -> str | None:
        """The kind of mark the colour stands for (the key of ``CUE_SHAPES``), same precedence."""
        if self.codes:
            return "violation"
        if self.unexplained:
            return "unexplained"
        if self.rung:
            return self.rung if self.rung in RUNG_COLORS else "other"
        if self.ambiguous:
            return "ambiguous"
        return None

    @property
    def text(self) -> str | None:
        """The text printed by the notehead: the label, then violation codes (none on ties)."""
        if self.continuation:
            return None
        if not self.codes:  # most notes: the label alone (what the lines below make of it)
            return self.label or ("?" if self.unexplained else None)
        bits = [self.label if self.label else ("?" if self.unexplained else "")]
        bits.extend(c for c in self.codes if c not in bits)
        out = " ".join(b for b in bits if b)
        return out or None

    @property
    def classes(self) -> tuple[str, ...]:
        """CSS classes added to the note's SVG element."""
        out = ["sk-note"]
        if self.label:
            out.append("sk-labelled")
        if self.continuation:
            out.append("sk-tied")
        out.extend(f"sk-viol-{c}" for c in self.codes)
        if self.codes:
            out.append("sk-viol")
        if self.unexplained:
            out.append("sk-unexplained")
        if self.ambiguous:
            out.append("sk-ambiguous")
        if self.rung:
            out.append(f"sk-rung-{_css_word(self.rung)}")
        return tuple(out)


@dataclass(frozen=True, slots=True)
class Marks:
    """All note marks of one render plus its findings and run facts."""

    notes: Mapping[str, NoteMark] = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()
    facts: Mapping[str, Any] = field(default_factory=dict)

    @property
    def labelled(self) -> int:
        """How many notes carry a printed label."""
        return sum(1 for m in self.notes.values() if m.text)

    def rungs_present(self) -> tuple[str, ...]:
        """Rungs used by at least one note, ladder order first."""
        used = {m.rung for m in self.notes.values() if m.rung}
        return tuple(r for r in RUNGS if r in used) + tuple(sorted(used - set(RUNGS)))

    def codes_present(self) -> tuple[str, ...]:
        """Violation codes used by at least one note."""
        return tuple(sorted({c for m in self.notes.values() for c in m.codes}))

    def remap(self, ids: Mapping[str, tuple[str, ...]]) -> Marks:
        """The marks keyed by drawn note ids: event id → (first notehead, tied continuations)."""
        notes: dict[str, NoteMark] = {}
        for eid, mark in self.notes.items():
            drawn = ids.get(eid) or (eid,)
            notes[drawn[0]] = replace(mark, id=drawn[0])
            for other in drawn[1:]:
                if other not in notes:
                    notes[other] = NoteMark(
                        other, None, mark.codes, mark.unexplained, mark.ambiguous, mark.rung, None,
                        continuation=True,
                    )
        findings = tuple(
            replace(f, event_ids=tuple((ids.get(e) or (e,))[0] for e in f.event_ids))
            for f in self.findings
        )
        return Marks(notes, findings, self.facts)


def _css_word(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in text.lower())


def load_json(path: str | Path, what: str) -> Any:
    """Read a JSON file, raising ``RenderInputError`` naming the file and line."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise RenderInputError(f"{p}: cannot read {what}: {exc.strerror or exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise RenderInputError(
            f"{p}: line {exc.lineno}, column {exc.colno}: {what} is not valid JSON ({exc.msg})"
        ) from exc


def build_marks(
    report: Mapping[str, Any] | None = None,
    certificate: Mapping[str, Any] | list[Any] | None = None,
    where: str = "report",
    cert_where: str = "certificate",
) -> Marks:
    """Merge a check report (contract JSON) and a harness certificate into note marks (``where``,
    ``cert_where``: the files, as errors name them)."""
    labels: dict[str, str | None] = {}
    codes: dict[str, list[str]] = {}
    unexplained: set[str] = set()
    ambiguous: set[str] = set()
    findings: list[Finding] = []
    aliases: dict[str, tuple[str, ...]] = {}
    facts: dict[str, Any] = {}
    if report is not None:
        if not isinstance(report, Mapping):
            raise RenderInputError(f"{where}: a check report must be a JSON object")
        _read_report(report, where, labels, codes, unexplained, ambiguous, findings, aliases)
        for key in ("row", "convention", "strict", "relaxed", "coverage", "counts", "profile", "events"):
            if key in report:
                facts[key] = report[key]
        for key in ("unexplained", "violations", "observations"):
            if isinstance(report.get(key), list):
                facts[f"{key}_count"] = len(report[key])
    entries: dict[str, Mapping[str, Any]] = {}
    if certificate is not None:
        facts["task"] = True  # a certificate comes from generate: the page gives its verdicts
        entries = certificate_entries(certificate, cert_where)
        authors = [str(e["author"]) for e in entries.values() if e.get("author")]
        if authors:  # who wrote the notes, as the certificate records it per note
            facts["authorship"] = {a: authors.count(a) for a in dict.fromkeys(authors)}
        for eid, entry in entries.items():
            if eid not in labels or labels[eid] is None and eid not in unexplained:
                label = _certificate_label(entry)
                if label is not None:
                    labels[eid] = label
    ids = set(labels) | set(codes) | unexplained | ambiguous | set(entries)
    notes: dict[str, NoteMark] = {}
    mark = _note_mark
    for eid in sorted(ids):  # one NoteMark per note of the score
        held = entries.get(eid)
        found = codes.get(eid)
        rung = None if held is None or held.get("rung") is None and held.get("repair") is None else _rung(held)
        notes[eid] = mark(eid, labels.get(eid), tuple(dict.fromkeys(found)) if found else (),
                          eid in unexplained, eid in ambiguous, rung, held, False, aliases.get(eid, ()))
    return Marks(notes, tuple(findings), facts)


_ID, _LABEL, _CODES, _UNEXPLAINED, _AMBIGUOUS, _RUNG, _CERTIFICATE, _CONTINUATION, _ALIASES = (
    NoteMark.__dict__[f].__set__ for f in NoteMark.__slots__
)


def _note_mark(eid: str, label: str | None, codes: tuple[str, ...], unexplained: bool, ambiguous: bool,
               rung: str | None, certificate: Mapping[str, Any] | None, continuation: bool,
               aliases: tuple[str, ...]) -> NoteMark:
    """``NoteMark(...)`` of every field made without the frozen dataclass's ``__init__`` (a score
    makes thousands): each slot set as that ``__init__`` sets it, at half the cost."""
    mark: NoteMark = object.__new__(NoteMark)
    _ID(mark, eid)
    _LABEL(mark, label)
    _CODES(mark, codes)
    _UNEXPLAINED(mark, unexplained)
    _AMBIGUOUS(mark, ambiguous)
    _RUNG(mark, rung)
    _CERTIFICATE(mark, certificate)
    _CONTINUATION(mark, continuation)
    _ALIASES(mark, aliases)
    return mark


def _read_report(
    report: Mapping[str, Any],
    where: str,
    labels: dict[str, str | None],
    codes: dict[str, list[str]],
    unexplained: set[str],
    ambiguous: set[str],
    findings: list[Finding],
    aliases: dict[str, tuple[str, ...]],
) -> None:
    if not any(k in report for k in ("labels", "violations", "unexplained", "ambiguities", "observations")):
        raise RenderInputError(f"{where}: not a check report: it has no labels, violations or unexplained "
                               "notes (write one with serialkit check SCORE --report FILE)")
    raw_labels = report.get("labels") or {}
    if not isinstance(raw_labels, Mapping):
        raise RenderInputError(f"{where}: 'labels' must map event ids to labels")
    labels.update({str(eid): None if label in (None, "") else str(label) for eid, label in raw_labels.items()})
    suggested = _suggested(report, where)
    for i, v in enumerate(report.get("violations") or ()):
        if not isinstance(v, Mapping) or "code" not in v:
            raise RenderInputError(f"{where}: violations[{i}] has no 'code'")
        ids = tuple(str(e) for e in v.get("event_ids") or ())
        for eid in ids:
            codes.setdefault(eid, []).append(str(v["code"]))
        hint = "; ".join(suggested[e] for e in ids if e in suggested) if v["code"] in ("ROW", "ORDER") else ""
        findings.append(
            Finding(len(findings), "violation", str(v["code"]), ids,
                    str(v.get("message", "")), str(v.get("location") or ""), hint)
        )
    named = {e for f in findings if f.code == "ROW" for e in f.event_ids}
    for eid in report.get("unexplained") or ():
        unexplained.add(str(eid))
        if str(eid) in named:  # the report's ROW violation already says so: one finding per note
            continue
        findings.append(
            Finding(len(findings), "unexplained", "UNEXPLAINED", (str(eid),),
                    "no row form explains this note", "", suggested.get(str(eid), ""))
        )
    for v in report.get("observations") or ():  # reported by the profile, never coloured as faults
        if isinstance(v, Mapping) and "code" in v:
            findings.append(Finding(len(findings), "observation", str(v["code"]),
                                    tuple(str(e) for e in v.get("event_ids") or ()),
                                    str(v.get("message", "")), str(v.get("location") or "")))
    for i, amb in enumerate(report.get("ambiguities") or ()):
        if not isinstance(amb, Mapping) or "event_id" not in amb:
            raise RenderInputError(f"{where}: ambiguities[{i}] has no 'event_id'")
        eid = str(amb["event_id"])
        cands = ", ".join(str(c) for c in amb.get("candidates") or ())
        reason = str(amb.get("reason") or "several labels fit")
        if not is_ambiguity(amb):
            # aliases of one row form (a symmetric row), not a doubt about the note
            aliases[eid] = tuple(str(c) for c in amb.get("candidates") or ())
            continue
        ambiguous.add(eid)
        findings.append(
            Finding(len(findings), "ambiguity", "AMBIGUOUS", (eid,), f"{reason}: {cands}",
                    str(amb.get("location") or ""))
        )


def certificate_entries(
    certificate: Mapping[str, Any] | list[Any], where: str = "certificate"
) -> dict[str, Mapping[str, Any]]:
    """The per-event entries of a certificate, by event id (tolerant of layout variants)."""
    items: Any = certificate
    if isinstance(certificate, Mapping):
        items = None
        for key in ("events", "kept", "entries", "notes"):
            if isinstance(certificate.get(key), list):
                items = certificate[key]
                break
        if items is None:
            raise RenderInputError(f"{where}: no list of events ('events') in the certificate")
    if not isinstance(items, list):
        raise RenderInputError(f"{where}: a certificate must be a JSON object or list")
    out: dict[str, Mapping[str, Any]] = {}
    for i, entry in enumerate(items):
        if type(entry) is not dict and not isinstance(entry, Mapping):  # JSON's dicts first: quick
            raise RenderInputError(f"{where}: event entry {i} is not an object")
        eid = entry["id"] if "id" in entry else entry.get("event_id")
        if eid is None:
            raise RenderInputError(f"{where}: event entry {i} has no 'id'")
        out[str(eid)] = entry
    return out


def _certificate_label(entry: Mapping[str, Any]) -> str | None:
    label = entry.get("label")
    if isinstance(label, str) and label:
        return label
    form = entry.get("form", entry.get("claimed_form"))
    pos = entry.get("position", entry.get("claimed_position"))
    if isinstance(form, Mapping):
        form = form.get("label")
    if form is None or pos is None:
        return None
    return f"{form}:{pos}"


def _rung(entry: Mapping[str, Any] | None) -> str | None:
    if entry is None:
        return None
    rung = entry.get("rung", entry.get("repair"))
    if rung is None:
        return None
    if isinstance(rung, list):
        rung = rung[-1] if rung else None
    if isinstance(rung, Mapping):
        rung = rung.get("name")
    if rung in (None, "", "none", "kept", "ok", False):
        return None
    return str(rung)


def _suggested(report: Mapping[str, Any], where: str) -> dict[str, str]:
    """Event id → the suggested correction as one line (the best two candidates)."""
    from serialkit.core.suggest import describe

    out: dict[str, str] = {}
    for i, note in enumerate(report.get("suggestions") or ()):
        try:
            cands = [describe(c) for c in note["candidates"][:2]]
            eid = str(note["event_id"])
        except (KeyError, TypeError, StopIteration) as exc:
            raise RenderInputError(f"{where}: suggestions[{i}] is malformed ({exc})") from exc
        out[eid] = (" or ".join(cands) if cands else "nothing plausible" if note.get("complete", True)
                    else "none among those tried")
    return out
