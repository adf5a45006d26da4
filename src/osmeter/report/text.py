"""One run as text: the summary table, skips, errors and warnings."""

from __future__ import annotations

from typing import Sequence

from ..model import BenchResult, RunInfo
from ..records import describe_instance, format_params
from ..sysinfo import KEY_HOSTNAME, KEY_KERNEL, machine_text
from ..warnings import CodedWarning
from . import counters as ctr
from .table import fmt_num, fmt_percent, render_table

SUMMARY_HEADERS = ("benchmark", "params", "median", "95% CI of median", "min", "CV %", "n", "unit", "lebench_kbest")
_RIGHT = (False, False, True, True, True, True, True, False, True)


def _ok_row(r: BenchResult) -> list[str]:
    s = r.summary
    assert s is not None
    kbest = fmt_num(s.lebench_kbest) + ("" if s.kbest_stable else "*")
    return [
        r.bench,
        format_params(r.params),
        fmt_num(s.median),
        f"{fmt_num(s.ci_low)} .. {fmt_num(s.ci_high)}",
        fmt_num(s.min),
        fmt_percent(s.cv),
        str(s.n),
        r.unit or "",
        kbest,
    ]


COUNTER_WIDTH = 120  # characters: counter columns beyond it go into another table below


def _column_chunks(fixed: int, widths: Sequence[int], limit: int) -> list[list[int]]:
    """Indices of the counter columns, split into as few tables as fit in `limit`
    (at least one column each), the columns shared out evenly between them."""
    count = 1
    used = fixed
    for i, w in enumerate(widths):
        if i and used + 2 + w > limit:
            count += 1
            used = fixed
        used += 2 + w
    while True:
        size = -(-len(widths) // count)
        chunks = [list(range(k, min(k + size, len(widths)))) for k in range(0, len(widths), size)]
        if count >= len(widths) or all(fixed + sum(2 + widths[i] for i in c) <= limit for c in chunks):
            return chunks
        count += 1


def render_counters(results: Sequence[BenchResult], width: int = COUNTER_WIDTH) -> str:
    """The counters of a run as their own table(s) under the summary, then what could not be counted.

    One row per instance with counters, one column per counter counted
    somewhere (name over its unit, per operation); a wide set of counters is
    split into several tables of at most `width` characters. Empty when
    the run holds no counters."""
    measured = ctr.with_counters(results)
    if not measured:
        return ""
    cols = ctr.columns(measured)
    parts = [f"{ctr.HEADING.lower()} (docs/methods/counters.md; task-clock is CPU time, not latency):"]
    if cols:
        lead = [[r.bench, format_params(r.params)] for r in measured]
        cells = []
        for r in measured:
            by_name = ctr.counters_by_name(r)
            cells.append([ctr.value_text(by_name.get(c.name), fmt_num) for c in cols])
        heads = [f"{c.name}\n{ctr.unit_label(c.unit)}" for c in cols]
        widths = [
            max(len(c.name), len(ctr.unit_label(c.unit)), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)
        ]
        fixed = max(len("benchmark"), *(len(x[0]) for x in lead)) + 2 + max(len("params"), *(len(x[1]) for x in lead))
        for chunk in _column_chunks(fixed, widths, width):
            rows = [lead[k] + [cells[k][i] for i in chunk] for k in range(len(measured))]
            right = [False, False] + [True] * len(chunk)
            parts.append(render_table(["benchmark", "params"] + [heads[i] for i in chunk], rows, right))
    else:
        parts.append("no counter could be counted here")
    parts.extend(ctr.notes(measured))
    return "\n".join(parts)


def run_heading(run: RunInfo) -> str:
    label = f" '{run.label}'" if run.label else ""
    host = machine_text(run.machine, KEY_HOSTNAME) or "unknown host"
    kernel = machine_text(run.machine, KEY_KERNEL) or "unknown kernel"
    status = run.status + (f" ({run.status_reason})" if run.status_reason else "")
    suite = run.suite or "selected benchmarks"
    return (
        f"run {run.id}{label}: {suite} on {host}, Linux {kernel}, started {run.start_time}, {status}\n"
        f"probe {run.probe_version}, osmeter {run.osmeter_version}; "
        f"{run.counts.ok} ok, {run.counts.skip} skipped, {run.counts.error} failed"
    )


def render_run(
    run: RunInfo, results: Sequence[BenchResult], warnings: Sequence[CodedWarning], width: int = COUNTER_WIDTH
) -> str:
    """The summary of one run, as `osmeter run` ends and `osmeter show` prints it.

    Counters, when the run has them, get their own table under the summary
    (render_counters), at most `width` characters wide or as wide as the
    summary table when that is wider."""
    parts = [run_heading(run)]
    ok = [r for r in results if r.status == "ok"]
    if ok:
        table = render_table(SUMMARY_HEADERS, [_ok_row(r) for r in ok], _RIGHT)
        parts.append(table)
        if any(r.summary is not None and not r.summary.kbest_stable for r in ok):
            parts.append("* no stable run of 5 samples within 5 %: lebench_kbest is the minimum")
        # as wide as the terminal, or as the summary above it when that is wider already
        counters = render_counters(ok, max(width, max(len(line) for line in table.splitlines())))
        if counters:
            parts.append(counters)
    skipped = [r for r in results if r.status == "skip"]
    if skipped:
        parts.append("skipped:\n" + "\n".join(f"  {describe_instance(r.bench, r.params)}: {r.reason}" for r in skipped))
    failed = [r for r in results if r.status == "error"]
    if failed:
        parts.append("errors:\n" + "\n".join(f"  {describe_instance(r.bench, r.params)}: {r.reason}" for r in failed))
    if warnings:
        parts.append("\n".join(w.render() for w in warnings))
    return "\n\n".join(parts) + "\n"
