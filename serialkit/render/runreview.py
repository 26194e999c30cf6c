"""The review files of a released ``generate`` run: the annotated score and the HTML review page."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from serialkit.core.errors import SerialkitError
from serialkit.io import Annotation, write_annotated_musicxml
from serialkit.render import RUNG_COLORS, render

REVIEW_FILES = ("annotated.musicxml", "review.html")


@dataclass
class RunReview:
    """What ``write_run_review`` wrote (output name → path) and why anything was skipped."""

    written: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def clear_run_review(out_dir: str | Path) -> None:
    """Remove an earlier run's review files from ``out_dir``."""
    for name in REVIEW_FILES:
        (Path(out_dir) / name).unlink(missing_ok=True)


def write_run_review(out_dir: str | Path, certificate: dict[str, Any], released: bool,
                     labels: Mapping[str, str | None] | None = None) -> RunReview:
    """For a released run: ``annotated.musicxml`` (labels, repairs coloured by rung) and
    ``review.html``. ``labels`` are the labels the gate verified (note id → label): only those are
    written; without them, the certificate's claims. An earlier run's review files are always
    removed first, so none is left beside a run it does not describe."""
    out = Path(out_dir)
    clear_run_review(out)
    review = RunReview()
    score = out / "score.musicxml"
    if not released or not score.exists():
        return review
    annotations = {
        r["id"]: Annotation(label=labels.get(r["id"]) if labels is not None else f"{r['form']}:{r['position']}",
                            color=RUNG_COLORS.get(r["rung"]) if r["rung"] else None)
        for r in certificate["events"]
    }
    try:
        write_annotated_musicxml(score, annotations, out / "annotated.musicxml")
        review.written["annotated"] = str(out / "annotated.musicxml")
        render(score, out / "review.html", certificate=certificate)
        review.written["review"] = str(out / "review.html")
    except SerialkitError as exc:
        review.notes.append(f"review files not written: {exc}")
    return review
