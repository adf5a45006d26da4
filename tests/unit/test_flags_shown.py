"""Issue 9, the display side: flags and repetitions shown everywhere a result is,
best = the best sample, `--names lebench`, and reference cycles labelled as such."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pytest

from osmeter.fmt import fmt_quantity
from osmeter import lebench
from osmeter.catalog import LebenchRow
from osmeter.model import BenchResult, NewRun
from osmeter.repeats import Repetition
from osmeter.stats import higher_is_better, summary
from osmeter.store import open_store

from ..synthetic import MACHINE, META
from .test_report import Page, assert_self_contained


def rep(median: float, flags: Sequence[str] = (), status: str = "ok") -> Repetition:
    if status != "ok":
        return Repetition(status, reason="fork: Resource temporarily unavailable")
    return Repetition("ok", 100, median, median * 0.999, median * 1.001, 1, "rse", tuple(flags), 0.1)


def add_run(store_path: Path, results: Sequence[Mapping[str, Any]], suite: str | None = "standard",
            label: str | None = None) -> int:
    """A complete run of these results (bench, params, unit, samples, and optionally flags,
    repetitions, record) stored through the store API; returns its id."""
    store = open_store(str(store_path), create=True)
    try:
        with store.transaction():
            run_id = store.create_run(NewRun(label, "2026-11-22T08:00:00Z", "run", "0.2.0", "0.2.0", suite,
                                             ["synthetic"], {}, dict(MACHINE), dict(META, suite=suite)))
            for seq, spec in enumerate(results):
                x = np.asarray(spec["samples"], dtype=np.float64)
                unit = spec.get("unit", "ns")
                result = BenchResult(
                    seq=seq, bench=spec["bench"], params=dict(spec.get("params", {})), status="ok", unit=unit,
                    summary=summary(x, higher_is_better=higher_is_better(unit)), batch=1,
                    record=dict(spec.get("record", {})), flags=tuple(spec.get("flags", ())),
                    repetitions=tuple(spec.get("repetitions", ())),
                )
                store.add_result(run_id, result, x)
            store.finish_run(run_id, "complete", "2026-11-22T08:01:00Z", None)
        return run_id
    finally:
        store.close()


def samples(median: float, n: int = 400, seed: int = 1, cv: float = 0.01) -> np.ndarray:
    return median * np.random.default_rng(seed).lognormal(0.0, cv, n)


THREE = (rep(100.0), rep(113.0), rep(104.0))  # spread 13 %: unstable


@pytest.fixture
def flagged(store_path: Path) -> int:
    """syscall.null unstable (13 %), cpu.call precision-unmet, a bandwidth, an unflagged fork."""
    return add_run(store_path, [
        {"bench": "syscall.null", "samples": samples(100.0), "flags": ("unstable",), "repetitions": THREE,
         "record": {"median": 100.0, "ref_cycles": 300.0}},
        {"bench": "cpu.call", "params": {"args": 0}, "samples": samples(1.5, seed=2),
         "flags": ("precision-unmet",), "repetitions": (rep(1.5, ["precision-unmet"]), rep(1.5), rep(1.5))},
        {"bench": "mem.bandwidth", "params": {"op": "read"}, "unit": "bytes_per_s", "samples": samples(1e10, seed=3),
         "repetitions": (rep(1e10),) * 3},
        {"bench": "task.fork", "samples": samples(30000.0, seed=4), "repetitions": (rep(3e4),) * 3},
    ])


def table_row(text: str, startswith: str) -> list[str]:
    (line,) = [line for line in text.splitlines() if line.startswith(startswith)]
    return line.split()


def right_cell(text: str, startswith: str, column: str) -> str:
    """The cell of a right-aligned column in a text table: it ends where its header ends."""
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith(("benchmark", "LEBench row")))
    end = re.search(rf"(?<!\S){re.escape(column)}(?!\S)", header).end()
    (line,) = [line for line in lines if line.startswith(startswith)]
    return re.split(r"\s{2,}", line[:end].strip())[-1]  # a cell may hold one space: '2.654 ms'; columns two


def test_show_flags_each_result_with_a_legend_and_the_repetitions(cli, flagged: int) -> None:
    out = cli("show", str(flagged)).out
    assert "3 repetitions per instance" in out  # every instance had 3: in the heading, no column R
    header = table_row(out, "benchmark")
    assert "R" not in header and header[-1] == "flags" and "best" in header and "min" not in header
    assert table_row(out, "syscall.null")[-2:] == ["unstable", "13%"]
    assert table_row(out, "cpu.call")[-1] == "precision-unmet"
    assert table_row(out, "task.fork")[-1].isdigit()  # the row ends with n: an empty flags cell
    legend = out.split('flags (docs/report.md, "Flags"):')[1]
    assert "precision-unmet" in legend and "--max-time" in legend
    assert "unstable" in legend and "--repeat" in legend
    assert "not-pinned" not in legend  # only the flags present


def test_best_is_the_maximum_for_a_rate(cli, flagged: int, store_path: Path) -> None:
    out = cli("show", str(flagged)).out
    store = open_store(str(store_path), create=False)
    results = {r.bench: r for r in store.results(flagged)}
    store.close()
    bw, fork = results["mem.bandwidth"].summary, results["task.fork"].summary
    assert bw.max > bw.median > bw.min
    assert right_cell(out, "mem.bandwidth", "best") == fmt_quantity(bw.max, "bytes_per_s")
    assert right_cell(out, "task.fork", "best") == fmt_quantity(fork.min, "ns")
    md = cli("report", str(flagged), "--format", "md").out
    assert "| best |" in md and f"| {fmt_quantity(bw.max, 'bytes_per_s')} |" in md and "| min |" not in md


def test_different_repetition_counts_get_a_column(cli, store_path: Path) -> None:
    run = add_run(store_path, [
        {"bench": "syscall.null", "samples": samples(100.0), "repetitions": (rep(100.0),) * 3},
        {"bench": "task.fork", "samples": samples(3e4), "repetitions": (rep(3e4),),
         "flags": ("repetition-failed",)},
    ])
    out = cli("show", str(run)).out
    assert "1 to 3 repetitions per instance (column R" in out
    assert right_cell(out, "syscall.null", "R") == "3" and right_cell(out, "task.fork", "R") == "1"
    assert "repetition-failed" in out and "R: repetitions" in out


def test_kbest_footnote_says_what_lebench_falls_back_to(cli, store_path: Path) -> None:
    run = add_run(store_path, [{"bench": "syscall.null", "samples": [100.0, 150.0, 230.0, 400.0, 900.0, 2000.0]}])
    out = cli("show", str(run), "--wide").out  # lebench_kbest: a column of the wide view (and of --names lebench)
    assert ("* no run of 5 samples within 5 % completed: lebench_kbest is LEBench's fallback (the first value of "
            "its partial run; the minimum, or maximum for rates, where LEBench has none)") in out
    assert "lebench_kbest" not in cli("show", str(run)).out
    assert "1 repetition per instance" in out


def test_reports_show_flags_best_and_repetitions(cli, flagged: int) -> None:
    md = cli("report", str(flagged), "--format", "md").out
    assert "3 repetitions per instance" in md
    row = next(line for line in md.splitlines() if line.startswith("| syscall.null |"))
    assert row.rstrip(" |").endswith("unstable 13%")
    assert "- `unstable`: the repetitions' medians" in md and "--repeat" in md
    assert "- `precision-unmet`:" in md and "- `not-pinned`" not in md
    html = cli("report", str(flagged)).out
    assert_self_contained(html)
    page = Page(html)
    flags = [a for t, a in page.tags if t == "span" and a.get("class") == "flag"]
    assert any("--max-time" in (a.get("title") or "") for a in flags)  # hover says what it means
    assert '<tr class="flagged">' in html and "unstable 13%" in html
    assert "<th class=\"num\">best</th>" in html and "3 repetitions per instance" in html
    assert '<ul class="flags">' in html and "pin to an idle CPU" in html


def test_reference_cycles_are_labelled_and_exported(cli, flagged: int) -> None:
    html = cli("report", str(flagged)).out
    # the page fits 1400 px: the reference cycles are the median's hover, one decimal
    assert "ref cycles</th>" not in html and "not core cycles" in html
    assert re.search(r'<td class="num" title="(29\d|30\d)\.\d reference cycles \(TSC ticks\)">', html)
    md = cli("report", str(flagged), "--format", "md").out
    assert "| ref cycles |" in md
    rows = list(csv.DictReader(io.StringIO(cli("export", str(flagged), "--format", "csv").out)))
    by = {r["bench"]: r for r in rows}
    assert float(by["syscall.null"]["ref_cycles"]) == pytest.approx(300.0 * float(by["syscall.null"]["median"]) / 100)
    assert by["task.fork"]["ref_cycles"] == ""


def test_mem_levels_text_says_ref_cycles_with_one_decimal() -> None:
    from osmeter.memlevels import CurvePoint, detect_levels, render_text
    from osmeter.memlevels import CurveAnalysis

    pts = [CurvePoint(s * 1024, 1.5 if s <= 32 else 80.0, (1.5 if s <= 32 else 80.0) * 2.0)
           for s in (4, 8, 16, 32, 64 * 1024, 128 * 1024, 256 * 1024, 512 * 1024)]
    text = render_text([CurveAnalysis("random", 64, 0, tuple(pts), detect_levels(pts))])
    assert "3.0 ref cycles" in text and "160.0 ref cycles" in text and re.search(r"\d cyc\b", text) is None


def test_exports_carry_flags_repetitions_and_spread(cli, flagged: int) -> None:
    doc = json.loads(cli("export", str(flagged), "--format", "json").out)
    by = {r["bench"]: r for r in doc["results"]}
    assert by["syscall.null"]["flags"] == ["unstable"] and by["task.fork"]["flags"] == []
    assert by["syscall.null"]["repetitions"] == 3 and by["syscall.null"]["spread"] == pytest.approx(0.13)
    assert [p["median"] for p in by["syscall.null"]["per_repetition"]] == [100.0, 113.0, 104.0]
    assert by["syscall.null"]["lebench_row"] is None
    rows = list(csv.DictReader(io.StringIO(cli("export", str(flagged), "--format", "csv").out)))
    csv_by = {r["bench"]: r for r in rows}
    assert csv_by["syscall.null"]["flags"] == "unstable" and csv_by["task.fork"]["flags"] == ""
    assert csv_by["cpu.call"]["repetitions"] == "3" and csv_by["task.fork"]["spread"] == "0.0"


def test_two_flags_in_csv_are_joined_with_semicolons(cli, store_path: Path) -> None:
    run = add_run(store_path, [{"bench": "syscall.null", "samples": samples(100.0),
                                "flags": ("precision-unmet", "unstable"), "repetitions": THREE}])
    (row,) = csv.DictReader(io.StringIO(cli("export", str(run), "--format", "csv").out))
    assert row["flags"] == "precision-unmet;unstable"


# --- compare ------------------------------------------------------------------


@pytest.fixture
def caveat_runs(store_path: Path) -> tuple[int, int]:
    """syscall.null 20 % slower in run 2, which flagged it precision-unmet; cpu.call unchanged."""
    a = add_run(store_path, [
        {"bench": "syscall.null", "samples": samples(100.0, 2000)},
        {"bench": "cpu.call", "params": {"args": 0}, "samples": samples(1.5, 2000, seed=5)},
    ], label="base")
    b = add_run(store_path, [
        {"bench": "syscall.null", "samples": samples(120.0, 2000, seed=7), "flags": ("precision-unmet",)},
        {"bench": "cpu.call", "params": {"args": 0}, "samples": samples(1.5, 2000, seed=6)},
    ], label="new")
    return a, b


def test_compare_text_puts_the_caveat_next_to_the_verdict(cli, caveat_runs) -> None:
    r = cli("compare", "1", "2")
    assert r.code == 0, r.err
    row = next(line for line in r.out.splitlines() if line.startswith("syscall.null"))
    assert row.endswith("slower [precision-unmet]")
    assert "2 compared, 1 significant (1 slower, 0 faster; 1 with a caveat)" in r.out
    assert "[...] after a verdict" in r.out and "--max-time" in r.out


def test_compare_json_has_flags_caveat_and_method(cli, caveat_runs) -> None:
    doc = json.loads(cli("compare", "1", "2", "--json").out)
    (null,) = [c for c in doc["comparisons"] if c["bench"] == "syscall.null"]
    assert null["flags"] == ["precision-unmet"] and null["caveat"] == "precision-unmet"
    assert null["method"] == "bootstrap" and null["lebench_row"] is None
    (call,) = [c for c in doc["comparisons"] if c["bench"] == "cpu.call"]
    assert call["flags"] == [] and call["caveat"] == ""
    assert doc["significant"] == 1 and doc["significant_with_caveat"] == 1
    assert "--max-time" in doc["flag_legend"]["precision-unmet"]


def test_compare_shows_cache_edge_as_a_caveat_with_its_legend(cli, store_path: Path) -> None:
    """Issue 30: an L3-edge size 3x slower in the second run (the VM got less of the L3) is
    significant, but with the caveat cache-edge and what to do about it."""
    edge = {"size": 8 * 1024 * 1024, "pattern": "random", "stride": 64, "thp": 0}
    add_run(store_path, [{"bench": "mem.latency", "params": edge, "samples": samples(40.0, 2000)}], label="a")
    add_run(store_path, [{"bench": "mem.latency", "params": edge, "samples": samples(120.0, 2000, seed=3),
                          "flags": ("cache-edge",)}], label="b")
    r = cli("compare", "1", "2")
    assert r.code == 0, r.err
    row = next(line for line in r.out.splitlines() if line.startswith("mem.latency"))
    assert row.endswith("slower [cache-edge]")
    assert "1 with a caveat" in r.out and "mem-levels" in r.out
    doc = json.loads(cli("compare", "1", "2", "--json").out)
    assert doc["comparisons"][0]["caveat"] == "cache-edge" and doc["significant_with_caveat"] == 1


def test_compare_heatmap_marks_a_caveat(cli, caveat_runs, tmp_path: Path) -> None:
    out = tmp_path / "heat.html"
    assert cli("compare", "1", "2", "-o", str(out)).code == 0
    text = out.read_text()
    assert_self_contained(text)
    cells = [a for t, a in Page(text).tags if t == "td" and "cell" in (a.get("class") or "")]
    (marked,) = [a for a in cells if "caveat" in a["class"]]
    assert "caveat: precision-unmet" in marked["title"] and "--max-time" in marked["title"]
    assert "1 with a caveat" in text and '<ul class="flags">' in text
    svg = tmp_path / "heat.svg"
    assert cli("compare", "1", "2", "-o", str(svg)).code == 0
    assert "flagged figure" in svg.read_text()


# --- --names lebench --------------------------------------------------------------


def row(name: str, bench: str, params: dict[str, Any] | None, pending: str | None = None) -> LebenchRow:
    return LebenchRow(name, bench, "", params, params is not None, pending, "region", None, 1, 1000)


TABLE = (
    row("ref", "cpu.timer_overhead", {"source": "monotonic"}),
    row("getpid", "syscall.null", {}),
    row("send", "ipc.unix_send", None, "LEBench row 'send': the ipc family is not built yet"),
    row("fork", "task.fork", {"vmas": 0}),
    row("big fork", "task.fork", {"vmas": 6000}),
    row("small read", "file.read", None, "LEBench row 'small read': the file family is not built yet"),
)


@pytest.fixture
def lebench_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lebench, "probe_rows", lambda: TABLE)


@pytest.fixture
def lebench_run(store_path: Path, lebench_table) -> int:
    """A run whose results come in another order than LEBench's: one recorded a label,
    two match a row by benchmark and parameters, one matches none."""
    return add_run(store_path, [
        {"bench": "cpu.call", "params": {"args": 0}, "samples": samples(1.5)},
        {"bench": "task.fork", "params": {"vmas": 6000}, "samples": samples(2e6)},
        {"bench": "task.fork", "params": {"vmas": 0}, "samples": samples(3e4, seed=9)},
        {"bench": "syscall.null", "samples": samples(100.0), "record": {"lebench_row": "getpid"}},
    ], suite="lebench")


def test_show_names_lebench_labels_orders_and_adds_the_average(cli, lebench_run: int, store_path: Path) -> None:
    out = cli("show", str(lebench_run), "--names", "lebench").out
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("LEBench row"))
    assert "k-best" in header and "lebench_kbest" not in header and "average" not in header  # average: --wide
    wide = cli("show", str(lebench_run), "--names", "lebench", "--wide").out
    assert "average" in next(line for line in wide.splitlines() if line.startswith("LEBench row"))
    body = lines[lines.index(header) + 2:]
    labels = [line[:header.index("benchmark")].strip() for line in body[:4]]
    assert labels == ["getpid", "fork", "big fork", ""]  # LEBench's order, the unmatched result last
    assert body[3].split()[0] == "cpu.call"
    store = open_store(str(store_path), create=False)
    (fork,) = [r for r in store.results(lebench_run) if r.params == {"vmas": 0}]
    store.close()
    fork_line = next(line for line in wide.splitlines() if line.startswith("fork "))
    assert f" {fmt_quantity(fork.summary.mean, 'ns')} " in fork_line  # LEBench's average, the mean (--wide)
    assert "2 of 6 LEBench rows are pending: send, small read (families ipc, file not built yet)" in out


def test_pending_rows_are_stated_for_a_lebench_run_whatever_the_names(cli, lebench_run: int) -> None:
    out = cli("show", str(lebench_run)).out
    assert "2 of 6 LEBench rows are pending" in out
    assert "1 available LEBench row(s) not in this run: ref" in out
    assert table_row(out, "benchmark")[0] == "benchmark"  # osmeter's names: no LEBench column
    md = cli("report", str(lebench_run), "--format", "md").out
    assert "2 of 6 LEBench rows are pending" in md


def test_reports_and_exports_with_lebench_names(cli, lebench_run: int) -> None:
    md = cli("report", str(lebench_run), "--format", "md", "--names", "lebench").out
    table = md.split("### Results")[1].split("\n\n")[1].splitlines()
    assert table[0].startswith("| LEBench row | benchmark | params |") and "| average |" in table[0]
    assert [line.split("|")[1:3] for line in table[2:]] == [
        [" getpid ", " syscall.null "], [" fork ", " task.fork "], [" big fork ", " task.fork "], ["   ", " cpu.call "]
    ]
    html = cli("report", str(lebench_run), "--names", "lebench").out
    assert html.index(">getpid<") < html.index(">fork<") < html.index(">big fork<")
    doc = json.loads(cli("export", str(lebench_run), "--format", "json", "--names", "lebench").out)
    assert [r["lebench_row"] for r in doc["results"]] == ["getpid", "fork", "big fork", None]
    doc = json.loads(cli("export", str(lebench_run), "--format", "json").out)
    assert [r["lebench_row"] for r in doc["results"]] == [None, None, None, "getpid"]  # only what was recorded
    rows = list(csv.DictReader(io.StringIO(cli("export", str(lebench_run), "--format", "csv", "--names",
                                               "lebench").out)))
    assert [r["lebench_row"] for r in rows] == ["getpid", "fork", "big fork", ""]
    shown = json.loads(cli("show", str(lebench_run), "--json", "--names", "lebench").out)
    assert shown["results"][0]["lebench_row"] == "getpid"


def test_compare_names_lebench(cli, store_path: Path, lebench_table, tmp_path: Path) -> None:
    specs = [
        {"bench": "task.fork", "params": {"vmas": 0}, "samples": samples(3e4, 1000)},
        {"bench": "cpu.call", "params": {"args": 0}, "samples": samples(1.5, 1000)},
        {"bench": "syscall.null", "samples": samples(100.0, 1000)},
    ]
    add_run(store_path, specs)
    add_run(store_path, [dict(s, samples=np.asarray(s["samples"]) * 1.2) for s in specs])
    out = cli("compare", "1", "2", "--names", "lebench").out
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("LEBench row"))
    body = lines[lines.index(header) + 2:lines.index(header) + 5]
    assert [line.split()[0] for line in body] == ["getpid", "fork", "cpu.call"]
    doc = json.loads(cli("compare", "1", "2", "--names", "lebench", "--json").out)
    assert [c["lebench_row"] for c in doc["comparisons"]] == ["getpid", "fork", None]
    heat = tmp_path / "heat.html"
    assert cli("compare", "1", "2", "--names", "lebench", "-o", str(heat)).code == 0
    names = [m for m in re.findall(r'<th class="bench mono"[^>]*>([^<]*)</th>', heat.read_text())]
    assert names == ["getpid", "fork", "cpu.call"]  # args=0: its default, not shown (the hover has it)
