"""Repetitions (osmeter.repeats) and the t quantiles they use, checked
against scipy; compare's interval from repetitions, including its coverage
when the repetitions carry a between-process offset that no single
process's samples show."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as ss

from osmeter import compare as cmp
from osmeter import quantiles
from osmeter.repeats import (
    UNSTABLE,
    UNSTABLE_SPREAD,
    Repetition,
    Uncertainty,
    interval,
    log_se_of_ci,
    pool,
    repetition_of,
    spread,
    uncertainty,
)


@pytest.mark.parametrize("df", [1, 1.5, 2, 3, 4.7, 10, 30, 1e3, 1e6, 1e9, 1e15, 1e300, math.inf])
@pytest.mark.parametrize("p", [0.5, 0.6, 0.9, 0.975, 0.995, 0.025, 0.001])
def test_t_quantile_matches_scipy(p: float, df: float) -> None:
    want = ss.norm.ppf(p) if math.isinf(df) else ss.t.ppf(p, df)
    # Above T_NORMAL_DF the normal quantile stands in: off by about z^3 / (4 df).
    tol = 1e-9 if df <= quantiles.T_NORMAL_DF else 1e-6
    assert quantiles.t_quantile(p, df) == pytest.approx(want, rel=tol, abs=tol)


def test_t_cdf_matches_scipy() -> None:
    for df in (1, 2.5, 7, 50, 1e6, 1e8):
        for t in (-5.0, -1.0, 0.0, 0.3, 2.0, 12.0):
            tol = 1e-12 if df <= 1e3 else 1e-9 if df <= quantiles.T_NORMAL_DF else 1e-7
            assert quantiles.t_cdf(t, df) == pytest.approx(ss.t.cdf(t, df), abs=tol)


def test_t_quantile_refuses_bad_input() -> None:
    for p, df in ((0.0, 3), (1.0, 3), (0.5, 0), (0.5, -1), (float("nan"), 3)):
        with pytest.raises(ValueError):
            quantiles.t_quantile(p, df)


def rep(median: float, half_width: float = 0.0) -> Repetition:
    return Repetition("ok", 100, median, median * (1 - half_width), median * (1 + half_width), 1, "rse", ())


def test_spread_and_unstable() -> None:
    assert math.isnan(spread([1.0]))
    assert math.isnan(spread([1.0, -1.0]))
    assert spread([100.0, 104.0, 101.0]) == pytest.approx(0.04)
    x = [np.full(50, 100.0), np.full(50, 104.0), np.full(50, 101.0)]
    stable = pool(x, [rep(100), rep(104), rep(101)])
    assert stable.spread == pytest.approx(0.04) and UNSTABLE not in stable.flags
    y = [np.full(50, 100.0), np.full(50, 107.0)]
    shaky = pool(y, [rep(100), rep(107)])
    assert shaky.spread > UNSTABLE_SPREAD and UNSTABLE in shaky.flags


def test_uncertainty_from_the_spread_of_the_medians() -> None:
    reps = [rep(100.0, 0.0001), rep(102.0, 0.0001), rep(104.0, 0.0001)]
    u = uncertainty(reps)
    logs = np.log([100.0, 102.0, 104.0])
    assert u is not None and u.source == "repetitions" and u.df == 2
    assert u.log_se == pytest.approx(np.std(logs, ddof=1) / math.sqrt(3))
    low, high = interval(102.0, u)
    q = ss.t.ppf(0.975, 2)
    assert low == pytest.approx(102.0 * math.exp(-q * u.log_se))
    assert high == pytest.approx(102.0 * math.exp(q * u.log_se))


def test_lucky_agreement_does_not_make_the_interval_narrower_than_the_samples_allow() -> None:
    """Three repetitions that agree exactly: the interval falls back on the
    repetitions' own intervals (normal quantile), not on a zero spread."""
    reps = [rep(100.0, 0.02)] * 3
    u = uncertainty(reps)
    assert u is not None and u.source == "within" and math.isinf(u.df)
    one = log_se_of_ci(100.0, 98.0, 102.0)
    assert u.log_se == pytest.approx(math.sqrt(3 * one**2) / 3)
    assert u.log_se > 0


def test_one_repetition_gives_no_repetition_uncertainty() -> None:
    assert uncertainty([rep(100.0)]) is None
    assert uncertainty([rep(100.0), Repetition("error", reason="x")]) is None


def test_pool_uses_every_sample_and_flags_a_failed_repetition() -> None:
    rng = np.random.default_rng(1)
    parts = [rng.normal(100, 1, 200), rng.normal(101, 1, 300)]
    reps = [repetition_of(p, batch=1, stop_reason="rse", flags=("precision-unmet",) if i else (), elapsed_s=1.0)
            for i, p in enumerate(parts)]
    p = pool(parts, [*reps, Repetition("skip", reason="gone")])
    assert p.summary.n == 500
    assert p.summary.median == pytest.approx(float(np.median(np.concatenate(parts))))
    assert "precision-unmet" in p.flags and "repetition-failed" in p.flags
    assert p.summary.ci_low < p.summary.median < p.summary.ci_high


