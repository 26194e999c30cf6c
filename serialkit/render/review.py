"""The HTML review page: one offline file with the engraved pages beside the list of findings."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from fractions import Fraction
from html import escape
from importlib import resources
from typing import Any

from serialkit.core.analysis.result import percent
from serialkit.render.marks import Marks

_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>\s*")
_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; font-src data:"
)


def _asset(name: str) -> str:
    return resources.files("serialkit.render").joinpath("assets", name).read_text("utf-8")


def page_data(marks: Marks) -> dict[str, Any]:
    """The JSON the page's script reads: notes (label, codes, rung, certificate) and findings."""
    notes = {
        eid: {
            "label": m.label,
            "codes": list(m.codes),
            "unexplained": m.unexplained,
            "rung": m.rung,
            "aliases": [a for a in m.aliases if a != m.label],
            "certificate": dict(m.certificate) if m.certificate is not None else None,
        }
        for eid, m in marks.notes.items()
    }
    return {"notes": notes, "findings": [f.to_dict() for f in marks.findings]}


def _json_script(data: Any) -> str:
    text = json.dumps(data, ensure_ascii=False, default=str)
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def _findings_html(marks: Marks) -> str:
    if not marks.findings:
        return '<p id="sk-none">No findings: every note is explained and no rule is broken.</p>'
    items = []
    for f in marks.findings:
        loc = f'<span class="sk-loc">{escape(f.location)}</span> ' if f.location else ""
        ids = escape(" ".join(f.event_ids))
        items.append(
            f'<li><button type="button" class="sk-finding" data-index="{f.index}" '
            f'data-kind="{escape(f.kind)}" data-notes="{ids}">'
            f'<span class="sk-code">{escape(f.code)}</span>{loc}{escape(f.message)}'
            + (f'<span class="sk-suggest">suggest: {escape(f.suggestion)}</span>' if f.suggestion else "")
            + "</button></li>"
        )
    return '<ol id="sk-findings">' + "".join(items) + "</ol>"


def _percent(value: Any) -> str:
    try:
        share = float(Fraction(str(value)))
    except (ValueError, ZeroDivisionError):
        return str(value)
    return percent(share)


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def analysis_words(facts: Mapping[str, Any]) -> list[str]:
    """An existing score's facts in the analysis profile's words: how much the row explains,
    its violations, its observations and its ambiguities when it has any (no pass/fail: there is
    no task to pass). ``facts``: ``coverage`` and ``row`` as the check report gives them,
    ``unexplained_count``, ``violations_count``, ``observations_count`` and
    ``ambiguities_count`` (``check.report.is_ambiguity``)."""
    bits = []
    if facts.get("coverage") is not None:
        share = _percent(facts["coverage"]).replace("%", " %")
        bits.append(f"{share} explained, {_count(int(facts.get('unexplained_count', 0)), 'unexplained note')}")
    elif facts.get("row") is None:
        bits.append("no row identified")
    bits.append(_count(int(facts.get("violations_count", 0)), "violation"))
    bits.append(_count(int(facts.get("observations_count", 0)), "observation"))
    ambiguities = int(facts.get("ambiguities_count", 0))
    if ambiguities:  # as check's summary line counts them
        bits.append(f"{ambiguities} {'ambiguity' if ambiguities == 1 else 'ambiguities'}")
    return bits


def _facts_html(marks: Marks) -> str:
    facts = marks.facts
    bits = []
    if facts.get("task") or "profile" not in facts:
        if "strict" in facts:
            bits.append("strict: " + ("pass" if facts["strict"] else "fail"))
        if "relaxed" in facts:
            bits.append("relaxed: " + ("pass" if facts["relaxed"] else "fail"))
        if "coverage" in facts:
            bits.append(f"coverage {_percent(facts['coverage'])}")
    else:
        ambiguities = sum(1 for f in marks.findings if f.kind == "ambiguity")
        bits.extend(analysis_words({**facts, "ambiguities_count": ambiguities}))
    labelled = sum(1 for m in marks.notes.values() if m.label)
    bits.append(f"{labelled} labelled notes")
    out = '<p id="sk-facts">' + escape(" · ".join(bits)) + "</p>"
    authors = facts.get("authorship")
    if authors:
        total = sum(authors.values())
        names = {"model": "the model, unchanged", "timing": "retimed, trimmed or yielded", "patch": "patched by the model",
                 "rewrite": "pitch written by the harness", "reflow": "moved by reflow", "other": "a plugin's rung"}
        rows = "".join(f"<li>{escape(names.get(a, a))}: {n} ({n / total:.0%})</li>" for a, n in authors.items())
        out += f'<h2>Who wrote the notes ({total})</h2><ul id="sk-authorship">{rows}</ul>'
    return out


