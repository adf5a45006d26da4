"""Statistics of one benchmark's raw samples. Pure: sequences in, numbers out.

Formulas (tested against numpy/scipy in tests/unit/test_stats.py; the
reasoning is in docs/statistics.md):

* percentiles: numpy.percentile, linear interpolation (numpy's default);
* std: sample standard deviation (ddof=1); NaN when n == 1;
* cv: std / mean (a fraction; shown as %); NaN when n == 1 or mean == 0;
* trimmed_mean: drop int(0.1 * n) samples from each end, as
  scipy.stats.trim_mean(x, 0.1);
* ci_low, ci_high: 95 % interval of the median that allows for dependent
  samples (median_ci): the percentile bootstrap of resamples of the
  effective sample size n_eff = n / tau instead of n, where tau is the
  integrated autocorrelation time of the indicator series 1[x_t <= median]
  (median_tau; the probe's stopping rule uses the same tau). BOOTSTRAP_RESAMPLES
  resamples from a fixed seed, so the same samples give the same interval on
  every machine and every run. bootstrap_median_ci is the iid interval;
* outliers: samples outside Tukey's fences [q1 - 1.5 IQR, q3 + 1.5 IQR];
* p25, p75: the quartiles (numpy.percentile); the spread people read is
  the interquartile range relative to the median, iqr_ratio;
* mode_low, mode_high: two modes (modes.two_modes), NaN for one;
* lebench_kbest: LEBench's k-best as LEBench's calc_k_closest computes it
  (the stable minimum; the stable maximum for rates), see lebench_kbest().

Two-sample tests of the spread and the tail (compare's max and variance)
are in twosample.py.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import numpy.typing as npt

from .modes import two_modes

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20261122
CI_LEVEL = 0.95
TRIM_FRACTION = 0.1
TUKEY_K = 1.5
KBEST_RUN = 5
KBEST_TOLERANCE = 0.05
# LEBench keeps times as timespecs; a sample of a second or more (tv_sec != 0,
# 10^9 in osmeter's ns) resets its k-best count (see lebench_kbest).
LEBENCH_SECOND_NS = 1e9
# Largest lag of the autocorrelation sum in median_tau, the same constant as
# OSM_TAU_MAX_LAG in probe/src/harness.c: it bounds the cost (n per lag) and
# caps tau at about 2 * TAU_MAX_LAG + 1.
TAU_MAX_LAG = 256

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class KBest:
    value: float  # LEBench's figure: the first value of the stable run (see lebench_kbest)
    stable: bool  # True: a run of KBEST_RUN values was completed
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
    ci_low: float  # 95 % CI of the median, dependent samples allowed for (median_ci)
    ci_high: float
    outliers: int  # outside Tukey's 1.5 IQR fences
    lebench_kbest: float  # LEBench's k-best: stable minimum, or stable maximum for rates
    kbest_stable: bool  # whether lebench_kbest completed its run of 5
    p25: float = math.nan  # the quartiles: NaN in a light read (the store's figures) only
    p75: float = math.nan
    mode_low: float = math.nan  # two modes (modes.two_modes): NaN for one
    mode_high: float = math.nan

    @property
    def bimodal(self) -> bool:
        return not math.isnan(self.mode_high)


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
    """Percentile-bootstrap confidence interval of the median, for
    independent samples (the iid bootstrap; summary() reports median_ci,
    which allows for dependence; this one is kept for comparison).

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
    medians = resampled_medians(samples, resamples, seed)
    return _percentile_interval(medians, level)


