"""The Python API: the library calls the CLI commands make, with the CLI's option names.

``read_score`` gives a ``Score``; ``check``, ``annotate``, ``repair`` and ``render`` take a
``Score``, a path or bytes; ``generate`` runs the harness on a task. In a notebook a ``Score`` and
a ``CheckResult`` show themselves engraved (verovio SVG, labelled and coloured as ``render``
draws them) and a ``Row`` shows its matrix.
"""

from __future__ import annotations

import contextlib
import html
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from serialkit.core.analysis.result import percent
from serialkit.core.errors import SerialkitError

if TYPE_CHECKING:
    from serialkit.check.annotate import Annotated
    from serialkit.check.report import CheckReport
    from serialkit.core.piece import Piece
    from serialkit.core.rows import Row
    from serialkit.harness.runner import RunResult
    from serialkit.harness.tasks import Task
    from serialkit.render import RenderResult
    from serialkit.repair import RepairResult

@dataclass(frozen=True)
class Score:
    """A score read by ``read_score``: its ``piece`` (the note model every command works on) and
    the ``path`` it came from (None for bytes or a music21 stream)."""

    piece: Piece
    path: Path | None = None
    data: bytes | None = field(default=None, repr=False)

    @property
    def title(self) -> str | None:
        """The piece's title."""
        return self.piece.title

    @property
    def name(self) -> str:
        """What reports call this score: its path, else ``-``."""
        return str(self.path) if self.path is not None else str((self.piece.metadata or {}).get("source_path", "-"))

    def svg(self, *, row: str | Row | None = None, report: Mapping[str, Any] | None = None) -> str:
        """The score engraved as SVG (every page), labelled by ``report`` or by checking with
        ``row`` (default: the piece's own row), as ``serialkit render`` draws it."""
        use = row if row is not None else self.piece.row
        with _file_of(self) as path, tempfile.TemporaryDirectory(prefix="serialkit-show-") as tmp:
            from serialkit.render import render as render_score

            result = render_score(path, Path(tmp) / "score.svg", report=report,
                                  row=str(use) if use is not None and report is None else None)
            return "\n".join(f.read_text(encoding="utf-8") for f in result.files)

    def _repr_svg_(self) -> str:
        return self.svg()

    def _repr_html_(self) -> str:
        head = html.escape(self.title or self.name)
        return f"<div class='serialkit-score'><p><b>{head}</b> — {len(self.piece.events)} notes</p>{_pages(self.svg())}</div>"


@dataclass(frozen=True)
class CheckResult:
    """What ``check`` found: ``passed`` in ``mode``, the ``CheckReport``, and ``data``, the JSON
    report ``serialkit check --json`` prints (for a task's candidate, with the gate's verdict)."""

    score: Score
    report: CheckReport
    data: dict[str, Any]
    passed: bool
    mode: str
    task_bound: bool = False
    """Judged as a task's candidate (``task=`` given, or the score carries a blueprint): the gate's
    strict and relaxed verdicts apply. Otherwise the score is an existing one, read by analysis."""

    @property
    def violations(self) -> list[dict[str, Any]]:
        """The violations, as in the JSON report."""
        return list(self.data.get("violations", ()))

    @property
    def labels(self) -> dict[str, str | None]:
        """Note id → its row-form label (``P0:3``), None for an unexplained note."""
        return dict(self.data.get("labels") or {})

    @property
    def suggestions(self) -> list[Mapping[str, Any]]:
        """The suggested corrections (empty with ``suggest=False``)."""
        return list(self.data.get("suggestions") or ())

    def to_dict(self) -> dict[str, Any]:
        """The JSON report (``serialkit check --json``)."""
        return dict(self.data)

    def summary(self) -> str:
        """One line: verdict, violations by code, coverage."""
        counts = ", ".join(f"{c} {n}" for c, n in (self.data.get("counts") or {}).items() if n)
        cov = self.data.get("coverage")
        n = len(self.violations)
        return (f"{'pass' if self.passed else 'FAIL'} ({self.mode}) {n} violation{'s' if n != 1 else ''}"
                + (f" ({counts})" if counts else "") + (f"; coverage {percent(cov)}" if cov is not None else ""))

    def _verdict_html(self) -> str:
        """The heading and findings of the notebook display: a task's candidate in the gate's words
        (pass/FAIL, strict or relaxed), an existing score in the analysis profile's words (how much
        the row explains, violations, observations), as the review page words them."""
        name = html.escape(self.score.name)
        if self.task_bound:
            colour = "green" if self.passed else "#c00"
            head = html.escape(self.summary())
        else:
            from serialkit.check.report import ambiguity_kinds
            from serialkit.render.review import analysis_words

            data = self.data
            facts = {"coverage": data.get("coverage"), "row": data.get("row"),
                     "unexplained_count": len(data.get("unexplained") or ()),
                     "violations_count": len(self.violations),
                     "observations_count": len(data.get("observations") or ()),
                     "ambiguities_count": sum(ambiguity_kinds(data.get("ambiguities") or ()).values())}
            colour = "#c00" if self.violations else "green"
            head = html.escape(" · ".join(analysis_words(facts)))
        out = f"<p style='color:{colour}'><b>{name}: {head}</b></p>{_listed(self.violations)}"
        observations = [] if self.task_bound else list(self.data.get("observations") or ())
        if observations:
            out += f"<p>Observations (reported, not violations):</p>{_listed(observations)}"
        return out

    def _repr_html_(self) -> str:
        return (f"<div class='serialkit-check'>{self._verdict_html()}"
                f"{_pages(self.score.svg(report=self.data))}</div>")


