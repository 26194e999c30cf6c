"""Many scores at once: inputs from files and folders, one job per score in processes, a summary.

One unreadable score never stops the rest: each job's ``SerialkitError`` (or an operating-system
error reading it) becomes that score's ``unreadable`` outcome. Results come back in input order.
The jobs themselves (``check_job``, ``annotate_job``, ``repair_job``, ``convert_job``) are plain functions of
plain data, so they run the same in this process or in a worker process.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from serialkit.core.errors import SerialkitError

STDIN = "-"
PASSED, FAILED, WRITTEN, UNREADABLE = "passed", "failed", "written", "unreadable"
EXIT_FOR = {PASSED: 0, FAILED: 1, WRITTEN: 0, UNREADABLE: 2}
VERDICTS = (PASSED, FAILED, UNREADABLE)
"""What a batch that judges its scores counts (check, annotate, repair)."""
WRITES = (WRITTEN, UNREADABLE)
"""What a batch that only writes its scores counts (convert, render): no verdict, so no "passed"."""


def score_suffixes() -> tuple[str, ...]:
    """Extensions of every registered reader (what a folder scan picks up)."""
    from serialkit.plugins import registry

    return tuple(sorted({str(x).lower() for e in registry("readers") for x in e.meta.get("extensions", ())}))


@dataclass(frozen=True, slots=True)
class Source:
    """One input: its name as given (``-`` for standard input), its path, or its bytes,
    and ``relative``: where its output goes under an output directory."""

    name: str
    path: Path | None = None
    data: bytes | None = None
    relative: Path | None = None
    piece: Any = None
    """An already-read piece (the Python API's ``check(score)``), used instead of reading."""


def collect(inputs: Sequence[str], *, recursive: bool = False,
            suffixes: Sequence[str] | None = None) -> list[Source]:
    """The scores named by ``inputs``: files as given, folders scanned for score files
    (sub-folders too with ``recursive``), ``-`` as standard input (read by the caller)."""
    wanted = tuple(suffixes) if suffixes is not None else score_suffixes()
    found: list[Source] = []
    for item in inputs:
        if item == STDIN:
            found.append(Source(STDIN, relative=Path("stdin")))
            continue
        path = Path(item)
        if path.is_dir():
            pattern = path.rglob("*") if recursive else path.glob("*")
            files = sorted(p for p in pattern if p.is_file() and p.suffix.lower() in wanted
                           and not any(part.startswith(".") for part in p.relative_to(path).parts)
                           and (p.suffix.lower() != ".json" or _is_piece_json(p)))
            found.extend(Source(str(p), p, relative=p.relative_to(path)) for p in files)
        else:
            found.append(Source(item, path, relative=Path(path.name)))
    return found


def _is_piece_json(path: Path) -> bool:
    """A folder's JSON file is a score only when it is a serialkit piece (not a catalogue, task...)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(4096)
    except OSError:
        return True  # named in the results as unreadable, not silently skipped
    return b"serialkit-piece" in head


def is_batch(inputs: Sequence[str]) -> bool:
    """Several inputs, or a folder: the commands then report one line per score and a summary."""
    return len(inputs) != 1 or Path(inputs[0]).is_dir()


def output_paths(sources: Sequence[Source], out_dir: Path, suffix: Callable[[Source], str], *,
                 append: bool = False) -> list[Path]:
    """One output path per source under ``out_dir`` (its name with ``suffix`` instead of its own,
    or after it with ``append``), refusing two sources that would share one."""
    paths: list[Path] = []
    seen: dict[Path, str] = {}
    read = {src.path.resolve(): src.name for src in sources if src.path is not None}
    for src in sources:
        rel = src.relative or Path(Path(src.name).name)
        target = out_dir / (rel.with_name(rel.name + suffix(src)) if append else rel.with_suffix(suffix(src)))
        if target in seen:
            raise SerialkitError(f"{src.name} and {seen[target]} would both be written to {target}; "
                                 "give them separately or rename one")
        if target.resolve() in read:  # its own source, or another score the command reads
            raise SerialkitError(f"{target}: refusing to overwrite the source score {read[target.resolve()]}")
        seen[target] = src.name
        paths.append(target)
    return paths


@dataclass
class Outcome:
    """What one job made of one score: its status, a JSON record, and an error message."""

    source: str
    status: str
    record: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    title: str | None = None
    tally: dict[str, int] = field(default_factory=dict)
    """Counts the batch's summary adds up beside the verdicts (``repair``: notes changed)."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON line printed for this score."""
        out: dict[str, Any] = {"source": self.source, "status": self.status}
        if self.error is not None:
            out["error"] = self.error
        out.update(self.record)
        return out


@dataclass
class Summary:
    """Counts over a batch; ``exit_code`` says which: 0 all passed (or written), 1 some failed,
    2 some unreadable. ``counts``: the statuses the summary reports — ``VERDICTS`` for a command
    that judges, ``WRITES`` for one that only writes (its scores are "written", never "passed")."""

    scores: int = 0
    passed: int = 0
    failed: int = 0
    written: int = 0
    unreadable: int = 0
    tally: dict[str, int] = field(default_factory=dict)
    """The outcomes' own counts (``Outcome.tally``), added up."""
    counts: tuple[str, ...] = VERDICTS

    def add(self, outcome: Outcome) -> None:
        """Count one outcome."""
        self.scores += 1
        setattr(self, outcome.status, getattr(self, outcome.status) + 1)
        for key, n in outcome.tally.items():
            self.tally[key] = self.tally.get(key, 0) + n

    @property
    def exit_code(self) -> int:
        """2 when any score was unreadable, else 1 when any failed, else 0."""
        return 2 if self.unreadable else 1 if self.failed else 0

    def to_dict(self) -> dict[str, int]:
        """``{"scores": …, "passed": …, "failed": …, "unreadable": …}`` (``{"scores": …,
        "written": …, "unreadable": …}`` for ``WRITES``), then the tallies."""
        return {"scores": self.scores, **{status: getattr(self, status) for status in self.counts}, **self.tally}


Job = Callable[[Source, "Path | None", dict[str, Any]], Outcome]


def _guarded(job: Job, source: Source, out: Path | None, options: dict[str, Any]) -> Outcome:
    try:
        return job(source, out, options)
    except SerialkitError as exc:
        return Outcome(source.name, UNREADABLE, error=str(exc))
    except OSError as exc:
        where = exc.filename or source.name
        return Outcome(source.name, UNREADABLE, error=f"{where}: {exc.strerror or exc}")
    except RecursionError:
        return Outcome(source.name, UNREADABLE, error=f"{source.name}: the score is nested too deeply to read")


def run_batch(job: Job, sources: Sequence[Source], outputs: Sequence[Path | None], options: dict[str, Any],
              *, jobs: int = 1, progress: Callable[[int], None] | None = None) -> Iterator[Outcome]:
    """Run ``job`` on every source, in ``jobs`` processes, yielding outcomes in input order."""
    if jobs <= 1 or len(sources) <= 1:
        for src, out in zip(sources, outputs, strict=True):
            outcome = _guarded(job, src, out, options)
            if progress is not None:
                progress(1)
            yield outcome
        return
    with ProcessPoolExecutor(max_workers=min(jobs, len(sources), os.cpu_count() or 1) or 1) as pool:
        futures: list[Future[Outcome]] = [pool.submit(_guarded, job, src, out, options)
                                          for src, out in zip(sources, outputs, strict=True)]
        for fut in futures:
            outcome = fut.result()
            if progress is not None:
                progress(1)
            yield outcome


# --- the jobs ------------------------------------------------------------------------------------

def read_source(source: Source, format: str | None = None) -> Any:
    """The piece of one source (file or bytes from standard input)."""
    from serialkit.io import read_score
    from serialkit.io.stdin import read_score_bytes

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


def check_job(source: Source, out: Path | None, options: dict[str, Any]) -> Outcome:
    """Check one score; ``options``: row, convention, rules, rules_spec (a profile), task,
    identify, mode, format. A task-bound candidate (``task``, or a piece with a blueprint) is judged
    by the one gate ``generate`` uses."""
    from serialkit.io.atomic import atomic_write

    checked = check_source(source, options)
    data = checked.data
    if out is not None:
        import json

        atomic_write(out, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
        data["output"] = str(out)
    return Outcome(source.name, PASSED if checked.passed else FAILED, record=data, title=checked.piece.title)


def check_source(source: Source, options: dict[str, Any]) -> Checked:
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
        from serialkit.harness.gate import rules_for

        task = load_task(named)
        rules = rules_for(task)
        piece = task.frame(_in_task_voices(piece, task, source.name))
    task_bound = task is not None or piece.blueprint is not None
    if task_bound and rules_spec not in (None, "generation"):
        raise SerialkitError(f"{source.name}: --rules {rules_spec}: a task-bound candidate is judged by the "
                             "generation rules of the gate (drop --rules, or check the score without its task)")
    profile = profile_for(rules_spec, rules, task_bound=task_bound)
    convention = options.get("convention")
    report = check_piece(piece, row=row, convention=convention, identify=True if options.get("identify") else None,
                         source=source.name, profile=profile, suggest=bool(options.get("suggest", True)))
    data = report.to_dict()
    data["notes"].extend(f"reading: {w}" for w in (piece.metadata or {}).get("warnings") or ())
    if task is not None and not options.get("task"):
        data["notes"].append(f"judged against task {task.name}, the bundled task the candidate names (not "
                             "a blueprint it carries); give --task FILE for a task of your own")
    mode = options.get("mode", "strict")
    passed = report.passed(mode)
    if task_bound and (row is not None or piece.row is not None):
        passed = _gate(piece, row, convention, profile.rules, data, mode, task, unreadable)
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
          task: Any = None, unreadable: tuple[str, ...] = ()) -> bool:
    """Judge a task-bound candidate with the one gate (and the task's time limits) and put its
    verdict into the report."""
    from serialkit.check.gate import gate_candidate

    framed = piece.copy(row=row or piece.row, convention=convention or piece.convention)
    limits = None
    if task is not None:
        from serialkit.harness.gate import limits_for

        limits = limits_for(task)
    verdict = gate_candidate(framed, rules, limits=limits, unreadable=unreadable)
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


def annotate_job(source: Source, out: Path | None, options: dict[str, Any]) -> Outcome:
    """Annotate one score into ``out``; ``options`` are ``annotate_score``'s keyword arguments."""
    from serialkit.check.annotate import annotate_score
    from serialkit.io.stdin import spooled

    kwargs = dict(options)
    row = kwargs.pop("row", None)
    if source.data is not None:
        with spooled(source.data, source.name) as path:
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
    return Outcome(source.name, PASSED if not analysis.unexplained else FAILED, record=record)


def repair_job(source: Source, out: Path | None, options: dict[str, Any]) -> Outcome:
    """Repair one score into ``out`` (None with ``dry_run``); ``options``: ``row`` and
    ``repair_score``'s keyword arguments. Passed: the repaired score passes the gate. The record
    is ``RepairResult.to_dict()``; the tally counts the notes changed and the scores changed."""
    from serialkit.repair import repair_score

    kwargs = dict(options)
    row = kwargs.pop("row", None)
    if source.data is not None:
        from serialkit.io.stdin import spooled

        with spooled(source.data, source.name) as path:
            result = repair_score(path, row, out=out, name=source.name, **kwargs)
    else:
        assert source.path is not None
        result = repair_score(source.path, row, out=out, **kwargs)
    changed = len(result.changes)
    return Outcome(source.name, PASSED if result.passed else FAILED, record=result.to_dict(),
                   tally={"changed_notes": changed, "scores_changed": int(changed > 0)})


STDIN_SUFFIXES = {"mei": ".mei", "musescore": ".mscx", "kern": ".krn", "abc": ".abc"}
"""Formats ``convert_score`` converts faithfully (not through the piece model), by file suffix."""


def convert_job(source: Source, out: Path | None, options: dict[str, Any]) -> Outcome:
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
    return Outcome(source.name, WRITTEN, record=record)


def _written_format(out: Path, to: str | None) -> str | None:
    """The name of the format a conversion wrote (``--to``, else the writer the extension names)."""
    from serialkit.io import FORMAT_ALIASES
    from serialkit.plugins import registry

    if to is not None:
        return FORMAT_ALIASES.get(to, to)
    suffix = out.suffix.lower()
    return next((e.name for e in registry("writers") if suffix in e.meta.get("extensions", ())), None)


def render_job(source: Source, out: Path | None, options: dict[str, Any]) -> Outcome:
    """Engrave one score (a file, a `generate` run directory or standard input) to ``out``;
    ``options``: ``serialkit.render.render``'s keyword arguments. The record is
    ``RenderResult.to_dict()``."""
    from serialkit.render import render

    assert out is not None
    if source.data is not None:
        from serialkit.io.stdin import spooled

        with spooled(source.data, source.name) as path:
            result = render(path, out, **options)
    else:
        assert source.path is not None
        result = render(source.path, out, **options)
    return Outcome(source.name, WRITTEN, record=result.to_dict())
