"""rt.*: each benchmark with a tiny budget gives a plausible value in ns, or a
skip with a reason; its parameters do what they say (loops, cpus, stress,
breaktrace, SCHED_OTHER without root); bad values are refused before
anything runs. The injected-noise ground truth is in
tests/groundtruth/test_rt_inject.py, the kernels' checksums in
test_rt_kernels.py."""
import json
import os
import subprocess
from pathlib import Path

import pytest

from probe_helpers import run_probe
from test_unprivileged import as_nobody, open_tmp, typical_memlock_limit  # noqa: F401 (fixture)

ROOT = os.geteuid() == 0
TINY = ("--min-time", "0.05", "--max-time", "2", "--quiet")


def ncpus() -> int:
    return len(os.sched_getaffinity(0))


def run_one(probe, bench, *params, extra=TINY):
    args = ["run", bench]
    for p in params:
        args += ["--param", p]
    r = run_probe(probe, *args, *extra)
    assert r.rc == 0, r.stderr
    return r


def test_cyclic_latency_is_plausible_and_labelled(probe):
    r = run_one(probe, "rt.cyclic", "interval_us=200")
    res = r.result("rt.cyclic")
    assert res["unit"] == "ns"
    # A wake-up is late by something between a clock read and a few ms, even in a VM.
    assert 0 < res["min"] <= res["median"] < 5e6
    e = res["extra"]
    assert e["interval_ns"] == 200_000
    assert e["cycles"] == res["n"] and e["max_ns"] >= res["median"]
    assert abs(e["avg_ns"] - res["mean"]) <= 1e-6 * res["mean"] + 1
    assert res["stop_reason"] in ("duration", "max_time", "max_samples")
    info = res["info"]
    assert info["stress"] == "none"
    if ROOT:
        assert info["policy"] == "SCHED_FIFO 80" and info["mlock"] == "locked"


def test_cyclic_loops_gives_exactly_that_many_cycles(probe):
    res = run_one(probe, "rt.cyclic", "interval_us=100", "loops=321",
                  extra=("--min-time", "0", "--max-time", "0.01", "--quiet")).result("rt.cyclic")
    # loops wins over a max-time far too short for it (cyclictest -l).
    assert res["n"] == 321 and res["stop_reason"] == "loops"
    assert res["extra"]["cycles"] == 321


def test_cyclic_priority_zero_is_sched_other(probe):
    res = run_one(probe, "rt.cyclic", "priority=0", "interval_us=100", "loops=50").result("rt.cyclic")
    assert res["info"]["policy"] == "SCHED_OTHER (priority=0)"


def test_cyclic_without_root_says_sched_other_and_not_locked(probe, open_tmp):
    prefix, copy, env = as_nobody(probe, open_tmp)
    p = subprocess.run([*prefix, copy, "run", "rt.cyclic", "--param", "loops=20", "--param", "interval_us=100",
                        "--quiet"], capture_output=True, text=True, env=env, timeout=60,
                       preexec_fn=typical_memlock_limit)
    assert p.returncode == 0, p.stderr
    res = [r for r in map(json.loads, p.stdout.splitlines()) if r["type"] == "result"][0]
    if prefix or os.geteuid() != 0:
        assert res["info"]["policy"].startswith("SCHED_OTHER: SCHED_FIFO 80 refused")
        assert "CAP_SYS_NICE" in res["info"]["policy"]
        assert res["info"]["mlock"].startswith("not locked")
    assert res["n"] == 20


def test_cyclic_histogram_overflows_count_samples_above_hist_us(probe):
    # hist_us=1: nearly every wake-up is later than 1 us.
    res = run_one(probe, "rt.cyclic", "hist_us=1", "interval_us=100", "loops=200").result("rt.cyclic")
    r2 = run_probe(probe, "run", "rt.cyclic", "--param", "hist_us=1", "--param", "loops=200", "--param",
                   "interval_us=100", "--quiet")
    samples = [x for x in r2.of_type("samples")][0]["values"]
    assert r2.result("rt.cyclic")["extra"]["overflows"] == sum(v > 1000 for v in samples)
    assert res["extra"]["overflows"] > 0


