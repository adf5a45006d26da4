"""Statistics of one benchmark's raw samples. Pure: sequences in, numbers out.

Formulas (tested against numpy/scipy in tests/unit/test_stats.py; the
reasoning is in docs/statistics.md):

* percentiles: numpy.percentile, linear interpolation (numpy's default);
* std: sample standard deviation (ddof=1); NaN when n == 1;
* cv: std / mean (a fraction; shown as %); NaN when n == 1 or mean == 0;
* trimmed_mean: drop int(0.1 * n) samples from each end, as
  scipy.stats.trim_mean(x, 0.1);
* ci_low, ci_high: 95 % percentile-bootstrap interval of the median,
  BOOTSTRAP_RESAMPLES resamples from a fixed seed, so the same samples give
  the same interval on every machine and every run;
* outliers: samples outside Tukey's fences [q1 - 1.5 IQR, q3 + 1.5 IQR];
* lebench_kbest: LEBench's stable minimum, see lebench_kbest().
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import numpy.typing as npt

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20261122
CI_LEVEL = 0.95
TRIM_FRACTION = 0.1
TUKEY_K = 1.5
KBEST_RUN = 5
KBEST_TOLERANCE = 0.05

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class KBest:
    value: float  # the stable minimum, or the minimum when not stable
    stable: bool  # False: fewer than KBEST_RUN samples, or no stable run found
    reason: str | None  # why not stable, for people


@dataclass(frozen=True)
class Summary:
    n: int
    min: float
    max: float
    mean: float
    median: float
    std: float  # ddof=1; NaN when n == 1
    cv: float  # std / mean, a fraction; NaN when undefined
    trimmed_mean: float  # 10 % cut from each end
    p1: float
    p5: float
    p95: float
    p99: float
    p999: float
    ci_low: float  # 95 % bootstrap CI of the median
    ci_high: float
    outliers: int  # outside Tukey's 1.5 IQR fences
    lebench_kbest: float
    kbest_stable: bool


def as_samples(samples: Sequence[float] | FloatArray) -> FloatArray:
    """A 1-D float64 array of finite values; refuses empty or non-finite input."""
    x = np.asarray(samples, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError("samples must be one-dimensional")
    if x.size == 0:
        raise ValueError("no samples")
    if not np.all(np.isfinite(x)):
        raise ValueError("samples must be finite (drop NaN/inf first)")
    return x


def trimmed_mean(samples: Sequence[float] | FloatArray, fraction: float = TRIM_FRACTION) -> float:
    """Mean after cutting int(fraction * n) values from each end (scipy's trim_mean)."""
    x = np.sort(as_samples(samples))
    cut = int(fraction * x.size)
    return float(np.mean(x[cut : x.size - cut]))


def std(samples: Sequence[float] | FloatArray) -> float:
    """Sample standard deviation (ddof=1); NaN for a single sample."""
    x = as_samples(samples)
    return float(np.std(x, ddof=1)) if x.size > 1 else float("nan")


def coefficient_of_variation(samples: Sequence[float] | FloatArray) -> float:
    """std / mean as a fraction; NaN for a single sample or a zero mean."""
    x = as_samples(samples)
    mean = float(np.mean(x))
    s = std(x)
    return s / mean if mean != 0 and not np.isnan(s) else float("nan")


def bootstrap_median_ci(
    samples: Sequence[float] | FloatArray,
    level: float = CI_LEVEL,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Percentile-bootstrap confidence interval of the median.

    The percentile bootstrap draws `resamples` samples of size n with
    replacement, takes each one's median and returns the (1 - level) / 2 and
    (1 + level) / 2 percentiles of those medians. Drawing n indices per
    resample costs O(n) each (seconds for 10^5 samples), so the median of
    each resample is drawn directly from its exact distribution instead:

    n indices drawn uniformly from 0..n-1 are floor(n * U) for n uniform
    U in (0, 1), and flooring keeps order, so the m-th smallest index is
    floor(n * U_(m)) with U_(m) ~ Beta(m, n - m + 1). For even n the next
    order statistic is U_(m+1) = U_(m) + (1 - U_(m)) * Beta(1, n - m) (the
    smallest of the n - m uniforms above U_(m)). The resampled median is the
    sorted sample at those indices: the same distribution as the textbook
    bootstrap, at O(resamples) cost. The generator is seeded with `seed`, so
    the interval is reproducible on every machine and every run.
    """
    rng = np.random.default_rng(seed)
    medians = resampled_medians(samples, resamples, rng)
    alpha = (1.0 - level) / 2.0
    low, high = np.percentile(medians, [100 * alpha, 100 * (1 - alpha)])
    return float(low), float(high)


def order_statistics(samples: FloatArray, ranks: npt.NDArray[np.int64]) -> FloatArray:
    """``np.sort(samples)[ranks]`` without sorting all of `samples`.

    Bootstrap medians only ever look at ranks near the middle (within a few
    sqrt(n) of it), so partition around the smallest and largest rank asked
    for and sort just that window: O(n) instead of O(n log n) for 10^5
    samples. np.partition puts the values of ranks lo and hi in place with
    everything of rank between them in the slice [lo, hi].
    """
    lo, hi = int(ranks.min()), int(ranks.max())
    if 2 * (hi - lo + 1) >= samples.size:
        return np.sort(samples)[ranks]
    part = np.partition(samples, (lo, hi))
    window = np.sort(part[lo : hi + 1])
    return window[ranks - lo]


def resampled_medians(
    samples: Sequence[float] | FloatArray, resamples: int, rng: np.random.Generator
) -> FloatArray:
    """The medians of `resamples` bootstrap resamples, drawn from their exact
    distribution (see bootstrap_median_ci): O(resamples) draws plus one
    partial sort, whatever the number of samples."""
    x = as_samples(samples)
    n = x.size
    m = (n + 1) // 2  # 1-based rank of the (lower) middle value
    u_low = rng.beta(m, n - m + 1, size=resamples)
    low_idx = np.minimum((u_low * n).astype(np.int64), n - 1)
    if n % 2:
        return order_statistics(x, low_idx)
    u_high = u_low + (1.0 - u_low) * rng.beta(1, n - m, size=resamples)
    high_idx = np.minimum((u_high * n).astype(np.int64), n - 1)
    both = order_statistics(x, np.concatenate([low_idx, high_idx]))
    return (both[:resamples] + both[resamples:]) / 2.0


def tukey_outliers(samples: Sequence[float] | FloatArray, k: float = TUKEY_K) -> int:
    """How many samples lie outside [q1 - k IQR, q3 + k IQR]."""
    x = as_samples(samples)
    q1, q3 = np.percentile(x, [25, 75])
    iqr = q3 - q1
    return int(np.count_nonzero((x < q1 - k * iqr) | (x > q3 + k * iqr)))


def lebench_kbest(
    samples: Sequence[float] | FloatArray,
    run: int = KBEST_RUN,
    tolerance: float = KBEST_TOLERANCE,
) -> KBest:
    """LEBench's "stable minimum".

    Sort the samples ascending and find the first run of `run` consecutive
    values in which each value is within `tolerance` (relative) of its
    predecessor, i.e. ``s[i] - s[i-1] <= tolerance * |s[i-1]|``; return the
    first value of that run. The idea: the very smallest samples can be
    flukes, the first value that several others closely follow is a
    minimum the machine reproduces.

    Edge cases (the value is then the plain minimum and `stable` is False,
    with the reason given):

    * fewer than `run` samples: no run can exist;
    * no such run (samples spread wider than `tolerance` everywhere).

    Zeros: "within 5 % of 0" means equal to 0, so a run starting at 0 needs
    `run` zeros; a single 0 followed by positive values never starts a run.
    Negative values (possible after overhead subtraction) use the absolute
    value of the predecessor, so the rule stays symmetric.
    """
    x = np.sort(as_samples(samples))
    minimum = float(x[0])
    if x.size < run:
        return KBest(minimum, False, f"fewer than {run} samples")
    # close[i]: x[i+1] is within tolerance of x[i] (the 1e-12 absorbs rounding,
    # so a step of exactly 5 % written in decimal still counts as within).
    close = np.diff(x) <= tolerance * np.abs(x[:-1]) * (1 + 1e-12)
    need = run - 1  # a run of `run` values has `run - 1` close steps
    streak = 0
    for i, ok in enumerate(close):
        streak = streak + 1 if ok else 0
        if streak == need:
            return KBest(float(x[i + 1 - need]), True, None)
    return KBest(minimum, False, f"no {run} consecutive sorted samples within {tolerance:.0%} of each other")


def summary(samples: Sequence[float] | FloatArray) -> Summary:
    """Every statistic osmeter reports for one benchmark instance."""
    x = as_samples(samples)
    p1, p5, p50, p95, p99, p999 = np.percentile(x, [1, 5, 50, 95, 99, 99.9])
    ci_low, ci_high = bootstrap_median_ci(x)
    kbest = lebench_kbest(x)
    return Summary(
        n=int(x.size),
        min=float(x.min()),
        max=float(x.max()),
        mean=float(np.mean(x)),
        median=float(p50),
        std=std(x),
        cv=coefficient_of_variation(x),
        trimmed_mean=trimmed_mean(x),
        p1=float(p1),
        p5=float(p5),
        p95=float(p95),
        p99=float(p99),
        p999=float(p999),
        ci_low=ci_low,
        ci_high=ci_high,
        outliers=tukey_outliers(x),
        lebench_kbest=kbest.value,
        kbest_stable=kbest.stable,
    )
