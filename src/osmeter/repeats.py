"""Repetitions: one benchmark instance measured by several fresh probe
processes, and what their spread says. Pure: numbers in, numbers out.

Samples of one run know nothing of the drift between runs (another process
layout, another physical page placement, the host's load a minute later):
its confidence interval can be +-0.1 % while two runs differ by 3 %.
`osmeter run --repeat R` therefore measures every instance in R
repetitions, each in a fresh probe process, interleaved across the suite
(repetition 1 runs the whole list, then repetition 2 ...), so slow drift
hits every instance alike (pyperf's worker processes, the same idea). From
them (docs/statistics.md, "Repetitions"):

* the figures (median, percentiles, k-best ...) come from all samples
  pooled;
* the uncertainty of the median comes from the repetitions: on the log
  scale, the standard error of the mean of the R repetition medians,
  se_b = sd(ln m_i) / sqrt(R), with t(R - 1) quantiles; it is never taken
  smaller than what the repetitions' own intervals allow,
  se_w = sqrt(sum se_i^2) / R, where se_i is a repetition's log-scale
  standard error from its dependence-aware CI (stats.median_ci), so a
  lucky agreement of three repetitions does not give a tight interval;
* the spread, max(m_i) / min(m_i) - 1, and the flag `unstable` when it
  exceeds UNSTABLE_SPREAD: repetitions that disagree by more than the
  change compare calls significant cannot vouch for a figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

import numpy as np

from .modes import two_modes
from .quantiles import normal_quantile, t_quantile
from .stats import CI_LEVEL, FloatArray, Summary, as_samples, summary

UNSTABLE_SPREAD = 0.05  # the compare noise threshold: docs/statistics.md
UNSTABLE = "unstable"
BIMODAL = "bimodal"  # two modes within a repetition's samples (within_bimodal; the summary holds the pooled ones)


@dataclass(frozen=True)
class Repetition:
    """One repetition of one instance: what its own probe process measured."""

    status: str  # ok / skip / error
    n: int = 0
    median: float = math.nan
    ci_low: float = math.nan  # its dependence-aware 95 % CI of the median
    ci_high: float = math.nan
    batch: int | None = None
    stop_reason: str | None = None
    flags: tuple[str, ...] = ()
    elapsed_s: float = math.nan
    reason: str | None = None  # skip reason or error message

    def to_dict(self) -> dict[str, Any]:
        def num(v: float) -> float | None:
            return None if v is None or math.isnan(v) else v

        return {
            "status": self.status,
            "n": self.n,
            "median": num(self.median),
            "ci_low": num(self.ci_low),
            "ci_high": num(self.ci_high),
            "batch": self.batch,
            "stop_reason": self.stop_reason,
            "flags": list(self.flags),
            "elapsed_s": num(self.elapsed_s),
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Repetition":
        def num(key: str) -> float:
            v = d.get(key)
            return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan

        flags = d.get("flags")
        batch = d.get("batch")
        return cls(
            status=str(d.get("status", "ok")),
            n=int(d.get("n") or 0),
            median=num("median"),
            ci_low=num("ci_low"),
            ci_high=num("ci_high"),
            batch=batch if isinstance(batch, int) and not isinstance(batch, bool) else None,
            stop_reason=d.get("stop_reason") if isinstance(d.get("stop_reason"), str) else None,
            flags=tuple(f for f in flags if isinstance(f, str)) if isinstance(flags, list) else (),
            elapsed_s=num("elapsed_s"),
            reason=d.get("reason") if isinstance(d.get("reason"), str) else None,
        )


@dataclass(frozen=True)
class Uncertainty:
    """The log-scale standard error of a median and its degrees of freedom."""

    log_se: float  # standard error of ln(median)
    df: float  # degrees of freedom (math.inf: a normal quantile)
    source: str  # "repetitions" or "within" (the run's own samples)


def log_se_of_ci(median: float, ci_low: float, ci_high: float, level: float = CI_LEVEL) -> float:
    """The log-scale standard error a CI of the median stands for (NaN when
    the values are not all positive)."""
    if not (median > 0 and ci_low > 0 and ci_high > 0):
        return math.nan
    z = normal_quantile(0.5 + level / 2)
    return (math.log(ci_high) - math.log(ci_low)) / (2 * z)


def spread(medians: Sequence[float]) -> float:
    """max / min - 1 of the repetition medians (NaN unless two or more, all positive)."""
    m = [v for v in medians if not math.isnan(v)]
    if len(m) < 2 or min(m) <= 0:
        return math.nan
    return max(m) / min(m) - 1.0


def uncertainty(reps: Sequence[Repetition]) -> Uncertainty | None:
    """The uncertainty of the pooled median from the repetitions that
    measured it (None with fewer than two or values that are not positive)."""
    ok = [r for r in reps if r.status == "ok" and r.median > 0]
    if len(ok) < 2:
        return None
    logs = np.log([r.median for r in ok])
    se_b = float(np.std(logs, ddof=1)) / math.sqrt(len(ok))
    within = [log_se_of_ci(r.median, r.ci_low, r.ci_high) for r in ok]
    se_w = math.sqrt(sum(w * w for w in within)) / len(ok) if not any(math.isnan(w) for w in within) else 0.0
    if se_b >= se_w:
        return Uncertainty(se_b, float(len(ok) - 1), "repetitions")
    return Uncertainty(se_w, math.inf, "within")


def interval(center: float, u: Uncertainty, level: float = CI_LEVEL) -> tuple[float, float]:
    q = t_quantile(0.5 + level / 2, u.df)
    return center * math.exp(-q * u.log_se), center * math.exp(q * u.log_se)


def repetition_of(samples: Sequence[float] | FloatArray, *, batch: int | None, stop_reason: str | None,
                  flags: Sequence[str], elapsed_s: float, higher_is_better: bool = False) -> Repetition:
    """A repetition's record from its own samples."""
    s = summary(as_samples(samples), higher_is_better=higher_is_better)
    return Repetition("ok", s.n, s.median, s.ci_low, s.ci_high, batch, stop_reason, tuple(flags), elapsed_s)


