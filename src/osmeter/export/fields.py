"""The one list of per-result fields every exporter writes, in order.

JSON and CSV both take their columns from FIELDS, so they cannot drift
apart. A value is native (numbers, strings, dicts); each exporter decides
how to spell it (CSV writes objects as canonical JSON and NaN as empty).

After FIELDS come the counter columns of the run (`osmeter run --counters`):
one per counter counted (status ok) in at least one of the exported results,
named by counters.column_name (`task-clock_ns_per_op`,
`page-faults_per_op`, `ipc`), holding the value per operation. They depend on
the run, so `columns(results)` gives the whole list for both exporters.

The CSV alone then has one column per parameter (param_columns): CSV
readers (a spreadsheet, `pandas.read_csv(f)["param.size"]`) cannot reach
into the `params` cell's JSON, which the JSON export holds as an object.

`lebench_row` is the LEBench row the probe recorded (a run of the lebench
suite); `result_rows(..., names=RowNames)` (--names lebench) also fills it
for results that match a row of LEBench's table, and orders the rows as
that table does. A field may spell itself for CSV (`csv`): `flags` is a
JSON array of strings but one `;`-joined cell.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..lebench import RowNames
from ..model import BenchResult, RunInfo
from .. import counters as ctr
from ..report import names as nm
from ..report import summary as sm


@dataclass(frozen=True)
class Field:
    name: str
    help: str
    value: Callable[[RunInfo, BenchResult], Any]
    csv: Callable[[Any], Any] | None = None  # how CSV spells the native value, when not as the others


def _stat(name: str) -> Callable[[RunInfo, BenchResult], Any]:
    def get(run: RunInfo, r: BenchResult) -> Any:
        if r.summary is None:
            return None
        value = getattr(r.summary, name)
        return None if isinstance(value, float) and math.isnan(value) else value

    return get


_STATS = (
    ("n", "number of samples, of every repetition pooled"),
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
    ("ci_low", "95 % confidence interval of the median, low end (from the repetitions when there are 2+)"),
    ("ci_high", "95 % confidence interval of the median, high end (from the repetitions when there are 2+)"),
    ("outliers", "samples outside Tukey's 1.5 IQR fences"),
    ("lebench_kbest", "LEBench k-best: stable minimum, maximum for rates (docs/statistics.md)"),
    ("kbest_stable", "whether lebench_kbest found a stable run of 5"),
)


def ref_cycles(run: RunInfo, r: BenchResult) -> float | None:
    return sm.ref_cycles(r)


def _nan_none(value: float) -> float | None:
    return None if math.isnan(value) else value


def _flags_cell(value: Any) -> str:
    return ";".join(value) if isinstance(value, list) else ""


def stop_reason(run: RunInfo, r: BenchResult) -> str | None:
    """Why sampling stopped; with repetitions each distinct reason once, comma-joined (`rse,max_time`)."""
    reasons = [rep.stop_reason for rep in r.repetitions if rep.stop_reason]
    return ",".join(dict.fromkeys(reasons)) if reasons else r.stop_reason


def elapsed_s(run: RunInfo, r: BenchResult) -> float | None:
    """Wall time spent on the instance: every repetition's together."""
    times = [rep.elapsed_s for rep in r.repetitions]
    if times and not any(math.isnan(t) for t in times):
        return float(sum(times))
    return None if math.isnan(r.elapsed_s) else r.elapsed_s


