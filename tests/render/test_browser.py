"""The review page in a real browser: headless Chromium selects findings and notes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from lxml import html as lxml_html

from serialkit.render import render
from tests.conftest import require_program

pytestmark = pytest.mark.browser

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--virtual-time-budget=5000", "--enable-logging=stderr", "--v=0",
]
SCREENSHOT_DIR = Path(os.environ.get("SERIALKIT_SCREENSHOTS", "out/test-screenshots"))


def _chromium(tmp_path: Path, url: str, *extra: str) -> str:
    exe = require_program("chromium")
    profile = tmp_path / "chromium-profile"
    cmd = [exe, *FLAGS, f"--user-data-dir={profile}", *extra, url]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    errors = [line for line in proc.stderr.splitlines()
              if "CONSOLE" in line or "Uncaught" in line or "Content Security Policy" in line]
    assert not errors, errors
    return proc.stdout


@pytest.fixture(scope="module")
def review(tmp_path_factory: pytest.TempPathFactory, duet: Path, duet_report: dict[str, Any],
           duet_certificate: dict[str, Any]) -> Path:
    out = tmp_path_factory.mktemp("review") / "review.html"
    render(duet, out, report=duet_report, certificate=duet_certificate)
    return out


def _dom(tmp_path: Path, page: Path, fragment: str) -> Any:
    text = _chromium(tmp_path, f"{page.as_uri()}#{fragment}", "--dump-dom")
    return lxml_html.fromstring(text)


def _highlighted(doc: Any) -> list[str]:
    return sorted(
        g.get("id") for g in doc.iter("g") if "sk-hl" in (g.get("class") or "").split()
    )


@pytest.mark.parametrize("index", [0, 1])
def test_selecting_a_finding_highlights_its_notes(
    tmp_path: Path, review: Path, duet_report: dict[str, Any], index: int
) -> None:
    doc = _dom(tmp_path, review, f"finding={index}")
    body = doc.find("body")
    assert body.get("data-ready") == "1", "the review script did not run"
    named = {e for v in duet_report["violations"] if v["code"] == "ROW" for e in v["event_ids"]}
    findings = duet_report["violations"] + [
        {"event_ids": [e]} for e in duet_report["unexplained"] if e not in named
    ]
    expected = sorted(findings[index]["event_ids"])
    assert _highlighted(doc) == expected
    assert sorted(body.get("data-highlighted").split()) == expected
    halos = [r for r in doc.iter("rect") if "sk-halo" in (r.get("class") or "")]
    assert len(halos) == len(expected)
    active = [b for b in doc.iter("button") if "sk-active" in (b.get("class") or "").split()]
    assert [b.get("data-index") for b in active] == [str(index)]


def test_selecting_a_note_shows_label_violations_and_certificate(
    tmp_path: Path, review: Path, duet_certificate: dict[str, Any]
) -> None:
    doc = _dom(tmp_path, review, "note=u8")
    assert _highlighted(doc) == ["u8"]
    panel = doc.get_element_by_id("sk-note").text_content()
    assert "P0:7" in panel and "COLL" in panel
    doc = _dom(tmp_path, review, "note=l9")
    panel = doc.get_element_by_id("sk-note").text_content()
    entry = next(e for e in duet_certificate["events"] if e["id"] == "l9")
    assert f"I0:{entry['position']}" in panel
    assert "retime" in panel and "cert.attempts" in panel


def test_no_selection_highlights_nothing(tmp_path: Path, review: Path) -> None:
    doc = _dom(tmp_path, review, "")
    assert _highlighted(doc) == []


def _halo_pixels(png: Path) -> int:
    """How many pixels show the yellow highlight halo."""
    import matplotlib.image

    img = matplotlib.image.imread(str(png)) * 255
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    return int(((r > 240) & (g > 200) & (g < 245) & (b < 190)).sum())


def test_screenshot_of_a_selected_finding(tmp_path: Path, review: Path) -> None:
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    shots = {}
    for name, fragment in (("review-finding-0.png", "finding=0"), ("review-plain.png", "")):
        shot = SCREENSHOT_DIR / name
        shot.unlink(missing_ok=True)
        _chromium(tmp_path, f"{review.as_uri()}#{fragment}", "--window-size=1400,900",
                  f"--screenshot={shot.resolve()}", "--hide-scrollbars")
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert (int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")) == (1400, 900)
        shots[name] = _halo_pixels(shot)
    assert shots["review-finding-0.png"] > shots["review-plain.png"] + 400, (
        "the selected notes are not visibly highlighted", shots
    )


_MEASURE = """<script>window.addEventListener('load', () => {
  const boxes = [];
  document.querySelectorAll('svg').forEach((page) => {
    if (page.parentElement.closest('svg')) return;  // the outer <svg> of each page
    const edge = page.getBoundingClientRect();
    page.querySelectorAll('text').forEach((t) => {
      const r = t.getBoundingClientRect();
      if (r.width === 0) return;
      boxes.push({text: t.textContent.trim(), kind: t.parentElement.getAttribute('class') || t.getAttribute('class'),
                  left: r.left - edge.left, right: edge.right - r.right, x0: r.left, x1: r.right,
                  top: r.top, bottom: r.bottom});
    });
  });
  const pre = document.createElement('pre'); pre.id = 'sk-boxes'; pre.textContent = JSON.stringify(boxes);
  document.body.appendChild(pre);
});</script>"""

LONG = "rewrite swap with the F4 at bar 6, beat 1"


def test_long_labels_stay_on_the_page_and_clear_of_the_bar_numbers(tmp_path: Path) -> None:
    """A label as long as repair's swap note, on the first note of every bar (so at the start of
    every system, beside its bar number, and at the end of the last): measured by Chromium, every
    text stays inside its page and no label covers a bar number or an instrument name."""
    import json
    import re

    from lxml import etree

    from tests.conftest import FIXTURES

    tree = etree.parse(str(FIXTURES / "classroom" / "ben.musicxml"))
    for measure in tree.iter("measure"):
        note = next(n for n in measure.iter("note") if n.find("pitch") is not None)
        notations = note.find("notations")
        if notations is None:
            notations = etree.Element("notations")
            lyric = note.find("lyric")
            (lyric.addprevious(notations) if lyric is not None else note.append(notations))
        etree.SubElement(etree.SubElement(notations, "technical"), "fingering").text = LONG
    score = tmp_path / "long.musicxml"
    tree.write(str(score), xml_declaration=True, encoding="UTF-8")
    page = tmp_path / "review.html"
    render(score, page, report={"labels": {}})  # a report with no labels: none drawn: the score's own are engraved
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", _MEASURE + "</body>"), encoding="utf-8")
    dom = _chromium(tmp_path, probe.as_uri(), "--dump-dom", "--window-size=1400,900")
    found = re.search(r'<pre id="sk-boxes">(.*?)</pre>', dom, re.S)
    assert found, "the measuring script did not run"
    boxes = json.loads(lxml_html.fromstring(found.group(0)).text_content())
    labels = [b for b in boxes if b["kind"] == "fing"]
    assert len(labels) == len(list(tree.iter("measure"))) and all(b["text"] == LONG for b in labels)
    outside = [b for b in boxes if b["left"] < 0 or b["right"] < 0]
    assert not outside, outside
    fixed = [b for b in boxes if b["kind"] and re.match(r"mNum|label", b["kind"])]
    assert any(b["kind"].startswith("mNum") for b in fixed), "no system starts with a bar number"
    covered = [(lab, f) for lab in labels for f in fixed
               if lab["x0"] < f["x1"] and f["x0"] < lab["x1"] and lab["top"] < f["bottom"] and f["top"] < lab["bottom"]]
    assert not covered, covered


_GEOMETRY = """<script>
window.addEventListener("load", () => {
  const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const texts = [...document.querySelectorAll(".sk-page svg text")].map((t) => ({
    text: t.textContent.trim(), box: box(t), label: t.classList.contains("sk-label"),
    for: t.getAttribute("data-for"), legend: t.closest(".sk-legend") !== null}));
  const cues = {};
  for (const p of document.querySelectorAll(".sk-page path.sk-cue[data-for]")) cues[p.dataset.for] = box(p);
  const heads = {};
  for (const g of document.querySelectorAll(".sk-page g.note.sk-rung-rewrite")) heads[g.id] = box(g.querySelector(".notehead"));
  document.body.setAttribute("data-geometry", JSON.stringify({texts, cues, heads}));
});
</script>"""


@pytest.fixture(scope="module")
def repaired_review(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The review page `serialkit repair` writes for an exercise with a dropped accidental."""
    from click.testing import CliRunner

    from serialkit.cli import cli
    from serialkit.io import write_musicxml
    from tests.planted import EXERCISE_ROW, exercise, plant_errors

    tmp = tmp_path_factory.mktemp("repaired")
    piece, row = exercise(2)
    plant = next(p for p in plant_errors(piece, row, "exercise", 3, 2) if p.kind == "accidental")
    write_musicxml(plant.piece, tmp / "exercise.musicxml")
    result = CliRunner().invoke(cli, ["repair", str(tmp / "exercise.musicxml"), "--row", EXERCISE_ROW,
                                      "-o", str(tmp / "fixed.musicxml")])
    assert result.exit_code == 0, result.output
    return tmp / "fixed.review.html"


