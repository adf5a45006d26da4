"""One run as text: the summary table, skips, errors and warnings."""

from __future__ import annotations

from typing import Sequence

from ..model import BenchResult, RunInfo
from ..records import describe_instance, format_params
from ..sysinfo import KEY_HOSTNAME, KEY_KERNEL, machine_text
from ..warnings import CodedWarning
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


def render_run(run: RunInfo, results: Sequence[BenchResult], warnings: Sequence[CodedWarning]) -> str:
    """The summary of one run, as `osmeter run` ends and `osmeter show` prints it."""
    parts = [run_heading(run)]
    ok = [r for r in results if r.status == "ok"]
    if ok:
        parts.append(render_table(SUMMARY_HEADERS, [_ok_row(r) for r in ok], _RIGHT))
        if any(r.summary is not None and not r.summary.kbest_stable for r in ok):
            parts.append("* no stable run of 5 samples within 5 %: lebench_kbest is the minimum")
    skipped = [r for r in results if r.status == "skip"]
    if skipped:
        parts.append("skipped:\n" + "\n".join(f"  {describe_instance(r.bench, r.params)}: {r.reason}" for r in skipped))
    failed = [r for r in results if r.status == "error"]
    if failed:
        parts.append("errors:\n" + "\n".join(f"  {describe_instance(r.bench, r.params)}: {r.reason}" for r in failed))
    if warnings:
        parts.append("\n".join(w.render() for w in warnings))
    return "\n\n".join(parts) + "\n"
