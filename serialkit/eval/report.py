"""``serialkit eval report``: tables and plots from a run directory, as Markdown or self-contained HTML."""

from __future__ import annotations

import base64
import html
import io
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from serialkit.core.errors import SerialkitError
from serialkit.eval.metrics import DEGENERACY_WEIGHTS
from serialkit.eval.plan import PREDICATE_CODES
from serialkit.eval.store import RunStore, load_records
from serialkit.eval.summary import COST_FIELDS, reference_lines, summarize
from serialkit.io.files.atomic import atomic_write

Table = tuple[list[str], list[list[str]]]


def _num(x: Any) -> float:
    return math.nan if x is None else float(x)


def _est(d: dict[str, Any], percent: bool = False, digits: int = 2) -> str:
    if d.get("n", 0) == 0 or d["value"] is None:
        return "–"
    if d["low"] is None:  # one family: resampling families gives no interval
        return f"{100 * d['value']:.0f}%" if percent else f"{d['value']:.{digits}f}"
    if percent:
        return f"{100 * d['value']:.0f}% [{100 * d['low']:.0f}, {100 * d['high']:.0f}]"
    return f"{d['value']:.{digits}f} [{d['low']:.{digits}f}, {d['high']:.{digits}f}]"


def _fmt(x: float | None) -> str:
    return "–" if x is None or math.isnan(x) else f"{x:.3f}"


def _codes(s: dict[str, Any]) -> list[str]:
    """The predicate columns of a summary (a summary written before they were derived: the seven)."""
    return list(s.get("predicate_codes") or PREDICATE_CODES)


def tables(s: dict[str, Any]) -> list[tuple[str, Table]]:
    """The report's tables: (title, (header, rows))."""
    vs = s["variants"]
    out: list[tuple[str, Table]] = []
    errored = s.get("errored", {})
    out.append(("Delivery (share of finished runs; 95 % CI clustered by task family; errored runs — the "
                "model server failed — are left out and counted apart)", (
        ["variant", "runs", "strict", "relaxed", "released", "errored"],
        [[v, str(s["delivery"][v]["strict"]["n"]), _est(s["delivery"][v]["strict"], True),
          _est(s["delivery"][v]["relaxed"], True), _est(s["delivery"][v]["released"], True),
          str(errored.get(v, 0))] for v in vs],
    )))
    codes = _codes(s)
    out.append(("Predicate pass rates (share of final candidates with notes that have no violation; "
                "a run that delivered no notes is in no rate: – when none did; besides the seven "
                "predicates, every gate code that failed some run has its column)", (
        ["variant", "runs with notes", *codes],
        [[v, f"{s['with_notes'][v]} of {s['delivery'][v]['strict']['n']}",
          *(_est(s["predicates"][v][c], True) for c in codes)] for v in vs],
    )))
    out.append(("Collisions per opportunity (overlapping cross-voice pairs)", (
        ["variant", "rate", "collisions", "opportunities"],
        [[v, _est(s["collisions"][v], digits=3), str(s["collisions"][v]["collisions"]),
          str(s["collisions"][v]["opportunities"])] for v in vs],
    )))
    out.append(("Degeneracy (0 = lively, 1 = degenerate) and its components", (
        ["variant", "score", *DEGENERACY_WEIGHTS],
        [[v, *(_est(s["degeneracy"][v][k]) for k in ("score", *DEGENERACY_WEIGHTS))] for v in vs],
    )))
    if s["corpus"]:
        out.append(("Corpus distance (monophonic pitch line vs reference scores)", (
            ["variant", "MMD", "KL (bits)", "windows", "reference windows"],
            [[v, _fmt(s["corpus"][v]["mmd"]), _fmt(s["corpus"][v]["kl"]),
              str(s["corpus"][v]["samples"]), str(s["corpus"][v]["reference_samples"])] for v in vs],
        )))
    out.append(("Cost per run (mean; USD from the price table, where the model has a price)", (
        ["variant", *COST_FIELDS, "wall_seconds", "USD"],
        [[v, *(_est(s["cost"][v][k], digits=1 if k != "seconds" else 3) for k in (*COST_FIELDS, "wall_seconds")),
          _est(s["cost"][v].get("usd", {}), digits=4)]
         for v in vs],
    )))
    models = s.get("models") or {}
    if models:
        names = sorted({m for row in models.values() for m in row})
        out.append(("Models side by side: strict delivery, relaxed delivery, USD per run, errored runs "
                    "(95 % CI clustered by task family)", (
            ["variant", *(f"{m} {what}" for m in names for what in ("strict", "relaxed", "USD/run", "errored"))],
            [[variant, *(cell for m in names for cell in _model_cells(s, row.get(m)))]
             for variant, row in models.items()],
        )))
        authorship = s.get("authorship") or {}
        kinds = sorted({k for shares in authorship.values() for k in shares})
        if kinds:
            out.append(("Authorship by model: share of released notes by who wrote them (95 % CI)", (
                ["variant", "model", *kinds],
                [[variant, m, *(_est(authorship.get(row[m], {}).get(k, {}), True) for k in kinds)]
                 for variant, row in models.items() for m in names if m in row],
            )))
    if s.get("authorship"):
        from serialkit.harness.authorship import AUTHORS

        out.append(("Authorship of released notes (mean share per released run, 95 % CI clustered by task family: "
                    "model = as the model wrote it; timing = retimed, trimmed or yielded; patch = rewritten by the "
                    "model; rewrite = pitch written by the harness; reflow = moved by reflow)", (
            ["variant", *AUTHORS],
            [[v, *(_est(s["authorship"][v].get(a, {}), True) for a in AUTHORS)] for v in vs if v in s["authorship"]],
        )))
    fams = sorted(s["by_family"])
    out.append(("Strict delivery by task family", (
        ["family", *vs],
        [[f, *(f"{100 * s['by_family'][f][v]:.0f}%" if v in s["by_family"][f] else "–" for v in vs)]
         for f in fams],
    )))
    return out