def test_cyclic_break_threshold_stops_at_the_first_latency_above_it(probe):
    r = run_probe(probe, "run", "rt.cyclic", "--param", "breaktrace_us=1", "--param", "loops=1000", "--param",
                  "interval_us=100", "--quiet")
    assert r.rc == 0, r.stderr
    res = r.result("rt.cyclic")
    assert res["stop_reason"] == "break"
    values = r.of_type("samples")[0]["values"]
    assert values[-1] > 1000 and all(v <= 1000 for v in values[:-1])
    assert res["info"]["break"].startswith(f"latency {int(values[-1])} ns > 1000 ns on CPU {res['cpu']}")
    assert "trace_marker" in res["info"]["break"]


@pytest.mark.skipif(not ROOT, reason="writing trace_marker needs root")
def test_cyclic_break_writes_the_trace_marker(probe):
    tracing = Path("/sys/kernel/tracing")
    mounted_here = False
    if not (tracing / "trace_marker").exists():
        m = subprocess.run(["mount", "-t", "tracefs", "nodev", str(tracing)], capture_output=True, text=True)
        if m.returncode:
            pytest.skip(f"tracefs cannot be mounted here: {m.stderr.strip()}")
        mounted_here = True
    try:
        if (tracing / "tracing_on").read_text().strip() != "1":
            pytest.skip("tracing is off here (tracing_on = 0): the marker would not be recorded")
        r = run_probe(probe, "run", "rt.cyclic", "--param", "breaktrace_us=1", "--param", "loops=1000",
                      "--param", "interval_us=100", "--quiet")
        assert r.rc == 0, r.stderr
        res = r.result("rt.cyclic")
        assert res["info"]["break"].endswith("trace_marker written")
        trace = (tracing / "trace").read_text(errors="replace")
        assert f"osmeter rt.cyclic: latency {int(res['extra']['max_ns'])} ns > 1000 ns" in trace
    finally:
        if mounted_here:
            subprocess.run(["umount", str(tracing)], check=True)


@pytest.mark.skipif(ncpus() < 2, reason="needs 2 CPUs")
def test_cyclic_on_more_cpus_reports_each(probe):
    res = run_one(probe, "rt.cyclic", "cpus=all", "interval_us=200", "loops=100",
                  extra=("--cpu", "0", "--quiet")).result("rt.cyclic")
    others = res["info"]["others"]
    assert others.startswith("cpu1: n=") and "max=" in others
    assert "cpu0" not in others  # the measuring thread's own CPU is not doubled


@pytest.mark.skipif(ncpus() < 2, reason="needs 2 CPUs")
@pytest.mark.parametrize("op", ["read", "write", "cpu", "syscall"])
def test_stressors_run_on_the_other_cpu_and_are_described(probe, op):
    res = run_one(probe, "rt.cyclic", "stress=1", f"stress_op={op}", "stress_size=4M", "loops=50",
                  "interval_us=200", extra=("--cpu", "0", "--quiet")).result("rt.cyclic")
    stress = res["info"]["stress"]
    assert stress.startswith(f"1 x {op}")
    assert "on CPU 1" in stress
    if op in ("read", "write"):
        assert "over 4.0 MiB" in stress and "GB/s each" in stress
        rate = float(stress.rsplit(": ", 1)[1].split()[0])
        assert 0.05 < rate < 500  # GB/s of one core sweeping 4 MiB


def test_too_many_stressors_is_a_skip_naming_the_cpus(probe):
    n = ncpus()
    r = run_probe(probe, "run", "rt.cyclic", "--param", f"stress={n}", "--param", "loops=5", "--quiet")
    assert r.rc == 0, r.stderr
    skip = r.of_type("skip")[0]
    assert f"stress={n} needs {n} CPUs besides the measured one" in skip["reason"]
    assert f"at most {n - 1}" in skip["reason"]


