"""Contract test of the probe's JSON Lines (perf's JSON lint idea): every line
of a quick-suite run has exactly the documented keys and types, in the
documented order (docs/schema.md)."""
import json
import math
import subprocess

import pytest

from probe_helpers import run_probe

KEYS = {
    "meta": {"type", "schema", "probe_version", "command", "suite", "start_time", "clock", "cpu",
             "cpu_choice", "pinned", "pin_error", "lebench_exact", "inject", "fifo", "mlock", "budget",
             "build", "machine"},
    "progress": {"type", "index", "total", "bench", "params", "lebench_row"},
    "samples": {"type", "bench", "params", "lebench_row", "unit", "batch", "values"},
    "result": {"type", "bench", "params", "lebench_row", "unit", "n", "min", "median", "mean", "batch",
               "cpu", "placement", "elapsed_s", "stop_reason", "rse", "tau", "ref_cycles", "flags", "extra"},
    "skip": {"type", "bench", "params", "lebench_row", "reason"},
    "error": {"type", "bench", "params", "lebench_row", "message"},
    "counters": {"type", "bench", "params", "lebench_row", "ops", "windows", "bytes_per_op", "note", "kernel",
                 "kernel_reason", "inherit", "counters"},
    "end": {"type", "status", "signal", "end_time", "counts"},
}
COUNTER_KEYS = {"name", "status", "unit", "value", "total", "counted", "window_cost", "running", "reason"}
CLOCK_KEYS = {"source", "forced", "hz", "tick_ns", "resolution_ns", "overhead_ns", "invariant",
              "calibration_ns", "kernel_stable"}
FLAGS = {"precision-unmet", "calibration-timeout", "not-pinned", "tsc-unstable"}
# `info` (schema.md): optional in result, skip and error; an object of strings, last.
WITH_INFO = ("result", "skip", "error")


def check_keys(rec: dict) -> None:
    keys = set(rec)
    if rec["type"] in WITH_INFO and "info" in rec:
        info = rec["info"]
        assert isinstance(info, dict) and info, rec
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in info.items()), info
        assert list(rec)[-1] == "info", "info comes last"
        keys.discard("info")
    assert keys == KEYS[rec["type"]], rec["type"]


@pytest.fixture(scope="module")
def quick(probe, tmp_path_factory):
    out = tmp_path_factory.mktemp("lint") / "quick.jsonl"
    # A short budget: these tests read the records' shape, not their figures.
    r = run_probe(probe, "run", "--suite", "quick", "--quiet", "--min-time", "0.01", "--max-time", "0.05",
                  "--min-samples", "5", "-o", str(out))
    assert r.rc == 0, r.stderr
    return out.read_text()


def test_the_quick_suite_has_file_records_with_info(quick):
    """The file family says where it measured (dir, fs_type, device, ...)."""
    recs = [json.loads(x) for x in quick.splitlines()]
    files = [r for r in recs if r["type"] in WITH_INFO and r["bench"].startswith("file.")]
    assert files, "the quick suite runs file benchmarks"
    for r in files:
        assert {"dir", "fs_type", "device", "mount_options", "remote"} <= set(r["info"]), r


def test_every_line_is_one_json_object_with_the_documented_keys(quick):
    assert quick.endswith("\n")
    for line in quick.splitlines():
        rec = json.loads(line)
        assert isinstance(rec, dict)
        check_keys(rec)
        assert "NaN" not in line and "Infinity" not in line