def _listed(findings: Sequence[Mapping[str, Any]], show: int = 20) -> str:
    """Findings as an HTML list (code and message), the first ``show`` of them."""
    if not findings:
        return ""
    items = "".join(f"<li><code>{html.escape(str(v.get('code')))}</code> {html.escape(str(v.get('message')))}</li>"
                    for v in findings[:show])
    rest = f"<li>… {len(findings) - show} more</li>" if len(findings) > show else ""
    return f"<ul>{items}{rest}</ul>"


_FIT = "<style>.serialkit-pages svg{max-width:100%;height:auto}</style>"
"""Pages scaled to the notebook's width."""


def _pages(svg: str) -> str:
    return f"{_FIT}<div class='serialkit-pages'>{svg}</div>"


def _music21_stream(obj: object) -> bool:
    return type(obj).__module__.split(".")[0] == "music21"


def read_score(source: Score | str | os.PathLike[str] | bytes | Any, *, format: str | None = None) -> Score:
    """Read a score: a path (MusicXML, .mxl, MEI, MIDI, JSON piece, ...), its bytes (format sniffed
    from the content) or a music21 stream. ``format`` forces the reader (the CLI's ``--from``)."""
    from serialkit import io

    if isinstance(source, Score):
        return source
    if isinstance(source, bytes):
        return Score(io.read_score_bytes(source, format=format), None, source)
    if isinstance(source, str | os.PathLike):
        return Score(io.read_score(source, format=format), Path(source))
    if _music21_stream(source):
        return from_music21(source)
    raise SerialkitError(f"read_score: expected a path, bytes or a music21 stream, not {type(source).__name__}")


@contextlib.contextmanager
def _file_of(score: Score | str | os.PathLike[str] | bytes) -> Iterator[Path]:
    """A file holding the score: its own path, else a temporary file (the bytes, or MusicXML written
    from the piece)."""
    if isinstance(score, str | os.PathLike):
        yield Path(score)
        return
    if isinstance(score, bytes):
        score = read_score(score)
    if score.path is not None:
        yield score.path
        return
    if score.data is not None:
        from serialkit.io import spooled_score

        with spooled_score(score.data) as path:
            yield path
        return
    from serialkit.io import write_score

    with tempfile.TemporaryDirectory(prefix="serialkit-score-") as tmp:
        path = Path(tmp) / "score.musicxml"
        write_score(score.piece, path)
        yield path


def _row_text(row: str | Sequence[int] | Row | None) -> str | None:
    if row is None or isinstance(row, str):
        return row
    from serialkit.core.rows import Row

    return " ".join(str(pc) for pc in Row.parse(row))


def check(
    score: Score | str | os.PathLike[str] | bytes,
    *,
    row: str | Sequence[int] | Row | None = None,
    rules: str | None = None,
    task: str | os.PathLike[str] | Task | None = None,
    convention: str | None = None,
    relaxed: bool = False,
    identify: bool = False,
    tolerance: Fraction | str = "0",
    repeats: bool = False,
    oscillation: int = 0,
    max_crossing: Fraction | str = "1/10",
    suggest: bool = True,
    format: str | None = None,
) -> CheckResult:
    """Check a score against the rules of twelve-tone writing, as ``serialkit check`` does.

    ``rules``: ``analysis`` (the default for a score), ``generation`` (the default with ``task``
    or for a candidate carrying a blueprint) or predicate codes like ``ROW,ORDER``. ``task``
    judges the score as that task's candidate by the gate ``generate`` uses. ``relaxed``: the
    verdict ignores SCHED (the CLI's ``--relaxed``; default strict). The other options are the
    CLI's ``--tolerance``, ``--repeats``, ``--oscillation``, ``--max-crossing``, ``--identify``,
    ``--convention``, ``--suggest/--no-suggest`` and ``--from``.
    """
    from serialkit.batch import ScoreInput
    from serialkit.check.profiles import profile_for
    from serialkit.core.predicates import Rules
    from serialkit.jobs import check_source

    given = read_score(score, format=format)
    crossing = Fraction(str(max_crossing))
    if not 0 <= crossing <= 1:
        raise SerialkitError(f"max_crossing {max_crossing}: must be between 0 and 1")
    if rules is not None:
        profile_for(rules)  # an unknown profile or code is an error before any work
    mode = "relaxed" if relaxed else "strict"
    options = {"row": _row_text(row), "convention": convention,
               "rules": Rules(Fraction(str(tolerance)), repeats, oscillation, crossing),
               "identify": identify, "mode": mode, "format": format, "rules_spec": rules,
               "task": task, "suggest": suggest}
    checked = check_source(ScoreInput(given.name, given.path, piece=given.piece), options)
    task_bound = task is not None or given.piece.blueprint is not None
    return CheckResult(given, checked.report, checked.data, checked.passed, mode, task_bound)


