"""Real scores (../shared/corpus): every note the checker labels is found, labelled and coloured."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from serialkit.render import render
from tests.render.conftest import labels, notes_by_id, parse_svg, text_of

pytestmark = pytest.mark.corpus

SCORES = {
    "webern-op27-ii-mm1-11.mei": "Eb B Bb D C# C F# E G F A Ab",
    "webern-op21-i-mm1-25.mei": "A F# G G# E F B Bb D C# C Eb",
}


def _report(path: Path, row: str) -> dict[str, Any]:
    from serialkit.check import check_piece
    from serialkit.io import read_score

    data: dict[str, Any] = check_piece(read_score(path), row=row).to_dict()
    return data


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SCORES))
def test_checked_corpus_score_renders_every_label(corpus: Path, tmp_path: Path, name: str) -> None:
    path = corpus / name
    report = _report(path, SCORES[name])
    result = render(path, tmp_path / "score.svg", report=report)
    notes: dict[str, Any] = {}
    printed: dict[str, str] = {}
    for page in result.files:
        root = parse_svg(page)
        notes.update(notes_by_id(root))
        printed.update({el.get("data-for"): text_of(el) for el in labels(root)})
    labelled = {eid: lab for eid, lab in report["labels"].items() if lab}
    assert len(labelled) > 40
    # every labelled event is drawn with its label (reader-assigned ids are written back)
    drawn = {el.get("data-label"): el for el in notes.values() if el.get("data-label")}
    assert sum(1 for el in notes.values() if el.get("data-label")) == len(labelled)
    assert set(drawn) <= set(labelled.values())
    assert len(printed) == len(labelled) + len(report["unexplained"]) == result.labels
    for violation in report["violations"]:
        marked = [el for el in notes.values()
                  if f"sk-viol-{violation['code']}" in el.get("class", "").split()]
        assert marked, violation


def test_blind_corpus_render_has_no_title(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "blind.svg"
    render(corpus / "webern-op27-ii-mm1-11.mei", out, blind=True)
    text = out.read_text()
    assert "Variations" not in text and "Webern" not in text and "<desc" not in text


def test_review_findings_agree_with_check_on_webern(corpus: Path, tmp_path: Path) -> None:
    """`render --row` lists what `check` reports, once each: violations (the unexplained note once,
    not again as UNEXPLAINED), the profile's observations as observations, then ambiguities."""
    from serialkit.check import check_piece
    from serialkit.check.profiles import profile_for
    from serialkit.io import read_score

    path = corpus / "webern-op21-i-mm1-25.mei"
    result = render(path, tmp_path / "review.html", row=SCORES[path.name])
    report = check_piece(read_score(path), row=SCORES[path.name], profile=profile_for("analysis"))
    kinds = [f.kind for f in result.findings]
    assert [f.code for f in result.findings if f.kind == "violation"] == [v.code for v in report.violations]
    assert kinds.count("observation") == len(report.observations) > 0
    assert kinds.count("unexplained") == 0 and set(report.unexplained) <= {
        e for f in result.findings if f.code == "ROW" for e in f.event_ids}
    assert sorted(kinds, key=["violation", "unexplained", "observation", "ambiguity"].index) == kinds