def _percentile_interval(values: FloatArray, level: float) -> tuple[float, float]:
    alpha = (1.0 - level) / 2.0
    low, high = np.percentile(values, [100 * alpha, 100 * (1 - alpha)])
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
    samples: Sequence[float] | FloatArray,
    resamples: int,
    rng: np.random.Generator | int | tuple[int, ...],
    size: int | None = None,
) -> FloatArray:
    """The medians of `resamples` bootstrap resamples of `size` draws each
    (default n, the textbook bootstrap; fewer: the m-out-of-n bootstrap that
    median_ci uses with the effective sample size), drawn from their exact
    distribution (see bootstrap_median_ci, with the resample size in place
    of n in the Beta parameters; the indices still run over all n samples):
    O(resamples) draws plus one partial sort, whatever the number of samples.

    `rng` is a generator to draw from, or the seed of a fresh one
    (np.random.default_rng(seed)): the same medians, but the draws of a
    seed, a resample count and a size are made once and kept
    (order_uniforms), as compare --by asks for the same ones thousands of
    times."""
    x = as_samples(samples)
    n = x.size
    size = n if size is None else int(size)
    if size < 1:
        raise ValueError("the resample size must be at least 1")
    if isinstance(rng, np.random.Generator):
        u_low, u_high = draw_order_uniforms(rng, resamples, size)
    else:
        u_low, u_high = order_uniforms(rng, resamples, size)
    low_idx = np.minimum((u_low * n).astype(np.int64), n - 1)
    if u_high is None:
        return order_statistics(x, low_idx)
    high_idx = np.minimum((u_high * n).astype(np.int64), n - 1)
    both = order_statistics(x, np.concatenate([low_idx, high_idx]))
    return (both[:resamples] + both[resamples:]) / 2.0


def draw_order_uniforms(
    rng: np.random.Generator, resamples: int, size: int
) -> tuple[FloatArray, FloatArray | None]:
    """For each of `resamples` resamples of `size` uniforms: the order
    statistic U_(m) at the (lower) middle rank m = (size + 1) // 2, and for
    an even size U_(m+1) (None for an odd one), in that order from `rng`."""
    m = (size + 1) // 2  # 1-based rank of the (lower) middle value of a resample
    u_low = rng.beta(m, size - m + 1, size=resamples)
    if size % 2:
        return u_low, None
    return u_low, u_low + (1.0 - u_low) * rng.beta(1, size - m, size=resamples)


ORDER_UNIFORMS_KEPT = 512  # (seed, resamples, size) draws kept: 32 KB each at 2000 resamples


@functools.lru_cache(maxsize=ORDER_UNIFORMS_KEPT)
def order_uniforms(seed: int | tuple[int, ...], resamples: int, size: int) -> tuple[FloatArray, FloatArray | None]:
    """draw_order_uniforms from np.random.default_rng(seed), made once per
    (seed, resamples, size) and kept (read-only arrays)."""
    rng = np.random.default_rng(seed if isinstance(seed, int) else list(seed))
    u_low, u_high = draw_order_uniforms(rng, resamples, size)
    for a in (u_low, u_high):
        if a is not None:
            a.setflags(write=False)
    return u_low, u_high


# --- dependent samples: the median's effective sample size ---------------


def median_tau(
    samples: Sequence[float] | FloatArray, median: float | None = None, max_lag: int = TAU_MAX_LAG
) -> float:
    """Integrated autocorrelation time tau of the median's indicator series.

    The variance of a sample median of n dependent samples is tau times that
    of n independent ones, where tau belongs to I_t = 1[x_t <= median] (the
    median's Bahadur representation); n / tau is the effective sample size.
    Definition (docs/statistics.md; probe/src/harness.c osm_median_tau
    computes the same figure, tests pin the two together):

    * S = sum I_t, p = S / n; tau = 1 when n < 2 or S is 0 or n;
    * s_k = C_k - p (A_k + B_k) + (n - k) p^2 for lags k = 0 .. L,
      L = min(n - 1, max_lag), with the integer counts
      C_k = sum_{t<n-k} I_t I_{t+k}, A_k = sum_{t<n-k} I_t, B_k = sum_{t>=k} I_t
      (s_k / n is the autocovariance of I_t - p at lag k); rho_k = s_k / s_0;
    * Geyer's initial monotone sequence: G_j = rho_{2j} + rho_{2j+1} for
      j = 0, 1, ... while G_j > 0 and 2j + 1 <= L, each G_j lowered to
      G_{j-1} if above it; J pairs summed, M = 2J - 1 the last lag used;
    * tau = (-1 + 2 sum G_j) / max(0.5, 1 - (2M + 1) / n), clamped to [1, n].
      The divisor undoes the bias of autocovariances around an estimated
      centre (they sum to zero over all lags, so a window of 2M + 1 lags
      misses about (2M + 1) tau / n of tau).

    Cost: O(n) per lag used; at most max_lag + 1 lags.
    """
    return median_taus([samples], [median], max_lag)[0]


