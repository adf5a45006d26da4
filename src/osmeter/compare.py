"""Comparing runs: ratio of medians with a bootstrap confidence interval,
and the rule that calls a change significant. Pure: samples in, numbers out.

Method (docs/compare.md has the reasoning):

* ratio = median(run) / median(baseline), of the raw samples of one
  benchmark instance (benchmark + parameters) present in both runs;
* 95 % confidence interval of the ratio: percentile bootstrap. Each run's
  samples are resampled independently (they are independent measurements),
  B = BOOTSTRAP_RESAMPLES medians per run drawn with stats.resampled_medians
  (exact order-statistic draws, O(B) whatever n), and the 2.5th and 97.5th
  percentiles of the B ratios are the interval. Samples within one run are
  not independent (drift, bursts), so each run is resampled at its effective
  sample size n / tau (stats.median_tau, as in stats.median_ci) rather than
  n. Seeded, so the same samples give the same interval everywhere;
* with repetitions (osmeter run --repeat R, on either side): the interval
  comes from them instead, a t interval of the log ratio whose standard
  error is each side's repetition standard error (osmeter.repeats), with
  Welch-Satterthwaite degrees of freedom: the noise between probe processes
  and over the minutes of a suite, which one process's samples cannot show;
* significant: the interval excludes 1 AND |ratio - 1| exceeds the noise
  threshold (DEFAULT_THRESHOLD), which stands for the noise between runs
  that even repetitions do not see (reboots, another boot's page layout).
  A verdict on an instance flagged on either side (precision-unmet,
  unstable, ...) carries the flags as its caveat.

Direction: for a time (ns) or a count, a larger value is worse; for a rate
(a unit ending in `_per_s`) a larger value is better. `worse` is the change
in the bad direction, so red/green and --fail-above mean the same thing for
every unit.

The maximum and the variance (`osmeter compare --stat`, by default for the
rt family, whose question is the worst case and the jitter): each with the
ratio run / baseline and a two-sample test on the raw samples,

* variance: the Brown-Forsythe test (Levene's test about the medians) at
  each run's effective sample size (twosample.dependent_brown_forsythe);
* max: Rosenbaum's exceedance test, the number of the run's samples above
  the baseline's maximum (or the reverse), declustered, against its exact
  null distribution (twosample.exceedance_test);

significant when p < 1 - CI_LEVEL and |ratio - 1| exceeds the same noise
threshold as the median. A larger variance is worse for every unit, a
larger maximum as the median (docs/compare.md, "Maximum and variance").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from .memlevels import CACHE_EDGE
from .records import EMULATED
from .repeats import UNSTABLE, Uncertainty, log_se_of_ci
from .stats import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    CI_LEVEL,
    FloatArray,
    as_samples,
    dependent_resampled_medians,
    higher_is_better,  # lives in stats (lebench_kbest needs the direction too); compare.higher_is_better still works
    median_taus,
    order_uniforms,
    resampled_medians,
)
from .frozen import built
from .quantiles import t_quantile
from .twosample import dependent_brown_forsythe, exceedance_test

DEFAULT_THRESHOLD = 0.05  # 5 %: see docs/compare.md
# The bootstrap's generators: np.random.default_rng([seed, stream]), one stream per side.
BASELINE_STREAM = 1
RUN_STREAM = 2
# Flags of either side that a verdict shows next to it (docs/compare.md).
CAVEAT_FLAGS = ("precision-unmet", "calibration-timeout", UNSTABLE, "repetition-failed", "not-pinned", "tsc-unstable",
                CACHE_EDGE, EMULATED)
METHOD = (
    "ratio of medians; 95 % percentile-bootstrap interval, each run resampled independently "
    f"at its effective sample size n/tau ({BOOTSTRAP_RESAMPLES} resamples, fixed seed); "
    "significant when the interval excludes 1 and the change exceeds the threshold"
)

BY_METHOD = (
    "ratio of medians; 95 % interval on the log scale from the two results' stored intervals of the median "
    "(each at its effective sample size n/tau, or from its repetitions), their standard errors added in "
    "quadrature (ratio_from_intervals); a result without a usable interval: as METHOD; significant when the "
    "interval excludes 1 and the change exceeds the threshold"
)

SLOWER = "slower"
FASTER = "faster"
SAME = "no significant change"
VERDICTS = (SLOWER, FASTER, SAME)


@dataclass(frozen=True)
class RatioCI:
    ratio: float  # median(run) / median(baseline)
    low: float  # 95 % bootstrap interval of the ratio
    high: float


def nan_to_none(x: float) -> float | None:
    """A statistic for JSON: NaN (not computed) as null."""
    return None if math.isnan(x) else x


def ratio_of_medians(
    baseline: Sequence[float] | FloatArray,
    other: Sequence[float] | FloatArray,
    *,
    level: float = CI_LEVEL,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    baseline_medians: FloatArray | None = None,
    medians: tuple[float, float] | None = None,
    iid: bool = False,
) -> RatioCI:
    """Ratio of medians with its percentile-bootstrap interval.

    Each run is resampled at its effective sample size (see the module
    docstring); `iid=True` resamples n draws as if the samples were
    independent (the old interval, kept for comparison).
    `baseline_medians` may pass the baseline's resampled medians when one
    baseline is compared with many runs (they are drawn from the seed's
    first stream, as here, so passing them changes nothing but the time).
    The ratio is NaN, and so is its interval, when the baseline's median is
    not positive (a ratio to zero or a negative value means nothing); the
    interval is NaN when some resampled baseline median is not positive.
    `medians` may pass (baseline, other) medians already known (the stored
    statistics), sparing two passes over the samples.
    """
    base = as_samples(baseline)
    run = as_samples(other)
    base_median, run_median = medians if medians is not None else (float(np.median(base)), float(np.median(run)))
    if not base_median > 0:
        return RatioCI(math.nan, math.nan, math.nan)
    ratio = run_median / base_median
    if baseline_medians is None:
        baseline_medians = baseline_resampled_medians(base, resamples, seed, median=base_median, iid=iid)
    run_seed = (seed, RUN_STREAM)
    if iid:
        run_medians = resampled_medians(run, resamples, run_seed)
    else:
        run_medians = dependent_resampled_medians(run, resamples, run_seed, run_median)
    if np.any(baseline_medians <= 0):
        return RatioCI(ratio, math.nan, math.nan)
    alpha = (1.0 - level) / 2.0
    low, high = np.percentile(run_medians / baseline_medians, [100 * alpha, 100 * (1 - alpha)])
    return RatioCI(ratio, float(low), float(high))


def ratios_of_medians(
    baseline: Sequence[float] | FloatArray,
    others: Sequence[tuple[Sequence[float] | FloatArray, float]],
    *,
    base_median: float,
    level: float = CI_LEVEL,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    baseline_medians: FloatArray | None = None,
) -> list[RatioCI]:
    """ratio_of_medians(baseline, x, medians=(base_median, median)) for each
    (x, median) of `others`, the same numbers, made for all of them at once:
    their taus in one pass (stats.median_taus), their resampled medians as
    one matrix (each run's sorted samples at its drawn ranks), the
    percentiles of every row in one call. compare --by makes a row of up to
    hundreds of columns against one baseline this way."""
    base = as_samples(baseline)
    if not base_median > 0:
        return [RatioCI(math.nan, math.nan, math.nan) for _ in others]
    xs = [as_samples(x) for x, _ in others]
    ratios = [median / base_median for _, median in others]
    if not xs:
        return []
    if baseline_medians is None:
        baseline_medians = baseline_resampled_medians(base, resamples, seed, median=base_median)
    if np.any(baseline_medians <= 0):
        return [RatioCI(r, math.nan, math.nan) for r in ratios]
    taus = median_taus(xs, [median for _, median in others])
    n = np.array([x.size for x in xs], dtype=np.int64)[:, None]
    width = int(n.max())
    ordered = np.full((len(xs), width), np.inf)  # each run's samples sorted, padded with inf (never drawn)
    for i, x in enumerate(xs):
        ordered[i, : x.size] = x
    ordered.sort(axis=1)
    draws = [order_uniforms((seed, RUN_STREAM), resamples, max(1, int(math.floor(x.size / tau + 0.5))))
             for x, tau in zip(xs, taus)]
    low = np.minimum((np.stack([u for u, _ in draws]) * n).astype(np.int64), n - 1)
    high = np.minimum((np.stack([u if v is None else v for u, v in draws]) * n).astype(np.int64), n - 1)
    rows = np.arange(len(xs), dtype=np.int64)[:, None] * width
    flat = ordered.ravel()
    a, b = flat[low + rows], flat[high + rows]
    run_medians = np.where(low == high, a, (a + b) / 2.0)
    alpha = (1.0 - level) / 2.0
    lows, highs = np.percentile(run_medians / baseline_medians, [100 * alpha, 100 * (1 - alpha)], axis=1)
    return [RatioCI(r, float(lo), float(hi)) for r, lo, hi in zip(ratios, lows, highs)]


def baseline_resampled_medians(
    baseline: Sequence[float] | FloatArray,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    *,
    median: float | None = None,
    iid: bool = False,
) -> FloatArray:
    """The baseline's bootstrap medians, as ratio_of_medians draws them
    (`median`: the baseline's median when already known)."""
    if iid:
        return resampled_medians(baseline, resamples, (seed, BASELINE_STREAM))
    return dependent_resampled_medians(baseline, resamples, (seed, BASELINE_STREAM), median)


def is_significant(ci: RatioCI, threshold: float = DEFAULT_THRESHOLD) -> bool:
    """The interval excludes 1 and the change is larger than the noise threshold."""
    if math.isnan(ci.low) or math.isnan(ci.high):
        return False
    excludes_one = ci.low > 1.0 or ci.high < 1.0
    return excludes_one and abs(ci.ratio - 1.0) > threshold


@dataclass(frozen=True)
class Instance:
    """One benchmark instance of one run, as compare needs it."""

    bench: str
    params: Mapping[str, Any]
    unit: str | None
    median: float
    samples: FloatArray
    # From repetitions (osmeter run --repeat): the log-scale standard error
    # of the median from their spread; None for a run of one repetition.
    uncertainty: Uncertainty | None = None
    # Its CI (the stored one), for the side of one repetition compared with
    # a side of several.
    ci: tuple[float, float] | None = None
    flags: tuple[str, ...] = ()  # precision-unmet, unstable, ...


def side_uncertainty(x: Instance) -> Uncertainty | None:
    """A side's uncertainty for the t interval: its repetitions', else its own CI's."""
    if x.uncertainty is not None:
        return x.uncertainty
    if x.ci is None:
        return None
    se = log_se_of_ci(x.median, *x.ci)
    return None if math.isnan(se) else Uncertainty(se, math.inf, "within")


def ratio_from_repetitions(baseline: Instance, other: Instance, level: float = CI_LEVEL) -> RatioCI | None:
    """Ratio of medians with a t interval on the log scale, from the
    repetitions' standard errors (Welch-Satterthwaite degrees of freedom);
    None unless at least one side has repetitions and both medians are positive."""
    if baseline.uncertainty is None and other.uncertainty is None:
        return None
    return ratio_from_intervals(baseline, other, level)


def ratio_from_intervals(baseline: Instance, other: Instance, level: float = CI_LEVEL) -> RatioCI | None:
    """ratio_from_repetitions with or without repetitions: a side of one
    repetition stands for the standard error its stored interval of the
    median implies (side_uncertainty). compare --by makes its cells so
    (docs/compare.md, "By host, kernel or label": no samples read, no
    bootstrap). None when a side has no usable interval or a median is not
    positive."""
    return ratio_of_sides(baseline.median, side_uncertainty(baseline), other.median, side_uncertainty(other), level)


def ratio_of_sides(base_median: float, a: Uncertainty | None, median: float, b: Uncertainty | None,
                   level: float = CI_LEVEL) -> RatioCI | None:
    """ratio_from_intervals of two sides given by their medians and
    side_uncertainty (compare --by works the baseline's out once a row)."""
    if a is None or b is None or not (base_median > 0 and median > 0):
        return None
    ratio = median / base_median
    var = a.log_se**2 + b.log_se**2
    if var == 0:
        return RatioCI(ratio, ratio, ratio)
    terms = [u.log_se**4 / u.df for u in (a, b) if not math.isinf(u.df) and u.log_se > 0]
    df = var**2 / sum(terms) if terms and sum(terms) > 0 else math.inf
    q = t_quantile(0.5 + level / 2, df) * math.sqrt(var)
    return RatioCI(ratio, ratio * math.exp(-q), ratio * math.exp(q))


# --- the maximum and the variance ------------------------------------------

STAT_MAX = "max"
STAT_VARIANCE = "variance"
EXTRA_STATS = (STAT_MAX, STAT_VARIANCE)  # what --stat may name, in the order shown
AUTO_STATS_FAMILIES = ("rt",)  # families whose instances get EXTRA_STATS unless --stat says otherwise
STAT_METHODS = {
    STAT_MAX: "Rosenbaum's exceedance test: the run's samples above the baseline's maximum (or the baseline's "
    "above the run's), exceedances closer together than the sample's autocorrelation time counted as one cluster, against "
    "the exact hypergeometric null; two-sided",
    STAT_VARIANCE: "Brown-Forsythe test (Levene's about the medians) on the absolute deviations, each run at its "
    "effective sample size n/tau of the deviations; ratio of sample variances",
}
HIGHER = "higher"
LOWER = "lower"


def stats_for(bench: str, requested: Sequence[str] | None) -> tuple[str, ...]:
    """The extra statistics compared for an instance of `bench`: `requested`
    (--stat) when given, else EXTRA_STATS for the families of
    AUTO_STATS_FAMILIES and none for the others."""
    if requested is not None:
        return tuple(s for s in EXTRA_STATS if s in requested)
    return EXTRA_STATS if bench.split(".", 1)[0] in AUTO_STATS_FAMILIES else ()


@dataclass(frozen=True)
class StatChange:
    """The maximum or the variance of one instance, run against baseline, with its test."""

    stat: str  # STAT_MAX or STAT_VARIANCE
    unit: str | None  # the instance's unit (a variance is in unit squared)
    baseline: float
    value: float
    ratio: float  # value / baseline; NaN when the baseline's is not positive
    p_value: float  # the test's two-sided p-value; NaN when the test is undefined
    significant: bool
    test: str  # what the test saw, for people: "7 above the baseline's max in 5 clusters" or "W=..., df=..."

    @property
    def change(self) -> float:
        return self.ratio - 1.0

    @property
    def worse(self) -> float:
        """The change in the bad direction: more variance is always worse; a maximum as the median."""
        if self.stat == STAT_MAX and higher_is_better(self.unit):
            return -self.change
        return self.change

    @property
    def verdict(self) -> str:
        if not self.significant:
            return SAME
        return HIGHER if self.change > 0 else LOWER


def _stat_significant(ratio: float, p: float, threshold: float, level: float) -> bool:
    return (not math.isnan(ratio)) and (not math.isnan(p)) and p < 1.0 - level and abs(ratio - 1.0) > threshold


def _ratio(value: float, baseline: float) -> float:
    return value / baseline if baseline > 0 else math.nan


def max_change(baseline: FloatArray, other: FloatArray, unit: str | None, threshold: float = DEFAULT_THRESHOLD,
               level: float = CI_LEVEL) -> StatChange:
    """The maximum, run against baseline, by twosample.exceedance_test."""
    a, b = as_samples(baseline), as_samples(other)
    ex = exceedance_test(a, b)
    base_max, run_max = float(a.max()), float(b.max())
    ratio = _ratio(run_max, base_max)
    if ex.above:
        seen = f"{ex.above} of the run's {b.size} samples above the baseline's maximum"
    elif ex.below:
        seen = f"{ex.below} of the baseline's {a.size} samples above the run's maximum"
    else:
        seen = "the same maximum"
    if ex.counted and ex.gap > 1:
        seen += f", in {ex.counted} cluster{'s' if ex.counted != 1 else ''} (gap {ex.gap})"
    return StatChange(STAT_MAX, unit, base_max, run_max, ratio, ex.p_value,
                      _stat_significant(ratio, ex.p_value, threshold, level), f"{seen}; p={ex.p_value:.3g}")


def variance_change(baseline: FloatArray, other: FloatArray, unit: str | None,
                    threshold: float = DEFAULT_THRESHOLD, level: float = CI_LEVEL) -> StatChange:
    """The variance (ddof=1), run against baseline, by twosample.dependent_brown_forsythe."""
    a, b = as_samples(baseline), as_samples(other)
    base_var = float(np.var(a, ddof=1)) if a.size > 1 else math.nan
    run_var = float(np.var(b, ddof=1)) if b.size > 1 else math.nan
    ratio = _ratio(run_var, base_var) if not math.isnan(base_var) and not math.isnan(run_var) else math.nan
    bf = dependent_brown_forsythe(a, b)
    if math.isnan(bf.p_value):
        seen = "Brown-Forsythe undefined (fewer than 2 samples, or no spread)"
    else:
        seen = (f"Brown-Forsythe W={bf.statistic:.3g}, df={bf.df:.0f} (tau {bf.taus[0]:.1f}, {bf.taus[1]:.1f}); "
                f"p={bf.p_value:.3g}")
    return StatChange(STAT_VARIANCE, unit, base_var, run_var, ratio, bf.p_value,
                      _stat_significant(ratio, bf.p_value, threshold, level), seen)


STAT_FUNCTIONS = {STAT_MAX: max_change, STAT_VARIANCE: variance_change}


# How a comparison's interval was made (Comparison.method; docs/compare.md).
METHOD_BOOTSTRAP = "bootstrap"  # the bootstrap of the ratio from both runs' samples
METHOD_REPETITIONS = "repetitions"  # a side has repetitions: the log-scale t interval
METHOD_INTERVALS = "intervals"  # compare --by: neither has; the two stored intervals on the log scale
METHODS = (METHOD_BOOTSTRAP, METHOD_REPETITIONS, METHOD_INTERVALS)


@dataclass(frozen=True)
class Comparison:
    """One benchmark instance of one run against the baseline."""

    bench: str
    params: Mapping[str, Any]
    unit: str | None
    run_id: int
    baseline_id: int
    baseline_median: float
    median: float
    ratio: float
    ci_low: float
    ci_high: float
    significant: bool
    # Either side's flags (precision-unmet, unstable, ...): a verdict made
    # with them says so (`caveat`).
    flags: tuple[str, ...] = ()
    method: str = METHOD_BOOTSTRAP  # METHODS: how the interval was made
    stats: tuple[StatChange, ...] = ()  # the maximum and/or the variance, when compared (stats_for)
    # A significant change smaller than this machine resolved for the instance (osmeter noise):
    # "below this machine's noise (noise run 12: +6.1%)"; "" otherwise, or without a noise result.
    noise: str = ""

    def stat(self, name: str) -> StatChange | None:
        return next((s for s in self.stats if s.stat == name), None)

    @property
    def caveat(self) -> str:
        """What the verdict cannot vouch for: '' or e.g. 'precision-unmet, unstable'."""
        if not self.flags:
            return ""
        shown = [f for f in CAVEAT_FLAGS if f in self.flags]
        return ", ".join(shown)

    @property
    def change(self) -> float:
        """ratio - 1: +0.10 means the value went up by 10 %."""
        return self.ratio - 1.0

    @property
    def worse(self) -> float:
        """The change in the bad direction: +0.10 is 10 % worse, -0.10 10 % better."""
        return -self.change if higher_is_better(self.unit) else self.change

    @property
    def verdict(self) -> str:
        if not self.significant:
            return SAME
        return SLOWER if self.worse > 0 else FASTER


def compare_instance(
    baseline: Instance,
    other: Instance,
    run_id: int,
    baseline_id: int,
    threshold: float = DEFAULT_THRESHOLD,
    baseline_medians: FloatArray | None = None,
    stats: Sequence[str] = (),
) -> Comparison:
    """The median's comparison, and the statistics named in `stats`
    (EXTRA_STATS: max, variance) with their tests."""
    ci = ratio_from_repetitions(baseline, other)
    method = METHOD_REPETITIONS
    if ci is None:
        method = METHOD_BOOTSTRAP
        ci = ratio_of_medians(
            baseline.samples, other.samples, baseline_medians=baseline_medians,
            medians=(baseline.median, other.median),
        )
    return comparison_of(baseline, other, run_id, baseline_id, threshold, ci, method, stats)


def compare_instances(
    baseline: Instance,
    others: Sequence[tuple[Instance, int]],
    baseline_id: int,
    threshold: float = DEFAULT_THRESHOLD,
    baseline_medians: FloatArray | None = None,
) -> list[Comparison]:
    """compare_instance(baseline, other, run_id, baseline_id, threshold) for
    each (other, run_id), the same comparisons, the bootstraps made at once
    (ratios_of_medians): one instance of many runs against one baseline."""
    cis: list[RatioCI | None] = [ratio_from_repetitions(baseline, other) for other, _ in others]
    todo = [i for i, ci in enumerate(cis) if ci is None]
    if todo:
        booted = ratios_of_medians(baseline.samples, [(others[i][0].samples, others[i][0].median) for i in todo],
                                   base_median=baseline.median, baseline_medians=baseline_medians)
        for i, ci in zip(todo, booted):
            cis[i] = ci
    booted_at = set(todo)
    return [comparison_of(baseline, other, run_id, baseline_id, threshold, ci,
                        METHOD_BOOTSTRAP if i in booted_at else METHOD_REPETITIONS)
            for i, ((other, run_id), ci) in enumerate(zip(others, cis)) if ci is not None]


def comparison_of(baseline: Instance, other: Instance, run_id: int, baseline_id: int, threshold: float, ci: RatioCI,
                  method: str, stats: Sequence[str] = ()) -> Comparison:
    """The Comparison of `other` against `baseline` whose interval `ci` was made by `method`."""
    flags = tuple(dict.fromkeys((*baseline.flags, *other.flags))) if baseline.flags or other.flags else ()
    return built(Comparison, {  # compare --by makes 20 000 of them; Comparison has no checks of its own
        "bench": other.bench,
        "params": other.params,
        "unit": other.unit,
        "run_id": run_id,
        "baseline_id": baseline_id,
        "baseline_median": baseline.median,
        "median": other.median,
        "ratio": ci.ratio,
        "ci_low": ci.low,
        "ci_high": ci.high,
        "significant": is_significant(ci, threshold),
        "flags": flags,
        "method": method,
        "stats": tuple(STAT_FUNCTIONS[name](baseline.samples, other.samples, other.unit, threshold)
                       for name in EXTRA_STATS if name in stats) if stats else (),
        "noise": "",
    })


def regressions_above(comparisons: Sequence[Comparison], limit: float) -> list[Comparison]:
    """Significant changes for the worse by more than `limit` (a fraction)."""
    return [c for c in comparisons if c.significant and c.worse > limit]


def sort_by_change(comparisons: Sequence[Comparison]) -> list[Comparison]:
    """Worst first: the largest change for the worse at the top, improvements at the bottom."""
    return sorted(comparisons, key=lambda c: (-(c.worse if not math.isnan(c.ratio) else -math.inf), c.bench))
