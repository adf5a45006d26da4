"""osmeter compare --by host|kernel|label: the heatmap of a fleet run's hosts (or kernels, labels) against a
baseline column, with the statistics of the pairwise compare, the sysinfo diff, and bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from osmeter import errors

from ..conftest import DATA
from ..fleet_runs import FLEET, OLD_FLEET, add_host_run
from ..synthetic import MACHINE, noisy
from .test_report import Page, assert_self_contained

NULL = ("syscall.null", {})
CALL = ("cpu.call", {"args": 0})
BW = ("mem.bandwidth_read", {"size": 67108864})


@pytest.fixture
def fleet3(store_path: Path) -> dict[str, object]:
    """A fleet run of three hosts against host-a's samples: host-b's syscall.null is host-a's samples x 2 (a
    known large difference), its cpu.call the same samples (no difference), on another kernel; host-c (another
    CPU, run incomplete) failed syscall.null, lacks the file benchmark and reads memory 20 % slower."""
    rng = np.random.default_rng(7)
    null, call, bw = noisy(rng, 100.0, 2000), noisy(rng, 1.5, 2000), noisy(rng, 1.2e10, 500)
    skip = [("file.read_cold", {"size": 4096}, "skip", "needs root: cannot drop the page cache")]
    a = add_host_run(store_path, [(*NULL, "ns", null), (*CALL, "ns", call), (*BW, "bytes_per_s", bw)], "host-a",
                     failed=skip)
    b = add_host_run(store_path, [(*NULL, "ns", null * 2), (*CALL, "ns", call), (*BW, "bytes_per_s", bw * 1.01)],
                     "host-b", machine=dict(MACHINE, hostname="b.lab", kernel_release="6.9.0-synth"), failed=skip)
    c = add_host_run(store_path, [(*CALL, "ns", call), (*BW, "bytes_per_s", bw * 0.8)], "host-c",
                     machine=dict(MACHINE, hostname="c.lab", cpu_model="Other CPU @ 2.0GHz"),
                     failed=[("syscall.null", {}, "error", "the probe died (SIGSEGV)")], status="incomplete")
    return {"ids": (a, b, c), "null": null, "call": call}


def by_json(cli, *args: str) -> dict:
    r = cli("compare", "--by", *args, "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def cell(doc: dict, bench: str, column: str) -> dict:
    (row,) = [r for r in doc["rows"] if r["bench"] == bench]
    return row["cells"][column]


def test_by_host_text_table(cli, fleet3) -> None:
    r = cli("compare", "--by", "host", "--fleet", FLEET)
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0] == (f"compare --by host of fleet run {FLEET}: baseline host-a (run 1); "
                        "compared: host-b (run 2), host-c (run 3)")
    head = next(l for l in lines if l.startswith("benchmark"))
    assert head.split()[2:] == ["host-a", "(baseline)", "host-b", "host-c"]
    row = {l.split()[0]: l for l in lines if l.startswith(("syscall.", "cpu.", "mem.", "file."))}
    assert row["syscall.null"].split()[4:] == ["+100.0%", "slower", "error"]  # after `ns`, the baseline `50.00 ns`
    assert row["cpu.call"].split()[-4:] == ["+0.0%", "~", "+0.0%", "~"]  # identical samples: not significant
    assert row["mem.bandwidth_read"].split()[-4:] == ["+1.0%", "~", "-20.0%", "slower"]  # a rate that fell is slower
    assert row["file.read_cold"].split()[-3:] == ["skip", "skip", "missing"]
    assert "5 cells compared, 2 significant (2 slower, 0 faster; 0 with a caveat); 1 error, 1 skip, 1 missing" in r.out
    assert "syscall.null: error: the probe died (SIGSEGV) (host-c)" in r.out
    assert "~: no significant change" in r.out and "missing: the column's runs do not hold the instance" in r.out


def test_bootstrap_cells_are_the_pairwise_comparisons(cli, fleet3) -> None:
    """With --bootstrap each cell is what `osmeter compare BASE RUN` says of that instance: the same statistics."""
    doc = by_json(cli, "host", "--fleet", "latest", "--bootstrap")
    assert doc["fleet"] == FLEET and doc["baseline"] == "host-a" and doc["by"] == "host"
    assert doc["method"].startswith("ratio of medians; 95 % percentile-bootstrap")
    assert [c["name"] for c in doc["columns"]] == ["host-a", "host-b", "host-c"]
    for column, run in (("host-b", "2"), ("host-c", "3")):
        pair = json.loads(cli("compare", "1", run, "--json").out)
        assert pair["comparisons"]
        for p in pair["comparisons"]:
            (row,) = [r for r in doc["rows"] if r["bench"] == p["bench"] and r["params"] == p["params"]]
            got = row["cells"][column]
            for key in ("ratio", "ci_low", "ci_high", "change", "worse", "significant", "verdict", "method", "caveat"):
                assert got[key] == p[key], (column, p["bench"], key)
            assert got["state"] == "compared" and got["run_id"] == int(run)


def test_cells_from_the_stored_intervals(cli, fleet3) -> None:
    """By default a cell of two single-repetition results is the ratio of the stored medians with the interval
    exp(+-z sqrt(se_a^2 + se_b^2)), each se = (ln ci_high - ln ci_low) / 2z of that result's stored interval: no
    samples read. Here every verdict is the bootstrap's, and the intervals are within a few percent of its."""
    doc = by_json(cli, "host", "--fleet", FLEET)
    assert doc["method"].startswith("ratio of medians; 95 % interval on the log scale from the two results' stored")
    z = 1.959963984540054
    for column, run in (("host-b", 2), ("host-c", 3)):
        pair = json.loads(cli("compare", "1", str(run), "--json").out)
        shown = {r["bench"]: r for r in json.loads(cli("show", str(run), "--json").out)["results"]}
        base = {r["bench"]: r for r in json.loads(cli("show", "1", "--json").out)["results"]}
        for p in pair["comparisons"]:
            got = cell(doc, p["bench"], column)
            assert got["method"] == "intervals" and got["state"] == "compared"
            a, b = base[p["bench"]], shown[p["bench"]]
            se = np.hypot(*(np.log(s["ci_high"] / s["ci_low"]) / (2 * z) for s in (a, b)))
            ratio = b["median"] / a["median"]
            assert got["ratio"] == pytest.approx(ratio, rel=1e-12) == pytest.approx(p["ratio"], rel=1e-12)
            assert got["ci_low"] == pytest.approx(ratio * np.exp(-z * se), rel=1e-9)
            assert got["ci_high"] == pytest.approx(ratio * np.exp(z * se), rel=1e-9)
            assert got["significant"] == p["significant"] and got["verdict"] == p["verdict"]
            width, boot = np.log(got["ci_high"] / got["ci_low"]), np.log(p["ci_high"] / p["ci_low"])
            assert width == pytest.approx(boot, rel=0.25), p["bench"]  # the two intervals agree roughly
    r = cli("compare", "--by", "host", "--fleet", FLEET)
    assert "the interval: from the two results' stored intervals (--bootstrap: as compare RUN RUN makes it)" in r.out


