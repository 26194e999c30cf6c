"""Repairing an existing score: apply the suggested corrections the gate accepts, to a copy.

``serialkit repair`` goes through :func:`repair_score`: the score is checked, the most confident
suggested correction (``core.suggest``) is applied and the notes analysed again, one at a time
(``core.suggest.plan_repairs``); the whole gate then checks the result and any change that brings
a new finding onto a changed note is taken back. Under a rule profile that judges collisions and
crossings (``--rules generation``; never ``analysis``, which observes them), the ladder's timing
rungs — trim, yield, retime — then put them right, one at a time, each kept only when the gate no
longer reports it and reports nothing new (``repair.timing.retime_findings``). What remains is
written in the input's format — MusicXML or MEI edited in place (pitch, accidental, colour and a
label per changed note; every other byte as it was; written anew by serialkit's own writer when a
note's time changed, so that every bar adds up), or a JSON piece — with a certificate (each changed
note before and after, and why) and a review page. The source file is never written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from serialkit.check.report import bare_notes
from serialkit.core.errors import ScoreWriteError, SerialkitError
from serialkit.core.piece import Piece
from serialkit.core.rows import Row, _check_convention
from serialkit.core.suggest import DEFAULT_THRESHOLD, plan_repairs
from serialkit.repair.changes import (
    held_changes,
    held_note,
    pitch_changes,
    with_timing,
    written_names,
)
from serialkit.repair.checks import Checks
from serialkit.repair.formats import check_output, companion_paths
from serialkit.repair.policy import (
    FIXABLE,
    TIMING_FIXABLE,
    Keeper,
    allowed_notes,
    validate_only,
)
from serialkit.repair.result import Change, RepairResult

if TYPE_CHECKING:
    from serialkit.io.repitch import EditableScore, Repitch
    from serialkit.repair.timing import TimingEdit

__all__ = ["repair_score"]


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
    progress: Callable[[int, int], None] | None = None,
) -> RepairResult:
    """Repair a copy of ``score``: suggested pitch corrections the gate accepts, one at a time,
    then, where the rule profile judges collisions and crossings (``generation``), the timing rungs
    trim, yield and retime on each collision and crossing the gate reports, each kept only when the
    gate accepts it (``repair.timing.retime_findings``).

    ``only``: finding codes whose notes may change (``ROW``, ``ORDER``, ``COLL``, ``CROSS``;
    default all the profile judges; a timing code the profile does not judge is an error). With
    ``dry_run`` nothing is written. Otherwise the repaired score goes to ``out`` (required; never
    the source) in the input's format, with ``<out stem>.certificate.json`` and (``review``)
    ``<out stem>.review.html`` beside it. ``rules``: the rule profile the gate follows
    (``analysis`` by default for a score without a task; see ``serialkit.check.profiles``).
    ``name``: what reports and the certificate call the source (``-`` for standard input).
    ``progress``: told each planning round's number and the corrections applied so far.
    """
    from serialkit.check import check_piece
    from serialkit.check.profiles import profile_for
    from serialkit.check.report import row_for
    from serialkit.io.repitch import read_editable, write_repaired

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
    score_read = read_editable(source)  # the one reading of the source: piece, names, writing
    piece = score_read.piece
    conv = _check_convention(convention or piece.convention)
    the_row = row_for(piece, source, row)[0]
    # every report and analysis once, shared by the check, the plan's rounds and the verdicts
    checks = Checks(piece, the_row, conv, profile, str(source))
    before = checks.report(piece)
    allowed = allowed_notes(before, None if only is None else [c for c in only if c in FIXABLE], piece)
    withdrawn: list[str] = []
    notes: list[str] = []
    unexplained = len(before.get("unexplained") or ())
    if unexplained > max(4, len(piece.events) // 8):  # a wrong row, not wrong notes
        notes.append(f"not repaired: {unexplained} of {len(piece.events)} notes are unexplained, "
                     "more than wrong notes would leave (is the row right?)")
        allowed = set()
    timing = [c for c in TIMING_FIXABLE if profile.judges(c) and (only is None or c in only)]

    keeper = Keeper(piece, before, checks.report)  # each correction judged by the gate as it is planned
    plan = plan_repairs(bare_notes(piece), the_row, conv, threshold=threshold, only=allowed,
                        readings=checks.readings, progress=progress, accept=keeper.accept,
                        budget=round_budget(piece))
    applied, repaired, after = plan.applied, keeper.current, keeper.report
    for refused, why in keeper.refused:
        withdrawn += sorted(refused - set(withdrawn))
        notes.append(why)
    edits: Sequence[TimingEdit] = ()
    if timing and any(v["code"] in timing for v in after.get("violations") or ()):
        from serialkit.repair.timing import retime_findings

        timed = retime_findings(repaired, the_row, after, checks.report, timing, profile.rules.tolerance)
        repaired, after, edits = timed.piece, dict(timed.report), timed.edits
        notes += timed.left
    changes = with_timing(piece, pitch_changes(piece, applied, after.get("labels") or {}), edits, repaired)
    held = held_changes(piece, plan.held)
    if held:
        notes.append(held_note(len(changes), len(held), threshold, dry_run))
    result = RepairResult(source, None if out is None else Path(out), changes, before, after, the_row,
                          dry_run, withdrawn=tuple(withdrawn), notes=tuple(notes), held=held,
                          threshold=threshold, name=name, written=written_names(score_read, (*changes, *held)))
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
        write_repaired(score_read, source, repaired, _repitches(changes), staged[0])
        # a claim is checked where it is made: the file written, read back, is what passes
        written_read = read_editable(staged[0])
        written = written_read.piece
        got = {e.id: e.midi for e in written.events}
        when = {e.id: (e.onset, e.duration) for e in written.events}
        wrong = [c.event_id for c in changes if got.get(c.event_id) != c.after
                 or (c.time is not None and when.get(c.event_id) != c.time[1][:2])]
        if wrong:
            raise ScoreWriteError(f"{target}: the written score does not carry the repair of {wrong[0]}")
        after = check_piece(written, row=the_row, convention=conv, source=str(target), profile=profile,
                            analysis=checks.analysis(written)).to_dict()
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


LONG = 400
"""A piece of more notes than this is repaired with a bounded wide pass (``round_budget``)."""


def round_budget(piece: Piece) -> tuple[int | None, int | None, int | None] | None:
    """What each planning round may verify (``plan_repairs``' ``budget``): on a piece of more than
    ``LONG`` notes — a whole movement — every likely correction of every reported note, but at most
    ``SUGGEST_WIDE`` of the wide pass's changes round trouble none of those clears (as the check's
    suggestions: every note near every unexplained note tried at six pitches cost a 1,536-note
    Op. 21 file 906 verifications a round, 45 s); on a shorter piece everything (an absorbed wrong
    note's correction may be found only far down the wide pass). A note some of whose candidates
    were left unverified is not repaired (``plan_repairs``): it stays reported, nothing unverified
    is applied, and no confidence is measured against candidates never tried."""
    if len(piece.events) <= LONG:
        return None
    from serialkit.check.report import SUGGEST_WIDE

    return None, None, SUGGEST_WIDE


def _engravable(path: Path, written: EditableScore, tmp: Path) -> Path:
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


def _colour(rung: str) -> str:
    """The colour of a rung in the written score: the review page's (``render.marks.RUNG_COLORS``,
    the one table of rung colours), as MusicXML and MEI write it."""
    from serialkit.render.marks import OTHER_RUNG_COLOR, RUNG_COLORS

    return RUNG_COLORS.get(rung, OTHER_RUNG_COLOR).upper()


def _repitches(changes: Sequence[Change]) -> dict[str, Repitch]:
    """Each changed note as the writer needs it: pitches, spelling model, its mark, a changed time."""
    from serialkit.io.annotation import Annotation
    from serialkit.io.repitch import Repitch

    return {c.event_id: Repitch(c.before, c.after, c.model or "other", Annotation(c.text, _colour(c.rung)),
                                c.time is not None) for c in changes}
