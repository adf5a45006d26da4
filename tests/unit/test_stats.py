"""stats.py against numpy and scipy, and LEBench's k-best on hand-built cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from osmeter import stats

RNG = np.random.default_rng(7)
SAMPLE_SETS = {
    "normal": RNG.normal(100.0, 5.0, 501),
    "lognormal": RNG.lognormal(3.0, 0.7, 1000),
    "small-even": np.array([5.0, 1.0, 4.0, 2.0, 3.0, 9.0]),
    "ties": np.array([7.0] * 20 + [8.0] * 3),
    "two": np.array([10.0, 12.0]),
}


@pytest.mark.parametrize("name", sorted(SAMPLE_SETS))
def test_summary_matches_numpy_and_scipy(name: str) -> None:
    x = SAMPLE_SETS[name]
    s = stats.summary(x)
    assert s.n == x.size
    assert s.min == np.min(x) and s.max == np.max(x)
    assert s.mean == pytest.approx(np.mean(x), rel=1e-12)
    assert s.median == pytest.approx(np.median(x), rel=1e-12)
    assert s.std == pytest.approx(np.std(x, ddof=1), rel=1e-12)
    assert s.cv == pytest.approx(np.std(x, ddof=1) / np.mean(x), rel=1e-12)
    assert s.trimmed_mean == pytest.approx(sps.trim_mean(x, 0.1), rel=1e-12)
    expected = np.percentile(x, [1, 5, 95, 99, 99.9])
    assert [s.p1, s.p5, s.p95, s.p99, s.p999] == pytest.approx(list(expected), rel=1e-12)
    assert s.ci_low <= s.median <= s.ci_high


def test_trimmed_mean_cuts_whole_samples_like_scipy() -> None:
    for n in range(1, 40):
        x = RNG.exponential(1.0, n)
        assert stats.trimmed_mean(x) == pytest.approx(sps.trim_mean(x, 0.1), rel=1e-12), n


def test_single_sample_has_nan_spread_not_a_crash() -> None:
    s = stats.summary([42.0])
    assert s.n == 1 and s.min == s.max == s.median == s.mean == 42.0
    assert math.isnan(s.std) and math.isnan(s.cv)
    assert s.ci_low == s.ci_high == 42.0
    assert s.lebench_kbest == 42.0 and not s.kbest_stable


def test_zero_mean_gives_nan_cv() -> None:
    assert math.isnan(stats.coefficient_of_variation([-1.0, 1.0]))


def test_rejects_empty_and_non_finite() -> None:
    with pytest.raises(ValueError):
        stats.summary([])
    with pytest.raises(ValueError):
        stats.summary([1.0, float("nan")])
    with pytest.raises(ValueError):
        stats.summary([1.0, float("inf")])


def test_bootstrap_ci_contains_true_median_of_large_normal_sample() -> None:
    x = np.random.default_rng(1).normal(50.0, 2.0, 20_000)
    low, high = stats.bootstrap_median_ci(x)
    assert low < 50.0 < high
    assert high - low < 0.2  # about 2 * 1.96 * 1.2533 * 2 / sqrt(n) = 0.07


def test_bootstrap_ci_is_deterministic() -> None:
    x = SAMPLE_SETS["lognormal"]
    assert stats.bootstrap_median_ci(x) == stats.bootstrap_median_ci(x.copy())
    assert stats.summary(x) == stats.summary(list(x))


def test_bootstrap_ci_agrees_with_brute_force_resampling() -> None:
    """The order-statistic shortcut has the textbook bootstrap's distribution."""
    for n in (9, 10, 200, 201):
        x = np.random.default_rng(n).lognormal(2.0, 0.5, n)
        rng = np.random.default_rng(99)
        medians = np.median(x[rng.integers(0, n, size=(40_000, n))], axis=1)
        brute = np.percentile(medians, [2.5, 97.5])
        low, high = stats.bootstrap_median_ci(x, resamples=40_000)
        spread = np.ptp(x)
        assert abs(low - brute[0]) < 0.02 * spread, n
        assert abs(high - brute[1]) < 0.02 * spread, n


def test_tukey_outliers_counts_points_outside_fences() -> None:
    x = np.array([10.0] * 10 + [11.0] * 10 + [100.0, -50.0])
    q1, q3 = np.percentile(x, [25, 75])
    iqr = q3 - q1
    expected = int(np.sum((x < q1 - 1.5 * iqr) | (x > q3 + 1.5 * iqr)))
    assert stats.tukey_outliers(x) == expected == 2
    assert stats.summary(x).outliers == 2


@pytest.mark.parametrize(
    ("samples", "value", "stable"),
    [
        # The fluke 50 is skipped: 100..104 is the first run of 5 within 5 %.
        ([104.0, 50.0, 101.0, 100.0, 103.0, 102.0, 300.0], 100.0, True),
        # The run may start at the very minimum.
        ([10.0, 10.1, 10.2, 10.3, 10.4, 99.0], 10.0, True),
        # A gap of more than 5 % inside the first five breaks the run; the next run counts.
        ([10.0, 10.1, 10.2, 11.0, 11.1, 11.2, 11.3, 11.4], 11.0, True),
        # Exactly 5 % is still "within".
        ([100.0, 105.0, 110.25, 115.7625, 121.550625], 100.0, True),
        # Fewer than 5 samples: the minimum, flagged.
        ([3.0, 1.0, 2.0], 1.0, False),
        # No run anywhere (each step doubles): the minimum, flagged.
        ([1.0, 2.0, 4.0, 8.0, 16.0, 32.0], 1.0, False),
        # Zeros: within 5 % of 0 means 0, so five zeros are a run ...
        ([0.0, 0.0, 0.0, 0.0, 0.0, 7.0], 0.0, True),
        # ... but one zero followed by positive values does not start one.
        ([0.0, 5.0, 5.0, 5.0, 5.0, 5.0], 5.0, True),
    ],
)
def test_lebench_kbest(samples: list[float], value: float, stable: bool) -> None:
    k = stats.lebench_kbest(samples)
    assert k.value == value
    assert k.stable is stable
    assert (k.reason is None) is stable


def test_lebench_kbest_in_summary() -> None:
    s = stats.summary([104.0, 50.0, 101.0, 100.0, 103.0, 102.0, 300.0])
    assert s.lebench_kbest == 100.0 and s.kbest_stable
