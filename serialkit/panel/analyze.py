"""``serialkit panel analyze``: preferences per criterion with bootstrap intervals, and Fleiss' kappa."""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from serialkit.core.errors import PanelError
from serialkit.eval.stats import cluster_bootstrap, fleiss_kappa, rating_table
from serialkit.panel.form import CRITERIA, LIKERT


@dataclass(frozen=True, slots=True)
class Rating:
    """One rater's scores for one candidate in one item."""

    rater: str
    item: str
    candidate: str
    scores: dict[str, int]


def _open_csv(path: Path) -> TextIO:
    """A ratings file as text for the csv module, or standard input for ``-``."""
    if str(path) == "-":
        from serialkit.io.dispatch import read_stdin_bytes

        return io.StringIO(read_stdin_bytes().decode("utf-8-sig", "replace"), newline="")
    return path.open(newline="", encoding="utf-8-sig")


def read_ratings(paths: Sequence[str | os.PathLike[str]]) -> list[Rating]:
    """Ratings from CSV files exported by the form (``-``: standard input); blank scores are skipped,
    bad ones are errors."""
    out: list[Rating] = []
    seen: dict[tuple[str, str, str], str] = {}
    for path in paths:
        p = Path(path)
        try:
            with _open_csv(p) as fh:
                reader = csv.DictReader(fh)
                missing = {"rater", "item", "candidate"} - set(reader.fieldnames or ())
                if missing:
                    raise PanelError(f"{p}: missing column(s) {', '.join(sorted(missing))}")
                if not {key for key, _ in CRITERIA} & set(reader.fieldnames or ()):
                    raise PanelError(f"{p}: no rating column (one of {', '.join(key for key, _ in CRITERIA)})")
                for line, row in enumerate(reader, start=2):
                    scores: dict[str, int] = {}
                    for key, _ in CRITERIA:
                        value = (row.get(key) or "").strip()
                        if not value:
                            continue
                        if not value.isdigit() or int(value) not in LIKERT:
                            raise PanelError(f"{p}:{line}: {key} must be 1..5, not {value!r}")
                        scores[key] = int(value)
                    ident = (row["rater"].strip(), row["item"].strip(), row["candidate"].strip())
                    if ident in seen:
                        raise PanelError(f"{p}:{line}: rater {ident[0]} rated {ident[2]} in {ident[1]} "
                                         f"twice (also in {seen[ident]})")
                    seen[ident] = f"{p}:{line}"
                    if scores:
                        out.append(Rating(*ident, scores))
        except OSError as exc:
            raise PanelError(f"{p}: cannot read ratings ({exc.strerror or exc})") from exc
        except csv.Error as exc:
            raise PanelError(f"{p}: not a CSV file ({exc})") from exc
    return out


