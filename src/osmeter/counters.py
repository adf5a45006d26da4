"""Performance counters of stored results, for every output: pure, no I/O.

A result of `osmeter run --counters LIST` keeps the probe's `counters`
record verbatim (BenchResult.counters; docs/schema.md). Each counted value
is per operation — the total over the counted batches divided by `ops`
(docs/methods/counters.md) — in the counter's unit: `ns` (task-clock: CPU
time, not latency), `count` (events), or `ratio` (ipc). This module reads
those records defensively (an imported file or an old store may hold
anything), names the columns and labels every output uses, and says once
per run which counters could not be counted and why, so that no table
repeats "unsupported" in every row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from .model import BenchResult
from .records import describe_instance

OK = "ok"
MAX_NAMED = 4  # instances named in a note before "and N more"


@dataclass(frozen=True)
class CounterValue:
    """One element of a `counters` record's list."""

    name: str
    status: str  # ok / unsupported / not_counted (anything else is shown as it is)
    unit: str  # ns / count / ratio
    value: float | None  # per operation (ipc: the ratio); None unless ok
    total: float | None  # the whole count (None for ipc and unless ok)
    running: float | None  # fraction of the enabled time it counted (< 1: multiplexed, scaled)
    reason: str | None

    @property
    def ok(self) -> bool:
        return self.status == OK and self.value is not None

    @property
    def multiplexed(self) -> bool:
        return self.running is not None and self.running < 1.0


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def counter_values(record: Mapping[str, Any] | None) -> list[CounterValue]:
    """The counters of one record, in request order; malformed elements are left out."""
    entries = record.get("counters") if isinstance(record, Mapping) else None
    out: list[CounterValue] = []
    seen: set[str] = set()
    for e in entries if isinstance(entries, list) else []:
        if not isinstance(e, Mapping) or not isinstance(e.get("name"), str) or e["name"] in seen:
            continue
        seen.add(e["name"])
        status = e.get("status") if isinstance(e.get("status"), str) else "unknown"
        value = _number(e.get("value"))
        if status == OK and value is None:
            status = "not_counted"  # "ok" without a number is no figure
        reason = e.get("reason") if isinstance(e.get("reason"), str) else None
        unit = e.get("unit") if isinstance(e.get("unit"), str) and e.get("unit") else "count"
        out.append(
            CounterValue(
                e["name"], status, unit, value if status == OK else None,
                _number(e.get("total")) if status == OK else None, _number(e.get("running")), reason,
            )
        )
    return out


def counters_by_name(result: BenchResult) -> dict[str, CounterValue]:
    return {c.name: c for c in counter_values(result.counters)}


def ops(result: BenchResult) -> int | None:
    """Operations the counted batches did (the divisor of every value), if recorded."""
    v = result.counters.get("ops") if isinstance(result.counters, dict) else None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def column_name(name: str, unit: str) -> str:
    """The export column of a counter: `task-clock_ns_per_op`, `page-faults_per_op`, `ipc`."""
    if unit == "ratio":
        return name
    if unit == "count":
        return f"{name}_per_op"
    return f"{name}_{unit}_per_op"


def unit_label(unit: str) -> str:
    """`ns/op`, `/op` (events per operation), `ratio`."""
    if unit == "ratio":
        return "ratio"
    if unit == "count":
        return "/op"
    return f"{unit}/op"


def label(name: str, unit: str) -> str:
    """A heading for people: `task-clock ns/op`, `page-faults /op`, `ipc`."""
    return name if unit == "ratio" else f"{name} {unit_label(unit)}"


@dataclass(frozen=True)
class Column:
    """A counter counted (status ok) in at least one result of a run."""

    name: str
    unit: str  # of the first ok value (a counter's unit never changes)

    @property
    def label(self) -> str:
        return label(self.name, self.unit)

    @property
    def column(self) -> str:
        return column_name(self.name, self.unit)


def columns(results: Sequence[BenchResult]) -> list[Column]:
    """Every counter with an ok value somewhere in `results`, in the order first requested."""
    order: list[str] = []
    units: dict[str, str] = {}
    for r in results:
        for c in counter_values(r.counters):
            if c.name not in order:
                order.append(c.name)
            if c.ok and c.name not in units:
                units[c.name] = c.unit
    return [Column(n, units[n]) for n in order if n in units]


