"""The batched statistics compare --by uses (stats.median_taus, stats.order_uniforms,
compare.ratios_of_medians, compare.compare_instances) give the same floats, bit for bit,
as the one-at-a-time definitions they stand for; the reference median_tau below is the
definition written out as it was before the batch existed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from osmeter import compare as cmp
from osmeter import stats as st
from osmeter.repeats import Uncertainty


def reference_median_tau(x: np.ndarray, median: float | None = None, max_lag: int = st.TAU_MAX_LAG) -> float:
    n = x.size
    if n < 2:
        return 1.0
    med = float(np.median(x)) if median is None else float(median)
    ind = x <= med
    total = int(np.count_nonzero(ind))
    if total in (0, n):
        return 1.0
    p = total / n
    top = min(n - 1, max_lag)
    head = np.concatenate(([0], np.cumsum(ind[:top], dtype=np.int64)))
    tail = np.concatenate(([0], np.cumsum(ind[::-1][:top], dtype=np.int64)))

    def lag_sum(k: int) -> float:
        both = total if k == 0 else int(np.count_nonzero(ind[:-k] & ind[k:]))
        return both - p * int(2 * total - head[k] - tail[k]) + (n - k) * p * p

    s0 = lag_sum(0)
    if not s0 > 0:
        return 1.0
    return st.geyer_tau(lambda k: lag_sum(k) / s0, n, top)


def series(rng: np.random.Generator, count: int) -> list[np.ndarray]:
    """Lengths 1..600, iid, strongly autocorrelated (needing more lags than a batch counts), ties, constants."""
    out = []
    for i in range(count):
        n = int(rng.integers(1, 600))
        kind = i % 5
        if kind == 0:
            x = rng.lognormal(5, 0.2, n)
        elif kind == 1:  # an AR(1) walk: tau in the tens, lags beyond TAU_BATCH_LAGS
            x = np.empty(n)
            level = 0.0
            for t in range(n):
                level = 0.97 * level + rng.normal()
                x[t] = 100 + level
        elif kind == 2:
            x = np.round(rng.normal(50, 2, n))  # ties at the median
        elif kind == 3:
            x = np.full(n, 7.0)
        else:
            x = np.repeat(rng.normal(10, 1, max(1, n // 40)), 40)[:n]  # bursts
        out.append(x)
    return out


def test_median_taus_equal_the_definition_one_by_one() -> None:
    rng = np.random.default_rng(5)
    xs = series(rng, 60)
    medians = [None if i % 3 == 0 else float(np.median(x)) for i, x in enumerate(xs)]
    got = st.median_taus(xs, medians)
    want = [reference_median_tau(x, m) for x, m in zip(xs, medians)]
    assert got == want
    assert any(t > 2 * st.TAU_BATCH_LAGS for t in want)  # some needed lags beyond the batch's
    assert [st.median_tau(x, m) for x, m in zip(xs, medians)] == want
    assert st.median_taus(xs[:5], medians[:5], max_lag=3) == [reference_median_tau(x, m, 3)
                                                              for x, m in zip(xs[:5], medians[:5])]


def test_median_taus_bad_input() -> None:
    with pytest.raises(ValueError, match="one median per series"):
        st.median_taus([np.ones(3)], [])
    with pytest.raises(ValueError, match="finite"):
        st.median_taus([np.array([1.0, math.nan])], [None])
    assert st.median_taus([], []) == []


def test_seeded_draws_are_the_generators_draws_and_read_only() -> None:
    x = np.random.default_rng(3).lognormal(3, 0.5, 301)
    for size in (1, 2, 7, 150, 301):
        for seed in (st.BOOTSTRAP_SEED, (st.BOOTSTRAP_SEED, 2)):
            fresh = np.random.default_rng(seed if isinstance(seed, int) else list(seed))
            want = st.resampled_medians(x, 500, fresh, size)
            assert np.array_equal(st.resampled_medians(x, 500, seed, size), want)
            assert np.array_equal(st.resampled_medians(x, 500, seed, size), want)  # kept: the same again
    u, v = st.order_uniforms(7, 100, 10)
    assert v is not None and not u.flags.writeable and not v.flags.writeable
    assert st.order_uniforms(7, 100, 11)[1] is None  # an odd size has one middle


def test_ratios_of_medians_equal_ratio_of_medians_one_by_one() -> None:
    rng = np.random.default_rng(9)
    base = rng.lognormal(4, 0.3, 257)
    base_median = float(np.median(base))
    xs = series(rng, 40)
    others = [(x, float(np.median(x))) for x in xs]
    got = cmp.ratios_of_medians(base, others, base_median=base_median)
    want = [cmp.ratio_of_medians(base, x, medians=(base_median, m)) for x, m in others]
    assert got == want
    assert any(not (w.low <= w.ratio <= w.high) or w.low < w.high for w in want)  # intervals, not points


def test_ratios_of_medians_edge_cases() -> None:
    x = np.arange(1.0, 50.0)
    assert cmp.ratios_of_medians(x, [], base_median=25.0) == []
    nan = cmp.ratios_of_medians(-x, [(x, 25.0)], base_median=-25.0)  # a ratio to a negative median means nothing
    assert len(nan) == 1 and all(math.isnan(v) for v in (nan[0].ratio, nan[0].low, nan[0].high))
    zero_base = np.concatenate([np.zeros(30), np.ones(31)])  # some resampled medians are 0
    got = cmp.ratios_of_medians(zero_base, [(x, 25.0)], base_median=1.0)
    assert got == [cmp.ratio_of_medians(zero_base, x, medians=(1.0, 25.0))]
    assert got[0].ratio == 25.0 and math.isnan(got[0].low)


def test_compare_instances_equal_compare_instance() -> None:
    rng = np.random.default_rng(2)

    def inst(scale: float, reps: bool, flags: tuple[str, ...] = ()) -> cmp.Instance:
        x = rng.lognormal(math.log(scale), 0.1, 300)
        unc = Uncertainty(0.01, 2.0, "repetitions") if reps else None
        med = float(np.median(x))
        return cmp.Instance("syscall.null", {}, "ns", med, x, uncertainty=unc, ci=(0.99 * med, 1.01 * med),
                            flags=flags)

    base = inst(100, False)  # one repetition: its stored CI stands in when the other side has repetitions
    others = [(inst(100 * (1 + i / 20), i % 3 == 0, ("unstable",) if i == 4 else ()), 10 + i) for i in range(9)]
    got = cmp.compare_instances(base, others, 1, threshold=0.05)
    want = [cmp.compare_instance(base, o, run_id, 1, threshold=0.05) for o, run_id in others]
    assert got == want
    assert {c.method for c in got} == {"bootstrap", "repetitions"} and got[4].caveat == "unstable"
    assert any(c.significant for c in got) and not all(c.significant for c in got)