def load_key(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The packet key written by ``panel build``."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PanelError(f"{p}: cannot read the panel key ({exc})") from exc
    return key_from_text(text, str(p))


def key_from_text(text: str, where: str) -> dict[str, Any]:
    """The packet key from its JSON text (``where`` names it in errors: ``-`` for standard input)."""
    try:
        key = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PanelError(f"{where}: cannot read the panel key ({exc})") from exc
    if not isinstance(key, dict) or key.get("format") != "serialkit-panel-key":
        raise PanelError(f"{where}: not a serialkit panel key")
    return key


def analyze(ratings: Sequence[Rating], key: dict[str, Any], seed: int = 0) -> dict[str, Any]:
    """Per condition pair and criterion: preference share and mean difference (CIs clustered by item)."""
    items = key["items"]
    for r in ratings:
        if r.item not in items or r.candidate not in items[r.item]["candidates"]:
            raise PanelError(f"rating by {r.rater}: item {r.item} / candidate {r.candidate} is not in the key")
    score = {(r.rater, r.item, r.candidate): r.scores for r in ratings}
    raters = sorted({r.rater for r in ratings})
    comparisons: dict[str, Any] = {}
    for criterion, _ in CRITERIA:
        per_pair: dict[str, dict[str, list[Any]]] = defaultdict(lambda: {"win": [], "diff": [], "item": []})
        for item_id, item in items.items():
            cond_a, cond_b = item.get("pair") or item["conditions"]
            cid_of = dict(zip(item["conditions"], item["candidates"], strict=True))
            first, second = cid_of[cond_a], cid_of[cond_b]
            label = f"{cond_a} vs {cond_b}"
            for rater in raters:
                sa = score.get((rater, item_id, first), {}).get(criterion)
                sb = score.get((rater, item_id, second), {}).get(criterion)
                if sa is None or sb is None:
                    continue
                bucket = per_pair[label]
                bucket["win"].append(1.0 if sa > sb else 0.5 if sa == sb else 0.0)
                bucket["diff"].append(float(sa - sb))
                bucket["item"].append(item_id)
        for label, bucket in per_pair.items():
            pref = cluster_bootstrap(bucket["win"], bucket["item"], seed=seed)
            diff = cluster_bootstrap(bucket["diff"], bucket["item"], seed=seed)
            comparisons.setdefault(label, {})[criterion] = {
                "preference": pref.to_dict(), "mean_difference": diff.to_dict(),
                "judgements": len(bucket["win"]),
            }
    scores: dict[str, dict[str, Any]] = {}
    condition_of = {cid: c for item in items.values()
                    for cid, c in zip(item["candidates"], item["conditions"], strict=True)}
    for criterion, _ in CRITERIA:
        by_condition: dict[str, tuple[list[float], list[str]]] = defaultdict(lambda: ([], []))
        for r in ratings:
            if criterion in r.scores:
                values, clusters = by_condition[condition_of[r.candidate]]
                values.append(float(r.scores[criterion]))
                clusters.append(r.item)
        for condition, (values, clusters) in sorted(by_condition.items()):
            scores.setdefault(condition, {})[criterion] = cluster_bootstrap(values, clusters, seed=seed).to_dict()
    agreement = {}
    for criterion, _ in CRITERIA:
        by_subject: dict[tuple[str, str], list[int]] = defaultdict(list)
        for r in ratings:
            if criterion in r.scores:
                by_subject[(r.item, r.candidate)].append(r.scores[criterion])
        table = rating_table({k: v for k, v in by_subject.items() if len(v) >= 2}, LIKERT)
        kappa = fleiss_kappa(table) if table else math.nan
        agreement[criterion] = {"fleiss_kappa": None if math.isnan(kappa) else kappa, "subjects": len(table)}
    return {"raters": raters, "ratings": len(ratings), "comparisons": comparisons, "scores": scores,
            "agreement": agreement}


def format_text(result: dict[str, Any]) -> str:
    """A plain-text summary table."""
    lines = [f"{len(result['raters'])} raters, {result['ratings']} candidate ratings"]
    for label, crits in result["comparisons"].items():
        first = label.split(" vs ")[0]
        lines.append(f"\n{label}: share of judgements preferring {first} (ties count half), "
                     "mean score difference; 95 % CI clustered by item")
        for criterion, d in crits.items():
            p, m = d["preference"], d["mean_difference"]
            if p["low"] is None:  # one item: resampling items cannot give an interval
                lines.append(f"  {criterion:10} {100 * p['value']:5.1f}% [one item, no interval]"
                             f"   Δ {m['value']:+.2f}   n={d['judgements']}")
                continue
            lines.append(f"  {criterion:10} {100 * p['value']:5.1f}% [{100 * p['low']:.1f}, {100 * p['high']:.1f}]"
                         f"   Δ {m['value']:+.2f} [{m['low']:+.2f}, {m['high']:+.2f}]   n={d['judgements']}")
    lines.append("\nMean Likert score per condition (1–5; 95 % CI clustered by item)")
    for condition, crits in result["scores"].items():
        cells = "  ".join(f"{c} {d['value']:.2f}" + (f" [{d['low']:.2f}, {d['high']:.2f}]" if d["low"] is not None else "")
                          for c, d in crits.items())
        lines.append(f"  {condition:12} {cells}")
    lines.append("\nInter-rater agreement (Fleiss' kappa over candidates, Likert 1–5)")
    for criterion, d in result["agreement"].items():
        kappa = "–" if d["fleiss_kappa"] is None else f"{d['fleiss_kappa']:.3f}"
        lines.append(f"  {criterion:10} κ = {kappa} ({d['subjects']} candidates)")
    return "\n".join(lines)
