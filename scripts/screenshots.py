"""Regenerate the docs' screenshots: a rendered Op. 21 page at the default size, the review
page in headless Chromium (a finding selected, its notes highlighted), the fixture duet, a page
of chords (each chord's labels beside it; hairpins, dynamics, tuplets, slurs, ledger lines), the
notebook display of Op. 21's check (``CheckResult._repr_html_``) and the docs site's front page.

Usage: python scripts/screenshots.py [--corpus ../shared/corpus] [--out docs/img]
Needs the real corpus (Webern Op. 21), verovio and the Debian package ``chromium``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from serialkit.render import render

ROOT = Path(__file__).resolve().parent.parent
SCORE = "webern-op21-i-mm1-25.mei"
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--virtual-time-budget=5000")


def screenshot(page: Path, fragment: str, out: Path, size: tuple[int, int], profile: Path) -> None:
    """A PNG of ``page#fragment`` in headless Chromium at ``size`` pixels."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        sys.exit("chromium is not installed (Debian package chromium)")
    cmd = [exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}",
           f"--screenshot={out.resolve()}", f"{page.as_uri()}#{fragment}"]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    args = parser.parse_args()
    score = args.corpus / SCORE
    if not score.is_file():
        sys.exit(f"{score}: not found (give --corpus DIR)")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="serialkit-shots-") as tmp:
        pages = render(score, Path(tmp) / "op21.png", row="webern-op21")
        page = args.out / "op21-page1.png"
        shutil.copyfile(pages.files[0], page)
        review = Path(tmp) / "review.html"
        found = render(score, review, row="webern-op21")
        coll = next((f.index for f in found.findings if f.code == "COLL"), 0)
        shot = args.out / "review-op21.png"
        screenshot(review, f"finding={coll}", shot, (1600, 1000), Path(tmp) / "profile")
    duet = args.out / "render-duet.png"
    fixtures = ROOT / "fixtures" / "render"
    render(fixtures / "duet.musicxml", duet, report=fixtures / "duet.check.json",
           certificate=fixtures / "duet.certificate.json")
    chords = args.out / "render-chords.png"
    with tempfile.TemporaryDirectory(prefix="serialkit-shots-") as tmp:
        sys.path.insert(0, str(ROOT))
        from tests.render.scoregen import chord_score

        xml, report = chord_score(8, size=3, room=True)
        (Path(tmp) / "chords.musicxml").write_text(xml, encoding="utf-8")
        (Path(tmp) / "chords.json").write_text(json.dumps(report), encoding="utf-8")
        render(Path(tmp) / "chords.musicxml", chords, report=Path(tmp) / "chords.json")
    notebook = args.out / "notebook-check.png"
    front = args.out / "docs-front.png"
    with tempfile.TemporaryDirectory(prefix="serialkit-shots-") as tmp:
        import serialkit as sk

        shown = Path(tmp) / "check.html"
        local = Path(tmp) / SCORE  # the notebook names the file as the user opened it: by its name
        shutil.copyfile(score, local)
        cwd = Path.cwd()
        os.chdir(tmp)
        try:
            html = sk.check(SCORE, row="webern-op21")._repr_html_()
        finally:
            os.chdir(cwd)
        shown.write_text("<!doctype html><meta charset='utf-8'><body style='font-family:sans-serif'>"
                         + html + "</body>", encoding="utf-8")
        screenshot(shown, "", notebook, (1400, 1000), Path(tmp) / "profile")
        site = Path(tmp) / "site"
        subprocess.run([sys.executable, "-m", "mkdocs", "build", "--quiet", "-d", str(site)], cwd=ROOT,
                       check=True, timeout=300)
        screenshot(site / "index.html", "", front, (1400, 900), Path(tmp) / "profile")
    print(f"wrote {page} ({pages.pages} pages rendered; page 1 kept), {shot}, {duet}, {chords}, {notebook} "
          f"and {front}")


if __name__ == "__main__":
    main()