def test_osnoise_counts_gaps_and_the_loop_is_fast(probe):
    res = run_one(probe, "rt.osnoise", "window_ms=5", "threshold_ns=1000").result("rt.osnoise")
    e = res["extra"]
    assert res["unit"] == "ns"
    assert 0 < e["loop_ns"] < 1000  # two clock reads apart: tens of ns
    # A window ends at the first clock read past its 5 ms, so it lasts 5 ms
    # plus at most its largest gap (its sample): under load a window's end
    # falls in a preemption and the total read 2.1x n * 5 ms. Both bounds
    # are exact, so a total that miscounts windows (warm-up's, a lost one)
    # or seconds still fails.
    assert res["n"] * 0.005 * 0.999 <= e["duration_s"] <= res["n"] * (0.005 + res["mean"] * 1e-9) * 1.001, \
        (e["duration_s"], res["n"], res["mean"])
    assert e["loop_ns"] <= res["min"] <= res["median"] <= e["max_gap_ns"]
    if e["gaps"]:
        assert e["gap_median_ns"] > 1000 and e["gaps_per_s"] > 0
        assert e["noise_ns_per_s"] >= e["gaps_per_s"] * 1000
    assert res["info"]["largest_gaps"]


def test_osnoise_window_max_is_the_sample(probe):
    r = run_probe(probe, "run", "rt.osnoise", "--param", "window_ms=2", "--param", "threshold_ns=100",
                  "--min-samples", "20", "--max-samples", "20", "--quiet")
    res = r.result("rt.osnoise")
    values = r.of_type("samples")[0]["values"]
    assert len(values) == 20 and res["stop_reason"] == "max_samples"
    assert res["extra"]["max_gap_ns"] == pytest.approx(max(values))
    # threshold 100 ns: every window of 2 ms has gaps (at least the tick's).
    assert res["extra"]["gaps"] >= 1


def test_workload_default_period_is_twice_the_unstressed_median(probe):
    r = run_probe(probe, "run", "rt.workload", "--param", "kernel=bsort", "--min-samples", "30",
                  "--max-samples", "30", "--quiet")
    assert r.rc == 0, r.stderr
    res = r.result("rt.workload")
    e = res["extra"]
    assert res["unit"] == "ns" and res["n"] == 30 == e["jobs"]
    assert e["period_ns"] == pytest.approx(2 * e["unstressed_median_ns"], abs=1)
    assert e["deadline_ns"] == e["period_ns"]
    assert 100 < res["median"] < 10e6
    assert e["resp_median_ns"] >= res["median"] * 0.9  # a response includes the execution
    assert e["resp_max_ns"] >= e["resp_median_ns"]
    assert res["info"]["checksum"].startswith("0x")


def test_workload_deadline_misses_are_counted(probe):
    r = run_probe(probe, "run", "rt.workload", "--param", "kernel=bsort", "--param", "period_us=20000",
                  "--param", "deadline_us=1", "--min-samples", "10", "--max-samples", "10", "--quiet")
    e = r.result("rt.workload")["extra"]
    assert e["misses"] == 10 and e["period_ns"] == 20_000_000 and e["deadline_ns"] == 1000
    r = run_probe(probe, "run", "rt.workload", "--param", "kernel=bsort", "--param", "period_us=20000",
                  "--min-samples", "10", "--max-samples", "10", "--quiet")
    e = r.result("rt.workload")["extra"]
    assert e["misses"] == 0  # 20 ms for a job of well under a millisecond


@pytest.mark.parametrize("param, words", [
    ("cpus=x", "not a CPU list"),
    ("cpus=1-", "not a CPU list"),
    ("interval_us=10", "interval_us"),
    ("priority=100", "priority"),
    ("stress_op=swap", "stress_op"),
    ("stress=-1", "stress"),
])
def test_bad_values_are_refused_before_anything_runs(probe, param, words):
    r = run_probe(probe, "run", "rt.cyclic", "--param", param, "--quiet", jsonl=False)
    assert r.rc == 2 and words in r.stderr and r.stdout == ""


def test_unknown_kernel_is_refused_with_the_choices(probe):
    r = run_probe(probe, "run", "rt.workload", "--param", "kernel=nope", "--quiet", jsonl=False)
    assert r.rc == 2 and "bsort" in r.stderr and r.stdout == ""