FIELDS: tuple[Field, ...] = (
    Field("run_id", "the run's id in the store", lambda run, r: run.id),
    Field("run_label", "the run's label", lambda run, r: run.label),
    Field("seq", "order of the instance within the run, from 0", lambda run, r: r.seq),
    Field("bench", "benchmark, family.operation", lambda run, r: r.bench),
    Field("params", "every parameter with its value", lambda run, r: r.params),
    Field("status", "ok, skip or error", lambda run, r: r.status),
    Field("reason", "skip reason or error message", lambda run, r: r.reason),
    Field("unit", "ns, bytes_per_s or count", lambda run, r: r.unit),
    Field("lebench_row", "the LEBench row the result reproduces (docs/lebench.md): as recorded by a run of the "
          "lebench suite, or with --names lebench also a matching row; empty otherwise",
          lambda run, r: r.lebench_row),
    *(Field(name, help_text, _stat(name)) for name, help_text in _STATS),
    Field("ref_cycles", "the median in reference cycles: TSC ticks at the TSC's constant rate, not core cycles "
          "(x86 timed with the TSC, ns results only; empty otherwise)", ref_cycles),
    Field("flags", "what the figure cannot vouch for (docs/report.md, \"Flags\"): precision-unmet, "
          "calibration-timeout, unstable, repetition-failed, not-pinned, tsc-unstable; CSV joins them with ;",
          lambda run, r: list(r.flags), _flags_cell),
    Field("repetitions", "repetitions (fresh probe processes) that measured the instance; n pools their samples",
          lambda run, r: max(1, len(r.repetitions))),
    Field("spread", "largest / smallest repetition median - 1 (a fraction); empty with one repetition",
          lambda run, r: _nan_none(r.spread)),
    Field("per_repetition", "each repetition's status, n, median, ci_low, ci_high, batch, stop_reason, flags, "
          "elapsed_s, reason", lambda run, r: [rep.to_dict() for rep in r.repetitions]),
    Field("batch", "operations each sample averages over", lambda run, r: r.batch),
    Field("cpu", "CPU the timed code ran on", lambda run, r: r.cpu),
    Field("placement", "same_cpu / cross_cpu for two-party benchmarks", lambda run, r: r.placement),
    Field("stop_reason", "why sampling stopped: rse, max_time, max_samples (rt: duration, loops, break) (each repetition's, once, comma-joined)",
          stop_reason),
    Field("elapsed_s", "wall time spent on the instance, every repetition's together", elapsed_s),
    Field("extra", "benchmark-specific figures", lambda run, r: r.extra),
    Field("info", "the benchmark's facts in words (docs/schema.md `info`: net's peer, peer_version and placement, "
          "the file family's directory and file system, poll's descriptors), of skips and errors too; {} when none",
          lambda run, r: dict(r.info)),
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


PARAM_PREFIX = "param."


def param_columns(results: Sequence[BenchResult]) -> tuple[str, ...]:
    """The CSV's parameter columns, after every other: `param.<name>` for each
    parameter any of `results` has, sorted by name. A cell holds the value as
    recorded (no scaling), empty for a result without that parameter; the
    `params` column keeps them all as JSON, for round trips."""
    names = sorted({k for r in results for k in (r.params or {})})
    cols = tuple(PARAM_PREFIX + k for k in names)
    clash = [c for c in cols if c in FIELD_NAMES]
    if clash:  # a field name never starts with "param."; keep it that way
        raise ValueError(f"parameter column {clash[0]!r} would shadow an export field")
    return cols


def param_value(row: dict[str, Any], column: str) -> Any:
    """A row's (result_row) value of a param_columns column, None when it has no such parameter."""
    params = row.get("params")
    return params.get(column[len(PARAM_PREFIX):]) if isinstance(params, dict) else None


def columns(results: Sequence[BenchResult]) -> tuple[str, ...]:
    """Every column of an export of `results`: FIELDS, then the counter columns."""
    return FIELD_NAMES + tuple(c.column for c in counter_columns(results))


def result_row(run: RunInfo, result: BenchResult, counters: Sequence[ctr.Column] = (),
               names: RowNames | None = None) -> dict[str, Any]:
    """One result as {column: native value}: FIELDS in order, then the counter columns given
    (counter_columns(results)), each the value per operation or None when not counted.
    `names` (--names lebench): `lebench_row` also for a result that matches a row."""
    row = {f.name: f.value(run, result) for f in FIELDS}
    row["lebench_row"] = nm.export_label(names, result)
    if counters:
        mine = ctr.counters_by_name(result)
        for c in counters:
            v = mine.get(c.name)
            row[c.column] = v.value if v is not None and v.ok and v.unit == c.unit else None
    return row


def result_rows(
    run: RunInfo, results: Sequence[BenchResult], names: RowNames | None = None
) -> tuple[tuple[str, ...], list[dict[str, Any]]]:
    """The columns and the rows of an export: what every exporter writes.
    With `names` (--names lebench) the rows come in LEBench's table order."""
    cols = counter_columns(results)
    columns_ = FIELD_NAMES + tuple(c.column for c in cols)
    ordered = [r for _, r in nm.labelled(results, names)]
    return columns_, [result_row(run, r, cols, names) for r in ordered]


CSV_SPELLING: dict[str, Callable[[Any], Any]] = {f.name: f.csv for f in FIELDS if f.csv is not None}
