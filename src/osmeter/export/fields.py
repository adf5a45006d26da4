"""The one list of per-result fields every exporter writes, in order.

JSON and CSV both take their columns from FIELDS, so they cannot drift
apart. A value is native (numbers, strings, dicts); each exporter decides
how to spell it (CSV writes objects as canonical JSON and NaN as empty).

After FIELDS come the counter columns of the run (`osmeter run --counters`):
one per counter counted (status ok) in at least one of the exported results,
named by report.counters.column_name (`task-clock_ns_per_op`,
`page-faults_per_op`, `ipc`), holding the value per operation. They depend on
the run, so `columns(results)` gives the whole list for both exporters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..model import BenchResult, RunInfo
from ..report import counters as ctr


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
    ("lebench_kbest", "LEBench k-best: stable minimum, maximum for rates (docs/statistics.md)"),
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
    Field("counters", "the probe's counters record (ops, kernel, each counter's status, unit, value, reason)",
          lambda run, r: counters_record(r)),
)

FIELD_NAMES = tuple(f.name for f in FIELDS)

_RECORD_ONLY = ("type", "bench", "params")  # what the result's own fields already say


def counters_record(result: BenchResult) -> dict[str, Any] | None:
    """The stored `counters` record without type, bench and params; None without --counters."""
    if not isinstance(result.counters, dict):
        return None
    return {k: v for k, v in result.counters.items() if k not in _RECORD_ONLY}


def counter_columns(results: Sequence[BenchResult]) -> list[ctr.Column]:
    """The counter columns of these results: every counter counted somewhere, in request order."""
    cols = ctr.columns(results)
    clash = [c.column for c in cols if c.column in FIELD_NAMES]
    if clash:  # a counter name cannot be a field name today; keep it that way
        raise ValueError(f"counter column {clash[0]!r} would shadow an export field")
    return cols


def columns(results: Sequence[BenchResult]) -> tuple[str, ...]:
    """Every column of an export of `results`: FIELDS, then the counter columns."""
    return FIELD_NAMES + tuple(c.column for c in counter_columns(results))


def result_row(run: RunInfo, result: BenchResult, counters: Sequence[ctr.Column] = ()) -> dict[str, Any]:
    """One result as {column: native value}: FIELDS in order, then the counter columns given
    (counter_columns(results)), each the value per operation or None when not counted."""
    row = {f.name: f.value(run, result) for f in FIELDS}
    if counters:
        mine = ctr.counters_by_name(result)
        for c in counters:
            v = mine.get(c.name)
            row[c.column] = v.value if v is not None and v.ok and v.unit == c.unit else None
    return row


def result_rows(run: RunInfo, results: Sequence[BenchResult]) -> tuple[tuple[str, ...], list[dict[str, Any]]]:
    """The columns and the rows of an export: what every exporter writes."""
    cols = counter_columns(results)
    names = FIELD_NAMES + tuple(c.column for c in cols)
    return names, [result_row(run, r, cols) for r in results]
