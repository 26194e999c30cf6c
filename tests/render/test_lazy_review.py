"""A long review page instantiates its engraved pages as they near the viewport: measured in real
Chromium (DevTools protocol) on a 90-page page that the review page writer wrote."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lxml import html as lxml_html

from serialkit.render import engrave_pages, marks_for, render
from serialkit.render.marks import Marks, build_marks
from serialkit.render.review import EAGER_PAGES, HELD, page_size, review_page
from tests.conftest import require_program
from tests.render.cdp import Browser
from tests.render.conftest import DUET
from tests.render.scoregen import row_score

_ROOT_TAG = re.compile(r"(<svg\b[^>]*>)")
PAGES = "document.querySelectorAll('.sk-page').length"
LOADED = "[...document.querySelectorAll('.sk-page > svg')].map((s) => s.parentElement.id)"
SETTLED = ("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => "
           "setTimeout(() => done({LOADED}), 50))))").replace("{LOADED}", LOADED)


@pytest.fixture(scope="module")
def duet_page() -> str:
    """One real engraved page (the duet, with its marks)."""
    pages, _, _ = engrave_pages(DUET, Marks(), False, 100, 2100)
    return pages[0]


def _main(page: str) -> str:
    return page.split('<main id="sk-main">', 1)[-1].split("</main>", 1)[0]


def _divs(page: str) -> list[Any]:
    doc = lxml_html.fromstring(page)
    return [d for d in doc.iter("div") if "sk-page" in (d.get("class") or "").split()]


def test_a_short_review_page_shows_every_page(duet_page: str) -> None:
    page = review_page([duet_page] * EAGER_PAGES, build_marks({"labels": {}}))
    assert "<template" not in _main(page) and "<script" not in _main(page)
    divs = _divs(page)
    assert [d.get("class") for d in divs] == ["sk-page"] * EAGER_PAGES
    assert all(d.find("svg") is not None for d in divs)


def test_a_long_review_page_holds_each_page_in_a_placeholder_of_its_size(duet_page: str) -> None:
    short = re.sub(r'height="[\d.]+px"', 'height="3000px"', duet_page, count=1)
    page = review_page([duet_page] * EAGER_PAGES + [short], build_marks({"labels": {}}))
    divs = _divs(page)
    assert len(divs) == EAGER_PAGES + 1 and _main(page).count(f'<script type="{HELD}">') == EAGER_PAGES + 1
    assert all(d.find("svg") is None for d in divs)  # held as text: not part of the document
    width, height = page_size(duet_page) or (0, 0)
    assert width == 2100 and 0 < height < 3000
    ratios = [d.get("style") for d in divs]
    assert ratios == [f"aspect-ratio:2100/{height:g}"] * EAGER_PAGES + ["aspect-ratio:2100/3000"]
    assert [d.get("id") for d in divs] == [f"sk-page-{i}" for i in range(1, EAGER_PAGES + 2)]


def test_a_page_whose_text_would_end_a_script_is_held_in_a_template(duet_page: str) -> None:
    commented = _ROOT_TAG.sub(r"\1<!-- engraved -->", duet_page, count=1)
    page = _main(review_page([duet_page] * EAGER_PAGES + [commented], build_marks({"labels": {}})))
    assert page.count(f'<script type="{HELD}">') == EAGER_PAGES and page.count("<template><svg") == 1
    assert page.index("<template>") > page.rindex(f'<script type="{HELD}">')


def test_a_blind_page_has_no_script_and_shows_every_page(duet_page: str) -> None:
    page = review_page([duet_page] * (EAGER_PAGES + 2), Marks(), blind=True)
    assert "<template" not in page and "<script" not in page
    assert len(_divs(page)) == EAGER_PAGES + 2


@pytest.mark.parametrize(("tag", "size"), [
    ('<svg width="2100px" height="2970px" stroke-width="3">', (2100.0, 2970.0)),
    ('<svg stroke-width="3" height="50" width="80.5" viewBox="0 0 1 1">', (80.5, 50.0)),
    ('<svg viewBox="0 0 2100 2970" width="100%">', (2100.0, 2970.0)),
    ('<svg class="x">', None),
    ('<svg width="0px" height="10px">', None),
])
def test_page_size_reads_the_root_svg(tag: str, size: tuple[float, float] | None) -> None:
    assert page_size(tag + "<svg width='9' height='9'/></svg>") == size


# ---- in Chromium -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def long_review(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A review page of about 90 engraved pages (a synthetic four-part score of 21,000 notes with a
    ROW finding every 97 notes), written by ``render``."""
    tmp = tmp_path_factory.mktemp("long")
    xml, report, _ = row_score(21000, seed=1)
    (tmp / "long.musicxml").write_text(xml, encoding="utf-8")
    result = render(tmp / "long.musicxml", tmp / "long.html", report=report)
    assert result.pages >= 85
    return tmp / "long.html", report


@pytest.fixture()
def browser(tmp_path: Path) -> Iterator[Browser]:
    with Browser(require_program("chromium"), tmp_path / "profile") as b:
        yield b
        assert not b.console, b.console  # no script error, no CSP complaint


