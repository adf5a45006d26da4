"""Hotspot diffs in time (osmeter.hotspots.timed, .medians; the table in
report.hotspots; the differential flame graph's colours), on hand-made
profiles with known answers.

The case the issue measured: a change that makes an operation 3x slower
adds a new function, and every other function's share falls while its time
per operation rises. Ranked by share, the falling share of the function
that did not change is the strongest bar; ranked by ns it is the new one.
"""
from __future__ import annotations

import json
import math
import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from osmeter.hotspots import flamegraph, folded, medians, timed
from osmeter.hotspots.sources import Profile, load
from osmeter.report import hotspots as report_hs

# A: 41 ns per op; 60 % in do_syscall_64 itself, 30 % in x64_sys_call, 10 % user space.
A = folded.parse_folded("""\
p;entry_[k];do_syscall_64_[k] 600
p;entry_[k];do_syscall_64_[k];x64_sys_call_[k] 300
p;main 100
""")
# B: 125 ns per op; audit's exit hook is new, do_syscall_64's share falls (60 -> 45 %) while its time rises
# (24.6 -> 56.25 ns); user space's share falls and its time barely moves; `gone` was only in A.
B = folded.parse_folded("""\
p;entry_[k];do_syscall_64_[k] 450
p;entry_[k];do_syscall_64_[k];x64_sys_call_[k] 125
p;entry_[k];do_syscall_64_[k];__audit_syscall_exit_[k] 400
p;main 25
""")
A_GONE = A + [(("p", "gone_[k]"), 50)]
NS_A, NS_B = 41.0, 125.0


def by_name(rows: list[timed.TimedRow]) -> dict[str, timed.TimedRow]:
    return {r.function: r for r in rows}


def test_a_function_whose_share_falls_while_its_time_rises_ranks_by_its_time():
    rows = timed.timed_diff(A, B, NS_A, NS_B)
    r = by_name(rows)
    sys64 = r["do_syscall_64_[k]"]
    assert sys64.self_share_b < sys64.self_share_a, "its share falls ..."
    assert sys64.self_delta_ns == pytest.approx(0.45 * NS_B - 0.6 * NS_A) and sys64.self_delta_ns > 0, "... its ns rise"
    assert [x.function for x in rows[:2]] == ["__audit_syscall_exit_[k]", "do_syscall_64_[k]"]
    share_first = folded.diff_table(A, B)[0].function
    assert share_first == "__audit_syscall_exit_[k]" and folded.diff_table(A, B)[1].self_change < 0, \
        "by share, do_syscall_64 is a falling bar"
    main = r["main"]
    assert main.self_delta_ns == pytest.approx(0.025 * NS_B - 0.1 * NS_A)
    assert (main.self_ns_a, main.total_ns_b) == (pytest.approx(4.1), pytest.approx(0.025 * NS_B))
    assert r["entry_[k]"].total_delta_ns == pytest.approx(0.975 * NS_B - 0.9 * NS_A) and r["entry_[k]"].self_ns_b == 0


def test_ranked_by_self_ns_then_total_ns_then_name():
    rows = timed.timed_diff(A_GONE, B, NS_A, NS_B)
    keys = [(-abs(r.self_delta_ns), -abs(r.total_delta_ns), r.function) for r in rows]
    assert keys == sorted(keys)
    zero_self = [r.function for r in rows if r.self_delta_ns == 0]
    assert zero_self == ["entry_[k]"]
    tie = timed.timed_diff(folded.parse_folded("p;b 1\np;a 1\n"), folded.parse_folded("p;b 1\np;a 1\n"), 10, 10)
    assert [r.function for r in tie] == ["a", "b"]


def test_appeared_and_vanished():
    r = by_name(timed.timed_diff(A_GONE, B, NS_A, NS_B))
    assert r["__audit_syscall_exit_[k]"].appeared and not r["__audit_syscall_exit_[k]"].vanished
    assert r["gone_[k]"].vanished and not r["gone_[k]"].appeared and r["gone_[k]"].self_ns_b == 0
    assert not any(r[f].appeared or r[f].vanished for f in ("do_syscall_64_[k]", "main", "entry_[k]"))
    # a function that is in both, but a leaf in only one, is neither
    inner = by_name(timed.timed_diff(folded.parse_folded("p;f;g 5\n"), folded.parse_folded("p;f 5\n"), 1, 1))
    assert not inner["f"].appeared and inner["g"].vanished


def test_the_standard_error_is_the_binomial_one_of_the_shares_times_ns():
    rows = by_name(timed.timed_diff(A, B, NS_A, NS_B))
    for name, r in rows.items():
        pa, pb = r.self_share_a, r.self_share_b
        want = math.sqrt(NS_A ** 2 * pa * (1 - pa) / 1000 + NS_B ** 2 * pb * (1 - pb) / 1000)
        assert r.se_ns == pytest.approx(want), name
    # ... and it is what repeated sampling of the same two profiles spreads by (2000 draws: within 10 %)
    rng = np.random.default_rng(29)
    sys64 = rows["do_syscall_64_[k]"]
    deltas = (rng.binomial(1000, sys64.self_share_b, 2000) / 1000 * NS_B
              - rng.binomial(1000, sys64.self_share_a, 2000) / 1000 * NS_A)
    assert float(np.std(deltas, ddof=1)) == pytest.approx(sys64.se_ns, rel=0.1)


