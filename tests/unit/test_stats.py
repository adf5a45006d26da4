"""stats.py against numpy and scipy; the dependence-aware CI of the median on
autocorrelated samples; LEBench's k-best against a step-by-step model of its code."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from scipy.signal import lfilter

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
    q1, q3 = sps.iqr(x, rng=(25, 75)), np.percentile(x, [25, 75])
    assert [s.p25, s.p75] == pytest.approx(list(q3), rel=1e-12)
    if s.median:
        assert stats.iqr_ratio(s) == pytest.approx(q1 / np.median(x), rel=1e-9)
        assert stats.tail_ratio(s) == pytest.approx(np.percentile(x, 99) / np.median(x), rel=1e-12)


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


# --- dependent samples: tau, the effective sample size and the CI of the median ---


def ar1(rng: np.random.Generator, n: int, phi: float) -> np.ndarray:
    """A stationary Gaussian AR(1) series of unit variance: x_t = phi x_{t-1} + e_t."""
    e = rng.normal(0.0, math.sqrt(1.0 - phi * phi), n)
    e[0] /= math.sqrt(1.0 - phi * phi)  # start in the stationary distribution
    return lfilter([1.0], [1.0, -phi], e)


def reference_tau(x: np.ndarray, max_lag: int = stats.TAU_MAX_LAG) -> float:
    """docs/statistics.md's definition written out with numpy's correlate on
    the centred indicator (independently of stats.median_tau's integer counts)."""
    n = x.size
    y = (x <= np.median(x)).astype(np.float64)
    y -= y.mean()
    if n < 2 or not np.any(y):
        return 1.0
    acov = np.correlate(y, y, "full")[n - 1 :] / n
    rho = acov / acov[0]
    top = min(n - 1, max_lag)
    total, prev, pairs = 0.0, math.inf, 0
    while 2 * pairs + 1 <= top:
        g = rho[2 * pairs] + rho[2 * pairs + 1]
        if g <= 0:
            break
        prev = min(g, prev)
        total += prev
        pairs += 1
    if pairs == 0:
        return 1.0
    keep = max(0.5, 1.0 - (2 * (2 * pairs - 1) + 1) / n)
    return min(max(1.0, (-1.0 + 2.0 * total) / keep), float(n))


# The series and tau that probe/tests/test_harness.c checks osm_median_tau
# against (the same numbers there): an AR(1), phi = 0.8, rounded to 0.1, with
# a tie at the median, a monotone correction (G_3 > G_2) and a clear stop
# (G_5 = -0.10).
PINNED_SERIES = [
    93.4, 95.9, 87.3, 96.8, 100.6, 99.0, 97.7, 99.7, 98.4, 97.6, 101.7, 103.9,
    102.8, 101.8, 102.3, 98.7, 97.0, 100.3, 99.6, 92.8, 91.9, 96.8, 96.3, 96.3,
    100.2, 109.3, 103.9, 109.8, 101.7, 102.3, 96.0, 103.5, 107.0, 111.3, 104.6, 107.1,
    103.1, 100.2, 102.7, 106.5, 106.2, 101.9, 97.4, 105.1, 107.1, 109.2, 118.3, 110.6,
]  # fmt: skip
PINNED_TAU = 8.311244377811096


def test_median_tau_of_the_series_pinned_in_the_c_test() -> None:
    assert stats.median_tau(PINNED_SERIES) == pytest.approx(PINNED_TAU, rel=1e-12)
    assert reference_tau(np.array(PINNED_SERIES)) == pytest.approx(PINNED_TAU, rel=1e-9)


@pytest.mark.parametrize("n", [2, 3, 10, 51, 400, 3000])
@pytest.mark.parametrize("phi", [0.0, 0.5, 0.95])
def test_median_tau_matches_the_definition_written_with_numpy(n: int, phi: float) -> None:
    x = ar1(np.random.default_rng(n + int(100 * phi)), n, phi)
    assert stats.median_tau(x) == pytest.approx(reference_tau(x), rel=1e-9)
    ties = np.round(x * 2)  # many ties, some at the median
    assert stats.median_tau(ties) == pytest.approx(reference_tau(ties), rel=1e-9)


def test_median_tau_edge_cases() -> None:
    assert stats.median_tau([5.0]) == 1.0
    assert stats.median_tau([7.0] * 50) == 1.0  # every sample at the median: nothing varies
    alternating = np.tile([1.0, 3.0], 100)  # rho_1 = -1: anti-correlation is not credited
    assert stats.median_tau(alternating) == 1.0
    blocks = np.repeat(np.tile([1.0, 3.0], 10), 20)  # runs of 20 equal samples
    assert stats.median_tau(blocks) > 10
    assert stats.median_tau(blocks, max_lag=4) < stats.median_tau(blocks)  # the lag cap bounds tau
    assert stats.effective_sample_size(blocks) == pytest.approx(blocks.size / stats.median_tau(blocks))


def test_median_tau_of_ar1_matches_theory() -> None:
    """For a Gaussian AR(1) the indicators of x_t and x_{t+k} below the median
    correlate as (2 / pi) arcsin(phi^k) (the orthant probability), so
    tau = 1 + 2 sum_k (2 / pi) arcsin(phi^k): 13.28 for phi = 0.9."""
    k = np.arange(1, 5000)
    theory = 1 + 2 * np.sum(2 / np.pi * np.arcsin(0.9**k))
    x = ar1(np.random.default_rng(3), 100_000, 0.9)
    assert theory == pytest.approx(13.28, abs=0.01)
    assert stats.median_tau(x) == pytest.approx(theory, rel=0.1)
    iid = np.random.default_rng(4).normal(size=100_000)
    assert 1.0 <= stats.median_tau(iid) < 1.1


def test_resamples_of_a_smaller_size_match_brute_force() -> None:
    """The m-out-of-n draws (resample size below n) have the distribution of
    the median of `size` indices drawn with replacement."""
    x = np.random.default_rng(8).lognormal(2.0, 0.5, 500)
    for size in (1, 2, 25, 40, 499):
        brute_rng = np.random.default_rng(size)
        brute = np.median(x[brute_rng.integers(0, x.size, size=(40_000, size))], axis=1)
        fast = stats.resampled_medians(x, 40_000, np.random.default_rng(1), size=size)
        spread = np.ptp(x)
        for q in (2.5, 25, 50, 75, 97.5):
            assert abs(np.percentile(fast, q) - np.percentile(brute, q)) < 0.02 * spread, (size, q)


def test_with_tau_one_the_interval_is_the_iid_interval() -> None:
    low_high = np.random.default_rng(9).normal(size=400)
    x = np.empty(400)
    x[0::2], x[1::2] = np.sort(low_high)[:200], np.sort(low_high)[200:]  # below, above, below ...
    assert stats.median_tau(x) == 1.0
    assert stats.median_ci(x) == stats.bootstrap_median_ci(x)
    s = stats.summary(x)
    assert (s.ci_low, s.ci_high) == stats.median_ci(x)


def test_median_ci_covers_the_median_of_autocorrelated_samples() -> None:
    """AR(1), phi = 0.9, n = 2000: the iid bootstrap is about sqrt(13) too
    narrow and misses the true median most of the time; the interval from
    the effective sample size covers it about 95 % of the time."""
    rng = np.random.default_rng(2024)
    trials, n, median = 200, 2000, 100.0
    hits_new = hits_iid = 0
    for _ in range(trials):
        x = median + 5.0 * ar1(rng, n, 0.9)
        low, high = stats.median_ci(x)
        hits_new += low <= median <= high
        low, high = stats.bootstrap_median_ci(x)
        hits_iid += low <= median <= high
    print(f"\nAR(1) phi=0.9 n={n}: coverage of the 95 % CI of the median over {trials} trials: "
          f"effective-size {hits_new / trials:.3f}, iid bootstrap {hits_iid / trials:.3f}")  # fmt: skip
    assert hits_new / trials >= 0.90
    assert hits_iid / trials < 0.70


def test_on_independent_samples_the_interval_is_hardly_wider() -> None:
    rng = np.random.default_rng(77)
    ratios, hits = [], 0
    for _ in range(200):
        x = rng.lognormal(3.0, 0.3, 1000)
        low, high = stats.median_ci(x)
        low0, high0 = stats.bootstrap_median_ci(x)
        ratios.append((high - low) / (high0 - low0))
        hits += low <= math.exp(3.0) <= high
    print(f"\niid lognormal n=1000: width of the new CI / the iid CI: mean {np.mean(ratios):.3f}, "
          f"median {np.median(ratios):.3f}, max {np.max(ratios):.3f}; coverage {hits / 200:.3f}")  # fmt: skip
    assert np.mean(ratios) < 1.15
    assert np.max(ratios) < 1.5
    assert hits / 200 >= 0.92


# --- LEBench's k-best -------------------------------------------------------------


def lebench_model(samples: list[float], k: int = 5, tol: float = 0.05) -> tuple[float | None, bool]:
    """LEBench's calc_k_closest (TEST_DIR/OS_Eval.c) modelled step by step from
    its description: sort; slot 0 holds the smallest, count 1; each next value
    resets the count (keeping the slots) when it or its predecessor is a
    second or more, else empties the slots when its step over the predecessor
    is above 5 %, else goes into slot `count`; stop at count == K. The answer
    is slot 0: None where LEBench dereferences NULL."""
    s = sorted(samples)
    slots: list[float | None] = [None] * k
    slots[0] = s[0]
    count = 1
    for prev, cur in zip(s, s[1:]):
        if cur >= 1e9 or prev >= 1e9:
            count = 0
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.float64(cur - prev) / np.float64(prev)
            if ratio > tol:
                count = 0
                slots = [None] * k
            else:
                slots[count] = cur
                count += 1
        if count == k:
            return slots[0], True
    return slots[0], False


@pytest.mark.parametrize(
    ("samples", "value", "stable"),
    [
        # The run may start at the very minimum.
        ([104, 100, 101, 102, 103, 300], 100, True),
        # After a gap the value at the gap is not in the new run: 100 opens no run,
        # 101 does (LEBench's quirk; the stated definition would give 100).
        ([50, 100, 101, 102, 103, 104, 105], 101, True),
        # Exactly 5 % is within (50 / 1000 == 0.05 in double, as in LEBench's C).
        ([1000, 1050, 1100, 1150, 1200], 1000, True),
        # Just above: the gap opens a run at 1100 that stays partial (four values):
        # LEBench's figure is its first value, not stable.
        ([1000, 1051, 1100, 1150, 1200, 1250], 1100, False),
        # Fewer than 5 samples: the partial run's first value ...
        ([102, 100, 101], 100, False),
        # ... or, when a gap emptied it (LEBench dereferences NULL), the minimum.
        ([3, 1, 2], 1, False),
        ([1, 2, 4, 8, 16, 32], 1, False),
        # Zeros: 0 / 0 is NaN, not above 5 %: five zeros are a run ...
        ([0, 0, 0, 0, 0, 7], 0, True),
        # ... a step from 0 up is a gap, so after one 0 five equal values stay partial ...
        ([0, 5, 5, 5, 5, 5], 5, False),
        # ... and six make a run.
        ([0, 5, 5, 5, 5, 5, 5], 5, True),
        # A second or more (tv_sec != 0) resets the count without emptying the run:
        # no run completes beyond it, the partial run's first value stays.
        ([900e6, 910e6, 920e6, 1.0e9, 1.01e9, 1.02e9, 1.03e9], 900e6, False),
        ([800e6, 900e6, 905e6, 1.2e9, 1.21e9, 1.22e9, 1.23e9, 1.24e9], 905e6, False),
        ([800e6, 900e6, 1.5e9, 1.51e9, 1.52e9, 1.53e9, 1.54e9], 800e6, False),  # emptied: NULL
        ([1e9, 1.01e9, 1.02e9, 1.03e9, 1.04e9], 1e9, False),  # all a second or more
    ],
)
def test_lebench_kbest(samples: list[float], value: float, stable: bool) -> None:
    k = stats.lebench_kbest([float(v) for v in samples])
    assert (k.value, k.stable) == (value, stable)
    assert (k.reason is None) is stable
    modelled, model_stable = lebench_model([float(v) for v in samples])
    assert model_stable is stable and (modelled is None or modelled == value)


def test_lebench_kbest_reasons() -> None:
    assert "fewer than 5" in (stats.lebench_kbest([3.0, 1.0, 2.0]).reason or "")
    assert "empty" in (stats.lebench_kbest([1.0, 2.0, 4.0, 8.0, 16.0, 32.0]).reason or "")
    assert "partial" in (stats.lebench_kbest([1000.0, 1051.0, 1100.0, 1150.0, 1200.0, 1250.0]).reason or "")


def test_lebench_kbest_is_lebench_figure_on_random_samples() -> None:
    """Integer nanoseconds as LEBench's timespecs hold them: clusters, gaps,
    repeated values, zeros, samples of a second or more."""
    rng = np.random.default_rng(12)
    for trial in range(3000):
        n = int(rng.integers(1, 30))
        centres = rng.choice([0, 1, 50, 1000, 5000, 9.7e8, 1.2e9], size=3)
        spread = rng.choice([0.0, 0.01, 0.03, 0.08, 0.3])
        x = np.floor(rng.choice(centres, n) * (1 + spread * rng.random(n)))
        modelled, model_stable = lebench_model(list(x))
        k = stats.lebench_kbest(x)
        assert k.stable is model_stable, (trial, list(x))
        assert k.value == (x.min() if modelled is None else modelled), (trial, list(x))


def test_lebench_kbest_for_rates_is_a_stable_maximum() -> None:
    gb = 1e9
    # Bandwidths: the best is the highest; one fluke above is passed over as
    # LEBench passes over a fluke below (the value after the gap opens the run).
    assert stats.lebench_kbest([10 * gb, 9.9 * gb, 9.8 * gb, 9.7 * gb, 9.6 * gb, 5 * gb], higher_is_better=True) == (
        stats.KBest(10 * gb, True, None)
    )
    k = stats.lebench_kbest([20 * gb, 10 * gb, 9.9 * gb, 9.8 * gb, 9.7 * gb, 9.6 * gb, 9.5 * gb], higher_is_better=True)
    assert (k.value, k.stable) == (9.9 * gb, True)
    spread = [1 * gb, 2 * gb, 4 * gb, 8 * gb]
    k = stats.lebench_kbest(spread, higher_is_better=True)
    assert (k.value, k.stable) == (8 * gb, False) and "maximum" in (k.reason or "")
    # Rates are not timespecs: values above 10^9 run like any other.
    assert stats.lebench_kbest([1.2e9] * 5, higher_is_better=True).stable
    # Descending with steps relative to the predecessor is the ascending rule on -x.
    rng = np.random.default_rng(5)
    for _ in range(500):
        x = rng.lognormal(20, rng.choice([0.01, 0.05, 0.2]), int(rng.integers(1, 40)))
        mirrored = stats.lebench_kbest(-x, second=None)
        k = stats.lebench_kbest(x, higher_is_better=True)
        assert (k.value, k.stable) == (-mirrored.value, mirrored.stable)


def test_lebench_kbest_in_summary() -> None:
    s = stats.summary([104.0, 50.0, 101.0, 100.0, 102.0, 103.0, 105.0, 300.0])
    assert s.lebench_kbest == 101.0 and s.kbest_stable
    rate = stats.summary([9.0, 10.0, 9.9, 9.8, 9.7, 9.6, 2.0], higher_is_better=True)
    assert rate.lebench_kbest == 10.0 and rate.kbest_stable
    assert rate.mean == pytest.approx(np.mean([9.0, 10.0, 9.9, 9.8, 9.7, 9.6, 2.0]))  # LEBench's "average"


def test_best_value_depends_on_the_unit() -> None:
    s = stats.summary([3.0, 1.0, 2.0])
    assert stats.best_value(s, "ns") == 1.0
    assert stats.best_value(s, "count") == 1.0
    assert stats.best_value(s, None) == 1.0
    assert stats.best_value(s, "bytes_per_s") == 3.0
    assert stats.higher_is_better("bytes_per_s") and not stats.higher_is_better("ns")