TAU_BATCH_LAGS = 16  # lags whose counts median_taus makes for all series at once


def median_taus(
    series: Sequence[Sequence[float] | FloatArray],
    medians: Sequence[float | None],
    max_lag: int = TAU_MAX_LAG,
) -> list[float]:
    """median_tau of each series with its median (None: computed), the same
    floats. The counts C_k of the first TAU_BATCH_LAGS lags are made for all
    series in one numpy pass over a grid of their indicators (padded with
    zeros, which add nothing to a count); a series that needs more lags
    counts those on its own. compare --by computes thousands of these."""
    if len(series) != len(medians):
        raise ValueError("one median per series")
    taus = [1.0] * len(series)
    live: list[tuple[int, npt.NDArray[np.bool_], int]] = []  # (index, indicators, their sum)
    for i, (samples, median) in enumerate(zip(series, medians)):
        x = as_samples(samples)
        if x.size < 2:
            continue
        ind = x <= (float(np.median(x)) if median is None else float(median))
        total = int(np.count_nonzero(ind))
        if total not in (0, x.size):
            live.append((i, ind, total))
    if not live:
        return taus
    width = max(ind.size for _, ind, _ in live)
    grid = np.zeros((len(live), width), dtype=bool)
    for row, (_, ind, _) in enumerate(live):
        grid[row, : ind.size] = ind
    lags = min(TAU_BATCH_LAGS, max_lag + 1, width)
    both = np.empty((len(live), lags), dtype=np.int64)
    for k in range(lags):
        both[:, k] = np.count_nonzero(grid[:, : width - k] & grid[:, k:], axis=1)
    sums = np.zeros((len(live), width + 1), dtype=np.int64)  # sums[k] = sum(ind[:k])
    np.cumsum(grid, axis=1, out=sums[:, 1:])
    for row, (i, ind, total) in enumerate(live):
        taus[i] = _indicator_tau(ind, total, max_lag, both[row], sums[row])
    return taus


def _indicator_tau(
    ind: npt.NDArray[np.bool_], total: int, max_lag: int, both: npt.NDArray[np.int64], sums: npt.NDArray[np.int64]
) -> float:
    """median_tau's definition from the indicators, their sum, the counts C_k
    already made (both[k], k < both.size) and the prefix sums of ind."""
    n = ind.size
    p = total / n
    top = min(n - 1, max_lag)
    known = both.size

    def lag_sum(k: int) -> float:
        if k == 0:
            c = total
        elif k < known:
            c = int(both[k])
        else:
            c = int(np.count_nonzero(ind[:-k] & ind[k:]))
        # A_k + B_k = 2S - sum(ind[:k]) - sum(ind[n-k:])
        return c - p * int(2 * total - sums[k] - (sums[n] - sums[n - k])) + (n - k) * p * p

    s0 = lag_sum(0)
    if not s0 > 0:
        return 1.0
    return geyer_tau(lambda k: lag_sum(k) / s0, n, top)


def geyer_tau(rho: Callable[[int], float], n: int, top: int) -> float:
    """tau from the autocorrelations rho(k) of a series of n, lags 0 .. top:
    Geyer's initial monotone sequence and the small-window correction, the
    last two steps of median_tau's definition (twosample.integrated_tau
    shares them)."""
    sum_g = 0.0
    prev = math.inf
    pairs = 0
    while 2 * pairs + 1 <= top:
        k = 2 * pairs
        g = rho(k) + rho(k + 1)
        if not g > 0:
            break
        g = min(g, prev)
        sum_g += g
        prev = g
        pairs += 1
    if pairs == 0:
        return 1.0
    last = 2 * pairs - 1
    keep = max(0.5, 1.0 - (2 * last + 1) / n)
    return min(max(1.0, (-1.0 + 2.0 * sum_g) / keep), float(n))