def _model_cells(s: dict[str, Any], condition: str | None) -> list[str]:
    if condition is None:
        return ["–"] * 4
    return [_est(s["delivery"][condition]["strict"], True), _est(s["delivery"][condition]["relaxed"], True),
            _est(s["cost"][condition].get("usd", {}), digits=4), str(s.get("errored", {}).get(condition, 0))]


def plots(s: dict[str, Any]) -> dict[str, bytes]:
    """PNG plots: delivery with intervals, predicate pass rates, cost."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    vs = s["variants"]
    x = np.arange(len(vs))
    pngs: dict[str, bytes] = {}

    def save(fig: Any, name: str) -> None:
        buf = io.BytesIO()
        fig.tight_layout()
        fig.savefig(buf, format="png", dpi=110, metadata={"Software": None})
        plt.close(fig)
        pngs[name] = buf.getvalue()

    fig, ax = plt.subplots(figsize=(7, 3.6))
    for i, kind in enumerate(("strict", "relaxed")):
        d = [s["delivery"][v][kind] for v in vs]
        vals = np.array([_num(e["value"]) for e in d])
        err = np.nan_to_num(np.array([[_num(e["value"]) - _num(e["low"]) for e in d],
                                      [_num(e["high"]) - _num(e["value"]) for e in d]]))
        ax.bar(x + (i - 0.5) * 0.38, vals, 0.38, yerr=err, capsize=4, label=kind)
    ax.set_xticks(x, vs)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("delivery (share of runs)")
    ax.set_title("Delivery by variant (95 % CI, clustered by family)")
    ax.legend()
    save(fig, "delivery")

    fig, ax = plt.subplots(figsize=(8, 3.6))
    width = 0.8 / max(1, len(vs))
    codes = _codes(s)
    cx = np.arange(len(codes))
    for i, v in enumerate(vs):
        ax.bar(cx + (i - (len(vs) - 1) / 2) * width,
               [_num(s["predicates"][v][c]["value"]) for c in codes], width, label=v)
    ax.set_xticks(cx, codes)
    ax.set_ylim(0, 1.22)
    ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_ylabel("pass rate")
    ax.set_title("Predicate pass rates")
    ax.legend(fontsize=8, ncol=len(vs), loc="upper center")
    save(fig, "predicates")

    fig, axes = plt.subplots(1, 3, figsize=(10, 3.2))
    for ax, key, label in zip(axes, ("calls", "completion_tokens", "wall_seconds"),
                              ("model calls / run", "completion tokens / run", "seconds / run"), strict=True):
        d = [s["cost"][v][key] for v in vs]
        vals = np.array([_num(e["value"]) for e in d])
        err = np.nan_to_num(np.array([[_num(e["value"]) - _num(e["low"]) for e in d],
                                      [_num(e["high"]) - _num(e["value"]) for e in d]]))
        ax.bar(x, vals, 0.6, yerr=err, capsize=3, color="#777")
        ax.set_xticks(x, vs, rotation=20, fontsize=8)
        ax.set_title(label, fontsize=10)
    save(fig, "cost")
    return pngs


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _intro(s: dict[str, Any], run_dir: str) -> list[str]:
    errored = sum(s.get("errored", {}).values())
    return [
        f"Run directory: `{run_dir}` · {s['runs']} finished runs"
        + (f" and {errored} errored (the model server failed)" if errored else "") + f" · {s['tasks']} tasks in "
        f"{len(s['families'])} families · variants: {', '.join(s['variants'])} · "
        f"proposers: {', '.join(s['proposers'])}.",
        "Intervals are 95 % percentile bootstrap intervals (2000 resamples) that resample whole "
        "task families, so they reflect variation between families, not only between runs.",
    ]


def to_markdown(s: dict[str, Any], run_dir: str, image_dir: str | None) -> str:
    """The report as Markdown; plots are linked from ``image_dir`` (relative) when given."""
    parts = ["# serialkit experiment report", "", *_intro(s, run_dir), ""]
    for title, (header, rows) in tables(s):
        parts += [f"## {title}", "", _md_table(header, rows), ""]
    if image_dir:
        parts += ["## Plots", ""] + [f"![{n}]({image_dir}/{n}.png)" for n in ("delivery", "predicates", "cost")]
    return "\n".join(parts) + "\n"


def to_html(s: dict[str, Any], run_dir: str, pngs: dict[str, bytes]) -> str:
    """The report as one self-contained HTML page (plots inline as PNG data URIs)."""
    e = html.escape
    body = ["<h1>serialkit experiment report</h1>", *(f"<p>{e(p).replace('`', '')}</p>" for p in _intro(s, run_dir))]
    for name, data in pngs.items():
        uri = "data:image/png;base64," + base64.b64encode(data).decode()
        body.append(f'<figure><img alt="{e(name)}" src="{uri}"></figure>')
    for title, (header, rows) in tables(s):
        body.append(f"<h2>{e(title)}</h2><table><thead><tr>"
                    + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr></thead><tbody>"
                    + "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in rows)
                    + "</tbody></table>")
    style = ("body{font:14px/1.45 system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
             "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;"
             "padding:3px 8px;text-align:right}td:first-child,th:first-child{text-align:left}"
             "img{max-width:100%}figure{margin:1em 0}")
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>serialkit experiment report</title><style>{style}</style></head><body>"
            + "\n".join(body) + "</body></html>\n")


def write_report(run_dir: str | os.PathLike[str], out: str | os.PathLike[str],
                 reference: Sequence[str | os.PathLike[str]] = (), seed: int = 0) -> dict[str, Any]:
    """Write ``report.html`` or ``report.md`` (plots beside it in ``<stem>_files/``); return the summary."""
    target = Path(out)
    suffix = target.suffix.lower()
    if suffix not in (".html", ".htm", ".md"):
        raise SerialkitError(f"{target}: report must end in .html or .md")
    records = load_records(run_dir)
    errored = RunStore(run_dir).errored()
    if not records and not errored:
        raise SerialkitError(f"{run_dir}: no finished or errored runs to report")
    summary = summarize(records, reference_lines(reference) if reference else None, seed=seed,
                        errored=errored)
    pngs = plots(summary)
    if suffix == ".md":
        images = f"{target.stem}_files"
        for name, data in pngs.items():
            atomic_write(target.parent / images / f"{name}.png", data)
        atomic_write(target, to_markdown(summary, str(run_dir), images))
    else:
        atomic_write(target, to_html(summary, str(run_dir), pngs))
    return summary
