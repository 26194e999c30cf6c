"""Many scores at once: inputs from files and folders, one job per score in processes, a summary.

One unreadable score never stops the rest: each job's ``SerialkitError`` (or an operating-system
error reading it) becomes that score's ``unreadable`` outcome. Results come back in input order.
The jobs themselves live in ``serialkit.jobs``: plain functions of plain data, so they run the
same in this process or in a worker process.
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
UNCHECKED = "unchecked"
"""A check that found nothing wrong but could not run the rules asked for (no row): never a pass."""
EXIT_FOR = {PASSED: 0, FAILED: 1, UNCHECKED: 1, WRITTEN: 0, UNREADABLE: 2}
VERDICTS = (PASSED, FAILED, UNREADABLE)
"""What a batch that judges its scores counts (annotate, repair)."""
CHECKS = (PASSED, FAILED, UNCHECKED, UNREADABLE)
"""What a batch of checks counts: ``VERDICTS`` and the scores not checked (no row for ROW, ORDER)."""
WRITES = (WRITTEN, UNREADABLE)
"""What a batch that only writes its scores counts (convert, render): no verdict, so no "passed"."""


def score_suffixes() -> tuple[str, ...]:
    """Extensions of every registered reader (what a folder scan picks up)."""
    from serialkit.plugins import registry

    return tuple(sorted({str(x).lower() for e in registry("readers") for x in e.meta.get("extensions", ())}))


@dataclass(frozen=True, slots=True)
class ScoreInput:
    """One input: its name as given (``-`` for standard input), its path, or its bytes,
    and ``relative``: where its output goes under an output directory."""

    name: str
    path: Path | None = None
    data: bytes | None = None
    relative: Path | None = None
    piece: Any = None
    """An already-read piece (the Python API's ``check(score)``), used instead of reading."""


def collect(inputs: Sequence[str], *, recursive: bool = False,
            suffixes: Sequence[str] | None = None) -> list[ScoreInput]:
    """The scores named by ``inputs``: files as given, folders scanned for score files
    (sub-folders too with ``recursive``), ``-`` as standard input (read by the caller)."""
    wanted = tuple(suffixes) if suffixes is not None else score_suffixes()
    found: list[ScoreInput] = []
    for item in inputs:
        if item == STDIN:
            found.append(ScoreInput(STDIN, relative=Path("stdin")))
            continue
        path = Path(item)
        if path.is_dir():
            pattern = path.rglob("*") if recursive else path.glob("*")
            files = sorted(p for p in pattern if p.is_file() and p.suffix.lower() in wanted
                           and not any(part.startswith(".") for part in p.relative_to(path).parts)
                           and (p.suffix.lower() != ".json" or _is_piece_json(p)))
            found.extend(ScoreInput(str(p), p, relative=p.relative_to(path)) for p in files)
        else:
            found.append(ScoreInput(item, path, relative=Path(path.name)))
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


def output_paths(sources: Sequence[ScoreInput], out_dir: Path, suffix: Callable[[ScoreInput], str], *,
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
class JobOutcome:
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
    unchecked: int = 0
    written: int = 0
    unreadable: int = 0
    tally: dict[str, int] = field(default_factory=dict)
    """The outcomes' own counts (``JobOutcome.tally``), added up."""
    counts: tuple[str, ...] = VERDICTS

    def add(self, outcome: JobOutcome) -> None:
        """Count one outcome."""
        self.scores += 1
        setattr(self, outcome.status, getattr(self, outcome.status) + 1)
        for key, n in outcome.tally.items():
            self.tally[key] = self.tally.get(key, 0) + n

    @property
    def exit_code(self) -> int:
        """2 when any score was unreadable, else 1 when any failed or was not checked, else 0."""
        return 2 if self.unreadable else 1 if self.failed or self.unchecked else 0

    def to_dict(self) -> dict[str, int]:
        """``{"scores": …, "passed": …, "failed": …, "unreadable": …}`` (``{"scores": …,
        "written": …, "unreadable": …}`` for ``WRITES``), then the tallies."""
        return {"scores": self.scores, **{status: getattr(self, status) for status in self.counts}, **self.tally}


Job = Callable[[ScoreInput, "Path | None", dict[str, Any]], JobOutcome]


def _guarded(job: Job, source: ScoreInput, out: Path | None, options: dict[str, Any]) -> JobOutcome:
    try:
        return job(source, out, options)
    except SerialkitError as exc:
        return JobOutcome(source.name, UNREADABLE, error=str(exc))
    except OSError as exc:
        where = exc.filename or source.name
        return JobOutcome(source.name, UNREADABLE, error=f"{where}: {exc.strerror or exc}")
    except RecursionError:
        return JobOutcome(source.name, UNREADABLE, error=f"{source.name}: the score is nested too deeply to read")


def run_batch(job: Job, sources: Sequence[ScoreInput], outputs: Sequence[Path | None], options: dict[str, Any],
              *, jobs: int = 1, progress: Callable[[int], None] | None = None) -> Iterator[JobOutcome]:
    """Run ``job`` on every source, in ``jobs`` processes, yielding outcomes in input order."""
    if jobs <= 1 or len(sources) <= 1:
        for src, out in zip(sources, outputs, strict=True):
            outcome = _guarded(job, src, out, options)
            if progress is not None:
                progress(1)
            yield outcome
        return
    with ProcessPoolExecutor(max_workers=min(jobs, len(sources), os.cpu_count() or 1) or 1) as pool:
        futures: list[Future[JobOutcome]] = [pool.submit(_guarded, job, src, out, options)
                                          for src, out in zip(sources, outputs, strict=True)]
        for fut in futures:
            outcome = fut.result()
            if progress is not None:
                progress(1)
            yield outcome


# --- the jobs ------------------------------------------------------------------------------------
