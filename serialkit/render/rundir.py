"""Render a harness run directory: its score (or its unreleased candidate) with its certificate."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from serialkit.core.errors import RenderInputError
from serialkit.render.marks import load_json


@dataclass(frozen=True, slots=True)
class RunInputs:
    """The score to engrave and the JSON that marks it, found in a run directory."""

    score: Path
    report: Any
    certificate: Any


@contextlib.contextmanager
def run_inputs(run_dir: Path, report: Any = None, certificate: Any = None) -> Iterator[RunInputs]:
    """The score, report and certificate of a ``serialkit generate`` output directory.

    A released run has ``score.musicxml``; an unreleased one only ``candidate.json``, which is
    engraved through ``serialkit.io.write_musicxml`` into a temporary file so its failures can be
    seen. The run report's ``failures`` become the violations shown.
    """
    cert = certificate
    if cert is None and (run_dir / "certificate.json").is_file():
        cert = run_dir / "certificate.json"
    rep = report
    if rep is None and (run_dir / "report.json").is_file():
        data = load_json(run_dir / "report.json", "run report")
        if isinstance(data, dict) and data.get("format") == "serialkit-run-report":
            rep = {"violations": data.get("failures") or [], "labels": {}, "unexplained": [],
                   "ambiguities": []}
        else:
            rep = data
    score = run_dir / "score.musicxml"
    if score.is_file():
        yield RunInputs(score, rep, cert)
        return
    candidate = run_dir / "candidate.json"
    if not candidate.is_file():
        raise RenderInputError(f"{run_dir}: no score.musicxml or candidate.json in the run directory")
    from serialkit.io import load_piece, write_musicxml

    piece = load_piece(candidate)
    with tempfile.TemporaryDirectory(prefix="serialkit-render-") as tmp:
        path = Path(tmp) / "candidate.musicxml"
        write_musicxml(piece, path)
        yield RunInputs(path, rep, cert)


@contextlib.contextmanager
def piece_inputs(path: Path, report: Any = None, row: str | None = None,
                 rules: str | None = None) -> Iterator[RunInputs]:
    """A serialkit JSON piece engraved through a temporary MusicXML file.

    Without a report, the piece is checked (with ``row``, else its own row and tags) so the
    render shows its labels and violations.
    """
    from serialkit.check import check_piece
    from serialkit.check.profiles import profile_for
    from serialkit.io import load_piece, write_musicxml

    piece = load_piece(path)
    if report is None and (row is not None or piece.row is not None
                           or any(e.tag is not None for e in piece.events)):
        profile = profile_for(rules, task_bound=piece.blueprint is not None)
        report = check_piece(piece, row=row, profile=profile, suggest=True).to_dict()
    with tempfile.TemporaryDirectory(prefix="serialkit-render-") as tmp:
        score = Path(tmp) / f"{path.stem}.musicxml"
        write_musicxml(piece, score)
        yield RunInputs(score, report, None)
