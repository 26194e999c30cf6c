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
