"""benchmarks/lebench_vs_osmeter.py and its modules (benchmarks/_lebench_*.py), their
pure parts: LEBench's CSV and log, matching LEBench's rows with osmeter's, the
ratio table; and the store reading of --only-parse. Nothing here runs LEBench
or measures anything."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from osmeter import stats
from osmeter.model import BenchResult, NewRun
from osmeter.store import open_store

from ..conftest import ROOT

SCRIPT = ROOT / "benchmarks" / "lebench_vs_osmeter.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lebench_vs_osmeter", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    # The script imports its sibling modules by name, as when run as benchmarks/lebench_vs_osmeter.py.
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(SCRIPT.parent))
    return module


lb = _load()  # the CLI, building and running the two tools
lbp = sys.modules["_lebench_parse"]  # LEBench's CSV and log, the row types, matching rows, counts
lbt = sys.modules["_lebench_table"]  # the table and the --json document
lbs = sys.modules["_lebench_store"]  # osmeter's stored runs


def ts(ns: int) -> str:
    """A time as OS_Eval prints a struct timespec: "%ld.%09ld"."""
    return "%ld.%09ld" % (ns // 1_000_000_000, ns % 1_000_000_000)


def one_line(name: str, kbest: int, average: int) -> str:
    # one_line_test(): fprintf("%10s", name); "          kbest:,"; "%ld.%09ld,\n"; the same for "        average:,"
    return "%10s          kbest:,%s,\n%10s        average:,%s,\n" % (name, ts(kbest), name, ts(average))


def two_line(name: str, kbest: int, average: int, child_kbest: int, child_average: int) -> str:
    # two_line_test(): parent kbest / average, then "Child kbest" / "Child average"
    return (
        "%10s          kbest:,%s,\n" % (name, ts(kbest))
        + "%10s       average:,%s,\n" % (name, ts(average))
        + "%10s    Child kbest:,%s,\n" % (name, ts(child_kbest))
        + "%10s Child average:,%s,\n" % (name, ts(child_average))
    )


CSV = (
    "OS Benchmark experiment\nTest Name:,osmeter-fidelity,\n"
    + one_line("ref", 31, 40)
    + one_line("cpu", 2_345_678, 2_400_001)
    + one_line("context siwtch", 2_500, 2_700)
    + two_line("fork", 60_000, 70_000, 120_000, 130_000)
    + two_line("thr create", 9_000, 10_000, 11_000, 12_000)
    + one_line("small read", 400, 450)
    + one_line("huge page fault", 1_234_567_890_123, 1_300_000_000_000)  # over a second: seconds carry
)


def test_parse_csv_rows_in_ns_and_in_order() -> None:
    rows = lbp.parse_lebench_csv(CSV)
    assert list(rows) == ["ref", "cpu", "context switch", "fork", "fork Child", "thr create", "thr create Child",
                          "small read", "huge page fault"]
    assert rows["ref"] == lbp.LebenchFigure(kbest=31.0, average=40.0)
    assert rows["cpu"].kbest == 2_345_678.0
    assert rows["fork"] == lbp.LebenchFigure(60_000.0, 70_000.0)
    assert rows["fork Child"] == lbp.LebenchFigure(120_000.0, 130_000.0)
    assert rows["thr create Child"] == lbp.LebenchFigure(11_000.0, 12_000.0)
    assert rows["huge page fault"].kbest == 1_234_567_890_123.0


def test_parse_csv_refuses_half_a_row_and_bad_times() -> None:
    with pytest.raises(ValueError, match="'ref'.*not both"):
        lbp.parse_lebench_csv("%10s          kbest:,0.000000031,\n" % "ref")
    with pytest.raises(ValueError, match="line 1"):
        lbp.parse_lebench_csv("%10s          kbest:,31ns,\n" % "ref")


@pytest.mark.parametrize(
    "text, ns", [("0.000000031", 31.0), ("1.000000002", 1_000_000_002.0), ("0.-00000005", -5.0), (" 2.5 ", 2e9 + 5)]
)
def test_timespec(text: str, ns: float) -> None:
    assert lbp.timespec_ns(text) == ns


LOG = (
    "Performing test ref.\nTotal test iteration 1000000.\nTest took: 0.512000000 seconds\n"
    "Performing test context siwtch.\n[error] failed to set process priority.\n"
    "[error] failed to set process priority.\nTest took: 30.000000001 seconds\n"
    "Performing test send.\n[error] failed to bind.\n[error] failed to send.\n[error] failed to send.\n"
    "Test took: 1.5 seconds\n"
    "Performing test fork.\nTest took: 2.000000000 seconds\n[error] fork failed.\n"  # after its "Test took"
    "Test took: 700.250000000 seconds\n"
)


def test_parse_log() -> None:
    log = lbp.parse_lebench_log(LOG)
    assert log.test_seconds == {"ref": 0.512, "context switch": pytest.approx(30.000000001), "send": 1.000000005,
                                "fork": 2.0}
    assert log.total_seconds == 700.25
    assert log.errors == {
        "context switch": {"[error] failed to set process priority.": 2},
        "send": {"[error] failed to bind.": 1, "[error] failed to send.": 2},
        "fork": {"[error] fork failed.": 1},
    }
    rows = log.row_errors()
    assert rows["send"] == "[error] failed to bind. (x1); [error] failed to send. (x2)"
    assert rows["fork"] == rows["fork Child"] == "[error] fork failed. (x1)"
    assert "ref" not in rows


def fig(median: float, kbest: float | None = None, status: str = "ok", reason: str | None = None,
        flags: tuple[str, ...] = ()) -> object:
    if status != "ok":
        return lbp.OsmeterFigure(status=status, reason=reason)
    return lbp.OsmeterFigure(status="ok", median=median, ci_low=median * 0.99, ci_high=median * 1.01,
                            kbest=median if kbest is None else kbest, mean=median, n=100, unit="ns", flags=flags)


SPECS = [
    lbp.RowSpec("ref", True, "osmeter reads the clock batch + 1 times"),
    lbp.RowSpec("cpu", True, "LEBench is built with -O0"),
    lbp.RowSpec("context switch", True, None),
    lbp.RowSpec("send", False, None, "LEBench row 'send': the ipc family is not built yet"),
    lbp.RowSpec("fork", True, None),
    lbp.RowSpec("fork Child", True, None),
    lbp.RowSpec("thr create", True, None),
    lbp.RowSpec("small read", False, None, "LEBench row 'small read': the file family is not built yet"),
    lbp.RowSpec("big fork", True, None),
]


def lines_for_tests() -> list:
    lebench = lbp.parse_lebench_csv(CSV)
    default = {
        "ref": fig(20.0),  # 20 / 31: outside
        "cpu": fig(2_100_000.0),  # 0.895: inside
        "context switch": fig(2_600.0, flags=("unstable",)),  # 1.04
        "fork": fig(66_000.0),  # 1.1
        "fork Child": fig(0.0, status="skip", reason="needs more memory"),
        "big fork": fig(300_000.0),  # no LEBench figure
    }
    exact = {"ref": fig(33.0), "cpu": fig(2_300_000.0), "context switch": fig(3_500.0), "fork": fig(61_000.0)}
    return lbp.match_rows(SPECS, lebench, default, exact, lbp.parse_lebench_log(LOG).row_errors())


def test_match_rows() -> None:
    lines = {ln.row: ln for ln in lines_for_tests()}
    assert list(lines) == ["ref", "cpu", "context switch", "send", "fork", "fork Child", "thr create", "small read",
                           "big fork", "thr create Child", "huge page fault"]
    ref = lines["ref"]
    assert ref.status == "compared" and ref.ratio == pytest.approx(20 / 31) and ref.within is False
    assert ref.exact_median == 33.0 and ref.exact_ratio == pytest.approx(33 / 31) and ref.exact_within is True
    assert ref.note == "osmeter reads the clock batch + 1 times"  # outside: the row's note is shown
    cpu = lines["cpu"]
    assert cpu.within is True and cpu.exact_within is True and cpu.note is None  # inside: no note
    cs = lines["context switch"]
    assert cs.within is True and cs.exact_within is False and cs.note == "no documented difference"
    assert cs.flags == ("unstable",)
    send = lines["send"]
    assert send.status == "pending" and send.lebench_kbest is None and send.median is None
    assert "ipc family" in (send.detail or "") and "failed to bind" in (send.lebench_errors or "")
    assert lines["fork"].kbest_ratio == pytest.approx(1.1)
    assert lines["fork"].lebench_errors == "[error] fork failed. (x1)"
    assert lines["cpu"].lebench_errors is None
    small_read = lines["small read"]
    assert small_read.status == "pending" and small_read.lebench_kbest == 400.0 and small_read.ratio is None
    assert lines["fork Child"].status == "osmeter-skip" and lines["fork Child"].detail == "needs more memory"
    assert lines["thr create"].status == "no-osmeter" and lines["thr create"].lebench_kbest == 9_000.0
    assert lines["big fork"].status == "no-lebench" and lines["big fork"].ratio is None
    assert lines["thr create Child"].status == "lebench-only"
    assert lines["huge page fault"].status == "lebench-only"


def test_match_rows_without_exact_run() -> None:
    lines = lbp.match_rows(SPECS[:2], lbp.parse_lebench_csv(CSV), {"ref": fig(31.0), "cpu": fig(4_000_000.0)})
    ref, cpu = lines[0], lines[1]
    assert ref.ratio == 1.0 and ref.within is True and ref.exact_median is None and ref.exact_within is None
    assert cpu.within is False and cpu.note == "LEBench is built with -O0"


def test_ratio_needs_a_positive_reference() -> None:
    lebench = {"ref": lbp.LebenchFigure(0.0, 0.0)}
    (line,) = lbp.match_rows(SPECS[:1], lebench, {"ref": fig(20.0)})
    assert line.ratio is None and line.within is None and line.note is None


def test_counts_and_verdict() -> None:
    c = lbp.count(lines_for_tests())
    assert (c.compared, c.within, c.exact_compared, c.exact_within, c.pending) == (4, 3, 4, 3, 2)
    assert c.judged_ok is False  # the context switch's exact ratio is outside
    c_default = lbp.count(lbp.match_rows(SPECS[:2], lbp.parse_lebench_csv(CSV), {"ref": fig(31.0), "cpu": fig(2.4e6)}))
    assert c_default.exact_compared == 0 and c_default.judged_ok is True  # judged on the default ratios


def test_render_table() -> None:
    text = lbt.render_table(lines_for_tests(), exact=True)
    rows = text.splitlines()
    header, rule = rows[0], rows[1]
    for title in ("LEBench row", "LEBench k-best", "LEBench avg", "osmeter median (95% CI)", "osmeter k-best",
                  "ratio", "exact median", "exact ratio", "in 0.8-1.25 (default/exact)", "note"):
        assert title in header
    by_row = {r.split("  ")[0].strip(): r for r in rows[2:]}
    assert "0.65" in by_row["ref"] and "1.06" in by_row["ref"] and "NO/yes" in by_row["ref"]
    assert by_row["ref"].endswith("osmeter reads the clock batch + 1 times")
    assert "2 100 000 (2 079 000..2 121 000)" in by_row["cpu"]  # thousands grouped with spaces, the CI
    assert "yes/yes" in by_row["cpu"] and "-O0" not in by_row["cpu"]  # inside: no note
    assert "yes/NO" in by_row["context switch"] and "[osmeter flags: unstable]" in by_row["context switch"]
    assert "pending" in by_row["send"] and "ipc family" in by_row["send"]
    assert by_row["send"].endswith("LEBench's test printed: [error] failed to bind. (x1); [error] failed to send. (x2)")
    assert "fork failed" in by_row["fork"] and "fork failed" in by_row["fork Child"]
    assert "400" in by_row["small read"] and "pending" in by_row["small read"]
    assert "(not in osmeter)" in by_row["thr create Child"]
    # figures are right-aligned in columns: every ratio cell ends where the header's "ratio" ends
    end = header.index("ratio") + len("ratio")
    assert by_row["ref"][end - 4:end] == "0.65" and by_row["cpu"][end - 4:end] == "0.90"
    assert set(rule.replace(" ", "")) == {"-"}


def test_render_table_without_exact() -> None:
    text = lbt.render_table(lbp.match_rows(SPECS[:1], lbp.parse_lebench_csv(CSV), {"ref": fig(31.0)}), exact=False)
    assert "exact" not in text and "in 0.8-1.25" in text
    assert text.splitlines()[2].split()[:2] == ["ref", "31.0"]


def test_json_document() -> None:
    lines = lines_for_tests()
    lines.append(lbp.Line("x", "compared", 1.0, 1.0, median=math.nan))
    doc = lbt.report_document(lines, {"mode": "test"})
    text = json.dumps(doc, allow_nan=False)  # NaN became null
    back = json.loads(text)
    assert back["tolerance"] == [0.8, 1.25] and back["mode"] == "test" and back["unit"] == "ns"
    assert back["counts"]["judged_ok"] is False and back["counts"]["pending"] == 2
    assert back["rows"][0]["row"] == "ref" and back["rows"][0]["within"] is False
    assert back["rows"][-1]["median"] is None


def test_skip_without_lebench(capsys: pytest.CaptureFixture[str]) -> None:
    assert lb.main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("skipped:") and "gcc -o OS_Eval -pthread -O0 OS_Eval.c" in out


def _store_with_runs(path: Path) -> None:
    store = open_store(str(path), create=True)
    for exact, median in ((False, 20.0), (True, 33.0)):
        run_id = store.create_run(NewRun(
            label="lebench-exact" if exact else "lebench-default", start_time="2026-11-23T10:00:00Z", source="run",
            osmeter_version="0.2.0", probe_version="0.2.0", suite="lebench", argv=["osmeter-probe", "run"],
            params={"lebench_exact": exact}, machine={"hostname": "h"}, meta={"type": "meta", "lebench_exact": exact},
        ))
        x = np.full(50, median) + np.linspace(0, 1, 50)
        store.add_result(run_id, BenchResult(
            seq=0, bench="cpu.timer_overhead", params={"source": "monotonic"}, status="ok", unit="ns",
            summary=stats.summary(x), batch=1, record={"type": "result", "lebench_row": "ref"}), x)
        store.add_result(run_id, BenchResult(seq=1, bench="cpu.fdiv_chain", params={}, status="skip",
                                             reason="no", record={"lebench_row": "cpu"}), None)
        store.add_result(run_id, BenchResult(seq=2, bench="syscall.getuid", params={}, status="ok", unit="ns",
                                             summary=stats.summary(x), batch=1, record={}), x)  # not a row
        store.finish_run(run_id, "complete", "2026-11-23T10:05:30Z", None)
    store.close()


def test_only_parse_reads_the_latest_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "s.db"
    _store_with_runs(store)
    assert lbs.latest_lebench_runs(store) == ("1", "2")
    run, figs = lbs.stored_figures(store, "1")
    assert run.label == "lebench-default" and set(figs) == {"ref", "cpu"}
    assert figs["ref"].median == pytest.approx(20.5, abs=0.1) and figs["cpu"].status == "skip"
    assert lbs.run_wall_seconds(run) == 330.0

    csv = tmp_path / "output.osmeter-fidelity.csv"
    csv.write_text(CSV)
    (tmp_path / "lebench.log").write_text("Performing test ref.\n[error] x.\nTest took: 0.5 seconds\n"
                                          "Test took: 812.0 seconds\n")
    monkeypatch.setattr(lb, "osmeter_rows", lambda lebench, results: SPECS[:2])  # no probe needed
    out_json = tmp_path / "out.json"
    rc = lb.main(["--only-parse", str(csv), "--store", str(store), "--json", str(out_json)])
    out = capsys.readouterr().out
    assert rc == 0  # judged on the exact run: ref's 33.5 / 31 is inside (the default 20.5 / 31 is not)
    assert "wall time: LEBench 812 s" in out and "wall time: osmeter run 1 (default) 330 s" in out
    assert "LEBench printed 1 [error] lines, in its tests ref" in out and "LEBench's test printed: [error] x." in out
    assert "osmeter-skip" in out and "within 0.8-1.25: default run 0 of 1 rows, --lebench-exact run 1 of 1" in out
    doc = json.loads(out_json.read_text())
    assert doc["osmeter_runs"] == {"default": 1, "exact": 2} and doc["lebench_log"]["total_seconds"] == 812.0
    assert doc["mode"] == "only-parse" and doc["machine"] == {"hostname": "h"}
    assert [r["row"] for r in doc["rows"]] == ["ref", "cpu", "context switch", "fork", "fork Child", "thr create",
                                               "thr create Child", "small read", "huge page fault"]


# --lebench-runs 2, --build-from / --base-iter (issue 30)

SOURCE = (
    "#define DEBUG false\n#define BASE_ITER 10000\n\n#define PAGE_SIZE 4096\n"
    "int main() {\n\ttestInfo info;\n\n\tsleep(60);\n\tinfo.iter = BASE_ITER * 100;\n}\n"
)


def test_prepare_source_sets_base_iter_and_removes_the_sleep() -> None:
    out = lb.prepare_source(SOURCE, 1000)
    assert "#define BASE_ITER 1000\n" in out and "BASE_ITER 10000" not in out
    assert "\tsleep(60);" not in out and "/* sleep(60);" in out
    assert "info.iter = BASE_ITER * 100;" in out  # the rest untouched
    assert "#define BASE_ITER 10000" in lb.prepare_source(SOURCE, None)  # None: BASE_ITER left as it is


@pytest.mark.parametrize("text,what", [
    (SOURCE.replace("#define BASE_ITER 10000\n", ""), "BASE_ITER"),
    (SOURCE.replace("\tsleep(60);\n", ""), "sleep(60)"),
    (SOURCE + "#define BASE_ITER 5\n", "BASE_ITER"),
])
def test_prepare_source_refuses_a_source_it_does_not_know(text: str, what: str) -> None:
    with pytest.raises(ValueError, match=what.replace("(", r"\(").replace(")", r"\)")):
        lb.prepare_source(text, 1000)


def test_parse_log_reads_the_iterations_base_iter_and_sleep() -> None:
    text = ("Performing test ref.\nTotal test iteration 100000.\nTest took: 0.5 seconds\n"
            "Performing test fork.\nTotal test iteration 2000.\nTest took: 1.5 seconds\nTest took: 2.1 seconds\n")
    log = lbp.parse_lebench_log(text)
    assert log.iterations == {"ref": 100000, "fork": 2000} and log.base_iter() == 1000
    assert log.row_iterations()["fork Child"] == 2000
    assert log.slept() is False  # 2.1 s in all, 2.0 s of tests
    assert lbp.parse_lebench_log(text.replace("Test took: 2.1", "Test took: 62.1")).slept() is True
    assert lbp.parse_lebench_log(LOG).base_iter() == 10000  # ref's 1 000 000: LEBench's default
    assert lbp.parse_lebench_log("Performing test cpu.\nTest took: 1.0 seconds\n").base_iter() is None


def test_a_second_lebench_run_flags_the_rows_lebench_does_not_reproduce() -> None:
    first = lbp.parse_lebench_csv(CSV)
    again = dict(first, ref=lbp.LebenchFigure(45.0, 50.0), cpu=lbp.LebenchFigure(2_400_000.0, 2_500_000.0))
    lines = {ln.row: ln for ln in lbp.match_rows(SPECS, first, {"ref": fig(31.0), "cpu": fig(2.4e6)}, None, None,
                                                 again, {"ref": 100000})}
    assert lines["ref"].lebench_self_ratio == pytest.approx(45 / 31) and lines["ref"].lebench_self_within is False
    assert lines["cpu"].lebench_self_within is True and lines["ref"].lebench_n == 100000
    assert lines["small read"].lebench_self_ratio == 1.0  # pending in osmeter, still LEBench against itself
    c = lbp.count(lines.values())
    assert c.self_compared == 9 and c.self_within == 8  # every row in both CSVs, LEBench-only ones too
    assert c.judged_ok is True  # the verdict stays on osmeter's ratios
    text = lbt.render_table(list(lines.values()), exact=False)
    assert "LEBench run2/run1" in text.splitlines()[0]
    by_row = {r.split("  ")[0].strip(): r for r in text.splitlines()[2:]}
    assert "1.45 NO" in by_row["ref"] and "1.02" in by_row["cpu"]
    doc = lbt.report_document(list(lines.values()), {})
    assert doc["counts"]["self_within"] == 8 and doc["rows"][0]["lebench_self_within"] is False
    # one run: no such column, nothing flagged
    one = lbp.match_rows(SPECS[:1], first, {"ref": fig(31.0)})
    assert one[0].lebench_self_ratio is None and "run2/run1" not in lbt.render_table(one, exact=False)


@pytest.mark.parametrize("argv,message", [
    (["--base-iter", "1000"], "--base-iter N (1 or more) goes with --build-from"),
    (["--lebench", "x", "--build-from", "y"], "not both"),
    (["--build-from", "y", "--base-iter", "0"], "--base-iter N"),
    (["--lebench-runs", "3"], "invalid choice"),
])
def test_bad_build_and_runs_options_exit_2(argv: list[str], message: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        lb.main(argv)
    assert e.value.code == 2 and message in capsys.readouterr().err


def test_build_from_a_directory_without_lebench_says_so(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as e:
        lb.build_lebench(tmp_path, 1000, tmp_path / "build")
    assert "no OS_Eval.c" in str(e.value.code)


def test_a_missing_osmeter_probe_stops_before_lebench_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OSMETER_PROBE", str(tmp_path / "no-such-probe"))
    with pytest.raises(SystemExit) as e:
        lb.check_osmeter_probe()
    assert str(e.value.code).startswith("osmeter cannot run:") and "no-such-probe" in str(e.value.code)


def test_kbest_lines_count_like_for_like_and_name_the_rows_outside() -> None:
    """k-best against k-best, rows where LEBench timed failing calls left out, LEBench's own
    irreproducible rows marked; lines fit 100 columns."""
    rows = [
        lbp.Line("getpid", "compared", 100.0, 110.0, kbest_ratio=1.02, exact_kbest_ratio=0.99),
        lbp.Line("big write", "compared", 100.0, 110.0, kbest_ratio=0.34, exact_kbest_ratio=0.35,
                 lebench_self_ratio=1.66, lebench_self_within=False),
        lbp.Line("send", "compared", 100.0, 110.0, kbest_ratio=3.7, exact_kbest_ratio=3.1,
                 lebench_errors="bind: Address already in use"),
        lbp.Line("cpu", "compared", 100.0, 110.0, kbest_ratio=0.60),
    ]
    out = lbt.kbest_lines(rows)
    assert out[0].startswith("k-best ratio, default run: 1 of 3 rows within 0.8-1.25")
    assert "big write 0.34 (LEBench not reproduced)" in " ".join(out) and "cpu 0.60" in out[1]
    assert "send" not in " ".join(out)
    exact = [ln for ln in out if ln.startswith("k-best ratio, --lebench-exact run")]
    assert exact == ["k-best ratio, --lebench-exact run: 1 of 2 rows within 0.8-1.25 "
                     "(LEBench's failing calls not counted)"]
    assert all(len(ln) <= 100 for ln in out)
    assert lbt.kbest_lines([lbp.Line("ref", "pending", 20.0, 29.0)]) == []
