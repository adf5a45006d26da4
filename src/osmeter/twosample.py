"""Two-sample tests of the spread and the tail: did the variance or the
maximum change between two runs? Pure: sequences in, numbers out (tested
against scipy in tests/unit/test_compare_spread.py; the reasoning is in
docs/compare.md, "Maximum and variance").

* brown_forsythe: Levene's test about the medians, exactly
  scipy.stats.levene(a, b, center='median') for independent samples, with
  effective sample sizes n / tau (dependent_brown_forsythe) otherwise;
* integrated_tau: the autocorrelation time of a series' mean (Geyer's
  initial monotone sequence, as stats.median_tau for the median);
* exceedance_test: Rosenbaum's count of one sample above the other's
  maximum against its exact hypergeometric null (exceedance_p), declustered
  by the autocorrelation time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import numpy.typing as npt

from .quantiles import t_cdf
from .stats import TAU_MAX_LAG, FloatArray, as_samples, geyer_tau

@dataclass(frozen=True)
class BrownForsythe:
    statistic: float  # W, the ANOVA F of the absolute deviations from each sample's median (NaN: undefined)
    p_value: float  # P(F(1, df) >= W): two-sided, for either sample's spread being larger
    df: float  # denominator degrees of freedom: n_a + n_b - 2, or the effective sizes' sum - 2
    taus: tuple[float, float]  # autocorrelation times used for the effective sizes (1, 1: independent)


def brown_forsythe(
    a: Sequence[float] | FloatArray,
    b: Sequence[float] | FloatArray,
    taus: tuple[float, float] = (1.0, 1.0),
) -> BrownForsythe:
    """The Brown-Forsythe test that two samples have the same spread.

    z = |x - median(x)| for each sample; W is the one-way ANOVA F of the z of
    the two samples, W = (z_a - z_b)^2 / (s_p^2 (1/m_a + 1/m_b)) with z_a,
    z_b the means of z, s_p^2 = (SS_a + SS_b) / (n_a + n_b - 2) their pooled
    variance, and m = n (independent samples: exactly
    scipy.stats.levene(a, b, center='median'), W ~ F(1, n_a + n_b - 2)).
    `taus` replaces m by the effective sizes n / tau (a sample whose
    disturbances come in bursts has mean deviations worth fewer
    independent ones), with df = m_a + m_b - 2; the p-value is then the
    t distribution's two-sided tail at sqrt(W), which is the F(1, df)
    tail. Undefined (NaN) below two samples each, or when every z is
    zero (constant samples)."""
    x, y = as_samples(a), as_samples(b)
    tau_a, tau_b = (max(1.0, float(t)) for t in taus)
    if x.size < 2 or y.size < 2:
        return BrownForsythe(math.nan, math.nan, math.nan, (tau_a, tau_b))
    za, zb = np.abs(x - np.median(x)), np.abs(y - np.median(y))
    ss = float(np.sum((za - za.mean()) ** 2) + np.sum((zb - zb.mean()) ** 2))
    pooled = ss / (x.size + y.size - 2)
    ma, mb = x.size / tau_a, y.size / tau_b
    df = max(1.0, ma + mb - 2.0)
    diff = float(za.mean() - zb.mean())
    if not pooled > 0:
        return BrownForsythe(math.nan, math.nan, df, (tau_a, tau_b))
    w = diff * diff / (pooled * (1.0 / ma + 1.0 / mb))
    p = 2.0 * t_cdf(-math.sqrt(w), df)
    return BrownForsythe(w, min(1.0, p), df, (tau_a, tau_b))


def integrated_tau(samples: Sequence[float] | FloatArray, max_lag: int = TAU_MAX_LAG) -> float:
    """Integrated autocorrelation time of a series' mean: Var(mean of n) is
    tau times Var(x) / n. The same estimator as median_tau, applied to the
    values themselves: rho_k = c_k / c_0 from the autocovariances about the
    mean (c_k = sum_t (x_t - m)(x_{t+k} - m) / n, by FFT), Geyer's initial
    monotone sequence of pair sums up to max_lag, the same small-window
    correction, clamped to [1, n]. 1 for fewer than 2 samples or a constant
    series."""
    x = as_samples(samples)
    n = x.size
    if n < 2:
        return 1.0
    d = x - x.mean()
    f = np.fft.rfft(d, 2 * n)
    acov = np.fft.irfft(f * np.conj(f), 2 * n)[:n]
    if not acov[0] > 0:
        return 1.0
    rho = acov / acov[0]
    return geyer_tau(lambda k: float(rho[k]), n, min(n - 1, max_lag))


def deviation_tau(samples: Sequence[float] | FloatArray) -> float:
    """The autocorrelation time of a sample's absolute deviations from its
    median (integrated_tau), the series whose mean brown_forsythe compares:
    how much disturbed stretches of the run (bursts of large deviations)
    make the deviations' mean less certain. 1 for independent samples."""
    x = as_samples(samples)
    return integrated_tau(np.abs(x - np.median(x)))