def effective_sample_size(samples: Sequence[float] | FloatArray, median: float | None = None) -> float:
    """n / tau: how many independent samples the median of these is worth."""
    x = as_samples(samples)
    return x.size / median_tau(x, median)


def effective_resample_size(samples: Sequence[float] | FloatArray, median: float | None = None) -> int:
    """The resample size median_ci uses: n / tau rounded half up, at least 1."""
    return max(1, int(math.floor(effective_sample_size(samples, median) + 0.5)))


def dependent_resampled_medians(
    samples: Sequence[float] | FloatArray,
    resamples: int,
    rng: np.random.Generator | int | tuple[int, ...],
    median: float | None = None,
) -> FloatArray:
    """resampled_medians with resamples of the effective size (median_ci's
    draws); `rng` a generator or a seed, as there."""
    x = as_samples(samples)
    return resampled_medians(x, resamples, rng, effective_resample_size(x, median))


def median_ci(
    samples: Sequence[float] | FloatArray,
    level: float = CI_LEVEL,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    median: float | None = None,
) -> tuple[float, float]:
    """Confidence interval of the median that allows for dependent samples.

    Samples of one run drift and come in bursts, so n of them carry less
    information about the median than n independent ones, and the iid
    bootstrap (bootstrap_median_ci) is too narrow. This is the percentile
    bootstrap of resamples of n_eff = n / median_tau() draws instead of n
    (an m-out-of-n bootstrap with m = n_eff): each resample's median has the
    spread the median of n dependent samples has. With tau = 1 it is
    bootstrap_median_ci exactly (same seed, same draws). `median` may pass
    the samples' median when it is already known.
    """
    x = as_samples(samples)
    return _percentile_interval(dependent_resampled_medians(x, resamples, seed, median), level)


def tukey_outliers(samples: Sequence[float] | FloatArray, k: float = TUKEY_K) -> int:
    """How many samples lie outside [q1 - k IQR, q3 + k IQR]."""
    x = as_samples(samples)
    q1, q3 = np.percentile(x, [25, 75])
    iqr = q3 - q1
    return int(np.count_nonzero((x < q1 - k * iqr) | (x > q3 + k * iqr)))


# --- LEBench's k-best and the direction of "best" -------------------------


def iqr_ratio(s: Summary) -> float:
    """The spread people read: the interquartile range over the median (a
    fraction; NaN when unknown). Robust: a few interrupted samples move it
    little, unlike the coefficient of variation (docs/statistics.md)."""
    if math.isnan(s.p25) or math.isnan(s.p75) or s.median == 0:
        return math.nan
    return (s.p75 - s.p25) / abs(s.median)


def tail_ratio(s: Summary) -> float:
    """The tail beside it: the 99th percentile over the median (NaN when unknown)."""
    return s.p99 / s.median if s.median else math.nan


def higher_is_better(unit: str | None) -> bool:
    """Rates (bytes_per_s, ops_per_s ...) are better when larger; times and counts when smaller."""
    return bool(unit) and str(unit).endswith("_per_s")


def best_value(s: Summary, unit: str | None) -> float:
    """The best sample: the minimum for a time or a count, the maximum for a rate."""
    return s.max if higher_is_better(unit) else s.min