def test_no_sampling_error_for_weights_in_ns_nor_for_an_empty_side():
    assert all(r.se_ns is None for r in timed.timed_diff(A, B, NS_A, NS_B, weight_unit="ns"))
    empty = timed.timed_diff([], B, NS_A, NS_B)
    assert all(r.se_ns is None and r.appeared for r in empty)


def profile(meta: dict[str, Any] | None = None) -> Profile:
    return Profile(label="x", stacks=A, meta=meta or {})


WINDOW = {"window": {"enabled_s": 0.5, "batches": 3}, "ops": 1_000_000}


@pytest.mark.parametrize("median, unit, meta, want", [
    (41.0, "ns", WINDOW, (41.0, "median")),
    (41.0, "ns", {}, (41.0, "median")),
    (2.5e9, "bytes_per_s", WINDOW, (500.0, "profile window")),  # 0.5 s / 1e6 ops
    (None, None, WINDOW, (500.0, "profile window")),
    (float("nan"), "ns", WINDOW, (500.0, "profile window")),
    (0.0, "ns", WINDOW, (500.0, "profile window")),
    (None, None, {**WINDOW, "event": "cpu-clock", "frequency_hz": 1000, "samples": 300, "lost": 100},
     (400.0, "profile's sampled CPU time")),  # 400 samples at 1 kHz: 0.4 s of CPU time over 1e6 ops
    (None, None, {**WINDOW, "event": "cycles", "frequency_hz": 1000, "samples": 300}, (500.0, "profile window")),
])
def test_ns_per_op_takes_the_median_in_ns_else_the_window(median, unit, meta, want):
    ns, source = timed.ns_per_op(profile(meta), median, unit)
    assert (ns, source) == (pytest.approx(want[0]), want[1])


@pytest.mark.parametrize("median, unit, meta, why", [
    (None, None, {}, "no result's median"),
    (3.0, "count", {}, "in count, not ns"),
    (None, None, {"window": {"enabled_s": 0.5}, "ops": True}, "no profile window"),
    (None, None, {"window": {"enabled_s": "1"}, "ops": 10}, "no profile window"),
    (None, None, {"window": [1], "ops": 10}, "no profile window"),
    (None, None, {"window": {"enabled_s": 0.5}, "ops": 0}, "no profile window"),
])
def test_ns_per_op_says_why_it_is_unknown(median, unit, meta, why):
    ns, reason = timed.ns_per_op(profile(meta), median, unit)
    assert ns is None and why in reason, reason


# ---- where the median comes from (hotspots.medians) ----------------------------------


@dataclass
class FakeResult:
    seq: int
    unit: str
    summary: Any


@dataclass
class FakeStored:
    run_id: int
    seq: int
    bench: str
    params: dict[str, Any]
    status: str = "ok"
    mode: str = "sample"
    meta: dict[str, Any] = field(default_factory=dict)
    stacks: list[tuple[str, int]] = field(default_factory=lambda: [("p;main", 3)])


@dataclass
class FakeRun:
    id: int


class FakeStore:
    closed = False

    def run(self, ref: str) -> FakeRun:
        return FakeRun(int(ref))

    def results(self, run_id: int) -> list[FakeResult]:
        return [FakeResult(0, "ns", type("S", (), {"median": 41.5})()), FakeResult(1, "bytes_per_s", None)]

    def profiles(self, run_id: int) -> list[FakeStored]:
        return [FakeStored(run_id, 0, "syscall.null", {}), FakeStored(run_id, 1, "file.read", {"size": 4096})]

    def close(self) -> None:
        self.closed = True


def test_a_stored_profile_carries_its_results_median_and_nothing_else_keeps_it():
    store = FakeStore()
    p = load("7:1", lambda: medians.WithResults(store))
    found = medians.take(p)
    assert found == medians.ResultMedian(41.5, "ns", "run 7, result 0") and medians.KEY not in p.meta
    assert store.closed, "closed through the wrapper"
    q = load("7:2", lambda: medians.WithResults(FakeStore()))
    assert medians.take(q) == medians.ResultMedian(None, "bytes_per_s", "run 7, result 1")
    forged = profile({medians.KEY: {"median": 1.0, "unit": "ns"}})
    assert medians.take(forged) is None and medians.KEY not in forged.meta, "a file's own field is not a median"


PROFILE: dict[str, Any] = {"type": "profile", "bench": "syscall.null", "params": {}, "status": "ok",
                           "mode": "sample", "weight_unit": "samples", "stacks": [["p;main", 3]], **WINDOW}