def test_a_result_without_a_usable_interval_is_bootstrapped(cli, store_path: Path) -> None:
    """A stored interval that says nothing of a log scale (a median of 0: counts) falls back to the bootstrap,
    and a cell that needs samples where none are stored says so."""
    rng = np.random.default_rng(5)
    zeros = np.concatenate([np.zeros(60), rng.integers(1, 3, 40).astype(float)])
    add_host_run(store_path, [("mem.fault_anon", {}, "count", zeros), (*NULL, "ns", noisy(rng, 10.0, 300))],
                 "host-a")
    add_host_run(store_path, [("mem.fault_anon", {}, "count", zeros + 1), (*NULL, "ns", noisy(rng, 10.0, 300))],
                 "host-b")
    doc = by_json(cli, "host", "--fleet", FLEET)
    faults = cell(doc, "mem.fault_anon", "host-b")
    assert faults["state"] == "compared" and faults["method"] == "bootstrap" and faults["ratio"] is None
    assert cell(doc, "syscall.null", "host-b")["method"] == "intervals"


def test_significance_of_known_differences(cli, fleet3) -> None:
    doc = by_json(cli, "host", "--fleet", FLEET)
    null, call = fleet3["null"], fleet3["call"]
    doubled = cell(doc, "syscall.null", "host-b")
    assert doubled["ratio"] == pytest.approx(np.median(null * 2) / np.median(null), rel=1e-12) == pytest.approx(2.0)
    assert 1.05 < doubled["ci_low"] < 2.0 < doubled["ci_high"]
    assert doubled["significant"] and doubled["verdict"] == "slower"
    same = cell(doc, "cpu.call", "host-b")
    assert same["ratio"] == pytest.approx(1.0, abs=1e-15) and same["ci_low"] < 1.0 < same["ci_high"]
    assert not same["significant"] and same["verdict"] == "no significant change"
    base = cell(doc, "syscall.null", "host-a")
    assert base["state"] == "baseline" and base["median"] == pytest.approx(float(np.median(null)))
    slow_bw = cell(doc, "mem.bandwidth_read", "host-c")
    assert slow_bw["change"] == pytest.approx(-0.2, abs=1e-9) and slow_bw["worse"] == pytest.approx(0.2, abs=1e-9)
    assert slow_bw["verdict"] == "slower"
    assert cell(doc, "syscall.null", "host-c") == {"state": "error", "run_id": 3, "median": None,
                                                   "reason": "the probe died (SIGSEGV)"}
    assert cell(doc, "file.read_cold", "host-c")["state"] == "missing"
    assert cell(doc, "file.read_cold", "host-b")["state"] == "skip"
    assert doc["significant"] == 2


