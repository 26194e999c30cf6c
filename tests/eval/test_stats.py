"""Statistics against hand-computed and published values, and by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from serialkit.eval.stats import (
    cluster_bootstrap,
    fleiss_kappa,
    kl_divergence,
    mmd,
    normalised_entropy,
    rating_table,
)

# Fleiss (1971) as worked on Wikipedia ("Fleiss' kappa", worked example): 10 subjects,
# 14 raters, 5 categories; P̄ = 0.378, P̄e = 0.213, κ = 0.210.
WIKIPEDIA_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_kappa_matches_the_published_worked_example() -> None:
    assert fleiss_kappa(WIKIPEDIA_TABLE) == pytest.approx(0.210, abs=5e-4)


def test_fleiss_kappa_is_one_for_perfect_agreement_and_near_zero_for_chance() -> None:
    assert fleiss_kappa([[5, 0, 0], [0, 5, 0], [0, 0, 5]]) == pytest.approx(1.0)
    rng = np.random.default_rng(3)
    ratings = {i: list(rng.integers(1, 6, size=8)) for i in range(400)}
    kappa = fleiss_kappa(rating_table(ratings, [1, 2, 3, 4, 5]))
    assert abs(kappa) < 0.03


def test_rating_table_counts_each_subjects_ratings() -> None:
    table = rating_table({"a": [1, 1, 3], "b": [5, 4, 5]}, [1, 2, 3, 4, 5])
    assert table == [[2, 0, 1, 0, 0], [0, 0, 0, 1, 2]]


def test_mmd_is_zero_for_identical_samples_and_grows_with_a_shift() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(150, 3))
    assert mmd(x, x) == pytest.approx(0.0, abs=1e-9)
    y = rng.normal(size=(150, 3))
    values = [mmd(x, y + shift) for shift in (0.0, 0.5, 1.0, 2.0, 4.0)]
    assert all(a < b for a, b in zip(values, values[1:], strict=False)), values
    assert values[0] < 0.15 < values[-1]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.floats(-5, 5), min_size=2, max_size=2), min_size=1, max_size=20))
def test_mmd_of_a_sample_with_itself_is_zero(rows: list[list[float]]) -> None:
    assert mmd(rows, rows) == pytest.approx(0.0, abs=1e-6)


def test_kl_is_zero_for_equal_histograms_and_matches_a_hand_computation() -> None:
    assert kl_divergence([3, 1, 0], [3, 1, 0]) == pytest.approx(0.0)
    # alpha = 0 on strictly positive histograms: P = (1/2, 1/2), Q = (1/4, 3/4)
    expected = 0.5 * math.log2(0.5 / 0.25) + 0.5 * math.log2(0.5 / 0.75)
    assert kl_divergence([1, 1], [1, 3], alpha=0.0) == pytest.approx(expected)


def test_cluster_bootstrap_point_is_the_pooled_mean_and_weighted_ratio() -> None:
    est = cluster_bootstrap([1, 0, 1, 1], ["a", "a", "b", "b"])
    assert est.value == pytest.approx(0.75)
    assert est.low <= est.value <= est.high
    assert (est.n, est.clusters) == (4, 2)
    ratio = cluster_bootstrap([0.5, 0.0], ["a", "b"], weights=[4, 6])
    assert ratio.value == pytest.approx(2 / 10)


def test_cluster_bootstrap_skips_nan_and_handles_empty() -> None:
    assert math.isnan(cluster_bootstrap([], []).value)
    assert cluster_bootstrap([1.0, math.nan], ["a", "b"]).value == 1.0


@pytest.mark.slow
def test_clustered_bootstrap_intervals_cover_a_known_mean_at_about_the_nominal_rate() -> None:
    """Simulate clustered data (cluster effect + noise) with mean 0.3; count covering intervals."""
    rng = np.random.default_rng(2026)
    true_mean, trials, covered = 0.3, 300, 0
    for t in range(trials):
        clusters = 30
        effects = rng.normal(0, 0.2, size=clusters)
        values, labels = [], []
        for c in range(clusters):
            for _ in range(6):
                values.append(true_mean + effects[c] + rng.normal(0, 0.3))
                labels.append(c)
        est = cluster_bootstrap(values, labels, resamples=800, seed=t)
        covered += est.low <= true_mean <= est.high
    rate = covered / trials
    assert 0.89 <= rate <= 0.99, rate


def test_naive_bootstrap_ignoring_clusters_undercovers() -> None:
    """The same data with every run its own cluster: intervals too narrow (why clustering matters)."""
    rng = np.random.default_rng(7)
    covered = 0
    for t in range(120):
        effects = rng.normal(0, 0.3, size=8)
        values = [0.3 + effects[c] + rng.normal(0, 0.1) for c in range(8) for _ in range(10)]
        est = cluster_bootstrap(values, list(range(len(values))), resamples=400, seed=t)
        covered += est.low <= 0.3 <= est.high
    assert covered / 120 < 0.6


def test_normalised_entropy_extremes() -> None:
    assert normalised_entropy([1, 1, 1, 1], 8) == 0.0
    assert normalised_entropy([1, 2, 3, 4], 8) == pytest.approx(1.0)
    assert normalised_entropy([1], 8) == 0.0


def test_one_cluster_gives_no_interval_and_json_null() -> None:
    est = cluster_bootstrap([1.0, 0.0, 1.0], ["a", "a", "a"])
    assert est.value == pytest.approx(2 / 3) and math.isnan(est.low) and math.isnan(est.high)
    assert est.to_dict()["low"] is None and est.to_dict()["value"] == pytest.approx(2 / 3)