def _page_of(html: str) -> dict[str, int]:
    """Note id → the number of the engraved page that holds it."""
    where: dict[str, int] = {}
    for number, chunk in re.findall(r'id="sk-page-(\d+)"(.*?)(?=<div class="sk-page|</main>)', html, re.S):
        for eid in re.findall(r'<g id="([^"]+)" class="note', chunk):
            where[eid] = int(number)
    return where


@pytest.mark.browser
@pytest.mark.slow
def test_a_long_page_opens_with_only_the_pages_in_view_and_loads_the_rest_on_scrolling(
    long_review: tuple[Path, dict[str, Any]], browser: Browser
) -> None:
    page, _ = long_review
    browser.open(page.as_uri())
    total = browser.evaluate(PAGES)
    opened = browser.evaluate(SETTLED)
    assert total >= 85
    assert opened[:1] == ["sk-page-1"] and len(opened) <= 4, opened
    geometry = ("(() => { const m = document.getElementById('sk-main');"
                " const h = [...document.querySelectorAll('.sk-page')].map((p) => p.getBoundingClientRect().height);"
                " return {scroll: m.scrollHeight, heights: h}; })()")
    before = browser.evaluate(geometry)
    browser.evaluate("document.getElementById('sk-main').scrollTop = 1e9")
    ended = browser.evaluate(SETTLED)
    assert f"sk-page-{total}" in ended and len(ended) <= len(opened) + 4, ended
    after = browser.evaluate(geometry)
    # a placeholder is as tall as its page: instantiating pages moves nothing
    assert abs(after["scroll"] - before["scroll"]) <= 2
    assert all(abs(a - b) <= 1 for a, b in zip(after["heights"], before["heights"], strict=True))
    browser.open(page.as_uri() + f"#sk-page-{total // 2}")  # a page anchor scrolls to its placeholder
    assert f"sk-page-{total // 2}" in browser.evaluate(SETTLED)


@pytest.mark.browser
@pytest.mark.slow
def test_a_finding_on_a_page_not_yet_loaded_loads_it_scrolls_to_and_highlights_its_note(
    long_review: tuple[Path, dict[str, Any]], browser: Browser
) -> None:
    page, report = long_review
    html = page.read_text(encoding="utf-8")
    where = _page_of(html)
    total = max(where.values())
    index, note = max(((i, f["event_ids"][0]) for i, f in enumerate(report["violations"]) if f["code"] == "ROW"),
                      key=lambda f: where[f[1]])
    assert where[note] >= total - 1
    browser.open(page.as_uri())
    opened = browser.evaluate(SETTLED)
    assert f"sk-page-{where[note]}" not in opened
    browser.evaluate(f"document.querySelector('.sk-finding[data-index=\"{index}\"]').click()")
    loaded = browser.evaluate(SETTLED)
    assert f"sk-page-{where[note]}" in loaded and len(loaded) <= len(opened) + 4, loaded
    state = browser.evaluate(
        "(() => { const n = document.getElementById(" + json.dumps(note) + ");"
        " const r = n.getBoundingClientRect(), m = document.getElementById('sk-main').getBoundingClientRect();"
        " return {hl: n.classList.contains('sk-hl'), halos: document.querySelectorAll('rect.sk-halo').length,"
        " highlighted: document.body.dataset.highlighted, seen: r.top >= m.top && r.bottom <= m.bottom}; })()")
    assert state == {"hl": True, "halos": 1, "highlighted": note, "seen": True}, state
    other = next(e for e, p in where.items() if p == total // 2)  # a note by its address, as a link gives it
    browser.open(page.as_uri() + f"#note={other}")
    assert f"sk-page-{total // 2}" in browser.evaluate(SETTLED)
    assert browser.evaluate("document.body.dataset.highlighted") == other


@pytest.mark.browser
def test_a_page_held_in_a_template_loads_when_its_finding_is_selected(tmp_path: Path, browser: Browser) -> None:
    xml, report, _ = row_score(1500, seed=2)
    score = tmp_path / "score.musicxml"
    score.write_text(xml, encoding="utf-8")
    pages, _, drawn = engrave_pages(score, marks_for(score, report), False, 100, 2100)
    assert len(pages) > EAGER_PAGES + 1
    held = {eid: k for k, svg in enumerate(pages, start=1) for eid in re.findall(r'<g id="([^"]+)" class="note', svg)}
    number, index, note = max((held.get(f.event_ids[0], 0), i, f.event_ids[0])
                              for i, f in enumerate(drawn.findings) if f.event_ids)
    assert number >= 3  # not in view at first
    pages[number - 1] = _ROOT_TAG.sub(r"\1<!-- engraved -->", pages[number - 1], count=1)
    html = review_page(pages, drawn)
    assert _main(html).count("<template><svg") == 1
    page = tmp_path / "review.html"
    page.write_text(html, encoding="utf-8")
    browser.open(page.as_uri())
    assert f"sk-page-{number}" not in browser.evaluate(SETTLED)
    browser.open(page.as_uri() + f"#finding={index}")
    assert f"sk-page-{number}" in browser.evaluate(SETTLED)
    assert browser.evaluate("document.body.dataset.highlighted").split()[0] == note
    assert browser.evaluate(f"document.getElementById({json.dumps(note)}).classList.contains('sk-hl')")
    browser.evaluate("window.dispatchEvent(new Event('beforeprint'))")  # printing shows every page
    assert len(browser.evaluate(SETTLED)) == len(pages)