@dataclass(frozen=True)
class Pooled:
    summary: Summary  # all samples pooled; with 2+ repetitions, the CI from them
    spread: float  # max/min - 1 of the repetition medians; NaN with one
    flags: tuple[str, ...] = field(default_factory=tuple)  # every repetition's flags, plus `unstable`


def within_bimodal(pooled: Summary, samples: Sequence[FloatArray]) -> bool:
    """The flag `bimodal`: the pooled samples have two modes, and so do one repetition's own. Repetitions
    that each sit at one level, a different one, make two modes when pooled: that is `unstable`."""
    if not pooled.bimodal:
        return False
    return len(samples) == 1 or any(two_modes(s) is not None for s in samples)


def pool(samples: Sequence[FloatArray], reps: Sequence[Repetition], higher_is_better: bool = False) -> Pooled:
    """The statistics of an instance measured in several repetitions.

    `samples` holds the samples of the repetitions that are ok (in order);
    `reps` every repetition, ok or not."""
    if not samples:
        raise ValueError("no samples")
    pooled = summary(np.concatenate([as_samples(s) for s in samples]), higher_is_better=higher_is_better)
    flags: list[str] = []
    for r in reps:
        flags += [f for f in r.flags if f not in flags]
    u = uncertainty(reps)
    sp = spread([r.median for r in reps if r.status == "ok"])
    if u is not None and pooled.median > 0:
        low, high = interval(pooled.median, u)
        pooled = replace(pooled, ci_low=low, ci_high=high)
    if not math.isnan(sp) and sp > UNSTABLE_SPREAD:
        flags.append(UNSTABLE)
    if any(r.status != "ok" for r in reps):
        flags.append("repetition-failed")
    if within_bimodal(pooled, samples):
        flags.append(BIMODAL)
    return Pooled(pooled, sp, tuple(flags))