def test_sysinfo_diff_lists_exactly_the_differing_keys(cli, fleet3) -> None:
    doc = by_json(cli, "host", "--fleet", FLEET)
    diff = {d["key"]: d["values"] for d in doc["sysinfo_diff"]}
    assert set(diff) == {"hostname", "kernel_release", "cpu_model"}
    assert diff["kernel_release"] == {"host-a": "6.8.0-synth", "host-b": "6.9.0-synth", "host-c": "6.8.0-synth"}
    assert diff["cpu_model"]["host-c"] == "Other CPU @ 2.0GHz"
    text = cli("compare", "--by", "host", "--fleet", FLEET).out
    table = text[text.index("sysinfo that differs"):text.index("columns (")]
    # what plausibly changes costs first (osmeter.causes): the kernel, then the CPU, then the rest
    assert [l.split()[0] for l in table.splitlines()[2:] if l.strip()] == ["kernel_release", "cpu_model", "hostname"]


@pytest.mark.slow  # matplotlib renders four figures; CI runs it
def test_html_page_and_figures(cli, fleet3, tmp_path: Path) -> None:
    page_file = tmp_path / "fleet.html"
    assert cli("compare", "--by", "host", "--fleet", FLEET, "-o", str(page_file)).code == 0
    text = page_file.read_text()
    assert_self_contained(text)
    page = Page(text)
    assert {"heatmap-by", "sysinfo-diff"} <= page.ids()
    cells = [a for t, a in page.tags if t == "td" and "cell" in (a.get("class") or "").split()]
    assert len(cells) == 4 * 3
    classes = [a["class"] for a in cells]
    assert classes.count("cell") == 2  # the two significant changes: coloured, not hatched
    assert classes.count("cell ns hatch") == 3 and classes.count("cell base") == 3
    assert classes.count("cell missing") == 4  # error, two skips, missing
    assert all(h in text for h in ("host-a (baseline)", "host-b", "host-c", "+100", "Other CPU @ 2.0GHz"))
    svg = tmp_path / "fleet.svg"
    assert cli("compare", "--by", "host", "--fleet", FLEET, "-o", str(svg)).code == 0
    figure = svg.read_text()
    assert figure.startswith("<?xml")
    for word in ("host-a (baseline)", "host-b", "host-c", "+100", "-20", "error", "skip", "missing",
                 "syscall.null", "kernel_release", "6.9.0-synth", "Other CPU @ 2.0GHz"):
        assert word in figure, word
    png = tmp_path / "fleet.png"
    assert cli("compare", "--by", "host", "--fleet", FLEET, "-o", str(png)).code == 0
    assert png.read_bytes().startswith(b"\x89PNG")
    out = tmp_path / "by.json"
    assert cli("compare", "--by", "host", "--fleet", FLEET, "-o", str(out)).code == 0
    assert json.loads(out.read_text())["osmeter_compare_by"] == 1


def test_by_kernel_groups_hosts_and_takes_the_newest_complete_run(cli, fleet3, store_path: Path) -> None:
    """host-a and host-c share 6.8.0-synth: the complete run (host-a's) is that column's, host-c's is named."""
    doc = by_json(cli, "kernel", "--fleet", FLEET)
    assert [c["name"] for c in doc["columns"]] == ["6.8.0-synth", "6.9.0-synth"]
    col = doc["columns"][0]
    assert col["run_id"] == 1 and col["runs"] == [1, 3]
    assert col["notes"][1].startswith("6.8.0-synth: run 3 (incomplete") and col["notes"][1].endswith("not used")
    assert cell(doc, "syscall.null", "6.9.0-synth")["verdict"] == "slower"
    assert {d["key"] for d in doc["sysinfo_diff"]} == {"hostname", "kernel_release"}
    doc = by_json(cli, "kernel", "--fleet", FLEET, "--baseline", "6.9.0-synth")
    assert doc["baseline"] == "6.9.0-synth"
    assert cell(doc, "syscall.null", "6.8.0-synth")["verdict"] == "faster"
    assert cell(doc, "syscall.null", "6.8.0-synth")["ratio"] == pytest.approx(0.5)