def lebench_kbest(
    samples: Sequence[float] | FloatArray,
    run: int = KBEST_RUN,
    tolerance: float = KBEST_TOLERANCE,
    *,
    higher_is_better: bool = False,
    second: float | None = LEBENCH_SECOND_NS,
) -> KBest:
    """LEBench's k-best, as LEBench's calc_k_closest() computes it.

    Sort the samples from best to worst (ascending; descending when
    `higher_is_better`, for rates). A run starts with the best sample. Each
    next value s[i] joins the run when its relative step from its
    predecessor, |s[i] - s[i-1]| / |s[i-1]|, is at most `tolerance`;
    otherwise the run is emptied, and (LEBench's quirk) the value at the gap
    is not put into the new run: after a gap the next run starts with the
    value after the gap, if that one is within `tolerance` of the gap
    value. The first run of `run` values wins and its first value is the
    figure (`stable`). Further quirks, kept so the figure is LEBench's:

    * a step to or from a sample of `second` or more (10^9 ns: a timespec
      with tv_sec != 0) resets the run's count without emptying it; sorted
      ascending, every later step does too, so no run completes after one;
    * when no run completes, LEBench reports the first value of the run it
      holds at the end (the partial run), not stable; when that run was
      emptied by a gap LEBench dereferences NULL: osmeter reports the best
      sample (the minimum, or the maximum for rates), not stable;
    * the step is divided by the predecessor as LEBench does (0 / 0 is NaN,
      not above the tolerance: equal zeros join; x / 0 is a gap). The
      absolute value of the predecessor keeps the rule symmetric for the
      negative values an overhead subtraction can give (LEBench has none).

    For rates the `second` rule does not apply (a rate is not a timespec).
    """
    if run < 2:
        raise ValueError("run must be at least 2")
    x = np.sort(as_samples(samples))
    if higher_is_better:
        x = x[::-1]
    n = x.size
    prev, cur = x[:-1], x[1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (prev - cur if higher_is_better else cur - prev) / np.abs(prev)
    if higher_is_better or second is None:
        reset = np.zeros(n - 1, dtype=bool)
    else:
        reset = (np.abs(prev) >= second) | (np.abs(cur) >= second)
    gap = (ratio > tolerance) & ~reset  # NaN (0 / 0) is not a gap, as in C
    join = ~gap & ~reset
    # Streaks of joining steps: step i compares x[i] with x[i+1]. A streak
    # from step 0 continues the run begun by x[0] (run - 1 joins complete
    # it); a streak after a gap or reset starts from an empty count with
    # x[start + 1] as its first value (run joins complete it).
    edges = np.diff(np.concatenate(([0], join.astype(np.int8), [0])))
    starts = np.flatnonzero(edges == 1)
    lengths = np.flatnonzero(edges == -1) - starts
    need = np.where(starts == 0, run - 1, run)
    done = np.flatnonzero(lengths >= need)
    if done.size:
        start = int(starts[done[0]])
        return KBest(float(x[0] if start == 0 else x[start + 1]), True, None)
    why = f"fewer than {run} samples" if n < run else (
        f"no {run} consecutive sorted samples within {tolerance:.0%} of each other"
    )
    # No completed run: the partial run's first value, from the last event
    # that set or emptied it (a restart after a gap or reset, or a gap).
    gaps = np.flatnonzero(gap)
    last_gap = int(gaps[-1]) if gaps.size else -1
    restarts = starts[starts > 0]
    last_restart = int(restarts[-1]) if restarts.size else -1
    if last_gap < 0 and last_restart < 0:
        return KBest(float(x[0]), False, f"{why}; LEBench's figure is the first value of its partial run")
    if last_restart > last_gap:
        return KBest(
            float(x[last_restart + 1]), False, f"{why}; LEBench's figure is the first value of its partial run"
        )
    best = "maximum" if higher_is_better else "minimum"
    return KBest(float(x[0]), False, f"{why}; LEBench has no figure here (its run is empty): the {best}")


def summary(samples: Sequence[float] | FloatArray, higher_is_better: bool = False) -> Summary:
    """Every statistic osmeter reports for one benchmark instance.

    `higher_is_better` (True for rates: stats.higher_is_better(unit)) makes
    lebench_kbest a stable maximum instead of a stable minimum; nothing else
    depends on the direction."""
    x = as_samples(samples)
    p1, p5, p25, p50, p75, p95, p99, p999 = np.percentile(x, [1, 5, 25, 50, 75, 95, 99, 99.9])
    ci_low, ci_high = median_ci(x, median=float(p50))
    kbest = lebench_kbest(x, higher_is_better=higher_is_better)
    modes = two_modes(x)
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
        p25=float(p25),
        p75=float(p75),
        mode_low=modes.low if modes is not None else math.nan,
        mode_high=modes.high if modes is not None else math.nan,
    )
