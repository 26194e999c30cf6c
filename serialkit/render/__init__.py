"""Engraved review: verovio SVG/PNG/PDF and an HTML review page showing labels, violations, repairs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from serialkit.core.errors import RenderInputError
from serialkit.core.piece import Piece
from serialkit.core.quiet import quiet_gc
from serialkit.render.engrave import (
    ParsedScore,
    engrave,
    note_ids,
    prepare,
    read_source,
    verovio_options,
)
from serialkit.render.ids import has_ties, map_ids, needs_mapping
from serialkit.render.marks import (
    RUNG_COLORS,
    RUNGS,
    UNEXPLAINED_COLOR,
    VIOLATION_COLOR,
    Finding,
    Marks,
    NoteMark,
    build_marks,
    load_json,
)
from serialkit.render.output import output_format, write_pages
from serialkit.render.svgpost import PageInfo, blind_svg, crop_page, decorate, fit_left, fit_words

__all__ = [
    "RUNGS",
    "RUNG_COLORS",
    "UNEXPLAINED_COLOR",
    "VIOLATION_COLOR",
    "Finding",
    "Marks",
    "NoteMark",
    "RenderResult",
    "build_marks",
    "engrave_pages",
    "marks_for",
    "render",
]

JsonInput = str | Path | Mapping[str, Any] | list[Any] | None
#: A function giving the score as ``read_score`` reads it (``io.check_score``'s answer).
Reading = Callable[[], Piece]


@dataclass(frozen=True, slots=True)
class RenderResult:
    """What a render wrote and showed."""

    files: tuple[Path, ...]
    pages: int
    labels: int
    marked_notes: int  # notes drawn with a class, colour or label (tied continuations included)
    findings: tuple[Finding, ...]
    missing: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``serialkit render --json``)."""
        return {
            "files": [str(f) for f in self.files],
            "pages": self.pages,
            "labels": self.labels,
            "marked_notes": self.marked_notes,
            "findings": [f.to_dict() for f in self.findings],
            "missing": list(self.missing),
        }


def _json(value: JsonInput, what: str) -> tuple[Any, str]:
    if value is None or isinstance(value, Mapping | list):
        return value, what
    return load_json(value, what), str(value)


def marks_for(
    score_path: str | Path,
    report: JsonInput = None,
    certificate: JsonInput = None,
    row: str | None = None,
    convention: str = "relative",
    rules: str | None = None,
    *,
    piece: Reading | None = None,
) -> Marks:
    """Note marks from a report and/or certificate, or from running the checker with ``row``
    under the rule profile ``rules`` (default ``analysis``: only its violations are marked).
    Without a report, a certificate or a row, the checker identifies the row as ``serialkit check``
    does and its report labels the notes (``piece``: a function giving the score as
    ``read_score`` reads it, when it has been checked already)."""
    report_data, report_where = _json(report, "check report")
    cert_data, cert_where = _json(certificate, "certificate")
    if report_data is None and (row is not None or cert_data is None):
        report_data = _check(score_path, row, convention, rules, piece)
        report_where = f"check of {score_path}"
    return build_marks(report_data, cert_data, report_where, cert_where)


def _check(score_path: str | Path, row: str | None, convention: str, rules: str | None = None,
           piece: Reading | None = None) -> Mapping[str, Any]:
    """Run the project's checker on the score (labels every note) and return its report; with no
    ``row``, the checker identifies one (``check_piece`` with ``identify=None``)."""
    from serialkit.check import check_piece
    from serialkit.check.profiles import profile_for
    from serialkit.core.rows import Row, _check_convention
    from serialkit.io import read_score

    score = read_score(score_path) if piece is None else piece()
    profile = profile_for(rules, task_bound=score.blueprint is not None)
    report = check_piece(score, row=None if row is None else Row.parse(row),
                         convention=_check_convention(convention), profile=profile, suggest=True,
                         source=str(score_path))
    data: Mapping[str, Any] = report.to_dict()
    return data


