"""PNG, PDF and multi-page output; a legend on every page; errors leave no files."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from serialkit.core.errors import ScoreReadError, ScoreWriteError, SerialkitError
from serialkit.render import render
from tests.render.conftest import SVG, labels, parse_svg
from tests.render.scoregen import row_score

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def long_score(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """A synthetic score long enough for several pages."""
    xml, report, cert = row_score(700, parts=3, seed=3)
    path = tmp_path_factory.mktemp("long") / "long.musicxml"
    path.write_text(xml)
    return path, report, cert


def test_png_of_the_fixture(tmp_path: Path, duet: Path, duet_report: dict[str, Any]) -> None:
    out = tmp_path / "duet.png"
    render(duet, out, report=duet_report)
    data = out.read_bytes()
    assert data[:8] == PNG_MAGIC
    width = int.from_bytes(data[16:20], "big")
    assert width == 2100  # 2100 page width at scale 100 (labels >= 10 px tall)
    height = int.from_bytes(data[20:24], "big")
    assert 500 < height < 1500, "the only page is cropped to its content, not A4"


def test_multipage_svg_png_pdf(
    tmp_path: Path, long_score: tuple[Path, dict[str, Any], dict[str, Any]]
) -> None:
    score, report, cert = long_score
    result = render(score, tmp_path / "long.svg", report=report, certificate=cert)
    assert result.pages >= 2
    assert [p.name for p in result.files] == [f"long-{i}.svg" for i in range(1, result.pages + 1)]
    legends = []
    total_labels = 0
    for path in result.files:
        root = parse_svg(path)
        legends.append(sum(1 for g in root.iter(f"{SVG}g") if g.get("class") == "sk-legend"))
        total_labels += len(labels(root))
    assert legends == [1] * result.pages  # each page, looked at alone, says what its marks mean
    assert total_labels == result.labels == sum(1 for v in report["labels"].values() if v) + len(
        report["unexplained"]
    )
    pngs = render(score, tmp_path / "long.png", report=report)
    assert len(pngs.files) == result.pages
    assert all(p.read_bytes()[:8] == PNG_MAGIC for p in pngs.files)
    pdf = render(score, tmp_path / "long.pdf", report=report)
    data = pdf.files[0].read_bytes()
    assert data.startswith(b"%PDF")
    assert len(re.findall(rb"/Type\s*/Page\b", data)) == result.pages


def test_html_is_self_contained(tmp_path: Path, duet: Path, duet_report: dict[str, Any]) -> None:
    out = tmp_path / "review.html"
    render(duet, out, report=duet_report)
    text = out.read_text()
    assert "<svg" in text and "sk-finding" in text
    assert not re.search(r"""(?:src|href)=["'](?:https?:)?//""", text)
    assert "@import" not in text and "url(http" not in text


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ("<score-partwise><part", ScoreReadError),
        ("<html><body/></html>", ScoreReadError),
    ],
)
def test_bad_scores_raise_and_write_nothing(
    tmp_path: Path, content: str, error: type[Exception]
) -> None:
    src = tmp_path / "bad.musicxml"
    src.write_text(content)
    out = tmp_path / "out.svg"
    with pytest.raises(error, match="bad.musicxml"):
        render(src, out)
    assert not out.exists()


def test_bad_report_and_format(tmp_path: Path, duet: Path) -> None:
    bad = tmp_path / "report.json"
    bad.write_text('{"labels": {"u1": "P0:0"},\n "violations": [ }')
    with pytest.raises(SerialkitError, match=r"report.json: line 2"):
        render(duet, tmp_path / "x.svg", report=bad)
    with pytest.raises(ScoreWriteError, match="unknown output format"):
        render(duet, tmp_path / "x.gif")
    assert list(tmp_path.glob("x.*")) == []
