"""The headline: the few figures people quote, first.

A course project opens with one table of operations (prediction,
measurement, ratio); a kernel engineer quotes a null system call, a context
switch, a fork. The run summary and every report (text, Markdown, HTML)
open with those, per family, for the instances the run has:

| figure | instance |
| --- | --- |
| null system call | `syscall.null` |
| context switch | `ctxsw.pipe mode=process placement=same_cpu` (per switch) |
| fork | `task.fork` of a small parent (`touched_mib=0 vmas=0`), until fork() returns |
| memory latency, each level | the plateaus `osmeter mem-levels` finds on the `mem.latency` curve |
| memory bandwidth | `mem.bandwidth op=read threads=1` |
| 4 KiB file read | `file.read size=4096` (the page cache) |
| TCP round trip | `net.tcp_rtt size=1` (its placement said) |
| cyclic wake-up latency, max | `rt.cyclic`'s maximum (cyclictest's "Max") |

Each with its interval (a level's plateau: its range), its flags, and with
`--expect` the prediction and measured / predicted. The warnings that change
a figure's meaning are the summary's own (report.warnings), said once under
the table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..fmt import fmt_interval, fmt_quantity
from ..memlevels import analyse_results
from ..model import BenchResult
from . import flags as fl
from .tables import Cell, Column, Row, Table


@dataclass(frozen=True)
class Quote:
    label: str
    bench: str
    params: Mapping[str, Any]  # what the instance must have (compared as text: "1" and 1 alike)
    stat: str = "median"  # or "max": cyclictest's figure


# Each quote's instance by every parameter a sweep of the standard or full suite varies: the
# default one, not a point of a sweep (mem.bandwidth at 16 KiB is the L1's bandwidth).
QUOTES: tuple[Quote, ...] = (
    Quote("null system call", "syscall.null", {}),
    Quote("context switch (pipe, same CPU)", "ctxsw.pipe",
          {"mode": "process", "placement": "same_cpu", "nproc": 2, "ws_kib": 0}),
    Quote("fork (small parent)", "task.fork",
          {"touched_mib": 0, "vmas": 0, "concurrency": 1, "thp": 0, "migrate": 0, "drop_caches": 0}),
    Quote("memory bandwidth (read, 1 thread)", "mem.bandwidth", {"op": "read", "threads": 1, "size": 0}),
    Quote("4 KiB file read (page cache)", "file.read", {"size": 4096, "buffer": "reused"}),
    Quote("TCP round trip", "net.tcp_rtt", {"size": 1, "peer": "", "family": "ipv4"}),
    Quote("cyclic wake-up latency, max", "rt.cyclic", {"stress": 0}, stat="max"),
)
MEMORY_AFTER = "fork (small parent)"  # the memory levels' rows come after this one

HEADERS = ("figure", "value", "95% CI / range", "flags")


@dataclass(frozen=True)
class Line:
    label: str
    value: str
    interval: str
    flags: str
    result: BenchResult | None = None  # None: a memory level (the curve's, not one result's)


def _matches(r: BenchResult, q: Quote) -> bool:
    return r.bench == q.bench and r.status == "ok" and r.summary is not None and all(
        k in r.params and str(r.params[k]) == str(v) for k, v in q.params.items())


def _placement(r: BenchResult) -> str:
    place = r.placement
    return {"same_cpu": "same CPU", "cross_cpu": "cross CPU", "remote": "remote host"}.get(place or "", place or "")


def _quote_line(q: Quote, r: BenchResult) -> Line:
    s = r.summary
    assert s is not None
    label = q.label + (f" ({_placement(r)})" if q.bench == "net.tcp_rtt" and r.placement else "")
    if q.stat == "max":
        return Line(label, fmt_quantity(s.max, r.unit), "-", fl.flags_text(r), r)
    return Line(label, fmt_quantity(s.median, r.unit), fmt_interval(s.ci_low, s.ci_high, r.unit, s.median),
                fl.flags_text(r), r)


def _memory_lines(results: Sequence[BenchResult], machine: Mapping[str, Any] | None) -> list[Line]:
    """A row per level of the default curve (random, 64-byte stride, base pages)."""
    try:
        analyses = analyse_results(results, machine)
    except (ValueError, ArithmeticError):
        return []
    curve = next((a for a in analyses if (a.pattern, a.stride, a.thp) == ("random", 64, 0)), None)
    if curve is None:
        return []
    lines = []
    for lv in curve.detection.levels:  # the plateau's median; its sizes: osmeter mem-levels
        lines.append(Line(f"memory latency, {lv.name}", fmt_quantity(lv.ns, "ns"),
                          fmt_interval(lv.ns_low, lv.ns_high, "ns", lv.ns), ""))
    return lines


def headline_lines(results: Sequence[BenchResult], machine: Mapping[str, Any] | None = None) -> list[Line]:
    """The headline's rows for the run's results, in QUOTES' order; [] when it has none of them."""
    lines: list[Line] = []
    for q in QUOTES:
        r = next((x for x in results if _matches(x, q)), None)
        if r is not None:
            lines.append(_quote_line(q, r))
        if q.label == MEMORY_AFTER:
            lines += _memory_lines(results, machine)
    return lines


def report_headline(results: Sequence[BenchResult], machine: Any, predictions: Sequence[Any] = ()) -> Table | None:
    """The headline of a report's run (content.RunReport): its table, with the predictions' columns when
    --expect gave any (expect.PredictionRow: the prediction and measured / predicted of a result); None
    without any figure to quote."""
    lines = headline_lines(results, machine if isinstance(machine, dict) else None)
    if not lines:
        return None
    predicted = None
    if predictions:
        predicted = {id(p.result): (fmt_quantity(p.prediction.stored_value, p.prediction.stored_unit),
                                    "-" if p.ratio is None else f"{p.ratio:.2f}x")
                     for p in predictions if p.result is not None}
    return headline_table(lines, predicted)


def headline_table(lines: Sequence[Line], predicted: Mapping[int, tuple[str, str]] | None = None) -> Table:
    """The headline as a table; `predicted`: id(result) -> (prediction, measured / predicted) with --expect."""
    with_flags = any(x.flags for x in lines)
    columns = [Column("figure"), Column("value", True), Column("95% CI / range", True)]
    if predicted is not None:
        columns += [Column("predicted", True), Column("measured / predicted", True)]
    if with_flags:
        columns.append(Column("flags"))
    rows = []
    for x in lines:
        cells = [Cell(x.label), Cell(x.value), Cell(x.interval, md=x.interval.replace(" .. ", " – "))]
        if predicted is not None:
            p = predicted.get(id(x.result)) if x.result is not None else None
            ratio = p[1] if p else "-"
            cells += [Cell(p[0] if p else "-"), Cell(ratio, md=ratio.replace("x", "×"))]
        if with_flags:
            cells.append(Cell(x.flags))
        rows.append(Row(tuple(cells), "flagged" if x.flags else ""))
    return Table(tuple(columns), tuple(rows), 'class="headline"')