def test_by_label_of_explicit_runs(cli, store_path: Path) -> None:
    rng = np.random.default_rng(3)
    x = noisy(rng, 50.0, 1000)
    a = add_host_run(store_path, [(*NULL, "ns", x)], None, fleet=None, label="rt")
    b = add_host_run(store_path, [(*NULL, "ns", x * 1.3)], None, fleet=None, label="generic")
    c = add_host_run(store_path, [(*NULL, "ns", x * 0.7)], None, fleet=None, label=None)
    doc = by_json(cli, "label", str(a), str(b), str(c), "--baseline", "rt")
    assert [col["name"] for col in doc["columns"]] == ["generic", "rt", f"run {c}"]  # by name; no label: its own
    assert doc["fleet"] is None
    assert cell(doc, "syscall.null", "generic")["ratio"] == pytest.approx(1.3)
    assert cell(doc, "syscall.null", f"run {c}")["verdict"] == "faster"
    assert [col["host"] for col in doc["columns"]] == ["synth"] * 3  # local runs: the machine's hostname


def test_columns_in_natural_order_and_local_runs_by_hostname(cli, store_path: Path) -> None:
    rng = np.random.default_rng(4)
    for host in ("node10", "node2", "node1"):
        add_host_run(store_path, [(*NULL, "ns", noisy(rng, 80.0, 500))], host)
    local = add_host_run(store_path, [(*NULL, "ns", noisy(rng, 80.0, 500))], None, fleet=None,
                         machine=dict(MACHINE, hostname="laptop"))
    doc = by_json(cli, "host", "--fleet", FLEET)
    assert [c["name"] for c in doc["columns"]] == ["node1", "node2", "node10"]
    doc = by_json(cli, "host", "--fleet", FLEET, str(local), "--baseline", "laptop")
    assert [c["name"] for c in doc["columns"]] == ["laptop", "node1", "node2", "node10"] and doc["baseline"] == "laptop"


def test_resumed_host_takes_the_missing_instances_from_its_earlier_run(cli, store_path: Path) -> None:
    rng = np.random.default_rng(5)
    null, call = noisy(rng, 100.0, 800), noisy(rng, 1.5, 800)
    add_host_run(store_path, [(*NULL, "ns", null), (*CALL, "ns", call)], "a")
    first = add_host_run(store_path, [(*NULL, "ns", null * 1.5)], "b", status="incomplete",
                         start_time="2026-11-27T00:15:00Z")
    resumed = add_host_run(store_path, [(*CALL, "ns", call)], "b", start_time="2026-11-27T01:00:00Z")
    doc = by_json(cli, "host", "--fleet", FLEET)
    (b,) = [c for c in doc["columns"] if c["name"] == "b"]
    assert b["run_id"] == resumed and b["runs"] == [resumed, first]
    assert b["notes"][1] == f"b: run {first} (incomplete, started 2026-11-27T00:15:00Z): 1 cell from it (same host)"
    assert cell(doc, "syscall.null", "b")["run_id"] == first and cell(doc, "syscall.null", "b")["verdict"] == "slower"
    assert cell(doc, "cpu.call", "b")["run_id"] == resumed
    page = store_path.parent / "by.html"
    assert cli("compare", "--by", "host", "--fleet", FLEET, "-o", str(page)).code == 0
    hovers = [a.get("title") or "" for t, a in Page(page.read_text()).tags if t == "td"]
    taken = [h for h in hovers if h.endswith(f"from run {first} (the column's run {resumed} does not hold it ok)")]
    assert len(taken) == 1 and taken[0].startswith("syscall.null\nrun ")  # the compared cell, its hover whole


