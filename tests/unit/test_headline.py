"""The headline (issue 28): the figures people quote, first, in the run summary and every report."""

from __future__ import annotations

import numpy as np

from osmeter import stats
from osmeter.model import BenchResult
from osmeter.report.headline import headline_lines, report_headline
from osmeter.report.tables import to_markdown, to_text
from osmeter.report.text import render_headline
from osmeter.warnings import CodedWarning


def _r(seq: int, bench: str, params: dict, median: float, unit: str = "ns", flags: tuple = (),
       extra: dict | None = None, record: dict | None = None) -> BenchResult:
    x = np.random.default_rng(seq).normal(median, median * 0.01, 500)
    return BenchResult(seq=seq, bench=bench, params=params, status="ok", unit=unit, summary=stats.summary(x),
                       flags=flags, extra=extra or {}, record=record or {})


def _latency_curve(start: int) -> list[BenchResult]:
    out = []
    for k in range(10, 28):  # 1 KiB .. 128 MiB: plateaus at 1.2, 4, 15 and 90 ns
        size = 1 << k
        ns = 1.2 if size <= 32 << 10 else 4.0 if size <= 512 << 10 else 15.0 if size <= 16 << 20 else 90.0
        out.append(_r(start + k, "mem.latency", {"size": size, "pattern": "random", "stride": 64, "thp": 0}, ns,
                      extra={"size_bytes": size}))
    return out


FORK = {"touched_mib": 0, "vmas": 0, "concurrency": 1, "thp": 0, "migrate": 0, "drop_caches": 0}


def run_results() -> list[BenchResult]:
    return [
        _r(0, "cpu.call", {"args": 0}, 1.5),
        _r(1, "syscall.null", {}, 95.0),
        _r(2, "task.fork", {**FORK, "vmas": 6000}, 7.6e6),
        _r(3, "task.fork", FORK, 76000.0, flags=("unstable",)),
        _r(4, "ctxsw.pipe", {"mode": "process", "placement": "same_cpu", "nproc": 2, "ws_kib": 0}, 3165.0),
        _r(8, "mem.bandwidth", {"op": "read", "threads": "1", "size": 16384}, 6.3e10, unit="bytes_per_s"),  # L1's
        _r(5, "mem.bandwidth", {"op": "read", "threads": "1", "size": 0}, 1.294e10, unit="bytes_per_s"),
        _r(6, "net.tcp_rtt", {"size": 1, "placement": "cross_cpu", "peer": "", "family": "ipv4"}, 25000.0,
           record={"placement": "cross_cpu"}),
        _r(7, "rt.cyclic", {"interval_us": 1000, "stress": 0}, 4000.0),
        *_latency_curve(100),
    ]


def test_the_headline_quotes_each_family_in_order_scaled() -> None:
    results = run_results()
    lines = {x.label: x for x in headline_lines(results)}
    labels = list(lines)
    assert labels[:3] == ["null system call", "context switch (pipe, same CPU)", "fork (small parent)"]
    assert lines["null system call"].value == "95.00 ns"
    assert lines["fork (small parent)"].value.endswith(" µs") and "unstable" in lines["fork (small parent)"].flags
    assert lines["memory bandwidth (read, 1 thread)"].value == "12.94 GB/s"  # size=0 (memory), threads "1" as 1
    assert "TCP round trip (cross CPU)" in lines
    cyclic = lines["cyclic wake-up latency, max"]
    assert cyclic.value.endswith(" µs") and cyclic.interval == "-"  # cyclictest's Max: the maximum, no interval
    levels = [x for x in labels if x.startswith("memory latency")]
    assert len(levels) >= 3 and labels.index(levels[0]) == labels.index("fork (small parent)") + 1
    assert lines[levels[0]].value.startswith("1.2") and lines[levels[-1]].value.startswith(("89", "90", "91"))


def test_the_headline_fits_the_width_and_names_the_warnings() -> None:
    warnings = [CodedWarning("unstable", "x", "y"), CodedWarning("virtualized", "x", "y")]
    text = render_headline(run_results(), {}, warnings, 60)
    assert text.splitlines()[0].startswith("headline") and max(len(line) for line in text.splitlines()) <= 60
    assert text.splitlines()[-1] == "warnings below: unstable, virtualized"
    assert render_headline([_r(0, "cpu.call", {"args": 0}, 1.5)], {}, warnings, 100) == ""  # nothing to quote


class _Pred:
    def __init__(self, value: float, result: BenchResult) -> None:
        self.prediction = type("P", (), {"stored_value": value, "stored_unit": "ns"})()
        self.result = result
        self.ratio = result.summary.median / value


def test_predictions_add_their_columns() -> None:
    results = run_results()
    null = results[1]
    table = report_headline(results, {}, [_Pred(50.0, null)])
    assert table is not None and [c.header for c in table.columns][3:5] == ["predicted", "measured / predicted"]
    md = to_markdown(table)
    assert "| null system call | 95.00 ns |" in md and "| 50.00 ns | 1.90× |" in md
    row = next(line for line in to_text(table).splitlines() if line.startswith("context switch"))
    assert row.split()[-2:] == ["-", "-"]  # no prediction for it
