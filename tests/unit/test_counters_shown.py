"""Performance counters (`osmeter run --counters`) in every output: show, show --json,
export JSON/CSV, the Markdown and HTML reports, and compare (issue 9, item 7)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from osmeter.model import BenchResult
from osmeter import counters as ctr
from osmeter.report.text import render_counters
from osmeter.stats import summary
from osmeter.store import open_store

from ..conftest import DATA, FakeProbe
from ..synthetic import add_run, noisy
from .test_report import Page, assert_self_contained

NO_PMU = "no PMU here (test)"


def counter(name: str, value: float | None, unit: str = "count", status: str = "ok", running: float | None = 1,
            reason: str | None = None, ops: int = 1000) -> dict[str, Any]:
    ok = status == "ok"
    return {"name": name, "status": status, "unit": unit, "value": value if ok else None,
            "total": value * ops if ok and value is not None and unit != "ratio" else None,
            "running": running if ok else None, "reason": None if ok else reason}


def record(bench: str, params: dict[str, Any], task_clock: float, page_faults: float, ops: int = 1000,
           kernel: bool = True) -> dict[str, Any]:
    """A probe `counters` record as `--counters sw,cycles,instructions` writes it on a machine without a PMU."""
    return {
        "type": "counters", "bench": bench, "params": params, "ops": ops, "kernel": kernel,
        "kernel_reason": None if kernel else "perf_event_paranoid is 2", "inherit": True,
        "counters": [
            counter("task-clock", task_clock, "ns", ops=ops),
            counter("page-faults", page_faults, ops=ops),
            counter("cycles", None, status="unsupported", reason=NO_PMU),
            counter("instructions", None, status="unsupported", reason=NO_PMU),
        ],
    }


COUNTED = {  # bench -> (task-clock ns/op, page-faults /op) in the scripted run
    "cpu.call": (1.3125, 0),
    "syscall.null": (47.5, 0),
    "task.fork": (70829.1, 25.25),
}


@pytest.fixture
def script(tmp_path: Path) -> Path:
    """tests/data/run_x86_64.jsonl with a `counters` record after each result, as the probe writes them."""
    lines = []
    for line in (DATA / "run_x86_64.jsonl").read_text().splitlines():
        lines.append(line)
        rec = json.loads(line)
        if rec["type"] == "result":
            lines.append(json.dumps(record(rec["bench"], rec["params"], *COUNTED[rec["bench"]])))
    path = tmp_path / "counted.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def counted_run(cli, script: Path, store_path: Path) -> int:
    r = cli("import", str(script), "--label", "counted")
    assert r.code == 0, r.err
    return 1


def test_run_and_show_print_counters_as_their_own_table(cli, fake_probe: FakeProbe, script: Path) -> None:
    fake_probe.set(script=script)
    r = cli("run", "cpu.call", "syscall.null", "task.fork", "file.read_cold")
    assert r.code == 0, r.err
    shown = cli("show", "latest")
    assert shown.code == 0 and shown.out == r.out  # `run` ends with what `show` prints
    summary_part, counters_part = r.out.split("performance counters per operation")
    assert "task-clock" not in summary_part  # the summary table keeps its width
    lines = counters_part.splitlines()
    assert lines[0] == " (docs/methods/counters.md; task-clock is CPU time, not latency):"
    names = lines[1].split()
    units = next(l for l in lines if l.startswith("benchmark")).split()
    assert names == ["task-clock", "page-faults"] and units == ["benchmark", "params", "ns/op", "/op"]
    rows = {l.split()[0]: l.split()[1:] for l in lines if l.startswith(("cpu.", "syscall.", "task.", "file."))}
    assert rows == {"cpu.call": ["args=0", "1.312", "0"], "syscall.null": ["-", "47.50", "0"],
                    "task.fork": ["touched_mib=1", "70,830", "25.25"]}  # file.read_cold was skipped: no counters
    # unsupported counters: one line naming them and the reason, never a column or a cell
    assert r.out.count("unsupported") == 1
    assert f"unsupported: cycles, instructions ({NO_PMU})" in r.out
    assert "cycles" not in "\n".join(lines[:5])


def test_a_run_without_counters_shows_no_counter_section(cli, store_path: Path) -> None:
    from ..conftest import import_fixture

    import_fixture(store_path)
    out = cli("show", "latest").out
    assert "counters" not in out and "unsupported" not in out


def test_many_counters_are_split_into_tables_that_fit() -> None:
    names = ["task-clock", "page-faults", "minor-faults", "major-faults", "context-switches", "cpu-migrations",
             "cycles", "instructions", "ipc", "cache-references", "cache-misses", "branch-misses"]
    entries = [counter(n, 1234.5 if n != "ipc" else 1.5, "ns" if n == "task-clock" else "ratio" if n == "ipc" else "count")
               for n in names]
    result = BenchResult(seq=0, bench="task.fork", params={"touched_mib": 64, "concurrency": 1}, status="ok",
                         unit="ns", summary=summary(np.array([1.0, 2.0, 3.0])),
                         counters={"type": "counters", "ops": 10, "counters": entries})
    text = render_counters([result], width=80)
    assert max(len(l) for l in text.splitlines()[1:]) <= 80
    tables = [l for l in text.splitlines() if l.startswith("benchmark")]
    assert len(tables) >= 3
    assert all(n in text for n in names) and "ratio" in text  # ipc is a ratio, not per operation
    widths = [len(l) for l in text.splitlines() if l.startswith("task.fork")]
    assert max(widths) - min(widths) < 40  # columns shared out evenly, no table of one leftover column
    assert len(render_counters([result], width=400).splitlines()) == 5  # heading, 2 header lines, rule, row


def _csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_show_json_and_export_have_a_column_per_counter(cli, counted_run: int) -> None:
    doc = json.loads(cli("show", str(counted_run), "--json").out)
    assert doc == json.loads(cli("export", str(counted_run), "--format", "json").out)
    by_bench = {r["bench"]: r for r in doc["results"]}
    fork = by_bench["task.fork"]
    assert fork["task-clock_ns_per_op"] == pytest.approx(70829.1) and fork["page-faults_per_op"] == 25.25
    assert "cycles_per_op" not in fork  # counted nowhere: no column, the reason is in `counters`
    rec = fork["counters"]
    assert rec["ops"] == 1000 and "type" not in rec and "bench" not in rec
    assert [(c["name"], c["status"], c["reason"]) for c in rec["counters"]][2] == ("cycles", "unsupported", NO_PMU)
    skipped = by_bench["file.read_cold"]
    assert skipped["counters"] is None and skipped["task-clock_ns_per_op"] is None

    table = _csv(cli("export", str(counted_run), "--format", "csv").out)
    header = list(table[0])
    after = header.index("counters") + 1  # the last field; then the counters, then the CSV's param.* columns
    assert header[after:after + 2] == ["task-clock_ns_per_op", "page-faults_per_op"]
    assert header[after + 2:] and all(c.startswith("param.") for c in header[after + 2:])
    rows = {r["bench"]: r for r in table}
    assert float(rows["syscall.null"]["task-clock_ns_per_op"]) == 47.5
    assert float(rows["task.fork"]["page-faults_per_op"]) == 25.25
    assert rows["file.read_cold"]["task-clock_ns_per_op"] == "" and rows["ctxsw.pipe"]["page-faults_per_op"] == ""
    assert json.loads(rows["cpu.call"]["counters"])["counters"][3]["name"] == "instructions"
    # JSON and CSV: the same columns, but for the CSV's param.* ones (JSON has them in `params`)
    assert [list(r) for r in doc["results"]] == [header[:after + 2]] * len(table)


def test_markdown_report_has_the_counters_table(cli, counted_run: int) -> None:
    md = cli("report", str(counted_run), "--format", "md").out
    section = md.split("### Performance counters per operation")[1].split("### Machine")[0]
    assert "| benchmark | params | task-clock ns/op | page-faults /op |" in section
    assert "| syscall.null |   | 47.50 | 0 |" in section
    assert "| task.fork | touched_mib=1 | 70,830 | 25.25 |" in section  # 4 digits, thousands separated
    assert md.count("unsupported") == 1 and f"- unsupported: cycles, instructions ({NO_PMU})" in section
    assert md.index("### Results") < md.index("### Performance counters") < md.index("### Machine")


def test_html_report_has_the_counters_table(cli, counted_run: int, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert cli("report", str(counted_run), "-o", str(out)).code == 0
    text = out.read_text()
    assert_self_contained(text)
    page = Page(text)
    assert f"counters-{counted_run}" in page.ids()
    table = text.split(f'id="counters-{counted_run}"')[1].split("</table>")[0]
    assert 'task-clock<br><span class="unit">ns/op</span>' in table and 'page-faults<br><span class="unit">/op</span>' in table
    assert "cycles" not in table
    assert 'title="task-clock: 47.50 ns/op = 47500 over 1000 operations">47.50</td>' in table
    assert text.count("unsupported") == 1 and f"unsupported: cycles, instructions ({NO_PMU})" in text


# --- compare ------------------------------------------------------------------


@pytest.fixture
def two_counted_runs(store_path: Path) -> tuple[int, int]:
    """syscall.null 10 % slower in run 2, with task-clock 10 % up and page faults unchanged;
    cpu.call unchanged and without counters in run 2."""
    rng = np.random.default_rng(7)
    runs = []
    for factor in (1.0, 1.1):
        run_id = add_run(store_path, [("syscall.null", {}, "ns", noisy(rng, 100.0 * factor, 2000)),
                                      ("cpu.call", {"args": 0}, "ns", noisy(rng, 1.5, 2000))])
        store = open_store(str(store_path), create=False)
        try:
            store.set_counters(run_id, 0, record("syscall.null", {}, 96.0 * factor, 0.5))
            if factor == 1.0:
                store.set_counters(run_id, 1, record("cpu.call", {"args": 0}, 1.4, 0))
        finally:
            store.close()
        runs.append(run_id)
    return runs[0], runs[1]


def test_compare_text_shows_counter_deltas_under_the_time(cli, two_counted_runs) -> None:
    a, b = two_counted_runs
    r = cli("compare", str(a), str(b))
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    i = next(k for k, l in enumerate(lines) if l.startswith("syscall.null"))
    assert lines[i].endswith("slower")
    assert lines[i + 1].split() == ["task-clock", "96.00", "ns/op", "105.6", "ns/op", "1.100", "+10.0%"]
    assert lines[i + 2].split() == ["page-faults", "0.5000", "/op", "0.5000", "/op", "1.000", "+0.0%"]
    j = next(k for k, l in enumerate(lines) if l.startswith("cpu.call"))
    assert not lines[j + 1].startswith("  ")  # counted in the baseline only: nothing to compare
    assert "indented rows: performance counters per operation" in r.out
    assert r.out.count("unsupported") == 1 and f"unsupported: cycles, instructions ({NO_PMU})" in r.out


def test_compare_json_has_counters_per_comparison(cli, two_counted_runs) -> None:
    a, b = two_counted_runs
    doc = json.loads(cli("compare", str(a), str(b), "--json").out)
    by_bench = {c["bench"]: c for c in doc["comparisons"]}
    tc, pf = by_bench["syscall.null"]["counters"]
    assert tc["name"] == "task-clock" and tc["unit"] == "ns" and tc["baseline"] == 96.0
    assert tc["value"] == pytest.approx(105.6) and tc["ratio"] == pytest.approx(1.1) and tc["change"] == pytest.approx(0.1)
    assert pf == {"name": "page-faults", "unit": "count", "baseline": 0.5, "value": 0.5, "ratio": 1.0, "change": 0.0,
                  "multiplexed": False}
    assert by_bench["cpu.call"]["counters"] == []
    assert doc["counter_notes"] == [f"unsupported: cycles, instructions ({NO_PMU})"]


def test_compare_html_shows_counter_deltas(cli, two_counted_runs, tmp_path: Path) -> None:
    a, b = two_counted_runs
    out = tmp_path / "c.html"
    assert cli("compare", str(a), str(b), "-o", str(out)).code == 0
    text = out.read_text()
    assert_self_contained(text)
    assert "counter-deltas" in Page(text).ids()
    deltas = text.split('id="counter-deltas"')[1].split("</table>")[0]
    assert deltas.count("<tr><td") == 2  # task-clock and page-faults of syscall.null
    assert '<td class="mono">task-clock</td><td>ns/op</td><td class="num">96.00</td><td class="num">105.6</td>' in deltas
    assert "task-clock ns/op 96.00 → 105.6 (+10.0%)" in text  # in the heatmap cell's hover and the changes table
    changes = text.split('class="changes"')[1].split("</table>")[0]
    assert "counters per operation (baseline → run)" in changes and "page-faults /op 0.5000 → 0.5000 (+0.0%)" in changes


def test_compare_without_counters_has_no_counter_output(cli, store_path: Path, tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    a = add_run(store_path, [("syscall.null", {}, "ns", noisy(rng, 100.0, 200))])
    b = add_run(store_path, [("syscall.null", {}, "ns", noisy(rng, 100.0, 200))])
    r = cli("compare", str(a), str(b))
    assert "counters" not in r.out and "indented rows" not in r.out
    out = tmp_path / "c.html"
    assert cli("compare", str(a), str(b), "-o", str(out)).code == 0
    assert "Performance counters" not in out.read_text() and "baseline → run" not in out.read_text()


# --- reading records ------------------------------------------------------------


def test_malformed_records_are_read_defensively(cli, store_path: Path) -> None:
    rng = np.random.default_rng(2)
    run_id = add_run(store_path, [("syscall.null", {}, "ns", noisy(rng, 100.0, 50)),
                                  ("cpu.call", {"args": 0}, "ns", noisy(rng, 1.5, 50))])
    store = open_store(str(store_path), create=False)
    try:
        store.set_counters(run_id, 0, {"type": "counters", "cycles": 12})  # not the schema's shape
        store.set_counters(run_id, 1, {"type": "counters", "counters": [
            "junk", {"name": "task-clock", "status": "ok", "unit": "ns", "value": None},  # ok without a number
            {"name": "page-faults", "status": "ok", "unit": "count", "value": True}]})
    finally:
        store.close()
    r = cli("show", str(run_id))
    assert r.code == 0, r.err
    assert "no counter could be counted here" in r.out
    assert "not counted: task-clock, page-faults (no reason given)" in r.out
    doc = json.loads(cli("export", str(run_id), "--format", "json").out)
    assert doc["results"][0]["counters"] == {"cycles": 12} and "task-clock_ns_per_op" not in doc["results"][0]


def test_counter_notes_and_marks() -> None:
    def result(seq: int, bench: str, entries: list[dict[str, Any]], kernel: bool = True) -> BenchResult:
        rec = {"type": "counters", "ops": 10, "kernel": kernel,
               "kernel_reason": None if kernel else "perf_event_paranoid is 2", "counters": entries}
        return BenchResult(seq=seq, bench=bench, params={}, status="ok", unit="ns",
                           summary=summary(np.array([1.0, 2.0])), counters=rec)

    results = [
        result(0, "a.x", [counter("cycles", 1200.0, running=0.5), counter("context-switches", None, status="unsupported",
                                                                           reason="user space only")], kernel=False),
        result(1, "b.y", [counter("cycles", None, status="not_counted", reason="the PMU never had room"),
                          counter("context-switches", 0.0)]),
    ]
    notes = ctr.notes(results)
    assert notes == [
        "unsupported: context-switches in a.x (user space only)",
        "not counted: cycles in b.y (the PMU never had room)",
        "user space only in a.x: kernel-side events were not counted (perf_event_paranoid is 2)",
        "~ multiplexed: cycles shared the PMU and counted only part of the time; the value is scaled up (an estimate)",
    ]
    cycles = ctr.counters_by_name(results[0])["cycles"]
    assert ctr.value_text(cycles, str) == "~1200.0" and ctr.value_text(None, str) == "-"
    assert [c.column for c in ctr.columns(results)] == ["cycles_per_op", "context-switches_per_op"]
    assert ctr.label("ipc", "ratio") == "ipc" and ctr.label("task-clock", "ns") == "task-clock ns/op"
    assert ctr.label("page-faults", "count") == "page-faults /op" and ctr.column_name("ipc", "ratio") == "ipc"
    assert ctr.deltas(results[1], results[0]) == []  # cycles is not ok in b.y, context-switches not in a.x


def test_counter_deltas() -> None:
    def result(entries: list[dict[str, Any]]) -> BenchResult:
        return BenchResult(seq=0, bench="a.x", params={}, status="ok", unit="ns",
                           summary=summary(np.array([1.0, 2.0])), counters={"ops": 4, "counters": entries})

    base = result([counter("page-faults", 0.0), counter("major-faults", 0.0), counter("cycles", 100.0, running=0.8),
                   counter("ipc", 1.5, "ratio")])
    other = result([counter("ipc", 3.0, "count"), counter("cycles", 150.0), counter("major-faults", 0.25),
                    counter("page-faults", 0.0)])
    deltas = {d.name: d for d in ctr.deltas(base, other)}
    assert list(deltas) == ["page-faults", "major-faults", "cycles"]  # the baseline's order; ipc's units differ
    assert ctr.ratio_text(deltas["page-faults"]) == "1.000" and ctr.change_text(deltas["page-faults"]) == "+0.0%"
    assert ctr.ratio_text(deltas["major-faults"]) == "-" and ctr.change_text(deltas["major-faults"]) == "-"
    assert deltas["cycles"].ratio == 1.5 and deltas["cycles"].multiplexed
