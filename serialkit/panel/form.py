"""The offline HTML rating form (Likert scales, autosave, CSV export) and the packet's start page."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

CRITERIA: tuple[tuple[str, str], ...] = (
    ("adherence", "Adherence to the task (row forms and schedule as briefed)"),
    ("legality", "Perceived legality (no twelve-tone rule broken)"),
    ("coherence", "Musical coherence"),
    ("overall", "Overall quality"),
)
LIKERT = (1, 2, 3, 4, 5)
CSV_HEADER = ("rater", "item", "candidate", "side", *(c for c, _ in CRITERIA), "comment")

_STYLE = """
body{font:15px/1.45 system-ui,sans-serif;max-width:1200px;margin:1.5em auto;padding:0 1em;color:#111}
.item{border-top:2px solid #333;margin-top:2em;padding-top:.5em}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:1.2em}
.cand{border:1px solid #bbb;padding:.6em;border-radius:4px}
.cand img{width:100%;background:#fff;border:1px solid #eee}
fieldset{border:0;margin:.3em 0;padding:0}
legend{font-weight:600;font-size:.92em}
label.l{margin-right:.7em;white-space:nowrap}
.brief{font-size:.9em;background:#f6f6f6;padding:.4em .7em}
#bar{position:sticky;top:0;background:#fff;padding:.5em 0;border-bottom:1px solid #ccc;z-index:2}
textarea{width:100%;min-height:2.5em}
"""

_SCRIPT = """
const RATER_DEFAULT = %(rater)s, HEADER = %(header)s, CRITERIA = %(criteria)s;
const store = 'serialkit-panel-' + RATER_DEFAULT;
function rows() {
  const rater = document.getElementById('rater').value.trim() || RATER_DEFAULT;
  const out = [];
  document.querySelectorAll('.cand').forEach(c => {
    const r = [rater, c.dataset.item, c.dataset.cand, c.dataset.side];
    CRITERIA.forEach(k => {
      const v = c.querySelector('input[name="' + c.dataset.item + '-' + c.dataset.cand + '-' + k + '"]:checked');
      r.push(v ? v.value : '');
    });
    r.push(c.querySelector('textarea').value);
    out.push(r);
  });
  return out;
}
function csvCell(s) { s = String(s); return /[",\\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s; }
function save() {
  localStorage.setItem(store, JSON.stringify({rater: document.getElementById('rater').value, rows: rows()}));
  const done = rows().filter(r => r.slice(4, 4 + CRITERIA.length).every(v => v !== '')).length;
  document.getElementById('progress').textContent = done + ' of ' + rows().length + ' candidates rated';
}
function restore() {
  const data = JSON.parse(localStorage.getItem(store) || 'null');
  if (!data) return;
  document.getElementById('rater').value = data.rater || RATER_DEFAULT;
  data.rows.forEach(r => {
    CRITERIA.forEach((k, i) => {
      const v = r[4 + i];
      if (!v) return;
      const el = document.querySelector('input[name="' + r[1] + '-' + r[2] + '-' + k + '"][value="' + v + '"]');
      if (el) el.checked = true;
    });
    const c = document.querySelector('.cand[data-item="' + r[1] + '"][data-cand="' + r[2] + '"] textarea');
    if (c) c.value = r[4 + CRITERIA.length] || '';
  });
}
function exportCsv() {
  const text = [HEADER].concat(rows()).map(r => r.map(csvCell).join(',')).join('\\n') + '\\n';
  const a = document.createElement('a');
  a.href = 'data:text/csv;charset=utf-8,' + encodeURIComponent(text);
  a.download = 'ratings-' + (document.getElementById('rater').value.trim() || RATER_DEFAULT) + '.csv';
  document.body.appendChild(a); a.click(); a.remove();
}
document.addEventListener('change', save);
document.addEventListener('input', save);
window.addEventListener('load', () => { restore(); save(); });
"""


def _brief(brief: dict[str, Any]) -> str:
    if not brief:
        return ""
    e = html.escape
    schedule = "; ".join(e(s) for s in brief.get("schedule", []))
    return (f'<div class="brief"><b>Task.</b> Row (P0, {e(str(brief.get("convention")))} labels): '
            f'{e(str(brief.get("row")))}. Voices: {e(", ".join(brief.get("voices", [])))}. '
            f'Meter {e(str(brief.get("meter")))}, {e(str(brief.get("bars")))} bars. '
            f"Schedule: {schedule}.</div>")


def _candidate(item_id: str, side: str, cand: dict[str, Any]) -> str:
    e = html.escape
    cid = cand["id"]
    base = f"../candidates/{cid}"
    parts = [f'<div class="cand" data-item="{e(item_id)}" data-cand="{e(cid)}" data-side="{side}">',
             f"<h3>{side} · candidate {e(cid)}</h3>"]
    parts += [f'<img src="{base}/{e(p)}" alt="score of candidate {e(cid)}">' for p in cand.get("pages", [])]
    links = [f'<a href="{base}/score.pdf">PDF</a>']
    if cand.get("wav"):
        parts.append(f'<audio controls preload="none" src="{base}/audio.wav"></audio>')
    if cand.get("midi"):
        links.append(f'<a href="{base}/audio.mid">MIDI</a>')
    parts.append("<p>" + " · ".join(links) + "</p>")
    for key, text in CRITERIA:
        name = f"{item_id}-{cid}-{key}"
        radios = "".join(f'<label class="l"><input type="radio" name="{e(name)}" value="{v}"> {v}</label>'
                         for v in LIKERT)
        parts.append(f"<fieldset><legend>{e(text)} (1 = poor, 5 = excellent)</legend>{radios}</fieldset>")
    parts.append('<textarea placeholder="comment (optional)"></textarea></div>')
    return "".join(parts)


def rating_form(rater: str, items: Sequence[dict[str, Any]]) -> str:
    """One rater's form: items in that rater's order, sides shuffled, CSV export, autosave."""
    e = html.escape
    body = [
        "<h1>Listening and reading panel</h1>",
        "<p>Each item shows two candidate pieces written for the same task. Read the score, listen, "
        "and rate each candidate on the four scales. Your answers are saved in this browser as you "
        "go; when finished, press <b>Export CSV</b> and send the file back.</p>",
        f'<div id="bar">Rater id: <input id="rater" value="{e(rater)}" size="8"> '
        '<button type="button" onclick="exportCsv()">Export CSV</button> '
        '<span id="progress"></span></div>',
    ]
    for n, item in enumerate(items, start=1):
        a, b = item["candidates"]
        body.append(f'<section class="item"><h2>Item {n} of {len(items)} ({e(item["id"])})</h2>'
                    f'{_brief(item.get("brief", {}))}<div class="pair">'
                    f'{_candidate(item["id"], "A", a)}{_candidate(item["id"], "B", b)}</div></section>')
    script = _SCRIPT % {"rater": json.dumps(rater), "header": json.dumps(list(CSV_HEADER)),
                        "criteria": json.dumps([c for c, _ in CRITERIA])}
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>Rating form {e(rater)}</title><style>{_STYLE}</style></head><body>"
            + "\n".join(body) + f"<script>{script}</script></body></html>\n")


def start_page(forms: Sequence[str], items: int) -> str:
    """The packet's index: one link per rater's form."""
    links = "".join(f'<li><a href="{html.escape(f)}">{html.escape(f.rsplit("/", 1)[-1])}</a></li>'
                    for f in forms)
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Panel packet</title>"
            "</head><body style=\"font:15px system-ui,sans-serif;max-width:50em;margin:2em auto\">"
            f"<h1>Panel packet</h1><p>{items} items, each comparing two candidates. Each rater opens "
            "their own form (the order differs per rater), rates every candidate and exports a CSV.</p>"
            f"<ul>{links}</ul></body></html>\n")