def annotate(
    score: Score | str | os.PathLike[str] | bytes,
    *,
    out: str | os.PathLike[str] | None = None,
    row: str | Sequence[int] | Row | None = None,
    convention: str | None = None,
    labels: str = "words",
    colour_by: str = "form",
    rules: str | None = None,
) -> Annotated:
    """Label every note with its row form and order position (``serialkit annotate``); with
    ``out`` write the labelled score there (MusicXML or MEI, by extension) for notation software."""
    from serialkit.check.annotate import annotate_score

    with _file_of(score) as path:
        return annotate_score(path, _row_text(row), out=out, convention=convention, labels=labels,
                              colour_by=colour_by, rules=rules)


def repair(
    score: Score | str | os.PathLike[str] | bytes,
    *,
    out: str | os.PathLike[str] | None = None,
    row: str | Sequence[int] | Row | None = None,
    convention: str | None = None,
    only: Sequence[str] | None = None,
    dry_run: bool = False,
    threshold: float | None = None,
    review: bool = True,
    rules: str | None = None,
) -> RepairResult:
    """Repair a copy of the score with the corrections the gate accepts (``serialkit repair``):
    the result goes to ``out`` with its certificate (and, with ``review``, a review page) beside
    it; ``dry_run`` writes nothing. ``only``: finding codes whose notes may change."""
    from serialkit.core.suggest import DEFAULT_THRESHOLD
    from serialkit.repair import repair_score

    if out is None and not dry_run:
        raise SerialkitError("repair: give out= (where the repaired score goes) or dry_run=True")
    with _file_of(score) as path:
        return repair_score(path, _row_text(row), out=out, convention=convention, only=only, dry_run=dry_run,
                            threshold=DEFAULT_THRESHOLD if threshold is None else threshold,
                            review=review, rules=rules)


def render(
    score: Score | str | os.PathLike[str] | bytes,
    out: str | os.PathLike[str],
    *,
    row: str | Sequence[int] | Row | None = None,
    check_report: CheckResult | Mapping[str, Any] | str | os.PathLike[str] | None = None,
    certificate: Mapping[str, Any] | str | os.PathLike[str] | None = None,
    blind: bool = False,
    scale: int = 100,
    page_width: int = 2100,
    convention: str = "relative",
    format: str | None = None,
    rules: str | None = None,
) -> RenderResult:
    """Engrave the score to SVG, PNG, PDF or an HTML review page (``serialkit render``), its notes
    labelled and coloured from ``check_report`` and ``certificate``, or by checking with ``row``."""
    from serialkit.render import render as render_score

    report: Any = check_report.data if isinstance(check_report, CheckResult) else check_report
    if isinstance(report, os.PathLike):
        report = str(report)
    cert: Any = str(certificate) if isinstance(certificate, os.PathLike) else certificate
    with _file_of(score) as path:
        return render_score(path, Path(out), report, cert, blind, scale, page_width, _row_text(row), convention,
                            format, rules)


def generate(
    task: str | os.PathLike[str] | Task,
    *,
    proposer: str = "stochastic",
    out: str | os.PathLike[str] | None = None,
    seed: int = 0,
    variant: str = "harness",
    options: Mapping[str, Any] | None = None,
    strict: bool = False,
    ladder: str | None = None,
) -> RunResult:
    """One generate–verify–repair run on a task (``serialkit generate``): ``proposer`` names a
    proposer (``stochastic``, ``openai``, ``replay`` or a plugin's), ``options`` its ``-O`` options;
    with ``out`` the run directory is written there. Released only when the gate passes (relaxed
    unless ``strict``)."""
    from serialkit.harness import run

    return run(task if not isinstance(task, os.PathLike) else Path(task), variant=variant, proposer=proposer,
               proposer_options=dict(options or {}), seed=seed,
               out_dir=None if out is None else Path(out),
               mode="strict" if strict else "relaxed", ladder=ladder)


def from_music21(stream: Any) -> Score:
    """A Score from a music21 stream (exported to MusicXML by music21, read by serialkit)."""
    from serialkit.io.m21 import from_music21 as convert

    return Score(convert(stream))


def to_music21(score: Score | Piece | str | os.PathLike[str] | bytes) -> Any:
    """A music21 Score of a score (sounding pitches, exact durations, ties and tuplets)."""
    from serialkit.core.piece import Piece
    from serialkit.io.m21 import to_music21 as convert

    return convert(score if isinstance(score, Piece) else read_score(score).piece)