def dependent_brown_forsythe(a: Sequence[float] | FloatArray, b: Sequence[float] | FloatArray) -> BrownForsythe:
    """brown_forsythe at each sample's effective size n / deviation_tau."""
    return brown_forsythe(a, b, (deviation_tau(a), deviation_tau(b)))


def exceedance_p(k: int, n_over: int, n_ref: int) -> float:
    """P(K >= k) for K the number of the n_over samples of one group that lie
    above the largest of the n_ref samples of the other, when all
    n_over + n_ref are exchangeable (the same continuous distribution,
    independent): the k largest of all are then a uniformly random k-subset,
    so P(K >= k) = C(n_over, k) / C(n_over + n_ref, k)
    = prod_{i<k} (n_over - i) / (n_over + n_ref - i), the hypergeometric
    probability that k draws out of n_over + n_ref all hit the n_over."""
    if k <= 0:
        return 1.0
    if k > n_over or n_ref < 1:
        return 0.0 if k > n_over else 1.0
    logp = sum(math.log(n_over - i) - math.log(n_over + n_ref - i) for i in range(k))
    return math.exp(logp)


def clusters(flags: npt.NDArray[np.bool_], gap: int = 1) -> int:
    """Clusters of True values: two True values less than `gap` + 1 places
    apart (at most gap - 1 False values between them) share a cluster, so
    gap 1 counts runs of consecutive True values (runs declustering with run
    length `gap`)."""
    idx = np.flatnonzero(flags)
    if idx.size == 0:
        return 0
    return 1 + int(np.count_nonzero(np.diff(idx) > max(1, int(gap))))


@dataclass(frozen=True)
class Exceedance:
    above: int  # samples of `other` above the baseline's maximum
    below: int  # samples of the baseline above other's maximum (one of above/below is 0)
    counted: int  # what the test counts: clusters of exceedances (declustered), or above/below
    gap: int  # the declustering run length (1: consecutive exceedances are one cluster; 0: not declustered)
    p_value: float  # two-sided: 2 x P(K >= counted), at most 1; 1 when the maxima are equal


def exceedance_test(
    baseline: Sequence[float] | FloatArray, other: Sequence[float] | FloatArray, decluster: bool = True
) -> Exceedance:
    """Rosenbaum's exceedance test of the upper tail: did `other`'s maximum
    rise (or fall) beyond what the number of samples explains?

    Count the samples of `other` above the baseline's maximum (or, when
    `other`'s maximum is the lower one, the baseline's samples above
    `other`'s maximum) and compare the count with its exact null
    distribution (exceedance_p). Two-sided: twice the one-sided tail of the
    direction observed. A single larger outlier is never significant (with
    equal sizes P(K >= 1) = 1/2); k of them are, once 2 x P(K >= k) < 5 %
    (k >= 6 for two samples of 1 000).

    `decluster` counts clusters instead of samples (runs declustering): the
    exceedances of the sample that exceeds, in sample order, belong to one
    cluster when they are less than gap = tau (rounded) apart, tau that
    sample's integrated_tau. A disturbed stretch of a run puts several
    samples close together above any reference; counted one by one they
    would make one burst significant. Under independence tau is about 1,
    and counting clusters can only lower the count, so the test stays
    valid there (conservative)."""
    a, b = as_samples(baseline), as_samples(other)
    max_a, max_b = float(a.max()), float(b.max())
    over_b, over_a = b > max_a, a > max_b
    above, below = int(np.count_nonzero(over_b)), int(np.count_nonzero(over_a))
    if not above and not below:
        return Exceedance(0, 0, 0, 0, 1.0)
    over, x, n_ref = (over_b, b, a.size) if above else (over_a, a, b.size)
    gap = max(1, math.floor(integrated_tau(x) + 0.5)) if decluster else 0
    counted = clusters(over, gap) if decluster else int(np.count_nonzero(over))
    p = 2.0 * exceedance_p(counted, x.size, n_ref)
    return Exceedance(above, below, counted, gap, min(1.0, p))
