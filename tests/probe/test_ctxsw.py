"""ctxsw.* with tiny budgets: plausible per-switch figures, the pipe
correction reported both ways, placements, and no ring member left behind."""
import json
import os
import signal
import subprocess

import pytest

from probe_helpers import TINY, run_probe
from task_helpers import wait_children, wait_gone


def ncpus():
    return len(os.sched_getaffinity(0))


def test_every_ctxsw_benchmark_gives_a_plausible_figure(probe):
    r = run_probe(probe, "run", "ctxsw.pipe", "ctxsw.futex", "ctxsw.yield", "--sweep", *TINY)
    assert r.rc == 0, r.stderr
    results = r.of_type("result")
    assert {(x["bench"], x["params"].get("mode")) for x in results} == {
        ("ctxsw.pipe", "process"), ("ctxsw.pipe", "thread"), ("ctxsw.futex", "process"),
        ("ctxsw.futex", "thread"), ("ctxsw.yield", None)}
    for res in results:
        assert res["unit"] == "ns" and res["placement"] == "same_cpu"
        # A switch costs more than a system call and far less than a timer tick.
        assert 100 < res["median"] < 1_000_000, res
    assert 0.5 < r.result("ctxsw.yield")["extra"]["partner_runs_per_yield"] < 1.5


def test_pipe_reports_raw_and_corrected(probe):
    r = run_probe(probe, "run", "ctxsw.pipe", *TINY)
    res = r.result("ctxsw.pipe")
    ex = res["extra"]
    assert ex["pipe_overhead_ns"] > 0
    assert ex["raw_ns"] > res["median"] > 0
    # value = raw - overhead per sample (raw_ns also spans the warm-up)
    assert abs(ex["raw_ns"] - ex["pipe_overhead_ns"] - res["median"]) < 0.25 * ex["raw_ns"]
    assert ex["raw_min_ns"] <= ex["raw_ns"]


def test_ring_size_and_working_set(probe):
    r = run_probe(probe, "run", "ctxsw.pipe", "--param", "nproc=4", "--param", "ws_kib=0,64", *TINY)
    assert r.rc == 0, r.stderr
    for ws in (0, 64):
        assert 100 < r.result("ctxsw.pipe", nproc=4, ws_kib=ws)["median"] < 1_000_000


@pytest.mark.skipif(ncpus() < 2, reason="needs two CPUs")
def test_cross_cpu_placement_is_recorded(probe):
    r = run_probe(probe, "run", "ctxsw.pipe", "ctxsw.futex", "--param", "placement=cross_cpu",
                  "--param", "mode=thread", *TINY)
    assert r.rc == 0, r.stderr
    assert {x["placement"] for x in r.of_type("result")} == {"cross_cpu"}


@pytest.mark.parametrize("bench,params,n", [
    ("ctxsw.pipe", ["--param", "nproc=4"], 3),
    ("ctxsw.futex", ["--param", "mode=process"], 1),
])
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_no_ring_member_survives_the_probe(probe, tmp_path, bench, params, n, sig):
    """SIGTERM: the cleanup stack kills and reaps them; SIGKILL: they get
    SIGKILL from PR_SET_PDEATHSIG."""
    p = subprocess.Popen([probe, "run", bench, *params, "--min-time", "30", "--max-time", "30", "--quiet"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        kids = wait_children(p.pid, n)
        assert len(kids) == n
    finally:
        p.send_signal(sig)
        out, _ = p.communicate(timeout=10)
    assert p.returncode == -sig
    assert wait_gone(kids) == []
    if sig == signal.SIGTERM:
        assert json.loads(out.splitlines()[-1])["status"] == "interrupted"


def test_bad_parameters_are_rejected(probe):
    for bad in ("nproc=1", "nproc=65", "mode=fiber", "ws_kib=-1", "placement=far"):
        r = run_probe(probe, "run", "ctxsw.pipe", "--param", bad)
        assert r.rc == 2 and r.stdout == "", bad