def test_record_order_and_consistency(quick, probe):
    recs = [json.loads(x) for x in quick.splitlines()]
    assert recs[0]["type"] == "meta" and recs[-1]["type"] == "end"
    meta = recs[0]
    assert meta["schema"] == 1 and meta["suite"] == "quick"
    assert set(meta["clock"]) == CLOCK_KEYS
    assert meta["clock"]["hz"] > 0 and meta["clock"]["overhead_ns"] > 0
    assert isinstance(meta["machine"], dict) and meta["machine"].get("kernel_release")
    body = recs[1:-1]
    progress = [r for r in body if r["type"] == "progress"]
    assert progress and [p["index"] for p in progress] == list(range(progress[0]["total"]))
    # progress, then samples+result (or skip, or error), for each instance
    i = 0
    while i < len(body):
        p = body[i]
        assert p["type"] == "progress"
        nxt = body[i + 1]
        if nxt["type"] == "samples":
            res = body[i + 2]
            assert res["type"] == "result"
            assert nxt["bench"] == res["bench"] == p["bench"]
            assert nxt["params"] == res["params"] == p["params"]
            assert len(nxt["values"]) == res["n"] >= 1
            v = sorted(nxt["values"])
            assert res["min"] == v[0]
            assert math.isclose(res["median"], (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2)
            assert res["unit"] in ("ns", "bytes_per_s", "count")
            assert res["stop_reason"] in ("rse", "max_time", "max_samples")
            assert set(res["flags"]) <= FLAGS
            assert res["rse"] is None or res["rse"] >= 0
            assert res["tau"] is None or 1 <= res["tau"] <= res["n"]
            assert res["lebench_row"] is None  # the quick suite is not the LEBench table
            i += 3
        else:
            assert nxt["type"] in ("skip", "error")
            i += 2
    end = recs[-1]
    assert end["status"] == "complete" and end["signal"] is None
    assert sum(end["counts"].values()) == len(progress)


def test_suite_matches_the_catalogue(quick, probe):
    cat = json.loads(run_probe(probe, "list", "--json").stdout)
    expected = []
    for b in cat["benchmarks"]:
        if "quick" in b["suites"]:
            expected += [(b["name"], json.dumps(s, sort_keys=True)) for s in (b["sweep"] or [None])]
    ran = [(r["bench"], json.dumps(r["params"], sort_keys=True))
           for r in map(json.loads, quick.splitlines()) if r["type"] == "progress"]
    assert [n for n, _ in ran] == [n for n, _ in expected]
    for (n, p), (_, s) in zip(ran, expected):
        if s != "null":
            assert p == s, n


def test_counters_records_have_the_documented_keys(probe):
    """--counters adds one `counters` record right after each result (schema.md)."""
    r = run_probe(probe, "run", "syscall.null", "task.fork", "--counters", "all,r01c2",
                  "--min-time", "0.01", "--max-time", "0.2", "--quiet")
    assert r.rc == 0, r.stderr
    types = [x["type"] for x in r.records]
    assert types.count("counters") == 2
    for i, rec in enumerate(r.records):
        check_keys(rec)
        if rec["type"] != "counters":
            continue
        assert r.records[i - 1]["type"] == "result"
        assert r.records[i - 1]["bench"] == rec["bench"] and r.records[i - 1]["params"] == rec["params"]
        assert isinstance(rec["ops"], int) and rec["ops"] >= rec["windows"] > 0
        assert isinstance(rec["kernel"], bool) and rec["inherit"] is True
        assert (rec["kernel_reason"] is None) == rec["kernel"]
        for c in rec["counters"]:
            assert set(c) == COUNTER_KEYS
            assert c["status"] in ("ok", "unsupported", "not_counted")
            assert c["unit"] in ("ns", "count", "ratio")
            if c["status"] == "ok":
                assert isinstance(c["value"], (int, float)) and c["reason"] is None
                assert 0 < c["running"] <= 1
            else:
                assert c["value"] is None and c["total"] is None and c["reason"]
                assert c["counted"] is None and c["window_cost"] is None


@pytest.mark.parametrize("exists", [True, False], ids=["result", "error"])
def test_line_separators_in_strings_are_escaped(probe, tmp_path, exists):
    """U+2028, U+2029 and NEL (U+0085) in a string (here a path, echoed in
    params and in an error message) are written as \\u escapes: a reader that
    splits lines on them (Python's str.splitlines) still sees one record per
    line (docs/schema.md)."""
    path = tmp_path / "a\u2028b\u2029c\x85d"
    if exists:
        path.write_text("x")
    p = subprocess.run([probe, "run", "syscall.stat", "--param", f"path={path}", "--max-time", "0.001",
                        "--min-time", "0", "--min-samples", "1", "--max-samples", "1", "--quiet"],
                       capture_output=True, timeout=60)
    assert p.returncode in (0, 1), p.stderr
    out = p.stdout
    for raw in ("\u2028", "\u2029", "\x85"):
        assert raw.encode() not in out
    for esc in (b"\\u2028", b"\\u2029", b"\\u0085"):
        assert esc in out
    lines = out.decode().splitlines()
    assert len(lines) == out.count(b"\n")
    recs = [json.loads(x) for x in lines]
    assert recs[-1]["type"] == "end"
    stat = [r for r in recs if r["type"] in ("result", "error", "skip")]
    assert len(stat) == 1 and stat[0]["params"]["path"] == str(path)
    if not exists:
        assert str(path) in stat[0].get("message", stat[0].get("reason", ""))