def engrave_pages(
    score_path: str | Path,
    marks: Marks | None = None,
    blind: bool = False,
    scale: int = 100,
    page_width: int = 2100,
    source: ParsedScore | None = None,
    piece: Reading | None = None,
) -> tuple[list[str], list[PageInfo], Marks]:
    """Engrave and decorate every page: SVG pages, what each page shows, the marks as drawn
    (``source``: the score as ``read_source`` read it, ``piece``: a function giving it as
    ``read_score`` reads it, when it has been read or checked already)."""
    marks = marks if marks is not None and not blind else Marks()
    source = source if source is not None else read_source(score_path)
    amended = False
    present = note_ids(source) if marks.notes else set()
    if marks.notes and needs_mapping(source, marks.notes, present):
        ids, amended = map_ids(source, marks.notes, None if piece is None else piece())
        marks = marks.remap(ids)
        if amended:  # reader-assigned ids written into the source
            present = note_ids(source)
    if marks.notes:
        missing = [eid for eid in marks.notes if eid not in present]
        if len(missing) == len(marks.notes):
            raise RenderInputError(
                f"{score_path}: none of the {len(missing)} notes the report or certificate names "
                f"is in this score (first: {missing[0]!r}); is it the report of another score?"
            )
        marks = Marks(marks.notes, marks.findings, {**marks.facts, "missing": missing})
    labelled = any(m.text for m in marks.notes.values())  # (marks.labelled > 0, from the first labelled note)
    data = prepare(source, blind, amended, labelled)
    options = verovio_options(scale, page_width, blind, labelled)
    pages = [fit_words(fit_left(p)) for p in engrave(data, options, str(score_path))]
    if blind:
        pages[-1] = crop_page(pages[-1])
        blank = [PageInfo((), ()) for _ in pages]
        return [blind_svg(p, f"p{i}") for i, p in enumerate(pages, 1)], blank, marks
    out: list[str] = []
    infos: list[PageInfo] = []
    for i, page in enumerate(pages):
        text, info = decorate(page, marks, last_page=i == len(pages) - 1)
        out.append(text)
        infos.append(info)
    return out, infos, marks


def _readable(score_path: str | Path, checks: bool = False) -> tuple[ParsedScore, Reading]:
    """Refuse what every other command refuses: the score must be one verovio engraves (MusicXML
    or MEI) and one serialkit's reader reads (a pitch step 'H', a negative duration, no parts: the
    reader's one-line error, as ``check`` gives it), before anything is engraved or written.
    The score as parsed for verovio, and a function giving it as the reader reads it (checked
    from that parse, where it can, and read whole only when asked for: the check keeps the notes
    it read only where they will likely be asked for, when the checker runs (``checks``) or the
    score has ties, whose noteheads the marks are mapped to)."""
    from serialkit.io import check_score

    source = read_source(score_path)
    plain = source.kind == "musicxml" and source.path.suffix.lower() != ".mxl"
    keep = checks or has_ties(source)
    return source, check_score(score_path, parsed=source.root.getroottree() if plain else None, keep=keep)


def render(
    score_path: str | Path,
    out_path: str | Path,
    report: JsonInput = None,
    certificate: JsonInput = None,
    blind: bool = False,
    scale: int = 100,
    page_width: int = 2100,
    row: str | None = None,
    convention: str = "relative",
    fmt: str | None = None,
    rules: str | None = None,
) -> RenderResult:
    """Engrave a score to SVG, PNG, PDF or an HTML review page (format: ``fmt`` or the suffix)."""
    if Path(score_path).is_dir():
        from serialkit.render.rundir import run_inputs

        with run_inputs(Path(score_path), report, certificate) as found:
            return render(found.score, out_path, found.report, found.certificate, blind, scale,
                          page_width, row, convention, fmt, rules)
    if Path(score_path).suffix.lower() == ".json":
        from serialkit.render.rundir import piece_inputs

        with piece_inputs(Path(score_path), report, row, rules) as found:
            return render(found.score, out_path, found.report, certificate, blind, scale,
                          page_width, None, convention, fmt, rules)
    fmt = output_format(out_path, fmt)
    if not 1 <= scale <= 1000:
        raise RenderInputError(f"--scale {scale} is out of range 1..1000")
    if not 100 <= page_width <= 100000:
        raise RenderInputError(f"--page-width {page_width} is out of range 100..100000")
    # The score's notes, its marks, each page's shapes and labels: thousands of small objects
    # that live as long as the render, which the collector need not walk (unless the checker runs:
    # it pauses the collector where it needs to).
    checks = not blind and report is None and (row is not None or certificate is None)
    with nullcontext() if checks else quiet_gc():
        return _render_file(score_path, out_path, report, certificate, blind, scale, page_width, row,
                            convention, fmt, rules)


def _render_file(score_path: str | Path, out_path: str | Path, report: JsonInput, certificate: JsonInput,
                 blind: bool, scale: int, page_width: int, row: str | None, convention: str, fmt: str,
                 rules: str | None) -> RenderResult:
    """``render`` of one score file, its arguments checked."""
    checks = not blind and report is None and (row is not None or certificate is None)
    source, piece = _readable(score_path, checks)
    marks = Marks() if blind else marks_for(score_path, report, certificate, row, convention, rules, piece=piece)
    pages, infos, drawn = engrave_pages(score_path, marks, blind, scale, page_width, source, piece)
    if fmt == "html":
        from serialkit.io.files.atomic import atomic_write
        from serialkit.render.review import review_page

        atomic_write(out_path, review_page(pages, drawn, blind=blind))
        files: list[Path] = [Path(out_path)]
    else:
        files = write_pages(pages, out_path, fmt)
    return RenderResult(
        files=tuple(files),
        pages=len(pages),
        labels=sum(len(info.label_for) for info in infos),
        marked_notes=len({eid for info in infos for eid in info.note_ids}),
        findings=() if blind else marks.findings,
        missing=tuple(drawn.facts.get("missing", ())),
    )