def test_a_repaired_note_is_outlined_and_labelled_in_small_type(tmp_path: Path, repaired_review: Path) -> None:
    """Outside tester 0405, #7, measured as Chromium lays the page out: the repaired note is not
    told by colour alone — its rewrite outline surrounds the notehead and its row label is as large
    as every other label — and the score's "rewrite P0:3" is not engraved in the score's big type."""
    import json

    page = tmp_path / "measured.html"
    page.write_text(repaired_review.read_text(encoding="utf-8").replace("</body>", _GEOMETRY + "</body>"),
                    encoding="utf-8")
    doc = _dom(tmp_path, page, "")
    geometry = json.loads(doc.find("body").get("data-geometry"))
    heads, cues = geometry["heads"], geometry["cues"]
    assert len(heads) == 1
    for eid, (x0, y0, x1, y1) in heads.items():
        assert eid in cues, "the repaired note has no outline"
        cx0, cy0, cx1, cy1 = cues[eid]
        assert cx0 < x0 and cy0 < y0 and cx1 > x1 and cy1 > y1, "the outline does not surround the notehead"
    labels = [t for t in geometry["texts"] if t["label"]]
    height = sorted(t["box"][3] - t["box"][1] for t in labels)[len(labels) // 2]
    mine = [t for t in labels if t["for"] in heads]
    assert len(mine) == len(heads) and all(abs((t["box"][3] - t["box"][1]) - height) < 0.1 * height for t in mine)
    assert not [t["text"] for t in geometry["texts"] if "rewrite" in t["text"] and not t["legend"]]