def result(median: float, bench: str = "syscall.null") -> dict[str, Any]:
    return {"type": "result", "bench": bench, "params": {}, "unit": "ns", "n": 3, "median": median}


def test_a_probe_files_median_is_the_result_record_before_its_profile(tmp_path):
    other = dict(PROFILE, params={"x": 1})
    f = tmp_path / "p.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in [
        {"type": "meta"}, result(41.0), {"type": "counters", "bench": "syscall.null"}, PROFILE,
        dict(result(99.0), params={"x": 1}), other, {"type": "end"}]) + "\n")
    for which, want in ((":1", 41.0), (":2", 99.0)):
        p = load(str(f) + which, None)
        assert medians.in_file(str(f), p, "p.jsonl") == medians.ResultMedian(
            want, "ns", "p.jsonl's result record before it")
    g = tmp_path / "q.jsonl"
    g.write_text(json.dumps(result(41.0, bench="cpu.call")) + "\n" + json.dumps(PROFILE) + "\n")
    assert medians.in_file(str(g), load(str(g), None), "q.jsonl") is None, "another instance's result"
    h = tmp_path / "h.folded"
    h.write_text("p;main 3\n")
    assert medians.in_file(str(h), load(str(h), None), "h.folded") is None
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert medians.in_file(str(fifo), load(str(f) + ":1", None), "fifo") is None, "a pipe is not read again"
    assert medians.in_file(str(tmp_path / "gone"), load(str(f) + ":1", None), "gone") is None


# ---- the table -----------------------------------------------------------------------


def test_the_table_ranks_by_ns_shows_shares_and_marks_new_and_gone():
    rows = timed.timed_diff(A_GONE, B, NS_A, NS_B)
    text = report_hs.render_timed_diff(rows, 10, report_hs.SideTime("run 1 syscall.null", NS_A, "median",
                                                                    "run 1, result 0"),
                                       report_hs.SideTime("run 2 syscall.null", NS_B, "profile window"))
    assert all(len(line) <= report_hs.WIDTH for line in text.splitlines()), text
    assert not re.search(r"\de[+-]?\d", text), "no exponent"
    assert "41.00 ns per operation: the median of run 1, result 0" in text
    assert "125.0 ns per operation: the profile's window" in text
    lines = text.splitlines()
    body = lines[next(i for i, line in enumerate(lines) if line.startswith("----")) + 1:]
    assert re.match(r"__audit_syscall_exit_\[k\]\s+0 → 50\.00 ns\s+\+50\.0 ± 1\.9 ns\s+0\.0 → 40\.0\s+"
                    r"0\.0 → 40\.0\s+new$", body[0]), body[0]
    assert re.match(r"do_syscall_64_\[k\]\s+23\.43 → 56\.25 ns\s+\+32\.8 ± 2\.1 ns\s+57\.1 → 45\.0", body[1]), body
    assert re.search(r"^gone_\[k\].*-1\.95 ± 0\.2\d ns.*gone$", text, re.M), text


# ---- the differential flame graph's colours --------------------------------------------


def fills(svg: str) -> dict[str, tuple[str, str | None, str]]:
    ns = "{http://www.w3.org/2000/svg}"
    root = ET.fromstring(svg)
    return {g.get("data-n"): (g.find(f"{ns}rect").get("fill"), g.get("data-new"), g.find(f"{ns}title").text)
            for g in root.iter(f"{ns}g") if g.get("class") == "f"}


def rgb(fill: str) -> tuple[int, int, int]:
    r, g, b = map(int, re.fullmatch(r"rgb\((\d+),(\d+),(\d+)\)", fill).groups())
    return r, g, b


def test_the_flame_graph_is_red_where_the_time_per_op_grew_though_the_share_fell():
    f = fills(flamegraph.diff_flamegraph_svg(A, B, "d", ns_a=NS_A, ns_b=NS_B))
    red = rgb(f["do_syscall_64 [k]"][0])
    assert red[0] == 245 and red[1] == red[2] < 245, "slower: red (its share fell)"
    blue = rgb(f["main"][0])
    assert blue[2] == 245 and blue[0] == blue[1] < 245, "faster: blue"
    audit = rgb(f["__audit_syscall_exit [k]"][0])
    assert audit[1] < red[1], "the largest change is the strongest colour"
    assert f["__audit_syscall_exit [k]"][1] == "1" and f["do_syscall_64 [k]"][1] is None, "new frames marked"
    assert "self 24.60 ns -> 56.25 ns per op (+31.65 ns)" in f["do_syscall_64 [k]"][2]
    assert "self 60.00% -> 45.00%" in f["do_syscall_64 [k]"][2] and "new" in f["__audit_syscall_exit [k]"][2]
    by_share = fills(flamegraph.diff_flamegraph_svg(A, B, "d"))
    assert rgb(by_share["do_syscall_64 [k]"][0])[2] == 245, "without ns per op, the share's change: blue"
