"""Repairing an existing score: apply the suggested corrections the gate accepts, to a copy.

``serialkit repair`` goes through :func:`repair_score`: the score is checked, the most confident
suggested correction (``core.suggest``) is applied and the notes analysed again, one at a time
(``core.suggest.plan_repairs``); the whole gate then checks the result and any change that brings
a new finding onto a changed note is taken back. Under a rule profile that judges collisions and
crossings (``--rules generation``; never ``analysis``, which observes them), the ladder's timing
rungs — trim, yield, retime — then put them right, one at a time, each kept only when the gate no
longer reports it and reports nothing new (``harness.scores.retime_findings``). What remains is
written in the input's format — MusicXML or MEI edited in place (pitch, accidental, colour and a
label per changed note; every other byte as it was; written anew by serialkit's own writer when a
note's time changed, so that every bar adds up), or a JSON piece — with a certificate (each changed
note before and after, and why) and a review page. The source file is never written.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from serialkit.core.errors import ScoreWriteError, SerialkitError
from serialkit.core.notenames import NoteNames, habit_of, sounding_name
from serialkit.core.piece import Event, Piece, fraction_str
from serialkit.core.rows import Row, _check_convention
from serialkit.core.suggest import DEFAULT_THRESHOLD, Applied, Edit, Suggestion, plan_repairs

if TYPE_CHECKING:
    from serialkit.harness.scores import TimingEdit

__all__ = [
    "FIXABLE",
    "REPAIR_RUNG",
    "TIMING_FIXABLE",
    "Change",
    "RepairResult",
    "validate_only",
    "repair_score",
]

REPAIR_RUNG = "rewrite"
"""The rung of the repair ladder a pitch correction belongs to (the harness's segment rewrite)."""
FIXABLE = ("ROW", "ORDER")
"""The finding codes a pitch correction can fix (``--only``)."""
TIMING_FIXABLE = ("COLL", "CROSS")
"""The finding codes the timing rungs can fix (``--only``), where the rule profile judges them
(``harness.scores.TIMING_CODES``)."""
_MUSICXML_OUT = (".musicxml", ".xml", ".mxl", ".mscz", ".mscx")
WRITES = {
    "musicxml": _MUSICXML_OUT,
    "musescore": _MUSICXML_OUT,
    "kern": _MUSICXML_OUT,
    "abc": _MUSICXML_OUT,
    "mei": (".mei",),
    "json": (".json",),
    "midi": (".mid", ".midi"),
}
"""What a repaired score of each format (its reader's name) can be written as (``-o``'s extension
chooses): MusicXML edited in place — also the MusicXML a MuseScore, **kern or ABC score is read
through —, as MusicXML or compressed MusicXML, or saved by MuseScore 3 as .mscz/.mscx; MEI edited
in place; a JSON piece; MIDI written anew. A folder gives every file ``check`` reads."""


Time = tuple[Fraction, Fraction, str]
"""A note's onset and duration (quarter notes) and where the onset is (``bar 3, beat 2``)."""


@dataclass(frozen=True, slots=True)
class Change:
    """One changed note: where, its pitch before and after, the rung, and why; for a note a timing
    rung changed, its onset and duration before and after (``time``) and the timing rung (``rung``,
    after ``rewrite`` in ``rungs`` when its pitch changed too)."""

    event_id: str
    location: str
    before: int
    after: int
    label: str
    statement: str | None
    model: str | None
    confidence: float | None
    reason: str
    rung: str = REPAIR_RUNG
    time: tuple[Time, Time] | None = None
    rungs: tuple[str, ...] = (REPAIR_RUNG,)

    @property
    def text(self) -> str:
        """The label the written score carries by the note: ``rewrite P5:7``, ``trim COLL``,
        ``rewrite P5:7, yield`` (a corrected pitch whose time changed too)."""
        if len(self.rungs) > 1:
            return f"{self.rungs[0]} {self.label}, {', '.join(self.rungs[1:])}"
        return f"{self.rung} {self.label}"

    def to_dict(self) -> dict[str, Any]:
        """The certificate's entry (``render`` reads ``id``, ``rung`` and ``label``)."""
        before: dict[str, Any] = {"midi": self.before, "name": sounding_name(self.before),
                                  "sounding": sounding_name(self.before)}
        after: dict[str, Any] = {"midi": self.after, "name": sounding_name(self.after),
                                 "sounding": sounding_name(self.after)}
        if self.time is not None:
            for side, (onset, duration, at) in zip((before, after), self.time, strict=True):
                side.update(onset=fraction_str(onset), duration=fraction_str(duration), at=at)
        return {
            "id": self.event_id,
            "location": self.location,
            "rung": self.rung,
            "rungs": list(self.rungs),
            "before": before,
            "after": after,
            "label": self.label,
            "statement": self.statement,
            "model": self.model,
            "confidence": None if self.confidence is None else round(self.confidence, 3),
            "why": self.reason,
        }


@dataclass
class RepairResult:
    """What ``repair_score`` did to one score."""

    source: Path
    out: Path | None
    changes: tuple[Change, ...]
    before: Mapping[str, Any]
    after: Mapping[str, Any]
    row: Row
    dry_run: bool = False
    certificate_path: Path | None = None
    review_path: Path | None = None
    withdrawn: tuple[str, ...] = field(default=())
    """Changes taken back because the gate found something new on the changed note."""
    notes: tuple[str, ...] = field(default=())
    """Why something was not done."""
    held: tuple[Change, ...] = field(default=())
    """Suggestions left unapplied because they are below the threshold (not applied, not written)."""
    threshold: float = DEFAULT_THRESHOLD
    name: str | None = None
    """What the source is called in reports (``-``: standard input), when not its path."""
    written: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Each changed (or held) note's pitch as the score writes it, before and after (``Eb4``,
    a transposing part's written pitch): the spelling and transposition of the score."""
    noteheads: dict[str, list[str]] = field(default_factory=dict)
    """A changed tied note's noteheads in the written score (the first one's id is the note's)."""

    @property
    def passed(self) -> bool:
        """True when the repaired score passes the gate (relaxed: SCHED aside)."""
        return bool(self.after.get("relaxed"))

    def certificate(self) -> dict[str, Any]:
        """The repair certificate: source (and its SHA-256), row, every changed note, verdicts."""
        return {
            "format": "serialkit-repair-certificate",
            "version": 1,
            "source": self.name or str(self.source),
            "source_sha256": _sha256(self.source),
            "output": None if self.out is None else str(self.out),
            "row": list(self.row.pcs),
            "row_names": self.row.names(),
            "profile": self.after.get("profile"),
            "threshold": self.threshold,
            "events": [dict(self._entry(c), noteheads=self.noteheads.get(c.event_id, [c.event_id]))
                       for c in self.changes],
            "withdrawn": list(self.withdrawn),
            "before": _verdict(self.before),
            "after": _verdict(self.after),
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON form for ``repair --json``."""
        return {
            "source": self.name or str(self.source),
            "output": None if self.out is None or self.dry_run else str(self.out),
            "certificate": None if self.certificate_path is None else str(self.certificate_path),
            "review": None if self.review_path is None else str(self.review_path),
            "dry_run": self.dry_run,
            "changes": [self._entry(c) for c in self.changes],
            "withdrawn": list(self.withdrawn),
            "held": [self._entry(c) for c in self.held],
            "threshold": self.threshold,
            "notes": list(self.notes),
            "before": _verdict(self.before),
            "after": _verdict(self.after),
            "passed": self.passed,
        }

    def _entry(self, change: Change) -> dict[str, Any]:
        """``change.to_dict()`` with each side named as the score writes it (``name``; ``sounding``
        beside it, and ``midi`` the sounding MIDI pitch, as everywhere in serialkit)."""
        data = change.to_dict()
        names = self.written.get(change.event_id)
        if names is not None:
            for side, name in zip(("before", "after"), names, strict=True):
                data[side] = dict(data[side], name=name)
        return data


def _verdict(report: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "strict": report.get("strict"),
        "relaxed": report.get("relaxed"),
        "counts": report.get("counts"),
        "unexplained": len(report.get("unexplained") or ()),
        "coverage": report.get("coverage"),
    }


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def validate_only(only: Sequence[str] | None, profile: Any) -> None:
    """Refuse ``--only`` codes repair cannot fix, and timing codes the rule profile does not judge
    (one error before any score is read)."""
    if only is None:
        return
    bad = [c for c in only if c not in FIXABLE + TIMING_FIXABLE]
    if bad:
        raise SerialkitError(f"--only {bad[0]}: repair fixes only {', '.join(FIXABLE + TIMING_FIXABLE)}")
    unjudged = [c for c in only if c in TIMING_FIXABLE and not profile.judges(c)]
    if unjudged:
        raise SerialkitError(f"--only {unjudged[0]}: the {profile.name} profile does not judge {unjudged[0]}, "
                             "so no timing is changed for it; give --rules generation")


@dataclass
class _Score:
    """One reading of a score: its piece and, for MusicXML and MEI, what the reader found on the
    way — the parsed tree, each notehead's element, the tie chains, the spelling habit — so that
    the names, the writing and the noteheads of a repair all come from that one reading."""

    piece: Piece
    kind: str
    """``musicxml`` (a MuseScore, **kern or ABC score too: the MusicXML it is read through), ``mei``,
    ``json``, ``midi`` or ``other`` (read by ``read_score``; not written)."""
    where: str = ""
    tree: Any = None
    member: str | None = None
    """The score's member in an .mxl archive."""
    scan: Any = None
    """MusicXML: the reader's ``Scan`` (its ``ends``: the bytes around the root)."""
    data: bytes = b""
    """The document's bytes (MusicXML: an .mxl's score member; MEI: the file), edited in place:
    every byte the repair does not change is kept."""
    mei: Any = None
    """MEI: the reader's state."""
    elements: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    """Notehead id → (its element, the reader's ``RawNote``)."""
    chains: dict[str, list[str]] = field(default_factory=dict)
    """A tied note's first notehead id → all its noteheads' ids, in order."""
    habit: int = 0
    """The score's habit in accidentals: > 0 when its notes are spelt with more sharps than
    flats, < 0 more flats (the reader's written alterations, in either format)."""


def _format(path: Path) -> str:
    """The name of the reader of ``path`` (``json`` for a JSON piece)."""
    if path.suffix.lower() == ".json":
        return "json"
    from serialkit.io import score_format

    return score_format(path)


_FORMAT_NAMES = {"musicxml": "MusicXML", "musescore": "MuseScore", "kern": "**kern", "abc": "ABC",
                 "mei": "MEI", "json": "JSON piece", "midi": "MIDI"}


def output_suffix(path: Path) -> str:
    """The extension a repaired copy of ``path`` gets in an output folder: its own when repair
    writes that format, else ``.musicxml`` (a **kern or ABC score: the MusicXML it is read through)."""
    own = path.suffix.lower()
    try:
        writes = WRITES.get(_format(path), ())
    except SerialkitError:  # unreadable: named as it is (the repair says why)
        return path.suffix
    return path.suffix if own in writes else writes[0] if writes else path.suffix


def check_output(source: Path, target: Path) -> None:
    """Refuse, in one line, an output whose extension names a format the source cannot be repaired into."""
    fmt = _format(source)
    writes = WRITES.get(fmt, ())
    suffix = target.suffix.lower()
    if suffix not in writes:
        what = f"as {suffix}" if suffix else "without an extension"
        raise SerialkitError(
            f"{target}: cannot write a repaired {_FORMAT_NAMES.get(fmt, fmt)} score {what}; "
            + (f"give an output ending {', '.join(writes)}" if writes else "repair can only --dry-run it"))


def _read(path: Path) -> _Score:
    """Read ``path`` once: a JSON piece, MusicXML (.mxl too) or MEI with the reader's tree and
    noteheads, or any other score ``read_score`` reads (repaired in a dry run only)."""
    from serialkit.core.errors import PieceError, ScoreReadError
    from serialkit.io.build import build_piece, tie_chains

    if path.suffix.lower() == ".json":
        from serialkit.io.jsonio import load_piece

        return _Score(load_piece(path), "json")
    from serialkit.io import read_score, score_format
    from serialkit.io.external import VIA_MUSICXML

    fmt = score_format(path)
    if fmt not in ("musicxml", "mei", *VIA_MUSICXML):
        return _Score(read_score(path), "midi" if fmt == "midi" else "other")
    where, member, ends, data, mei = str(path), None, None, b"", None
    if fmt in VIA_MUSICXML:  # MuseScore, **kern, ABC: the MusicXML their reader reads, edited as such
        from serialkit.io.external import via_musicxml
        from serialkit.io.files.safety import parse_xml
        from serialkit.io.musicxml.read import document_ends, scan_tree

        data = xml = via_musicxml(path, fmt)
        where = f"{path} (as MusicXML)"
        tree = parse_xml(xml, where)
        scan = scan_tree(tree, where)
        scan.ends = document_ends(xml, tree)
        elements, parts = scan.elements, scan.parts
    elif fmt == "musicxml":
        from serialkit.io.musicxml.read import load_source, scan_tree

        tree, where, member, ends, data = load_source(path)
        scan = scan_tree(tree, where)
        scan.ends = ends
        elements, parts = scan.elements, scan.parts
    else:
        from serialkit.io.files.safety import parse_xml, read_bytes
        from serialkit.io.mei.read import scan_mei_tree

        data = read_bytes(path)
        tree, scan = parse_xml(data, where), None
        mei = scan_mei_tree(tree, where)
        elements, parts = mei.elements, mei.parts
    try:
        piece = build_piece(parts, path, "mxl" if member else fmt)
    except PieceError as exc:
        raise ScoreReadError(f"{where}: {exc}") from None
    if not piece.events:
        raise ScoreReadError(f"{path}: the score contains no notes")
    return _Score(
        piece, "mei" if fmt == "mei" else "musicxml", where, tree, member, scan, data, mei,
        elements={raw.id: (el, raw) for el, raw in elements},
        chains={chain[0].id: [n.id for n in chain] for chain in tie_chains(parts)},
        habit=habit_of(e.source.alter for e in piece.events if e.source is not None),
    )


def read_any(path: Path) -> Piece:
    """A piece from a JSON piece file or any score ``serialkit.io.read_score`` reads."""
    return _read(path).piece


def repair_score(
    score: str | os.PathLike[str],
    row: Row | str | None = None,
    *,
    identify: bool = False,
    convention: str | None = None,
    out: str | os.PathLike[str] | None = None,
    only: Sequence[str] | None = None,
    dry_run: bool = False,
    threshold: float = DEFAULT_THRESHOLD,
    review: bool = True,
    rules: str | None = None,
    name: str | None = None,
) -> RepairResult:
    """Repair a copy of ``score``: suggested pitch corrections the gate accepts, one at a time,
    then, where the rule profile judges collisions and crossings (``generation``), the timing rungs
    trim, yield and retime on each collision and crossing the gate reports, each kept only when the
    gate accepts it (``harness.scores.retime_findings``).

    ``only``: finding codes whose notes may change (``ROW``, ``ORDER``, ``COLL``, ``CROSS``;
    default all the profile judges; a timing code the profile does not judge is an error). With
    ``dry_run`` nothing is written. Otherwise the repaired score goes to ``out`` (required; never
    the source) in the input's format, with ``<out stem>.certificate.json`` and (``review``)
    ``<out stem>.review.html`` beside it. ``rules``: the rule profile the gate follows
    (``analysis`` by default for a score without a task; see ``serialkit.check.profiles``).
    ``name``: what reports and the certificate call the source (``-`` for standard input).
    """
    from serialkit.check import check_piece
    from serialkit.check.profiles import profile_for
    from serialkit.check.report import row_for

    source = Path(score)
    profile = profile_for(rules, task_bound=False)
    validate_only(only, profile)
    if not dry_run:
        if out is None:
            raise SerialkitError(f"{source}: give -o/--output for the repaired score (or --dry-run)")
        target = Path(out)
        if target.exists() and target.resolve() == source.resolve():
            raise SerialkitError(f"{target}: the output would overwrite the source; choose another path")
        check_output(source, target)
    score_read = _read(source)  # the one reading of the source: piece, names, writing
    piece = score_read.piece
    conv = _check_convention(convention or piece.convention)
    the_row = row_for(piece, source, row)[0]
    before = check_piece(piece, row=the_row, convention=conv, source=str(source), profile=profile).to_dict()
    allowed = _allowed(before, None if only is None else [c for c in only if c in FIXABLE], piece)
    bare = piece.with_events(e.copy(tag=None) if e.tag is not None else e for e in piece.events)
    withdrawn: list[str] = []
    notes: list[str] = []
    unexplained = len(before.get("unexplained") or ())
    if unexplained > max(4, len(piece.events) // 8):  # a wrong row, not wrong notes
        notes.append(f"not repaired: {unexplained} of {len(piece.events)} notes are unexplained, "
                     "more than wrong notes would leave (is the row right?)")
        allowed = set()
    timing = [c for c in TIMING_FIXABLE if profile.judges(c) and (only is None or c in only)]

    def judge(candidate: Piece, suggest: bool = False) -> dict[str, Any]:
        return check_piece(candidate, row=the_row, convention=conv, source=str(out or source),
                           profile=profile, suggest=suggest).to_dict()

    while True:
        plan = plan_repairs(bare, the_row, conv, threshold=threshold, only=allowed)
        applied = plan.applied
        refused, why, repaired, after = _refused(piece, before, applied, judge)
        if not refused:
            break
        withdrawn += sorted(refused - set(withdrawn))
        notes.append(why)
        allowed = (allowed if allowed is not None else {e.id for e in piece.events}) - refused
    edits: Sequence[TimingEdit] = ()
    if timing and any(v["code"] in timing for v in after.get("violations") or ()):
        from serialkit.harness.scores import retime_findings

        timed = retime_findings(repaired, the_row, after, judge, timing, profile.rules.tolerance)
        repaired, after, edits = timed.piece, dict(timed.report), timed.edits
        notes += timed.left
    changes = _with_timing(piece, _changes(piece, applied, after.get("labels") or {}), edits, repaired)
    held = _held(piece, plan.held)
    if held:
        notes.append(_held_note(len(changes), len(held), threshold, dry_run))
    result = RepairResult(source, None if out is None else Path(out), changes, before, after, the_row,
                          dry_run, withdrawn=tuple(withdrawn), notes=tuple(notes), held=held,
                          threshold=threshold, name=name, written=_written_names(score_read, (*changes, *held)))
    if dry_run:
        return result
    if not changes:  # nothing improves: no copy, no certificate, only the report saying why
        result.out = None
        result.notes += ("nothing written: no correction the check suggests makes the score better"
                         + (" (it passes the gate as it is)" if result.passed else ""),)
        return result
    assert out is not None
    target = Path(out)
    cert_path, review_path = companion_paths(target, review)
    if score_read.kind == "midi":
        result.notes += ("the MIDI file is written anew by serialkit's MIDI writer (its notes, tempo and "
                         "metre; anything else the source held is not carried over)",)
    if any(c.time is not None for c in changes) and score_read.kind == "musicxml":
        result.notes += ("the score is written anew by serialkit's MusicXML writer, since a note's time "
                         "changed (every bar rebuilt so that it adds up, rests filling what a trim frees); "
                         "the source's layout and notation beyond the notes are not carried over",)
    from serialkit.io.files.atomic import atomic_paths, named_as

    paths = [target, cert_path] + ([review_path] if review_path is not None else [])
    with atomic_paths(*paths) as staged:  # the score, its certificate and review page: all or none
        _write_score(score_read, source, repaired, changes, staged[0])
        # a claim is checked where it is made: the file written, read back, is what passes
        written_read = _read(staged[0])
        written = written_read.piece
        got = {e.id: e.midi for e in written.events}
        when = {e.id: (e.onset, e.duration) for e in written.events}
        wrong = [c.event_id for c in changes if got.get(c.event_id) != c.after
                 or (c.time is not None and when.get(c.event_id) != c.time[1][:2])]
        if wrong:
            raise ScoreWriteError(f"{target}: the written score does not carry the repair of {wrong[0]}")
        after = check_piece(written, row=the_row, convention=conv, source=str(target), profile=profile).to_dict()
        result.after = after
        result.out, result.certificate_path = target, cert_path
        result.noteheads = {c.event_id: written_read.chains[c.event_id] for c in changes
                            if len(written_read.chains.get(c.event_id, ())) > 1}  # tied over: every notehead
        staged[1].write_text(json.dumps(result.certificate(), indent=2, ensure_ascii=False) + "\n",
                             encoding="utf-8")
        if review_path is not None:
            import tempfile

            from serialkit.render import render

            with tempfile.TemporaryDirectory(prefix="serialkit-review-") as tmp:
                engraved = _engravable(staged[0], written_read, Path(tmp))
                with named_as({engraved: target}):  # the score the page shows is OUT
                    render(engraved, staged[2], report=dict(after), certificate=result.certificate(), fmt="html")
            result.review_path = review_path
    return result


def companion_paths(out: Path, review: bool = True) -> tuple[Path, Path | None]:
    """The certificate and (``review``) review page written beside a repaired score ``out``:
    ``OUT-stem.certificate.json``, ``OUT-stem.review.html``."""
    stem = out.name[: -len(out.suffix)] if out.suffix else out.name
    return out.with_name(stem + ".certificate.json"), out.with_name(stem + ".review.html") if review else None


def _engravable(path: Path, written: _Score, tmp: Path) -> Path:
    """What the review page engraves: the written score itself when it is MusicXML or MEI, else
    (.mscz, .mscx, MIDI) the MusicXML it was read back through, or the piece written as MusicXML —
    with the note ids the certificate names."""
    if path.suffix.lower() in (".musicxml", ".xml", ".mxl", ".mei"):
        return path
    out = tmp / "repaired.musicxml"
    if written.tree is not None and written.kind == "musicxml":
        from lxml import etree

        out.write_bytes(etree.tostring(written.tree, xml_declaration=True, encoding="UTF-8"))
    else:
        from serialkit.io.musicxml.write import write_musicxml

        write_musicxml(written.piece, out)
    return out



def _allowed(report: Mapping[str, Any], only: Sequence[str] | None, piece: Piece) -> set[str] | None:
    """The notes a repair may change under ``--only`` (None: any note)."""
    if only is None or "ROW" in only:
        return None  # ROW covers unexplained notes and notes standing in a statement's hole
    return {e for v in report.get("violations") or () if v["code"] in only for e in v["event_ids"]}


def _with_pitches(piece: Piece, midi: Mapping[str, int]) -> Piece:
    """``piece`` (with its own tags and sources) with the notes of ``midi`` at those pitches."""
    return piece.with_events(
        e.copy(midi=midi[e.id], claimed_pc=None if e.claimed_pc is None else midi[e.id] % 12)
        if e.id in midi and midi[e.id] != e.midi else e
        for e in piece.events
    )


def _held(piece: Piece, held: Sequence[Suggestion]) -> tuple[Change, ...]:
    """The held-back suggestions as the changes they would make (the suggested note's own edit)."""
    events = {e.id: e for e in piece.events}
    locator = piece.locator()
    names = NoteNames(piece)
    return tuple(
        Change(s.event_id, locator.describe(events[s.event_id]), events[s.event_id].midi, s.midi,
               s.label, s.statement, s.model, s.confidence,
               names.reason(s.reason, s.event_id, s.midi, s.model,
                            next((e.event_id for e in s.edits if e.event_id != s.event_id), None)))
        for s in held if s.event_id in events
    )


def _held_note(changed: int, held: int, threshold: float, dry_run: bool) -> str:
    """Why suggestions were not applied: ``0 notes changed: 3 suggestions below --threshold 0.6; …``."""
    what = f"{held} suggestion{'s' if held != 1 else ''} below --threshold {threshold:g}"
    head = f"0 notes changed: {what}" if not changed else f"{what} not applied"
    return head + ("; listed below (held)" if dry_run else "; use --dry-run to see them")


_HOLE = "lacks position"
"""How a hole finding reads (``check.report._holes``): it names the two statement members around
the hole, which the row explains, not a suspect note."""


def _named(report: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """The notes the check names as suspect — unexplained notes, the notes of a ROW or ORDER
    finding, notes standing in a statement's hole that it suggests a correction for — and the
    explained neighbours a hole finding is located by (one of them may be the wrong note, in a
    chord, but the row explains them: the statement with the hole holds them)."""
    named = set(report.get("unexplained") or ())
    around: set[str] = set()
    for v in report.get("violations") or ():
        if v["code"] in FIXABLE:
            (around if _HOLE in v.get("message", "") else named).update(v["event_ids"])
    named |= {s["event_id"] for s in report.get("suggestions") or () if s.get("finding") == "hole"} - around
    return named, around - named


def _findings(report: Mapping[str, Any]) -> set[tuple[str, tuple[str, ...], str]]:
    return {(v["code"], tuple(v["event_ids"]), v.get("message", "")) for v in report.get("violations") or ()}


def _new_findings(before: Mapping[str, Any], after: Mapping[str, Any]) -> int:
    """How many of ``after``'s findings are new: not among ``before``'s, and about notes no finding
    of ``before`` named (a hole that moves along its statement as a wrong note beside it is put
    right is the same trouble, not a new one)."""
    old = _findings(before)
    seen = {e for _, ids, _ in old for e in ids} | set(before.get("unexplained") or ())
    return sum(1 for f in _findings(after) - old if not f[1] or not set(f[1]) & seen)


def _better(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """True when ``after`` improves on ``before``: no new finding (:func:`_new_findings`), and
    strictly fewer findings or fewer unexplained notes (neither more)."""
    if _new_findings(before, after):
        return False
    old, new = len(_findings(before)), len(_findings(after))
    unexplained = (len(before.get("unexplained") or ()), len(after.get("unexplained") or ()))
    return unexplained[1] <= unexplained[0] and new <= old and (new < old or unexplained[1] < unexplained[0])


_ABSORBED = 2
"""A correction of a note the check does not name (the row reads a wrong note as another position,
and correct notes round it go unexplained) is kept when it leaves at least this many fewer notes
unexplained and the gate no worse: one note it explains could be the music's own."""


def _refused(piece: Piece, before: Mapping[str, Any], applied: Sequence[Applied],
             judge: Callable[[Piece, bool], dict[str, Any]]) -> tuple[set[str], str, Piece, dict[str, Any]]:
    """The planned corrections taken one at a time, each judged by the whole gate against the
    score as the ones before it left it. A correction is kept only when its note is one the check
    names (a swap's other note comes with it) — or a hole's neighbour, when changing it leaves
    fewer notes unexplained, or any note, when changing it leaves ``_ABSORBED`` fewer unexplained
    (a wrong note the row absorbs) — and the gate afterwards is better (:func:`_better`). Returns the notes of the first refused correction (empty when all are
    kept) and why, and the score with the corrections before it and its report."""
    current, report = piece, dict(before)
    names = NoteNames(piece)
    for a in applied:
        s = a.suggestion
        edits = {e.event_id for e in s.edits}
        what = f"{names.place(s.event_id)} (→ {names.name(s.event_id, s.midi, s.model)}) not changed: "
        named, around = _named(report)
        if s.event_id not in named | around:  # a note in a statement's hole, the check's suggestions say
            named, around = _named(judge(current, True))
        changed = _with_pitches(current, {e.event_id: e.after for e in s.edits})
        if s.event_id not in named | around:  # a wrong note the row absorbs: it must explain the notes it left
            result = judge(changed, False)  # unexplained, several of them, and nothing new
            gained = len(report.get("unexplained") or ()) - len(result.get("unexplained") or ())
            if gained < _ABSORBED or not _better(report, result):
                return edits, what + "the check does not name it (the row explains it)", current, report
            current, report = changed, result
            continue
        result = judge(changed, False)
        if s.event_id in around and not len(result.get("unexplained") or ()) < len(report.get("unexplained") or ()):
            return edits, what + ("the row explains it, and changing it explains no other note "
                                  "(it only moves a statement's hole)"), current, report
        if not _better(report, result):
            new = _new_findings(report, result)
            return edits, what + (f"the gate finds {new} new finding{'s' if new != 1 else ''} with it" if new
                                  else "the gate is no better with it"), current, report
        current, report = changed, result
    return set(), "", current, report


def _changes(piece: Piece, applied: Sequence[Applied], labels: Mapping[str, str | None]) -> tuple[Change, ...]:
    """One entry per changed note; a swap's or chain's other note is labelled as the repaired
    score's check reads it (``labels``), else by the note it goes with."""
    events = {e.id: e for e in piece.events}
    locator = piece.locator()
    names = NoteNames(piece)
    out: dict[str, Change] = {}
    for a in applied:
        s = a.suggestion
        other = next((e.event_id for e in s.edits if e.event_id != s.event_id), None)
        reason = names.reason(s.reason, s.event_id, s.midi, s.model, other)  # notes as the score shows them
        for edit in s.edits:
            first = out.get(edit.event_id)
            before = first.before if first is not None else edit.before
            event: Event = events[edit.event_id]
            out[edit.event_id] = Change(
                edit.event_id, locator.describe(event), before, edit.after,
                s.label if edit.event_id == s.event_id else labels.get(edit.event_id) or (
                    f"swap with {names.place(s.event_id)}" if s.model == "swap" else
                    f"changed with {names.place(s.event_id)}"),
                s.statement, s.model, s.confidence,
                reason if edit.event_id == s.event_id else _other_reason(names, s, edit, labels, reason),
            )
    return tuple(c for c in out.values() if c.before != c.after)


def _other_reason(names: NoteNames, s: Suggestion, edit: Edit, labels: Mapping[str, str | None],
                  reason: str) -> str:
    """Why a swap's (or chain's) other note changed, in its own words: ``swapped with the Ab4 at
    bar 4, beat 7/2: E4 → Ab4 reads as I2:8`` (the note named as it stood and as it is written
    now), then the correction's own reason."""
    how = "swapped with" if s.model == "swap" else "changed with"
    now = names.name(edit.event_id, edit.after, s.model)
    label = labels.get(edit.event_id)
    reads = f" reads as {label}" if label else ""
    return (f"{how} {names.place(s.event_id)}: {names.name(edit.event_id)} → {now}{reads} "
            f"(the correction of that note: {reason})")


def _with_timing(piece: Piece, changes: Sequence[Change], edits: Sequence[TimingEdit],
                 repaired: Piece) -> tuple[Change, ...]:
    """The pitch changes with the timing rungs' edits merged in: one entry per changed note."""
    if not edits:
        return tuple(changes)
    events = {e.id: e for e in piece.events}
    midi = {e.id: e.midi for e in repaired.events}
    locator = piece.locator()

    def at(onset: Fraction) -> str:
        bar, beat = locator.locate(onset)
        return f"bar {bar}, beat {fraction_str(beat)}"

    out = {c.event_id: c for c in changes}
    for edit in edits:
        time = ((edit.onset[0], edit.duration[0], at(edit.onset[0])),
                (edit.onset[1], edit.duration[1], at(edit.onset[1])))
        pitch = out.get(edit.event_id)
        if pitch is None:
            event = events[edit.event_id]
            out[edit.event_id] = Change(edit.event_id, locator.describe(event), event.midi, midi[edit.event_id],
                                        edit.code, None, None, None, edit.reason, edit.rung, time, (edit.rung,))
        else:
            out[edit.event_id] = replace(pitch, reason=f"{pitch.reason}; {edit.reason}", rung=edit.rung,
                                         time=time, rungs=(*pitch.rungs, edit.rung))
    return tuple(out.values())


def _colour(rung: str) -> str:
    """The colour of a rung in the written score: the review page's (``render.marks.RUNG_COLORS``,
    the one table of rung colours), as MusicXML and MEI write it."""
    from serialkit.render.marks import OTHER_RUNG_COLOR, RUNG_COLORS

    return RUNG_COLORS.get(rung, OTHER_RUNG_COLOR).upper()


def _write_score(score: _Score, source: Path, repaired: Piece, changes: Sequence[Change], out: Path) -> None:
    """The repaired score in the input's format, from the source's one reading (nothing written
    when anything fails)."""
    from serialkit.io.annotate import MUSESCORE_SUFFIXES
    from serialkit.io.annotation import Annotation
    from serialkit.io.files.atomic import named_as

    notes = {c.event_id: Annotation(c.text, _colour(c.rung)) for c in changes}
    timed = any(c.time is not None for c in changes)  # a note's time changed: written anew
    if out.suffix.lower() in MUSESCORE_SUFFIXES:  # the MusicXML made as for .musicxml, saved by MuseScore
        import tempfile

        from serialkit.io.mscore.program import save_with_musescore

        with tempfile.TemporaryDirectory(prefix="serialkit-repair-") as tmp:
            xml = Path(tmp) / "repaired.musicxml"
            with named_as({xml: out}):
                _write_score(score, source, repaired, changes, xml)
                save_with_musescore(xml, out)
    elif score.kind == "musicxml" and timed:
        _rewrite_musicxml(repaired, notes, out)
    elif score.kind == "musicxml":
        _write_musicxml(score, source, {c.event_id: c for c in changes}, notes, out)
    elif score.kind == "mei" and timed:
        from serialkit.io.mei.write import write_mei

        write_mei(repaired, out, annotations=notes)
    elif score.kind == "mei":  # edited in place, as annotate does: every other byte as it was
        from serialkit.io.mei.annotate import write_annotated_mei

        by_id = {c.event_id: c for c in changes}
        names = NoteNames(score.piece, habit=score.habit)
        write_annotated_mei(source, notes, out, "fingering", pitches={c.event_id: c.after for c in changes},
                            spelling=lambda eid, step, written: names.spell(eid, written, step,
                                                                            by_id[eid].model or "other"),
                            parsed=(score.data, score.tree, score.mei))
    elif score.kind == "midi":  # no noteheads to edit: the repaired notes written anew
        from serialkit.io import write_score

        write_score(repaired, out, format="midi")
    elif score.kind == "json":  # a JSON piece has no noteheads: the marks go in its metadata
        from serialkit.io.files.atomic import atomic_write

        marks = {eid: {"label": a.label, "color": a.color} for eid, a in notes.items()}
        marked = repaired.copy(metadata={**repaired.metadata, "repair_marks": marks}) if marks else repaired
        atomic_write(out, json.dumps(marked.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        suffix = source.suffix.lower()
        raise ScoreWriteError(f"{out}: cannot write {suffix or 'a file without an extension'}")


_NATURAL = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}


def _written_names(score: _Score, changes: Sequence[Change]) -> dict[str, tuple[str, str]]:
    """Each change's note as the score writes it, before and after (``_write_score`` spells the
    new pitch the same way, ``NoteNames.spell``: its letter, the model, the notes around it): its
    staff's transposition and the letter the score gives it. A piece without spelling (JSON) is named as it sounds."""
    names = NoteNames(score.piece, habit=score.habit)
    return {c.event_id: (names.name(c.event_id), names.name(c.event_id, c.after, c.model or "other"))
            for c in changes if c.event_id in names.events}


def _rewrite_musicxml(repaired: Piece, notes: Mapping[str, Any], out: Path) -> None:
    """A changed note length cannot be edited into the source's measures soundly (voices, backups,
    ties and beams would all move), so the repaired piece is written anew by serialkit's own
    MusicXML writer — every bar adds up, rests fill what a trim frees — and annotated."""
    from serialkit.io.files.atomic import atomic_path
    from serialkit.io.files.safety import parse_xml
    from serialkit.io.musicxml.annotate import annotate_tree, serialize
    from serialkit.io.musicxml.write import musicxml_bytes, mxl_bytes

    tree = parse_xml(musicxml_bytes(repaired), str(out))
    data = serialize(annotate_tree(tree, str(out), notes, "fingering"), tree)
    payload = mxl_bytes(None, None, data) if out.suffix.lower() == ".mxl" else data
    with atomic_path(out) as tmp:
        tmp.write_bytes(payload)


def _set_pitch(pitch: Any, step: str, alter: int, octave: int) -> None:
    """Rewrite a ``<pitch>`` in place: its step, alter and octave elements' text, an ``<alter>``
    added after the step (on its line) or taken out when the note becomes natural; the rest of
    the element (whitespace, other children) as it was."""
    from lxml import etree

    step_el, octave_el, alter_el = pitch.find("step"), pitch.find("octave"), pitch.find("alter")
    if step_el is None or octave_el is None:
        raise ScoreWriteError(f"a <pitch> without <step> or <octave> (line {pitch.sourceline})")
    step_el.text, octave_el.text = step, str(octave)
    if alter and alter_el is None:
        alter_el = etree.Element("alter")
        step_el.addnext(alter_el)
        alter_el.tail = step_el.tail
    if alter_el is not None and alter:
        alter_el.text = str(alter)
    elif alter_el is not None:
        pitch.remove(alter_el)  # its tail goes with it: the octave keeps its line


def _write_musicxml(score: _Score, source: Path, changes: Mapping[str, Change], notes: Mapping[str, Any],
                    out: Path) -> None:
    """The source's own MusicXML tree (its one reading) with the changed notes repitched,
    coloured and labelled, written back with every other byte as it was."""
    from serialkit.io.accidentals import bar_groups, respell, shows_unneeded, written_of
    from serialkit.io.files.atomic import atomic_path
    from serialkit.io.musicxml.annotate import annotate_tree, insert_in_order, serialize
    from serialkit.io.musicxml.write import mxl_bytes
    from serialkit.io.splice import Snapshot

    tree, where, member, scan = score.tree, score.where, score.member, score.scan
    element = {nid: el for nid, (el, _raw) in score.elements.items()}
    members, names = score.chains, NoteNames(score.piece, habit=score.habit)
    heads = {nid for eid in changes for nid in members.get(eid, [eid])}
    for nid in heads:
        if nid not in element:
            raise ScoreWriteError(f"{where}: note {nid} of the repair is not in the score")
    # the bars (per staff) the changed notes stand in, as written before: the accidentals shown
    # there are put right afterwards, so that every note still shows what it sounds
    bars = bar_groups(tree.getroot(), {el: raw.onset for el, raw in score.elements.values()})
    tied = {el for el, raw in score.elements.values() if raw.tie_stop}
    every = shows_unneeded((written_of(group, tied), [el.find("accidental") is not None for el, _ in group])
                           for group in bars.values())
    touched = {element[nid] for nid in heads}
    affected = {g: members_ for g, members_ in bars.items() if any(el in touched for el, _ in members_)}
    before = {g: written_of(members_, tied) for g, members_ in affected.items()}
    # every edit is inside these notes: the copy is the source's bytes with only them written anew
    snapshot = Snapshot(score.data, tree, {el for members_ in affected.values() for el, _ in members_} | touched)
    letters: dict[Any, str] = {}
    for eid, change in changes.items():
        for nid in members.get(eid, [eid]):
            note = element[nid]
            pitch = note.find("pitch")
            if pitch is None:
                raise ScoreWriteError(f"{where}: note {nid} has no <pitch> to correct")
            step = (pitch.findtext("step") or "C").strip()
            alter_text = (pitch.findtext("alter") or "0").strip()
            octave = int((pitch.findtext("octave") or "4").strip())
            written = 12 * (octave + 1) + _NATURAL.get(step, 0) + round(float(alter_text))
            new_step, new_alter, new_octave = names.spell(eid, written + change.after - change.before, step,
                                                          change.model or "other")
            _set_pitch(pitch, new_step, new_alter, new_octave)
            letters[note] = step
    for g, members_ in affected.items():
        respell(members_, before[g], letters, tied, insert_in_order, every)
    root = annotate_tree(tree, where, notes, "fingering", scan, declare=False, every_id=False)
    data = (snapshot.write() if root is tree.getroot() and score.data else None) or serialize(root, tree, scan.ends)
    payload = mxl_bytes(source if member else None, member, data) if out.suffix.lower() == ".mxl" else data
    with atomic_path(out) as tmp:
        tmp.write_bytes(payload)