EAGER_PAGES = 3
"""A review page of at most this many engraved pages shows them all at once; a longer one keeps
each page as unparsed text that the page's script instantiates as it nears the viewport."""

HELD = "text/x-sk-page"
"""The type of the ``<script>`` data block that holds a waiting page's SVG text."""

_ENDS_SCRIPT = re.compile(r"</script|<!--", re.IGNORECASE)
"""Text that would end a ``<script>`` element before its end tag (or keep it from ending)."""

_ROOT = re.compile(r"<svg\b[^>]*>")
_LENGTH = r'(?<![-\w]){}="\s*([\d.]+)\s*(?:px)?\s*"'
_WIDTH, _HEIGHT = re.compile(_LENGTH.format("width")), re.compile(_LENGTH.format("height"))
_VIEWBOX = re.compile(r'(?<![-\w])viewBox="\s*[-\d.]+[\s,]+[-\d.]+[\s,]+([\d.]+)[\s,]+([\d.]+)\s*"')


def page_size(svg: str) -> tuple[float, float] | None:
    """The width and height of an engraved page, from its root ``<svg>`` (``width``/``height``,
    else ``viewBox``); None when it states neither."""
    root = _ROOT.search(svg)
    if root is None:
        return None
    tag = root.group(0)
    width, height = _WIDTH.search(tag), _HEIGHT.search(tag)
    found = (width.group(1), height.group(1)) if width and height else None
    if found is None:
        box = _VIEWBOX.search(tag)
        found = (box.group(1), box.group(2)) if box else None
    if found is None or not float(found[0]) > 0 or not float(found[1]) > 0:
        return None
    return float(found[0]), float(found[1])


def _page_html(i: int, svg: str, lazy: bool) -> str:
    """One engraved page; a lazy one is a placeholder of the page's proportions holding the SVG
    as text in a ``<script>`` data block (not parsed until the script instantiates it), or in a
    ``<template>`` (parsed, kept out of layout) when the text would end a script element early."""
    svg = _XML_DECL.sub("", svg)
    if not lazy:
        return f'<div class="sk-page" id="sk-page-{i}">{svg}</div>'
    size = page_size(svg)
    ratio = f' style="aspect-ratio:{size[0]:g}/{size[1]:g}"' if size else ""
    held = f"<template>{svg}</template>" if _ENDS_SCRIPT.search(svg) else f'<script type="{HELD}">{svg}</script>'
    return f'<div class="sk-page sk-lazy" id="sk-page-{i}"{ratio}>{held}</div>'


def review_page(pages: Sequence[str], marks: Marks, blind: bool = False, title: str = "") -> str:
    """A self-contained HTML page (inline SVG, CSS and JS; no network access). More than
    ``EAGER_PAGES`` pages are instantiated as they are scrolled to (or as a finding or note on them
    is selected); a blind page has no script and shows every page."""
    lazy = not blind and len(pages) > EAGER_PAGES
    svgs = "".join(_page_html(i, svg, lazy) for i, svg in enumerate(pages, start=1))
    if blind:
        return _blind_page(svgs)
    heading = title or "serialkit review"
    side = (
        f'<aside id="sk-side"><h1>{escape(heading)}</h1>{_facts_html(marks)}'
        f"<h2>Findings ({len(marks.findings)})</h2>{_findings_html(marks)}"
        '<h2>Selected note</h2><div id="sk-note">Click a note or a finding.</div>'
        '<p id="sk-help">j / k or ↓ / ↑ step through findings. Click a notehead to see its '
        "label, its violations and its certificate entry.</p></aside>"
    )
    data = page_data(marks)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(heading)}</title><style>{_asset('review.css')}</style></head>"
        f'<body>{side}<main id="sk-main">{svgs}</main>'
        f'<script type="application/json" id="sk-data">{_json_script(data)}</script>'
        f"<script>{_asset('review.js')}</script></body></html>\n"
    )


_BLIND_CSS = (
    "body{margin:0;background:#e9ecf0}.sk-page{background:#fff;margin:1rem auto;max-width:60rem;"
    "box-shadow:0 1px 4px rgba(0,0,0,.2)}.sk-page>svg{display:block;width:100%;height:auto}"
)


def _blind_page(svgs: str) -> str:
    """A plain page of engraved pages: no script, no findings, nothing about the source."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        f"<title>Score</title><style>{_BLIND_CSS}</style></head>"
        f"<body><main>{svgs}</main></body></html>\n"
    )
