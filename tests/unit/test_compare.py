"""compare.py: ratio of medians, its bootstrap interval, the significance rule,
and on synthetic runs: an injected change is found, noise is not."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.signal import lfilter

from osmeter import compare as cmp
from osmeter import differences as dif
from osmeter import stats
from osmeter.comparing import compare_runs, resolve_runs
from osmeter.repeats import Uncertainty
from osmeter.stats import median_ci
from osmeter.store import open_store

from ..synthetic import MACHINE, add_run, noisy


def test_order_statistics_equal_a_full_sort() -> None:
    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 100, 5001):
        x = rng.normal(size=n)
        for _ in range(5):
            ranks = rng.integers(0, n, size=50)
            assert np.array_equal(stats.order_statistics(x, ranks), np.sort(x)[ranks])
        middle = np.arange(n // 2 - min(3, n // 2), n // 2 + 1)  # a narrow window: the partition path
        assert np.array_equal(stats.order_statistics(x, middle), np.sort(x)[middle])


def test_ratio_is_the_ratio_of_medians_with_an_interval_around_it() -> None:
    rng = np.random.default_rng(11)
    base, other = rng.normal(100, 5, 2001), rng.normal(110, 5, 1501)
    ci = cmp.ratio_of_medians(base, other)
    assert ci.ratio == pytest.approx(np.median(other) / np.median(base), rel=1e-12)
    assert ci.low < ci.ratio < ci.high
    assert 1.09 < ci.low and ci.high < 1.11  # ~0.3 % standard error of each median
    assert cmp.ratio_of_medians(base, other) == ci  # seeded: the same every time


def test_iid_interval_matches_a_brute_force_bootstrap() -> None:
    rng = np.random.default_rng(5)
    base, other = rng.lognormal(3, 0.4, 300), rng.lognormal(3.05, 0.4, 200)
    ci = cmp.ratio_of_medians(base, other, resamples=20_000, iid=True)
    b = np.median(rng.choice(base, size=(20_000, base.size)), axis=1)
    o = np.median(rng.choice(other, size=(20_000, other.size)), axis=1)
    low, high = np.percentile(o / b, [2.5, 97.5])
    assert ci.low == pytest.approx(low, rel=0.01) and ci.high == pytest.approx(high, rel=0.01)


def test_interval_matches_a_brute_force_bootstrap_at_the_effective_sizes() -> None:
    """Each run is resampled with n / tau draws (rounded), not n."""
    rng = np.random.default_rng(6)
    base = 20.0 * np.exp(0.4 * ar1(rng, 600, 0.8))
    other = 21.0 * np.exp(0.4 * ar1(rng, 400, 0.5))
    sizes = stats.effective_resample_size(base), stats.effective_resample_size(other)
    assert sizes[0] < 200 and sizes[1] < 350  # both below n: tau > 1
    ci = cmp.ratio_of_medians(base, other, resamples=20_000)
    b = np.median(rng.choice(base, size=(20_000, sizes[0])), axis=1)
    o = np.median(rng.choice(other, size=(20_000, sizes[1])), axis=1)
    low, high = np.percentile(o / b, [2.5, 97.5])
    assert ci.low == pytest.approx(low, rel=0.01) and ci.high == pytest.approx(high, rel=0.01)
    wide, narrow = ci, cmp.ratio_of_medians(base, other, resamples=20_000, iid=True)
    assert wide.low < narrow.low and narrow.high < wide.high


def test_interval_covers_the_true_ratio_about_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(17)
    hits = 0
    trials = 200
    for seed in range(trials):
        base, other = rng.exponential(1.0, 301), rng.exponential(1.2, 301)
        ci = cmp.ratio_of_medians(base, other, resamples=1000, seed=seed)
        hits += ci.low <= 1.2 <= ci.high
    assert 0.88 <= hits / trials <= 0.99


def ar1(rng: np.random.Generator, n: int, phi: float) -> np.ndarray:
    """A stationary Gaussian AR(1) series of unit variance."""
    e = rng.normal(0.0, math.sqrt(1.0 - phi * phi), n)
    e[0] /= math.sqrt(1.0 - phi * phi)
    return lfilter([1.0], [1.0, -phi], e)


def test_interval_covers_the_true_ratio_of_autocorrelated_runs() -> None:
    """Two runs of AR(1) samples (phi = 0.9, n = 2000 each, 5 % noise): the
    iid interval is too narrow by about sqrt(13); resampling each run at its
    effective size covers the true ratio about 95 % of the time."""
    rng = np.random.default_rng(31)
    trials, n = 200, 2000
    hits = hits_iid = 0
    for seed in range(trials):
        base = 100.0 * (1 + 0.05 * ar1(rng, n, 0.9))
        other = 110.0 * (1 + 0.05 * ar1(rng, n, 0.9))
        ci = cmp.ratio_of_medians(base, other, seed=seed)
        hits += ci.low <= 1.1 <= ci.high
        iid = cmp.ratio_of_medians(base, other, seed=seed, iid=True)
        hits_iid += iid.low <= 1.1 <= iid.high
    print(f"\nAR(1) phi=0.9 n={n}: coverage of the 95 % CI of the ratio of medians over {trials} trials: "
          f"effective-size {hits / trials:.3f}, iid bootstrap {hits_iid / trials:.3f}")  # fmt: skip
    assert hits / trials >= 0.90
    assert hits_iid / trials < 0.70


def _stored(x: np.ndarray) -> cmp.Instance:
    """An instance as a stored result of one repetition holds it: its median and its interval."""
    median = float(np.median(x))
    return cmp.Instance("b", {}, "ns", median, x, ci=median_ci(x, median=median))


@pytest.mark.parametrize(("phi", "n", "true"), [(0.9, 2000, 1.1), (0.0, 301, 1.0)])
def test_interval_from_the_stored_intervals_covers_the_true_ratio(phi: float, n: int, true: float) -> None:
    """compare --by's cells (ratio_from_intervals, two results of one repetition): the two stored intervals
    combined on the log scale cover the true ratio about 95 % of the time, for autocorrelated and independent
    samples, and agree with the bootstrap of the ratio (compare RUN RUN) on nearly every verdict."""
    rng = np.random.default_rng(31)
    trials, hits, agree, widths = 200, 0, 0, []
    for seed in range(trials):
        base = 100.0 * (1 + 0.05 * ar1(rng, n, phi))
        other = true * 100.0 * (1 + 0.05 * ar1(rng, n, phi))
        ci = cmp.ratio_from_intervals(_stored(base), _stored(other))
        assert ci is not None
        hits += ci.low <= true <= ci.high
        boot = cmp.ratio_of_medians(base, other, seed=seed)
        agree += cmp.is_significant(ci) == cmp.is_significant(boot)
        widths.append(math.log(ci.high / ci.low) / math.log(boot.high / boot.low))
    print(f"\nphi={phi} n={n}: stored-interval coverage {hits / trials:.3f}, verdicts as the bootstrap's "
          f"{agree / trials:.3f}, width / bootstrap's {np.median(widths):.3f}")  # fmt: skip
    assert 0.90 <= hits / trials <= 0.99
    assert agree / trials >= 0.95
    assert 0.8 < float(np.median(widths)) < 1.2


def test_interval_from_the_stored_intervals_is_the_repetitions_interval_when_a_side_has_them() -> None:
    rng = np.random.default_rng(3)
    base, other = _stored(rng.normal(100, 2, 500)), _stored(rng.normal(103, 2, 500))
    reps = cmp.Instance("b", {}, "ns", other.median, other.samples, uncertainty=Uncertainty(0.01, 2.0, "repetitions"),
                        ci=other.ci)
    assert cmp.ratio_from_intervals(base, reps) == cmp.ratio_from_repetitions(base, reps)
    assert cmp.ratio_from_repetitions(base, other) is None  # neither has repetitions: compare RUN RUN bootstraps
    got = cmp.ratio_from_intervals(base, other)
    assert got is not None and got.ratio == pytest.approx(other.median / base.median, rel=1e-15)
    no_ci = cmp.Instance("b", {}, "ns", other.median, other.samples)
    zero = cmp.Instance("b", {}, "count", 0.0, np.zeros(5), ci=(0.0, 0.0))
    assert cmp.ratio_from_intervals(base, no_ci) is None and cmp.ratio_from_intervals(zero, other) is None


def test_a_hundred_thousand_samples_are_fast_and_exact() -> None:
    rng = np.random.default_rng(1)
    base, other = rng.normal(50, 2, 100_000), rng.normal(50.5, 2, 100_000)
    ci = cmp.ratio_of_medians(base, other)
    assert ci.low < 1.01 < ci.high
    assert not cmp.is_significant(ci)  # the interval excludes 1, but 1 % is within the noise threshold
    assert ci.low > 1.0


def test_significance_needs_both_the_interval_and_the_threshold() -> None:
    assert cmp.is_significant(cmp.RatioCI(1.10, 1.08, 1.12))
    assert not cmp.is_significant(cmp.RatioCI(1.03, 1.02, 1.04))  # real but within the noise threshold
    assert not cmp.is_significant(cmp.RatioCI(1.20, 0.95, 1.50))  # large but the interval includes 1
    assert cmp.is_significant(cmp.RatioCI(0.80, 0.75, 0.85))
    assert cmp.is_significant(cmp.RatioCI(1.03, 1.02, 1.04), threshold=0.02)
    assert not cmp.is_significant(cmp.RatioCI(1.10, math.nan, math.nan))


def test_zero_or_negative_baseline_gives_no_ratio() -> None:
    ci = cmp.ratio_of_medians([0.0, 0.0, 0.0], [1.0, 2.0, 3.0])
    assert math.isnan(ci.ratio) and not cmp.is_significant(ci)


def _comparison(unit: str, ratio: float, significant: bool = True) -> cmp.Comparison:
    return cmp.Comparison("x.y", {}, unit, 2, 1, 100.0, 100.0 * ratio, ratio, ratio * 0.99, ratio * 1.01, significant)


def test_direction_depends_on_the_unit() -> None:
    assert _comparison("ns", 1.2).verdict == cmp.SLOWER
    assert _comparison("ns", 0.8).verdict == cmp.FASTER
    assert _comparison("bytes_per_s", 1.2).verdict == cmp.FASTER  # more bandwidth is better
    assert _comparison("bytes_per_s", 0.8).verdict == cmp.SLOWER
    assert _comparison("bytes_per_s", 0.8).worse == pytest.approx(0.2)
    assert _comparison("ns", 1.5, significant=False).verdict == cmp.SAME
    found = cmp.regressions_above([_comparison("ns", 1.2), _comparison("bytes_per_s", 0.7), _comparison("ns", 0.5)], 0.25)
    assert [c.unit for c in found] == ["bytes_per_s"]


def test_sorted_worst_first() -> None:
    cs = [_comparison("ns", 0.9), _comparison("ns", 1.3), _comparison("bytes_per_s", 0.5), _comparison("ns", 1.0)]
    assert [round(c.worse, 2) for c in cmp.sort_by_change(cs)] == [0.5, 0.3, 0.0, -0.1]


# --- synthetic runs: the significance rule end to end ------------------------------

# Realistic noise: lognormal bodies with 1-8 % spread, 1 % slow outliers, 200 to
# 20 000 samples (osmeter's budgets give at least 30; most give hundreds).
BENCHES = [
    ("syscall.null", {}, "ns", 100.0, 2000, 0.03),
    ("syscall.getuid", {}, "ns", 90.0, 1500, 0.05),
    ("cpu.call", {"args": 0}, "ns", 1.5, 5000, 0.02),
    ("cpu.call", {"args": 7}, "ns", 3.0, 5000, 0.02),
    ("task.fork", {"touched_mib": 1}, "ns", 90_000.0, 200, 0.08),
    ("ctxsw.pipe", {"placement": "same_cpu"}, "ns", 2_500.0, 800, 0.06),
    ("mem.bandwidth_read", {"size": 1 << 26}, "bytes_per_s", 1.2e10, 300, 0.04),
    ("file.read", {"size": 4096}, "ns", 820.0, 1000, 0.03),
    ("ipc.unix_send", {"size": 96000}, "bytes_per_s", 1.9e9, 400, 0.05),
    ("syscall.stat", {"path": ""}, "ns", 500.0, 20_000, 0.01),
]


def _specs(rng: np.random.Generator, inject: int | None = None, factor: float = 1.10) -> list:
    specs = []
    for i, (bench, params, unit, median, n, cv) in enumerate(BENCHES):
        scale = factor if i == inject else 1.0
        specs.append((bench, params, unit, noisy(rng, median * scale, n, cv)))
    return specs


def _compare(store_path: Path, a: int, b: int, threshold: float = cmp.DEFAULT_THRESHOLD) -> list[cmp.Comparison]:
    store = open_store(str(store_path), create=False)
    try:
        return compare_runs(store, resolve_runs(store, [str(a), str(b)], None), threshold).comparisons
    finally:
        store.close()


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_an_injected_ten_percent_change_is_flagged_and_nothing_else(store_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    target = (seed * 3) % len(BENCHES)  # a different benchmark for each seed
    a = add_run(store_path, _specs(rng), label="before")
    b = add_run(store_path, _specs(rng, inject=target), label="after")
    comparisons = _compare(store_path, a, b)
    assert len(comparisons) == len(BENCHES)
    flagged = [c for c in comparisons if c.significant]
    assert [(c.bench, dict(c.params)) for c in flagged] == [(BENCHES[target][0], BENCHES[target][1])]
    (c,) = flagged
    assert c.ratio == pytest.approx(1.10, abs=0.02) and c.ci_low > 1.0
    # +10 % of a rate is faster, of a time slower
    assert c.verdict == (cmp.FASTER if c.unit == "bytes_per_s" else cmp.SLOWER)


@pytest.mark.parametrize("seed", [11, 12, 13, 14, 15])
def test_two_runs_from_one_distribution_flag_nothing(store_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = add_run(store_path, _specs(rng))
    b = add_run(store_path, _specs(rng))
    comparisons = _compare(store_path, a, b)
    assert len(comparisons) == len(BENCHES)
    assert [c.bench for c in comparisons if c.significant] == []


def test_a_large_change_within_a_wide_interval_is_not_significant(store_path: Path) -> None:
    rng = np.random.default_rng(99)
    base = rng.lognormal(np.log(50_000), 0.4, 10)
    a = add_run(store_path, [("rt.wakeup", {}, "ns", base)])
    b = add_run(store_path, [("rt.wakeup", {}, "ns", base * 1.15)])
    (c,) = _compare(store_path, a, b)
    assert c.ratio == pytest.approx(1.15) and c.ci_low < 1.0 < c.ci_high
    assert not c.significant and c.verdict == cmp.SAME


def test_false_alarms_on_very_noisy_results_stay_near_the_confidence_level() -> None:
    """Where the interval is as wide as the threshold, the threshold cannot help:
    then the 95 % interval alone keeps false alarms to about 5 % (a few seeds
    are expected to alarm; that is what 95 % means, and why docs/compare.md
    says to repeat runs before believing a change in a noisy benchmark)."""
    alarms = 0
    trials = 300
    for seed in range(trials):
        rng = np.random.default_rng(seed)
        a, b = noisy(rng, 5e4, 12, cv=0.4), noisy(rng, 5e4, 12, cv=0.4)
        alarms += cmp.is_significant(cmp.ratio_of_medians(a, b, resamples=500))
    assert alarms / trials <= 0.07


def test_the_threshold_is_a_parameter(store_path: Path) -> None:
    rng = np.random.default_rng(7)
    base = noisy(rng, 100.0, 20_000, cv=0.01)
    a = add_run(store_path, [("syscall.null", {}, "ns", base)])
    b = add_run(store_path, [("syscall.null", {}, "ns", base * 1.03)])
    assert not _compare(store_path, a, b)[0].significant  # 3 % < 5 %
    assert _compare(store_path, a, b, threshold=0.02)[0].significant


def test_run_differences_list_what_changed(store_path: Path) -> None:
    rng = np.random.default_rng(1)
    spec = [("syscall.null", {}, "ns", noisy(rng, 100.0, 100))]
    other = dict(MACHINE, kernel_release="6.9.0-synth", mitigations={"spectre_v2": "Vulnerable", "meltdown": "Not affected"})
    a = add_run(store_path, spec)
    b = add_run(store_path, spec, machine=other, suite="quick")
    store = open_store(str(store_path), create=False)
    try:
        runs = [store.run(str(a)), store.run(str(b))]
    finally:
        store.close()
    diffs = {d.key: d.values for d in dif.run_differences(runs)}
    assert diffs["kernel_release"] == ("6.8.0-synth", "6.9.0-synth")
    assert diffs["mitigations.spectre_v2"] == ("Mitigation: Retpolines", "Vulnerable")
    assert diffs["suite"] == ("standard", "quick")
    assert "mitigations.meltdown" not in diffs and "hostname" not in diffs


def test_long_lists_show_what_was_added_and_removed() -> None:
    from osmeter.model import RunInfo

    def run(i: int, flags: list[str]) -> RunInfo:
        return RunInfo(i, None, "t", None, "complete", None, "run", "0.1.0", "0.1.0", None, [], {}, {"cpu_flags": flags}, {})

    flags = [f"f{i}" for i in range(20)]
    (d,) = dif.run_differences([run(1, flags), run(2, flags[1:] + ["avx512f"])])
    assert d.key == "cpu_flags" and d.values == ("20 items", "+avx512f -f0")