def test_a_flagged_figure_stays_flagged(cli, store_path: Path) -> None:
    from osmeter.model import BenchResult
    from osmeter.stats import summary
    from osmeter.store import open_store

    rng = np.random.default_rng(6)
    add_host_run(store_path, [(*NULL, "ns", noisy(rng, 100.0, 500))], "a")
    b = add_host_run(store_path, [], "b")
    x = noisy(rng, 130.0, 500)
    store = open_store(str(store_path), create=False)
    try:
        store.add_result(b, BenchResult(seq=0, bench="syscall.null", params={}, status="ok", unit="ns",
                                        summary=summary(x), batch=1, flags=("precision-unmet",)), x)
    finally:
        store.close()
    doc = by_json(cli, "host", "--fleet", FLEET)
    got = cell(doc, "syscall.null", "b")
    assert got["caveat"] == "precision-unmet" and got["verdict"] == "slower" and "precision-unmet" in doc["flag_legend"]
    text = cli("compare", "--by", "host", "--fleet", FLEET).out
    assert "+30" in text and "slower !" in text and "precision-unmet: sampling stopped" in text


def test_fleet_latest_is_the_newest_fleet_run(cli, store_path: Path) -> None:
    rng = np.random.default_rng(8)
    for host in ("x", "y"):
        add_host_run(store_path, [(*NULL, "ns", noisy(rng, 10.0, 200))], host, fleet=OLD_FLEET,
                     start_time="2026-11-20T09:00:00Z")
    for host in ("p", "q"):
        add_host_run(store_path, [(*NULL, "ns", noisy(rng, 10.0, 200))], host)
    assert by_json(cli, "host", "--fleet", "latest")["fleet"] == FLEET
    doc = by_json(cli, "host", "--fleet", OLD_FLEET)
    assert doc["fleet"] == OLD_FLEET and [c["name"] for c in doc["columns"]] == ["x", "y"]


def test_imported_runs_of_two_architectures(cli, store_path: Path) -> None:
    """Runs stored by the import path with host and fleet, as fleet run stores them: compared by host."""
    from osmeter.ingest import read_probe_file, store_probe_file
    from osmeter.recorder import RunContext, RunRecorder
    from osmeter.store import open_store

    store = open_store(str(store_path), create=True)
    try:
        for name, host in (("run_x86_64.jsonl", "server"), ("run_aarch64.jsonl", "pi")):
            recorder = RunRecorder(store, RunContext(None, ["import", name], {}, "import", host=host, fleet=FLEET))
            with store.transaction():
                store_probe_file(read_probe_file(DATA / name), recorder)
    finally:
        store.close()
    doc = by_json(cli, "host", "--fleet", FLEET, "--baseline", "server")
    assert [c["name"] for c in doc["columns"]] == ["pi", "server"]
    keys = {d["key"] for d in doc["sysinfo_diff"]}
    assert {"arch", "kernel_release"} <= keys
    assert all(len(set(d["values"].values())) > 1 for d in doc["sysinfo_diff"])  # only what differs
    null = cell(doc, "syscall.null", "pi")
    assert null["state"] == "compared" and null["ratio"] > 0


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--by", "cpu", "--fleet", FLEET], errors.EXIT_USAGE, "invalid choice: 'cpu'"),
        (["--by", "host", "--fleet", "fleet-nope"], errors.EXIT_NOT_FOUND, "no fleet run 'fleet-nope'"),
        (["--by", "host", "--fleet", FLEET, "--baseline", "host-z"], errors.EXIT_USAGE,
         "--baseline 'host-z' is not a column of --by host: the columns are host-a, host-b, host-c"),
        (["--by", "host", "1"], errors.EXIT_USAGE, "needs at least two columns, and these runs make 1 (host-a)"),
        (["--by", "host"], errors.EXIT_USAGE, "compare --by needs runs: --fleet ID"),
        (["--by", "host", "--fleet", FLEET, "--stat", "max"], errors.EXIT_USAGE, "--by compares medians"),
        (["--fleet", FLEET], errors.EXIT_USAGE, "give --by host, kernel or label"),
        (["--fleet", FLEET, "1", "2"], errors.EXIT_USAGE, "give --by host, kernel or label"),
        (["1", "2", "--bootstrap"], errors.EXIT_USAGE, "--bootstrap chooses how compare --by makes its cells"),
        (["--by", "host", "--fleet", FLEET, "--format", "svg"], errors.EXIT_USAGE, "give it with -o FILE"),
        (["--by", "host", "--fleet", FLEET, "--json", "--format", "json"], errors.EXIT_USAGE, "say the same"),
        (["--by", "host", "--fleet", FLEET, "-o", "x.txt"], errors.EXIT_USAGE, "cannot tell what to write"),
        (["--by", "host", "--fleet", FLEET, "1", "1"], errors.EXIT_USAGE, "run 1 is given twice"),
        (["--by", "host", "99", "1"], errors.EXIT_NOT_FOUND, "no run 99"),
    ],
)
def test_bad_input(cli, fleet3, tmp_path: Path, args: list[str], code: int, message: str) -> None:
    r = cli("compare", *args)
    assert r.code == code, r.err
    assert message in r.err
    assert r.out == ""


