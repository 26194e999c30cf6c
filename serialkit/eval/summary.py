"""Aggregate run records into the experiment's numbers, each with a family-clustered 95 % interval."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from serialkit.core.errors import SerialkitError
from serialkit.eval.metrics import DEGENERACY_WEIGHTS, interval_histogram, line_features, pitch_line
from serialkit.eval.plan import PREDICATE_CODES, VARIANT_ORDER
from serialkit.eval.stats import Estimate, cluster_bootstrap, kl_divergence, mmd

COST_FIELDS = ("calls", "prompt_tokens", "completion_tokens", "seconds")


def predicate_codes(records: Sequence[dict[str, Any]]) -> list[str]:
    """The predicate columns of a report, from what the records say was judged: the seven
    predicates every run is judged on (each record counts them, zeros too), then every other code
    the gate failed some run on (GRID, SPAN, SECTION, COMPLETE, a plugin's …): a run that fails
    strict delivery fails one of the columns. In the gate's order; unknown codes after it, sorted."""
    from serialkit.check.gate import GATE_CODES

    counted = [r.get("counts") or {} for r in records]
    judged = {code for c in counted for code in c}
    failed = {code for c in counted for code, n in c.items() if n}
    core = [code for code in PREDICATE_CODES if code in judged or not records]
    rest = [code for code in GATE_CODES if code in failed and code not in core]
    return core + rest + sorted(failed - set(core) - set(rest))


def with_conditions(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records with a ``condition``: the variant, or ``variant@model`` when several models ran."""
    models = {(r["proposer"], r.get("model")) for r in records}
    if len(models) <= 1:
        return [{**r, "condition": r["variant"]} for r in records]
    return [{**r, "condition": f"{r['variant']}@{r.get('model') or r['proposer']}"} for r in records]


def variants_in(records: Sequence[dict[str, Any]]) -> list[str]:
    """Conditions present (see :func:`with_conditions`), canonical variant order first."""
    present = {(r["variant"], r.get("condition", r["variant"])) for r in records}
    rank = {v: i for i, v in enumerate(VARIANT_ORDER)}
    return [c for _, c in sorted(present, key=lambda vc: (rank.get(vc[0], len(rank)), vc[1]))]


def _boot(records: Sequence[dict[str, Any]], values: Sequence[float], seed: int,
          weights: Sequence[float] | None = None) -> Estimate:
    return cluster_bootstrap(values, [r["family"] for r in records], weights=weights, seed=seed)


def reference_lines(paths: Sequence[str | os.PathLike[str]]) -> list[list[int]]:
    """Pitch lines of the reference scores (MusicXML/MEI via ``read_score``, or JSON pieces)."""
    lines = []
    for path in paths:
        p = Path(path)
        if p.suffix.lower() == ".json":
            from serialkit.core.piece import Piece
            from serialkit.io.jsonio import load_piece

            piece: Piece = load_piece(p)
        else:
            from serialkit.io import read_score

            piece = read_score(p)
        line = pitch_line(piece)
        if len(line) < 2:
            raise SerialkitError(f"{p}: reference score has fewer than two notes")
        lines.append(line)
    return lines


def corpus_distance(candidate_lines: Sequence[Sequence[int]],
                    reference: Sequence[Sequence[int]]) -> dict[str, float | int | None]:
    """MMD (RBF, median bandwidth) on windowed interval histograms, and KL of pooled intervals."""
    cand = [f for line in candidate_lines for f in line_features(line)]
    ref = [f for line in reference for f in line_features(line)]
    if not cand or not ref:
        return {"mmd": None, "kl": None, "samples": len(cand), "reference_samples": len(ref)}
    p = sum((interval_histogram(line) for line in candidate_lines), np.zeros(25))
    q = sum((interval_histogram(line) for line in reference), np.zeros(25))
    return {"mmd": mmd(np.array(cand), np.array(ref)), "kl": kl_divergence(p, q),
            "samples": len(cand), "reference_samples": len(ref)}


def has_notes(record: dict[str, Any]) -> bool:
    """True when the run's final candidate has notes (a record without metrics counts as having them)."""
    metrics = record.get("metrics") or {}
    return int(metrics.get("events", 1) or 0) > 0


def summarize(records: Sequence[dict[str, Any]], reference: Sequence[Sequence[int]] | None = None,
              seed: int = 0, errored: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """Everything the report shows, JSON-ready; Estimates become {value, low, high, n, clusters}.

    ``errored`` are runs the model server broke off (``RunStore.errored``): they are counted per
    condition in their own column and left out of every rate. Predicate pass rates are over the
    runs whose candidate has notes (``with_notes``): no notes breaks no rule, but passes none."""
    records = with_conditions(records)
    variants = variants_in(records)
    codes = predicate_codes(records)
    models = {(r["proposer"], r.get("model")) for r in records} | {
        (e.get("proposer"), e.get("model")) for e in errored}
    errored_by: dict[str, int] = {}
    for e in errored:
        variant = str(e.get("variant", "?"))
        condition = variant if len(models) <= 1 else f"{variant}@{e.get('model') or e.get('proposer')}"
        errored_by[condition] = errored_by.get(condition, 0) + 1
        if condition not in variants:
            variants.append(condition)
    out: dict[str, Any] = {
        "runs": len(records),
        "variants": variants,
        "tasks": len({r["task"] for r in records}),
        "families": sorted({r["family"] for r in records}),
        "proposers": sorted({f"{r.get('proposer')}:{r.get('model') or '-'}" for r in [*records, *errored]}),
        "delivery": {}, "predicates": {}, "collisions": {}, "degeneracy": {}, "cost": {},
        "corpus": {}, "by_family": {}, "errored": {v: errored_by.get(v, 0) for v in variants}, "with_notes": {},
        "predicate_codes": codes,
    }
    for variant in variants:
        rs = [r for r in records if r["condition"] == variant]
        out["delivery"][variant] = {
            k: _boot(rs, [float(bool(r.get(k))) for r in rs], seed).to_dict()
            for k in ("strict", "relaxed", "released")
        }
        sounding = [r for r in rs if has_notes(r)]  # a candidate with no notes breaks no rule: not a pass
        out["with_notes"][variant] = len(sounding)
        out["predicates"][variant] = {
            code: _boot(sounding, [float(r.get("counts", {}).get(code, 0) == 0) for r in sounding], seed).to_dict()
            for code in codes
        }
        withm = [r for r in rs if r.get("metrics")]
        coll = [float(r["metrics"]["collisions"]) for r in withm]
        opp = [float(r["metrics"]["opportunities"]) for r in withm]
        rates = [c / o if o else 0.0 for c, o in zip(coll, opp, strict=True)]
        est = _boot(withm, rates, seed, weights=opp)
        out["collisions"][variant] = {**est.to_dict(), "collisions": int(sum(coll)),
                                      "opportunities": int(sum(opp))}
        degen = [r for r in withm if r["metrics"].get("degeneracy")]
        out["degeneracy"][variant] = {
            k: _boot(degen, [float(r["metrics"]["degeneracy"][k]) for r in degen], seed).to_dict()
            for k in ("score", *DEGENERACY_WEIGHTS)
        }
        out["cost"][variant] = {
            k: _boot(rs, [float(r.get("usage", {}).get(k, 0)) for r in rs], seed).to_dict()
            for k in COST_FIELDS
        }
        out["cost"][variant]["wall_seconds"] = _boot(
            rs, [float(r.get("wall_seconds", 0)) for r in rs], seed).to_dict()
        priced = [r for r in rs if r.get("cost") is not None]
        out["cost"][variant]["usd"] = _boot(priced, [float(r["cost"]) for r in priced], seed).to_dict()
        shares = authorship_shares(rs)
        if shares:
            out.setdefault("authorship", {})[variant] = {
                k: _boot([r for r, _ in pairs], [v for _, v in pairs], seed).to_dict() for k, pairs in shares.items()}
        if reference:
            lines = [r["metrics"]["pitch_line"] for r in withm if len(r["metrics"]["pitch_line"]) >= 2]
            out["corpus"][variant] = corpus_distance(lines, reference)
        for family in out["families"]:
            fam = [r for r in rs if r["family"] == family]
            if fam:
                out["by_family"].setdefault(family, {})[variant] = sum(bool(r.get("strict")) for r in fam) / len(fam)
    out["models"] = side_by_side(records, variants)
    return out


def authorship_shares(records: Sequence[dict[str, Any]]) -> dict[str, list[tuple[dict[str, Any], float]]]:
    """Per authorship share the runs carrying it (a record's ``authorship``: name → share of its
    released notes, e.g. written unchanged by the model, retimed, patched, rewritten, reflowed)."""
    out: dict[str, list[tuple[dict[str, Any], float]]] = {}
    for r in records:
        shares = r.get("authorship")
        if isinstance(shares, dict) and isinstance(shares.get("shares"), dict):
            shares = shares["shares"]
        if not isinstance(shares, dict):
            continue
        for name, value in shares.items():
            if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
                out.setdefault(str(name), []).append((r, float(value)))
    return out


def side_by_side(records: Sequence[dict[str, Any]], conditions: Sequence[str]) -> dict[str, Any]:
    """With several models: variant → model → its condition (``variant@model``), for the report's
    side-by-side tables (empty with one model)."""
    if not any("@" in c for c in conditions):
        return {}
    table: dict[str, dict[str, str]] = {}
    for condition in conditions:
        variant, _, model = condition.partition("@")
        table.setdefault(variant, {})[model] = condition
    return table
