"""`osmeter hotspots --diff A B` in ns per operation (issue 29, part 3), end
to end on hand-made probe output: two `hotspots` runs of syscall.null, A at
41 ns and B at 125 ns per call, B with a new function (audit's exit hook)
that takes 40 % of its samples. Each side's shares are scaled by its
result's median; ranked so, the new function is first and do_syscall_64,
whose share fell from 60 to 45 % while its time rose, is second and slower.

The same from the store (two imported runs), from the probe files
themselves, and the fallback to shares for folded files (no median)."""
from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import DATA, osmeter_command, subprocess_env

META = json.loads((DATA / "run_x86_64.jsonl").read_text().splitlines()[0])
STACKS_A = [["p;entry_[k];do_syscall_64_[k]", 600], ["p;entry_[k];do_syscall_64_[k];x64_sys_call_[k]", 300],
            ["p;main", 100]]
STACKS_B = [["p;entry_[k];do_syscall_64_[k]", 450], ["p;entry_[k];do_syscall_64_[k];x64_sys_call_[k]", 125],
            ["p;entry_[k];do_syscall_64_[k];__audit_syscall_exit_[k]", 400], ["p;main", 25]]


def probe_file(path: Path, median: float, stacks: list, ops: int) -> Path:
    values = [round(median + 0.01 * i, 4) for i in range(-10, 11)]  # median exactly `median`
    instance = {"bench": "syscall.null", "params": {}}
    records = [
        dict(META, command="hotspots"),
        {"type": "progress", "index": 0, "total": 1, **instance},
        {"type": "samples", **instance, "unit": "ns", "batch": 10000, "values": values},
        {"type": "result", **instance, "unit": "ns", "n": len(values), "min": values[0], "median": median,
         "mean": median, "batch": 10000, "cpu": 1, "placement": None, "elapsed_s": 1.0, "stop_reason": "rse",
         "ref_cycles": None, "extra": {}},
        {"type": "profile", **instance, "lebench_row": None, "status": "ok", "reason": None, "mode": "sample",
         "event": "cpu-clock", "frequency_hz": 999, "weight_unit": "samples", "samples": 1000, "lost": 0,
         "kernel": True, "kernel_reason": None, "symbols": {"kernel": "kallsyms", "kernel_reason": None},
         "window": {"start_ns": 1, "end_ns": 2, "enabled_s": 1.0, "batches": 100, "left_out": 0}, "ops": ops,
         "stacks": stacks, "calls": None, "notes": []},
        {"type": "end", "status": "complete", "signal": None, "end_time": "2026-11-22T07:41:10Z",
         "counts": {"ok": 1, "skip": 0, "error": 0}},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def sides(tmp_path: Path) -> tuple[Path, Path]:
    # the windows say 100 and 50 ns per op: the medians (41, 125) must win
    return (probe_file(tmp_path / "a.jsonl", 41.0, STACKS_A, 10_000_000),
            probe_file(tmp_path / "b.jsonl", 125.0, STACKS_B, 20_000_000))


def table_rows(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("functions whose self time per operation"))
    rule = next(i for i in range(start, len(lines)) if lines[i].startswith("----"))
    rows = []
    for line in lines[rule + 1:]:
        if not line.strip() or line.startswith("/"):  # the end of the table, or the files written after it
            break
        rows.append(line)
    return rows


def check_text(text: str) -> None:
    rows = table_rows(text)
    assert re.match(r"__audit_syscall_exit_\[k\]\s+0 → 50\.00 ns\s+\+50\.0 ± 1\.9 ns\s+0\.0 → 40\.0\s+"
                    r"0\.0 → 40\.0\s+new$", rows[0]), text
    assert re.match(r"do_syscall_64_\[k\]\s+24\.60 → 56\.25 ns\s+\+31\.7 ± 2\.1 ns\s+60\.0 → 45\.0", rows[1]), text
    assert "time per operation: 41.00 → 125.0 ns (+84.0 ns)" in text
    assert all(len(line) <= 100 for line in text[text.index("A: "):].splitlines()), text
    assert not re.search(r"\de[+-]?\d", text), "no exponent"


def test_two_stored_runs_are_diffed_in_ns_per_op(cli, tmp_path: Path) -> None:
    a, b = sides(tmp_path)
    for f in (a, b):
        r = cli("import", str(f))
        assert r.code == 0, r.err
    r = cli("hotspots", "--diff", "1", "2", "-o", str(tmp_path / "d"))
    assert r.code == 0, r.err
    check_text(r.out)
    assert "41.00 ns per operation: the median of run 1, result 0" in r.out
    assert "125.0 ns per operation: the median of run 2, result 0" in r.out
    assert table_rows((tmp_path / "d" / "diff.txt").read_text()) == table_rows(r.out)
    svg = ET.fromstring((tmp_path / "d" / "diff.svg").read_text())
    ns = "{http://www.w3.org/2000/svg}"
    tips = {g.get("data-n"): g.find(f"{ns}title").text for g in svg.iter(f"{ns}g") if g.get("class") == "f"}
    assert "self 24.60 ns -> 56.25 ns per op (+31.65 ns)" in tips["do_syscall_64 [k]"]

    j = cli("hotspots", "--diff", "1", "2", "-o", str(tmp_path / "j"), "--json")
    assert j.code == 0, j.err
    doc = json.loads(j.out)
    assert doc["ranking"] == "ns_per_op"
    assert doc["ns_per_op"]["a"] == {"ns": 41.0, "source": "median", "result": "run 1, result 0"}
    top = doc["diff"][0]
    assert top["function"] == "__audit_syscall_exit_[k]" and top["appeared"] and not top["vanished"]
    assert (top["self_ns_a"], top["self_ns_b"], top["self_share_b"]) == (0.0, 50.0, 0.4)
    assert abs(top["self_delta_ns"] - 50.0) < 1e-9 and 1.9 < top["se_ns"] < 2.0
    sys64 = doc["diff"][1]
    assert sys64["function"] == "do_syscall_64_[k]" and sys64["self_share_a"] == 0.6 and sys64["self_delta_ns"] > 31
    assert "osmeter_result" not in json.dumps(doc["a"]["meta"])


def test_probe_files_take_their_result_records_median(cli, tmp_path: Path) -> None:
    a, b = sides(tmp_path)
    r = cli("hotspots", "--diff", str(a), str(b), "-o", str(tmp_path / "d"))
    assert r.code == 0, r.err
    check_text(r.out)
    assert "41.00 ns per operation: the median of a.jsonl's result record before it" in r.out


def test_standard_input_takes_the_profiles_sampled_cpu_time(tmp_path: Path) -> None:
    a, b = sides(tmp_path)
    r = subprocess.run(osmeter_command("hotspots", "--diff", str(a), "-", "-o", str(tmp_path / "d"), "--json"),
                       input=b.read_text(), capture_output=True, text=True, env=subprocess_env(), timeout=60)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    # cpu-clock at 999 Hz: 1000 samples are 1.001 s of CPU time over 20 M ops (the window's 1 s is wall time)
    assert doc["ns_per_op"]["b"] == {"ns": pytest.approx(1000 / 999 * 1e9 / 20e6), "source": "profile's sampled CPU time",
                                     "result": None}


def test_folded_files_fall_back_to_shares_and_say_so(cli, tmp_path: Path) -> None:
    a, b = tmp_path / "a.folded", tmp_path / "b.folded"
    for f, stacks in ((a, STACKS_A), (b, STACKS_B)):
        f.write_text("".join(f"{s} {w}\n" for s, w in stacks))
    r = cli("hotspots", "--diff", str(a), str(b), "-o", str(tmp_path / "d"))
    assert r.code == 0, r.err
    notes = [line for line in r.out.splitlines() if line.startswith("ranked by the change of share")]
    assert len(notes) == 1 and "A's ns per operation is unknown (no result's median" in notes[0], r.out
    assert "functions whose self share changed most" in r.out
    j = cli("hotspots", "--diff", str(a), str(b), "-o", str(tmp_path / "j"), "--json")
    doc = json.loads(j.out)
    assert doc["ranking"] == "share" and doc["ns_per_op"]["a"]["ns"] is None
    assert doc["diff"][0]["function"] == "__audit_syscall_exit_[k]" and "self_change" in doc["diff"][0]


@pytest.mark.slow
def test_two_parameter_sets_profiled_now_are_diffed_by_their_medians(real_probe, cli, tmp_path: Path) -> None:
    """The BENCH form: each side's run is stored with its result, whose median scales its shares (about 5 s)."""
    r = cli("hotspots", "syscall.stat", "--diff", "path=/", "path=/usr/bin", "--min-time", "0.3", "--max-time", "0.6",
            "--frequency", "2999", "-o", str(tmp_path / "d"), "--json")
    if r.code != 0 and "unsupported" in r.err:
        pytest.skip(f"no profile here: {r.err.strip()[:200]}")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["ranking"] == "ns_per_op", doc["ns_per_op"]
    for side, run in (("a", 1), ("b", 2)):
        t = doc["ns_per_op"][side]
        assert t["source"] == "median" and t["result"] == f"run {run}, result 0" and t["ns"] > 0, t
    stored = json.loads(cli("show", "2", "--json").out)["results"][0]
    assert doc["ns_per_op"]["b"]["ns"] == pytest.approx(stored["median"]), "the stored result's median"
    rows = doc["diff"]
    keys = [(-abs(x["self_delta_ns"]), -abs(x["total_delta_ns"]), x["function"]) for x in rows]
    assert keys == sorted(keys) and all(x["se_ns"] is not None for x in rows)
