"""The jobs a batch runs, one score each: check, annotate, repair, convert and render.

Each is a plain function of plain data (a :class:`~serialkit.batch.ScoreInput`, an output path, an
options mapping) returning a :class:`~serialkit.batch.JobOutcome`, so it runs the same in this
process or in a worker process of ``serialkit.batch.run_batch``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from serialkit.batch import FAILED, PASSED, UNCHECKED, WRITTEN, JobOutcome, ScoreInput
from serialkit.core.errors import SerialkitError


def read_source(source: ScoreInput, format: str | None = None) -> Any:
    """The piece of one source (file or bytes from standard input)."""
    from serialkit.io import read_score
    from serialkit.io.dispatch import read_score_bytes

    if source.piece is not None:
        return source.piece
    if source.data is not None:
        return read_score_bytes(source.data, name=source.name, format=format)
    assert source.path is not None
    return read_score(source.path, format=format)


@dataclass
class Checked:
    """One checked score: the piece as judged, its ``CheckReport``, the JSON report
    (``serialkit check --json``, the gate's verdict merged in for a candidate) and the verdict."""

    piece: Any
    report: Any
    data: dict[str, Any]
    passed: bool


def check_job(source: ScoreInput, out: Path | None, options: dict[str, Any]) -> JobOutcome:
    """Check one score; ``options``: row, convention, rules, rules_spec (a profile), task,
    identify, mode, format. A task-bound candidate (``task``, or a piece with a blueprint) is judged
    by the one gate ``generate`` uses."""
    from serialkit.io.files.atomic import atomic_write

    checked = check_source(source, options)
    data = checked.data
    if out is not None:
        import json

        atomic_write(out, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
        data["output"] = str(out)
    status = PASSED if checked.passed else UNCHECKED if not data.get("violations") and data.get("unchecked") else FAILED
    return JobOutcome(source.name, status, record=data, title=checked.piece.title)


def check_source(source: ScoreInput, options: dict[str, Any]) -> Checked:
    """Check one score as ``serialkit check`` does (``check_job``'s options), writing nothing."""
    from serialkit.check import check_piece
    from serialkit.check.profiles import profile_for
    from serialkit.core.predicates import Rules
    from serialkit.core.rows import Row

    piece = read_source(source, options.get("format"))
    unreadable = tuple((piece.metadata or {}).get("unreadable_sections") or ())  # a run's candidate
    row = Row.parse(options["row"]) if options.get("row") else None
    rules = options.get("rules") or Rules()
    rules_spec = options.get("rules_spec")
    task = None
    named = options.get("task") or (_task_named_by(piece) if piece.blueprint is not None else None)
    if named:
        from serialkit.harness import load_task
        from serialkit.harness.judging import rules_for

        task = load_task(named)
        rules = rules_for(task)
        piece = task.frame(_in_task_voices(piece, task, source.name))
    task_bound = task is not None or piece.blueprint is not None
    if task_bound and rules_spec not in (None, "generation"):
        raise SerialkitError(f"{source.name}: --rules {rules_spec}: a task-bound candidate is judged by the "
                             "generation rules of the gate (drop --rules, or check the score without its task)")
    profile = profile_for(rules_spec, rules, task_bound=task_bound)
    convention = options.get("convention")
    gated = task_bound and (row is not None or piece.row is not None)
    analysis = None
    if gated:  # one analysis of the notes serves the report and the gate
        from serialkit.check.report import analyze_notes

        analysis = analyze_notes(piece, row or piece.row, convention or piece.convention)
    report = check_piece(piece, row=row, convention=convention, identify=True if options.get("identify") else None,
                         source=source.name, profile=profile, suggest=bool(options.get("suggest", True)),
                         analysis=analysis)
    data = report.to_dict()
    data["notes"].extend(f"reading: {w}" for w in (piece.metadata or {}).get("warnings") or ())
    if task is not None and not options.get("task"):
        data["notes"].append(f"judged against task {task.name}, the bundled task the candidate names (not "
                             "a blueprint it carries); give --task FILE for a task of your own")
    mode = options.get("mode", "strict")
    passed = report.passed(mode)
    if gated:
        passed = _gate(piece, row, convention, profile.rules, data, mode, task, unreadable, analysis)
    data["mode"] = mode
    return Checked(piece, report, data, bool(passed))


def _task_named_by(piece: Any) -> str | None:
    """The bundled task a candidate names (its title, as ``generate`` writes it): a candidate is
    judged against that task's blueprint, never against a blueprint it carries itself."""
    from serialkit.harness.tasks import list_tasks

    return piece.title if piece.title in list_tasks() else None


def _in_task_voices(piece: Any, task: Any, where: str) -> tuple[Any, ...]:
    """The candidate's notes in the task's voices: its own ids, else matched by instrument name
    (a released ``score.musicxml`` names parts, not task voices), else by order when the counts
    agree; otherwise an error naming both."""
    ids = list(task.voice_ids)
    if all(e.voice in ids for e in piece.events):
        return tuple(piece.events)
    names = {v.name: v.id for v in task.voices if v.name}
    mapping = {v.id: v.id if v.id in ids else names.get(v.name or "") for v in piece.voices}
    if None in mapping.values() or len(set(mapping.values())) != len(mapping):
        if len(piece.voices) != len(ids):
            named = piece.voice_names()
            raise SerialkitError(
                f"{where}: its voices ({'; '.join(named[v.id] for v in piece.voices)}) are not those of "
                f"task {task.name} ({', '.join(ids)}): is it a candidate of another task?")
        mapping = {v.id: t for v, t in zip(piece.voices, ids, strict=True)}
    return tuple(e.copy(voice=mapping[e.voice]) for e in piece.events)


def _gate(piece: Any, row: Any, convention: str | None, rules: Any, data: dict[str, Any], mode: str,
          task: Any = None, unreadable: tuple[str, ...] = (), analysis: Any = None) -> bool:
    """Judge a task-bound candidate with the one gate (and the task's time limits) and put its
    verdict into the report."""
    from serialkit.check.gate import gate_candidate

    framed = piece.copy(row=row or piece.row, convention=convention or piece.convention)
    limits = None
    if task is not None:
        from serialkit.harness.judging import limits_for

        limits = limits_for(task)
    verdict = gate_candidate(framed, rules, limits=limits, unreadable=unreadable, analysis=analysis)
    checked = list(dict.fromkeys([*data["checked"], *verdict.counts()]))
    data.update(
        strict=verdict.strict, relaxed=verdict.relaxed, counts={c: verdict.counts().get(c, 0) for c in checked},
        violations=[{k: v.get(k) for k in ("code", "event_ids", "message", "location", "tags")}
                    for v in verdict.violations],
        labels=dict(verdict.labels), gate=verdict.to_dict(),
    )
    data["checked"] = checked
    data["notes"] = list(dict.fromkeys([*data["notes"], *verdict.notes]))  # each note once
    return bool(verdict.passed(mode))


def annotate_job(source: ScoreInput, out: Path | None, options: dict[str, Any]) -> JobOutcome:
    """Annotate one score into ``out``; ``options`` are ``annotate_score``'s keyword arguments."""
    from serialkit.check.annotate import annotate_score
    from serialkit.io.dispatch import spooled_score

    kwargs = dict(options)
    row = kwargs.pop("row", None)
    if source.data is not None:
        with spooled_score(source.data, name=source.name) as path:
            result = annotate_score(path, row, out=out, **kwargs)
    else:
        assert source.path is not None
        result = annotate_score(source.path, row, out=out, **kwargs)
    analysis = result.analysis
    record: dict[str, Any] = {
        "output": str(out) if out is not None else None,
        "row": result.row.names(),
        "notes": len(analysis.tags),
        "statements": len(analysis.statements),
        "coverage": float(analysis.coverage),
        "unexplained": len(analysis.unexplained),
    }
    found = result.report.get("identification")
    if found:
        record["identification"] = found.get("summary")
    record["report"] = dict(result.report)
    return JobOutcome(source.name, PASSED if not analysis.unexplained else FAILED, record=record)


def repair_job(source: ScoreInput, out: Path | None, options: dict[str, Any]) -> JobOutcome:
    """Repair one score into ``out`` (None with ``dry_run``); ``options``: ``row`` and
    ``repair_score``'s keyword arguments. Passed: the repaired score passes the gate. The record
    is ``RepairResult.to_dict()``; the tally counts the notes changed and the scores changed."""
    from serialkit.repair import repair_score

    kwargs = dict(options)
    row = kwargs.pop("row", None)
    if source.data is not None:
        from serialkit.io.dispatch import spooled_score

        with spooled_score(source.data, name=source.name) as path:
            result = repair_score(path, row, out=out, name=source.name, **kwargs)
    else:
        assert source.path is not None
        result = repair_score(source.path, row, out=out, **kwargs)
    changed = len(result.changes)
    return JobOutcome(source.name, PASSED if result.passed else FAILED, record=result.to_dict(),
                   tally={"changed_notes": changed, "scores_changed": int(changed > 0)})


STDIN_SUFFIXES = {"mei": ".mei", "musescore": ".mscx", "kern": ".krn", "abc": ".abc"}
"""Formats ``convert_score`` converts faithfully (not through the piece model), by file suffix."""


def convert_job(source: ScoreInput, out: Path | None, options: dict[str, Any]) -> JobOutcome:
    """Convert one score to ``out`` (its extension, or ``options["to"]``, names the format)."""
    from serialkit.io import convert_score, write_score

    assert out is not None
    if source.path is not None:  # the library's conversion: engraving kept where the formats allow
        piece = convert_score(source.path, out, in_format=options.get("from"), out_format=options.get("to"))
    else:
        piece = read_source(source, options.get("from"))
        suffix = STDIN_SUFFIXES.get(str(piece.metadata.get("format")))
        if suffix is None:  # rebuilt from the piece model, as convert_score does for these formats
            write_score(piece, out, format=options.get("to"))
        else:  # standard input of a format convert_score converts faithfully: through a file
            import tempfile

            with tempfile.TemporaryDirectory(prefix="serialkit-convert-") as tmp:
                copy = Path(tmp) / f"stdin{suffix}"
                copy.write_bytes(source.data or b"")
                convert_score(copy, out, in_format=options.get("from"), out_format=options.get("to"))
    record = {
        "output": str(out),
        "format": piece.metadata.get("format"),
        "to": _written_format(out, options.get("to")),
        "events": len(piece.events),
        "noteheads": sum(max(1, len(e.tied_ids)) for e in piece.events),
        "voices": len(piece.voices),
        "bars": len(piece.bar_list()),
    }
    return JobOutcome(source.name, WRITTEN, record=record)


def _written_format(out: Path, to: str | None) -> str | None:
    """The name of the format a conversion wrote (``--to``, else the writer the extension names)."""
    from serialkit.io.dispatch import FORMAT_ALIASES
    from serialkit.plugins import registry

    if to is not None:
        return FORMAT_ALIASES.get(to, to)
    suffix = out.suffix.lower()
    return next((e.name for e in registry("writers") if suffix in e.meta.get("extensions", ())), None)


def render_job(source: ScoreInput, out: Path | None, options: dict[str, Any]) -> JobOutcome:
    """Engrave one score (a file, a `generate` run directory or standard input) to ``out``;
    ``options``: ``serialkit.render.render``'s keyword arguments. The record is
    ``RenderResult.to_dict()``."""
    from serialkit.render import render

    assert out is not None
    if source.data is not None:
        from serialkit.io.dispatch import spooled_score

        with spooled_score(source.data, name=source.name) as path:
            result = render(path, out, **options)
    else:
        assert source.path is not None
        result = render(source.path, out, **options)
    return JobOutcome(source.name, WRITTEN, record=result.to_dict())