def test_repetition_round_trips_through_a_dict() -> None:
    r = Repetition("ok", 12, 3.5, 3.4, 3.6, 8, "max_time", ("precision-unmet",), 0.25)
    assert Repetition.from_dict(r.to_dict()) == r
    nan = Repetition("error", reason="boom")
    back = Repetition.from_dict(nan.to_dict())
    assert back.status == "error" and back.reason == "boom" and math.isnan(back.median)


def instance(median: float, u: Uncertainty | None, ci: tuple[float, float] | None = None) -> cmp.Instance:
    return cmp.Instance("x.y", {}, "ns", median, np.array([median]), uncertainty=u, ci=ci)


def test_ratio_from_repetitions_welch() -> None:
    a = Uncertainty(0.01, 2.0, "repetitions")
    b = Uncertainty(0.02, 4.0, "repetitions")
    ci = cmp.ratio_from_repetitions(instance(100.0, a), instance(110.0, b))
    var = 0.01**2 + 0.02**2
    df = var**2 / (0.01**4 / 2 + 0.02**4 / 4)
    q = ss.t.ppf(0.975, df) * math.sqrt(var)
    assert ci is not None
    assert ci.ratio == pytest.approx(1.1)
    assert ci.low == pytest.approx(1.1 * math.exp(-q)) and ci.high == pytest.approx(1.1 * math.exp(q))


def test_ratio_from_repetitions_with_one_side_of_one_repetition_and_tiny_errors() -> None:
    a = Uncertainty(1e-12, 2.0, "repetitions")  # repetitions that agree to 1e-12
    ci = cmp.ratio_from_repetitions(instance(100.0, a), instance(101.0, None, ci=(100.9, 101.1)))
    assert ci is not None and ci.low < 1.01 < ci.high and math.isfinite(ci.high)
    both_tiny = cmp.ratio_from_repetitions(instance(100.0, a), instance(100.0, Uncertainty(0.0, 2.0, "repetitions")))
    assert both_tiny is not None and math.isfinite(both_tiny.low)
    # Neither side has repetitions: the bootstrap decides (None here).
    assert cmp.ratio_from_repetitions(instance(1.0, None, (0.9, 1.1)), instance(1.0, None, (0.9, 1.1))) is None


def _run(rng: np.random.Generator, true: float, reps: int, offset_sd: float) -> tuple[Repetition, ...]:
    """Repetitions whose process carries its own offset (offset_sd, the noise
    between processes) around the true median, each with tight samples."""
    out = []
    for _ in range(reps):
        level = true * math.exp(rng.normal(0, offset_sd))
        samples = level * np.exp(rng.normal(0, 0.002, 400))
        out.append(repetition_of(samples, batch=1, stop_reason="rse", flags=(), elapsed_s=0.1))
    return tuple(out)


@pytest.mark.slow
def test_compare_calls_few_false_alarms_and_finds_a_real_change() -> None:
    """Runs of 3 repetitions with a 2 % process-to-process offset: two runs of
    the same machine are rarely significant (interval + 5 % threshold) while a
    +10 % change is found nearly always. With one repetition per run and the
    samples' own interval, the same offsets would be called significant far
    more often (the issue's false alarms)."""
    rng = np.random.default_rng(7)
    trials, false, found, naive_false = 300, 0, 0, 0
    for _ in range(trials):
        a, b, c = (_run(rng, 100.0, 3, 0.02), _run(rng, 100.0, 3, 0.02), _run(rng, 110.0, 3, 0.02))

        def inst(reps: tuple[Repetition, ...]) -> cmp.Instance:
            med = float(np.median([r.median for r in reps]))
            return instance(med, uncertainty(reps))

        same = cmp.ratio_from_repetitions(inst(a), inst(b))
        slower = cmp.ratio_from_repetitions(inst(a), inst(c))
        false += cmp.is_significant(same)
        found += cmp.is_significant(slower) and slower.ratio > 1
        one_a, one_b = a[0], b[0]
        naive = cmp.ratio_from_repetitions(
            instance(one_a.median, None, (one_a.ci_low, one_a.ci_high)),
            instance(one_b.median, Uncertainty(log_se_of_ci(one_b.median, one_b.ci_low, one_b.ci_high),
                                               math.inf, "within")),
        )
        naive_false += naive is not None and naive.low > 1 or naive.high < 1
    assert false / trials <= 0.05
    assert found / trials >= 0.8
    assert naive_false / trials > 0.5  # the intervals of one process alone: most pairs "differ"
