"""The one list of per-result fields every exporter writes, in order.

JSON and CSV both take their columns from FIELDS, so they cannot drift
apart. A value is native (numbers, strings, dicts); each exporter decides
how to spell it (CSV writes objects as canonical JSON and NaN as empty).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from ..model import BenchResult, RunInfo


@dataclass(frozen=True)
class Field:
    name: str
    help: str
    value: Callable[[RunInfo, BenchResult], Any]


def _stat(name: str) -> Callable[[RunInfo, BenchResult], Any]:
    def get(run: RunInfo, r: BenchResult) -> Any:
        if r.summary is None:
            return None
        value = getattr(r.summary, name)
        return None if isinstance(value, float) and math.isnan(value) else value

    return get


_STATS = (
    ("n", "number of samples"),
    ("min", "smallest sample"),
    ("max", "largest sample"),
    ("mean", "arithmetic mean"),
    ("median", "median"),
    ("std", "standard deviation (ddof=1)"),
    ("cv", "coefficient of variation, std / mean (a fraction)"),
    ("trimmed_mean", "mean without the lowest and highest 10 %"),
    ("p1", "1st percentile"),
    ("p5", "5th percentile"),
    ("p95", "95th percentile"),
    ("p99", "99th percentile"),
    ("p999", "99.9th percentile"),
    ("ci_low", "95 % bootstrap confidence interval of the median, low end"),
    ("ci_high", "95 % bootstrap confidence interval of the median, high end"),
    ("outliers", "samples outside Tukey's 1.5 IQR fences"),
    ("lebench_kbest", "LEBench stable minimum (docs/statistics.md)"),
    ("kbest_stable", "whether lebench_kbest found a stable run of 5"),
)

FIELDS: tuple[Field, ...] = (
    Field("run_id", "the run's id in the store", lambda run, r: run.id),
    Field("run_label", "the run's label", lambda run, r: run.label),
    Field("seq", "order of the instance within the run, from 0", lambda run, r: r.seq),
    Field("bench", "benchmark, family.operation", lambda run, r: r.bench),
    Field("params", "every parameter with its value", lambda run, r: r.params),
    Field("status", "ok, skip or error", lambda run, r: r.status),
    Field("reason", "skip reason or error message", lambda run, r: r.reason),
    Field("unit", "ns, bytes_per_s or count", lambda run, r: r.unit),
    *(Field(name, help_text, _stat(name)) for name, help_text in _STATS),
    Field("batch", "operations each sample averages over", lambda run, r: r.batch),
    Field("cpu", "CPU the timed code ran on", lambda run, r: r.cpu),
    Field("placement", "same_cpu / cross_cpu for two-party benchmarks", lambda run, r: r.placement),
    Field("stop_reason", "why sampling stopped: rse, max_time, max_samples", lambda run, r: r.stop_reason),
    Field(
        "elapsed_s",
        "wall time spent on the instance",
        lambda run, r: None if math.isnan(r.elapsed_s) else r.elapsed_s,
    ),
    Field("extra", "benchmark-specific figures", lambda run, r: r.extra),
)

FIELD_NAMES = tuple(f.name for f in FIELDS)


def result_row(run: RunInfo, result: BenchResult) -> dict[str, Any]:
    """One result as {field name: native value}, in FIELDS order."""
    return {f.name: f.value(run, result) for f in FIELDS}