def with_counters(results: Sequence[BenchResult]) -> list[BenchResult]:
    """The ok results that carry a counters record with at least one element."""
    return [r for r in results if r.status == "ok" and counter_values(r.counters)]


def value_text(c: CounterValue | None, fmt: Any) -> str:
    """A value cell: the number (`fmt`), `~` before a multiplexed (scaled) one, '-' when none."""
    if c is None or not c.ok:
        return "-"
    return ("~" if c.multiplexed else "") + fmt(c.value)


def _named(items: Sequence[str]) -> str:
    shown = ", ".join(items[:MAX_NAMED])
    return shown + (f" and {len(items) - MAX_NAMED} more" if len(items) > MAX_NAMED else "")


def notes(results: Sequence[BenchResult]) -> list[str]:
    """What the counters could not do in this run, once each (not in every row).

    One line per (status, reason): the counters it concerns and why, e.g.
    `unsupported: cycles, instructions (no PMU ...)`, naming the instances
    only when it does not hold for every instance with counters. Then a line
    when kernel-side counting was not allowed, and one when some values were
    multiplexed (shown with `~`).
    """
    measured = with_counters(results)
    groups: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
    user_only: dict[str, list[str]] = {}
    multiplexed: list[str] = []
    for r in measured:
        what = describe_instance(r.bench, r.params)
        for c in counter_values(r.counters):
            if c.ok:
                if c.multiplexed and c.name not in multiplexed:
                    multiplexed.append(c.name)
                continue
            names, where = groups.setdefault((c.status, c.reason or "no reason given"), ([], []))
            if c.name not in names:
                names.append(c.name)
            if what not in where:
                where.append(what)
        record = r.counters or {}
        if record.get("kernel") is False:
            why = record.get("kernel_reason")
            user_only.setdefault(why if isinstance(why, str) and why else "no reason given", []).append(what)
    out = []
    for (status, reason), (names, where) in groups.items():
        scope = "" if len(where) == len(measured) else f" in {_named(where)}"
        out.append(f"{status.replace('_', ' ')}: {', '.join(names)}{scope} ({reason})")
    for reason, where in user_only.items():
        scope = "" if len(where) == len(measured) else f" in {_named(where)}"
        out.append(f"user space only{scope}: kernel-side events were not counted ({reason})")
    if multiplexed:
        out.append(
            f"~ multiplexed: {', '.join(multiplexed)} shared the PMU and counted only part of the time; "
            "the value is scaled up (an estimate)"
        )
    return out


HEADING = "Performance counters per operation"
EXPLAIN = (
    "Totals over the sampled batches divided by the operations in them (docs/methods/counters.md): "
    "task-clock is CPU time per operation, not latency; the other events are counts per operation."
)


# --- comparison -------------------------------------------------------------


@dataclass(frozen=True)
class CounterDelta:
    """One counter of one compared instance, counted in both runs."""

    name: str
    unit: str
    baseline: float
    value: float
    multiplexed: bool  # in either run: the values are scaled estimates

    @property
    def label(self) -> str:
        return label(self.name, self.unit)

    @property
    def ratio(self) -> float:
        """value / baseline; NaN when the baseline is 0 (0 -> 0 is no change: 1)."""
        if self.baseline == 0:
            return 1.0 if self.value == 0 else math.nan
        return self.value / self.baseline

    @property
    def change(self) -> float:
        return self.ratio - 1.0


def deltas(baseline: BenchResult, other: BenchResult) -> list[CounterDelta]:
    """Every counter ok in both results (same name and unit), in the baseline's order."""
    theirs = counters_by_name(other)
    out = []
    for b in counter_values(baseline.counters):
        o = theirs.get(b.name)
        if not (b.ok and o is not None and o.ok and o.unit == b.unit):
            continue
        assert b.value is not None and o.value is not None
        out.append(CounterDelta(b.name, b.unit, b.value, o.value, b.multiplexed or o.multiplexed))
    return out


def change_text(d: CounterDelta) -> str:
    """`+8.6%`; `-` when the baseline is 0 and the value is not."""
    return "-" if math.isnan(d.ratio) else f"{100 * d.change:+.1f}%"


def ratio_text(d: CounterDelta) -> str:
    return "-" if math.isnan(d.ratio) else f"{d.ratio:.3f}"