def test_no_fleet_run_in_the_store(cli, store_path: Path) -> None:
    rng = np.random.default_rng(9)
    add_host_run(store_path, [(*NULL, "ns", noisy(rng, 10.0, 100))], None, fleet=None)
    r = cli("compare", "--by", "host", "--fleet", "latest")
    assert r.code == errors.EXIT_NOT_FOUND and "holds no fleet run" in r.err


def test_plain_compare_format_json_is_json(cli, fleet3) -> None:
    a = json.loads(cli("compare", "1", "2", "--format", "json").out)
    assert a == json.loads(cli("compare", "1", "2", "--json").out)
    r = cli("compare", "1", "2", "--format", "json", "-o", "x.html")
    assert r.code == errors.EXIT_USAGE and "--format json prints the comparison on stdout" in r.err


def test_heatmap_colours_by_their_formula() -> None:
    """heat_colour and muted_colour (mixed the quick way, plots.mix) follow their formula:
    each channel round(start + (target - start) * strength), from white (a significant change, at least
    a quarter of the way) or grey (muted, at most 1 - MUTE of it) towards red for worse, green for better,
    full at 2x on a log scale; grey where the change is not finite."""
    import math

    from hypothesis import given, strategies as st

    from osmeter.report import by_cells as bc
    from osmeter.report import plots

    def expected(start: tuple[int, ...], worse: float, lo: float, span: float) -> str:
        strength = lo + span * min(1.0, abs(math.log2(1.0 + worse)) / plots.HEAT_LIMIT) if 1.0 + worse > 0 else 1.0
        target = plots.RED if worse > 0 else plots.GREEN
        return "#" + "".join(f"{round(s + (t - s) * strength):02x}" for s, t in zip(start, target))

    grey = tuple(int(plots.GREY[i:i + 2], 16) for i in (1, 3, 5))

    @given(st.floats(min_value=-0.999, max_value=50.0))
    def check(worse: float) -> None:
        assert plots.heat_colour(worse) == expected(plots.WHITE, worse, 0.25, 0.75)
        assert bc.muted_colour(worse) == expected(grey, worse, 0.0, 1 - bc.MUTE)

    check()
    assert plots.heat_colour(1.0) == "#d73027" and plots.heat_colour(-0.5) == "#1a9850"  # full at 2x
    assert plots.heat_colour(0.0) == "#" + "".join(f"{round(w + (g - w) * 0.25):02x}"
                                                   for w, g in zip(plots.WHITE, plots.GREEN))
    assert plots.heat_colour(math.nan) == plots.GREY == bc.muted_colour(math.inf) == bc.muted_colour(-1.0)
    assert plots.heat_colour(-1.0) == "#1a9850"  # no time left: the full green


def test_two_columns_read_left_to_right(cli, fleet3, tmp_path: Path) -> None:
    """Issue 28: a heatmap of one compared column left the page blank; two columns (--baseline and one
    more) get compare_narrow's table: each compared instance, both medians scaled, the change cell with
    its hover, the ratio's bar; what was not compared is listed under it."""
    a, b, _ = fleet3["ids"]
    page_file = tmp_path / "two.html"
    r = cli("compare", "--by", "host", str(a), str(b), "-o", str(page_file))
    assert r.code == 0, r.err
    text = page_file.read_text()
    assert_self_contained(text)
    page = Page(text)
    assert 'class="heatmap narrow"' in text and "ratio and its 95 % CI" in text
    cells = [a for t, a in page.tags if t == "td" and "cell" in (a.get("class") or "").split()]
    assert len(cells) == 3  # syscall.null, cpu.call, the bandwidth; the skip is under "Not compared"
    assert sum(c["class"] == "cell" for c in cells) == 1 and "+100" in text  # null x 2: significant
    assert re.search(r">(19\d|20\d)\.\d ns<", text) and re.search(r">(9\d|10\d)\.\d\d ns<", text)  # both medians
    assert "Not compared" in text and "file.read_cold" in text
