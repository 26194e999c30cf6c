"""Statistics for experiments and panels: clustered bootstrap, MMD, KL, Fleiss' kappa."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Estimate:
    """A point estimate with a percentile bootstrap interval and the sample it came from."""

    value: float
    low: float
    high: float
    n: int
    clusters: int

    def to_dict(self) -> dict[str, float | int | None]:
        """JSON form (NaN, e.g. no interval from a single cluster, becomes null)."""
        return {"value": _finite(self.value), "low": _finite(self.low), "high": _finite(self.high),
                "n": self.n, "clusters": self.clusters}

    def text(self, digits: int = 2, percent: bool = False) -> str:
        """``0.83 [0.71, 0.92]`` (or percentages)."""
        if math.isnan(self.value):
            return "–"
        if percent:
            return f"{100 * self.value:.0f}% [{100 * self.low:.0f}, {100 * self.high:.0f}]"
        return f"{self.value:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


def _finite(x: float) -> float | None:
    return None if math.isnan(x) else x


NAN_ESTIMATE = Estimate(math.nan, math.nan, math.nan, 0, 0)


def cluster_bootstrap(
    values: Sequence[float],
    clusters: Sequence[Hashable],
    *,
    weights: Sequence[float] | None = None,
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> Estimate:
    """Mean (or weighted ratio) with a percentile interval from resampling whole clusters.

    The statistic is ``sum(w * x) / sum(w)`` over the runs of the drawn clusters (plain mean when
    ``weights`` is None). Clusters are drawn with replacement, so runs of one task family stay
    together and the interval reflects between-family variation, not only run-to-run noise.
    """
    x = np.asarray(values, dtype=np.float64)
    w = np.ones_like(x) if weights is None else np.asarray(weights, dtype=np.float64)
    if x.shape != w.shape or len(clusters) != len(x):
        raise ValueError("values, weights and clusters must have the same length")
    keep = ~np.isnan(x)
    x, w = x[keep], w[keep]
    labels = [c for c, k in zip(clusters, keep.tolist(), strict=True) if k]
    if len(x) == 0 or float(w.sum()) == 0.0:
        return NAN_ESTIMATE
    index: dict[Hashable, int] = {}
    codes = np.array([index.setdefault(c, len(index)) for c in labels], dtype=np.int64)
    k = len(index)
    sums = np.bincount(codes, weights=w * x, minlength=k)
    totals = np.bincount(codes, weights=w, minlength=k)
    point = float(sums.sum() / totals.sum())
    if k < 2:  # resampling one cluster gives no interval
        return Estimate(point, math.nan, math.nan, int(len(x)), k)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, k, size=(resamples, k))
    num = sums[draws].sum(axis=1)
    den = totals[draws].sum(axis=1)
    ok = den > 0
    stats = num[ok] / den[ok]
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(stats, [alpha, 1.0 - alpha]) if len(stats) else (point, point)
    return Estimate(point, float(low), float(high), int(len(x)), k)


def median_bandwidth(x: FloatArray, y: FloatArray) -> float:
    """The median heuristic: the median pairwise Euclidean distance of the pooled sample."""
    z = np.vstack([x, y])
    d2 = _sq_dists(z, z)
    upper = d2[np.triu_indices(len(z), k=1)]
    positive = upper[upper > 0]
    if len(positive) == 0:
        return 1.0
    return float(math.sqrt(float(np.median(positive))))


def _sq_dists(a: FloatArray, b: FloatArray) -> FloatArray:
    aa = (a * a).sum(axis=1)[:, None]
    bb = (b * b).sum(axis=1)[None, :]
    return np.asarray(np.maximum(aa + bb - 2.0 * a @ b.T, 0.0), dtype=np.float64)


def mmd(x: Sequence[Sequence[float]] | FloatArray, y: Sequence[Sequence[float]] | FloatArray,
        bandwidth: float | None = None) -> float:
    """Maximum mean discrepancy (biased V-statistic, square-rooted) with an RBF kernel.

    ``k(a, b) = exp(-|a - b|^2 / (2 sigma^2))`` with sigma from the median heuristic on the
    pooled sample unless given. Identical samples give exactly 0.
    """
    xa = np.atleast_2d(np.asarray(x, dtype=np.float64))
    ya = np.atleast_2d(np.asarray(y, dtype=np.float64))
    if xa.size == 0 or ya.size == 0:
        return math.nan
    sigma = bandwidth if bandwidth is not None else median_bandwidth(xa, ya)
    gamma = 1.0 / (2.0 * sigma * sigma)
    kxx = np.exp(-gamma * _sq_dists(xa, xa)).mean()
    kyy = np.exp(-gamma * _sq_dists(ya, ya)).mean()
    kxy = np.exp(-gamma * _sq_dists(xa, ya)).mean()
    return float(math.sqrt(max(float(kxx + kyy - 2.0 * kxy), 0.0)))


def kl_divergence(p_counts: Sequence[float] | FloatArray, q_counts: Sequence[float] | FloatArray,
                  alpha: float = 0.5) -> float:
    """KL(P || Q) in bits between two histograms, each smoothed by adding ``alpha`` per bin."""
    p = np.asarray(p_counts, dtype=np.float64) + alpha
    q = np.asarray(q_counts, dtype=np.float64) + alpha
    if p.shape != q.shape:
        raise ValueError("histograms must have the same bins")
    p /= p.sum()
    q /= q.sum()
    return float((p * np.log2(p / q)).sum())


def fleiss_kappa(table: Sequence[Sequence[int]]) -> float:
    """Fleiss' kappa from a subjects × categories table of rating counts.

    Each row counts how many raters put that subject in each category. Rows may have different
    totals (at least 2); with equal totals this is exactly Fleiss (1971).
    """
    counts = np.asarray(table, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[0] == 0:
        return math.nan
    n_i = counts.sum(axis=1)
    counts = counts[n_i >= 2]
    n_i = n_i[n_i >= 2]
    if len(n_i) == 0:
        return math.nan
    p_i = ((counts * counts).sum(axis=1) - n_i) / (n_i * (n_i - 1))
    p_bar = float(p_i.mean())
    p_j = counts.sum(axis=0) / n_i.sum()
    p_e = float((p_j * p_j).sum())
    if p_e >= 1.0:
        return 1.0 if p_bar >= 1.0 else math.nan
    return (p_bar - p_e) / (1.0 - p_e)


def rating_table(ratings: Mapping[Hashable, Sequence[int]], categories: Sequence[int]) -> list[list[int]]:
    """Subjects × categories counts from each subject's list of ratings."""
    position = {c: i for i, c in enumerate(categories)}
    table = []
    for values in ratings.values():
        row = [0] * len(categories)
        for v in values:
            row[position[v]] += 1
        table.append(row)
    return table


def normalised_entropy(values: Sequence[Hashable], bins: int) -> float:
    """Shannon entropy of the values' distribution over ``log2(min(len(values), bins))``, in [0, 1]."""
    n = len(values)
    cap = min(n, bins)
    if cap < 2:
        return 0.0
    freq: dict[Hashable, int] = {}
    for v in values:
        freq[v] = freq.get(v, 0) + 1
    h = -sum((c / n) * math.log2(c / n) for c in freq.values())
    return min(1.0, h / math.log2(cap))
