"""--counters per the median's op (issue 29): in every family each counter
value is per the same operation as the result's value — per call, per 4 KiB
page, per round trip, per switch, per cycle — so a counter can be read
beside the median (docs/methods/counters.md, "Which operation").

Each test runs one family's benchmarks with the software counters and checks
what the operation is (the record's `ops` against the samples' operations,
and counts that are one per operation by construction: a page fault per
fresh page, a context switch per round trip), and, for CPU-bound
benchmarks, that task-clock per operation sits with the median:

  0.8 x fastest sample  <=  task-clock per op  <=  1.2 x max(median, mean)
  (the floor where some sample ran without a context switch)

On a quiet machine the median, the mean and the fastest sample are within a
few per cent of each other, and this is "within 20 % of the median". Load
moves the two figures apart in both directions, and the bounds follow what
it can and cannot do: a preempted sample's wall time includes the time the
task waited, its CPU time (task-clock) does not, so load raises the median
and the mean but never task-clock, and the floor is the fastest sample, not
the median, and only where some sample was not switched out at all (fewer
context switches in the windows than samples: a 4 ms region touch on a CPU
shared with a busy loop is preempted in every sample, and then even the
fastest one took twice its CPU time); a neighbour's cache pollution raises the CPU time of the
samples it hits, which lifts task-clock's mean over the samples' median,
but CPU time never exceeds the wall time it is part of, so the ceiling
follows the mean too. What the bounds catch is what went wrong before:
counters per region next to a median per page (x 4096), a window's own cost
or an untimed join counted (x 2 to x 6), counts lost to grouping (x 0.8).

Everywhere: minor-faults <= page-faults, the windows' own cost is given
beside the figures it was taken from (counted >= total), and a window never
holds less than one operation.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from probe_helpers import run_probe

# Short, but long enough for a few hundred samples of the fast operations.
BUDGET = ["--min-time", "0.05", "--max-time", "0.5", "--min-samples", "10", "--quiet"]


def run_counted(probe: str, *args: str) -> dict[tuple[str, tuple], tuple[dict, dict, dict]]:
    """(bench, params) -> (result, counters record, counters by name) of a
    run with every software counter; checks what holds for every record."""
    r = run_probe(probe, "run", *args, "--counters", "sw", *BUDGET)
    assert r.rc == 0, r.stderr
    results = {(x["bench"], tuple(sorted(x["params"].items()))): x for x in r.of_type("result")}
    out = {}
    for rec in r.of_type("counters"):
        key = (rec["bench"], tuple(sorted(rec["params"].items())))
        c = {x["name"]: x for x in rec["counters"]}
        check_every_record(rec, c)
        out[key] = (results[key], rec, c)
    assert out, f"no counters records: {r.stderr}"
    return out


def check_every_record(rec: dict, c: dict) -> None:
    name = f"{rec['bench']} {rec['params']}"
    assert rec["ops"] >= rec["windows"] >= 1, name  # no window without an operation
    for x in c.values():
        if x["status"] == "ok" and x["name"] != "ipc":
            assert x["window_cost"] >= 0 and x["counted"] >= x["total"] >= 0, (name, x)
            assert x["value"] == pytest.approx(x["total"] / rec["ops"]), (name, x)
    pf, mf = c["page-faults"], c["minor-faults"]
    if pf["status"] == "ok" and mf["status"] == "ok":
        assert mf["counted"] <= pf["counted"], (name, mf, pf)
        assert mf["value"] <= pf["value"] + 1e-9, (name, mf, pf)


def one(runs: dict, bench: str, **params) -> tuple[dict, dict, dict]:
    for (b, p), v in runs.items():
        if b == bench and all(dict(p).get(k) == w for k, w in params.items()):
            return v
    raise AssertionError(f"no counters for {bench} {params}: {sorted(runs)}")


def per_op(c: dict, name: str) -> float:
    assert c[name]["status"] == "ok", c[name]
    return c[name]["value"]


def assert_cpu_bound(res: dict, c: dict, ceiling: float = 1.2) -> None:
    """task-clock per op with the median (module docstring). The floor
    holds where some sample ran unpreempted: fewer context switches in the
    windows than samples (without kernel-side counting, switches are not
    counted and the floor is not checked)."""
    tc = per_op(c, "task-clock")
    what = (f"{res['bench']} {res['params']}: task-clock {tc:.0f} ns per op, median {res['median']:.0f}, "
            f"mean {res['mean']:.0f}, fastest {res['min']:.0f}")
    assert tc <= ceiling * max(res["median"], res["mean"]), what
    cs = c["context-switches"]
    if cs["status"] == "ok" and cs["counted"] < res["n"]:
        assert tc >= 0.8 * res["min"], f"{what}, {cs['counted']:.0f} switches in {res['n']} samples"


def harness_ops(res: dict, per_sample: int = 1) -> int:
    """Operations of the sampled batches (one window each)."""
    return res["n"] * res["batch"] * per_sample


def kernel_counting(rec: dict) -> bool:
    return bool(rec["kernel"])


@pytest.mark.slow  # about 1 s of measuring; CI runs it
def test_cpu_counters_are_per_operation(probe):
    runs = run_counted(probe, "cpu.call", "cpu.loop_overhead", "cpu.timer_overhead", "--param", "args=0",
                       "--param", "source=probe")
    for bench in ("cpu.call", "cpu.loop_overhead", "cpu.timer_overhead"):
        res, rec, c = one(runs, bench)
        assert rec["ops"] == harness_ops(res) and rec["windows"] <= res["n"]
        assert per_op(c, "page-faults") < 1e-3
        assert_cpu_bound(res, c)


@pytest.mark.slow  # about 1 s of measuring; CI runs it
def test_syscall_counters_are_per_call(probe):
    runs = run_counted(probe, "syscall.null", "syscall.getuid", "syscall.open_close")
    for bench in ("syscall.null", "syscall.getuid", "syscall.open_close"):
        res, rec, c = one(runs, bench)
        assert rec["ops"] == harness_ops(res)
        assert per_op(c, "page-faults") < 0.01
        assert_cpu_bound(res, c)


def test_mem_counters_are_per_page_and_per_call(probe):
    runs = run_counted(probe, "mem.fault_anon", "mem.fault_file_minor", "--param", "size=4M", "--param", "thp=0,1")
    res, rec, c = one(runs, "mem.fault_anon", thp=0)
    # The median is per 4 KiB page: so are the counters, one fault each.
    assert rec["ops"] == res["n"] * 1024 and rec["windows"] == res["n"]
    assert per_op(c, "page-faults") == pytest.approx(1.0, abs=0.05)
    assert per_op(c, "minor-faults") == pytest.approx(1.0, abs=0.05)
    assert_cpu_bound(res, c)
    thp = [v for (b, p), v in runs.items() if b == "mem.fault_anon" and dict(p)["thp"] == 1]
    if thp:  # THP granted here: one fault per 2 MiB, per 4 KiB page a 512th
        res, rec, c = thp[0]
        assert per_op(c, "page-faults") < 0.05 and rec["ops"] == res["n"] * 1024
    res, rec, c = one(runs, "mem.fault_file_minor")
    # Fault-around maps up to 16 pages per minor fault: at most one per page.
    assert rec["ops"] == res["n"] * 1024
    assert 0.01 < per_op(c, "page-faults") <= 1.0 + 1e-9
    assert per_op(c, "major-faults") == 0
    runs = run_counted(probe, "mem.mmap", "mem.page_fault", "--param", "size=4096")
    for bench, faults in (("mem.mmap", 0), ("mem.page_fault", 1)):
        res, rec, c = one(runs, bench)
        assert rec["ops"] == harness_ops(res)  # per call, not per group of calls
        assert per_op(c, "page-faults") == pytest.approx(faults, abs=0.05)


@pytest.mark.slow  # about 1 s of measuring; CI runs it
def test_task_counters_are_per_create(probe):
    runs = run_counted(probe, "task.thread_create", "task.thread_child", "task.fork_exit", "task.fork_child")
    for bench in ("task.thread_create", "task.thread_child"):
        res, rec, c = one(runs, bench)
        assert rec["ops"] == res["n"] == rec["windows"]
        # thread_create: until pthread_create returns, the join left out
        # (counted, it doubled task-clock); thread_child: until the new
        # thread's first instruction, where the clock stops too.
        tc = per_op(c, "task-clock")
        assert tc <= 1.2 * max(res["median"], res["mean"]), (bench, tc, res["median"])
        assert rec["note"] is None
    res, rec, c = one(runs, "task.fork_exit")
    assert rec["ops"] == res["n"] and per_op(c, "page-faults") > 0
    res, rec, c = one(runs, "task.fork_child")
    assert rec["ops"] == res["n"] and "wait" in rec["note"]  # a window wider than the clock, said so


@pytest.mark.slow  # about 1 s of measuring; CI runs it
def test_ctxsw_counters_are_per_switch_or_round_trip(probe):
    runs = run_counted(probe, "ctxsw.futex", "ctxsw.pipe_rtt", "ctxsw.pipe", "--param", "mode=thread")
    futex, rec, c = one(runs, "ctxsw.futex")
    assert rec["ops"] == harness_ops(futex, 2)  # a round trip is two switches
    ring, rec_ring, c_ring = one(runs, "ctxsw.pipe")
    assert rec_ring["ops"] == harness_ops(ring, 2)  # nproc=2: rounds of two switches
    rtt, rec_rtt, c_rtt = one(runs, "ctxsw.pipe_rtt")
    assert rec_rtt["ops"] == harness_ops(rtt)  # its value is per round trip
    for r in (rec, rec_ring, rec_rtt):
        assert "not counted" in r["note"]  # the partner's half is not in the figures
    if not kernel_counting(rec):
        pytest.skip("context-switches needs kernel-side counting")
    # The probe's own switches only: one per round trip, half a switch each.
    assert per_op(c, "context-switches") == pytest.approx(0.5, abs=0.15)
    assert per_op(c_ring, "context-switches") == pytest.approx(0.5, abs=0.15)
    assert per_op(c_rtt, "context-switches") == pytest.approx(1.0, abs=0.3)


@pytest.mark.slow  # about 1 s of measuring; CI runs it
def test_file_counters_are_per_call(probe):
    runs = run_counted(probe, "file.read", "file.stat", "--param", "size=4096,4000K", "--param", "files=100")
    small, rec, c = one(runs, "file.read", size=4096)
    # Self-counted: one window per read(), the untimed lseek outside it.
    assert rec["ops"] == rec["windows"] == harness_ops(small)
    assert per_op(c, "page-faults") < 0.01
    # One window per 4 KiB read costs as much as the read: with that cost
    # taken off what is left is the read, not six times it (before: x 5.8).
    assert_cpu_bound(small, c, ceiling=1.5)
    big, rec, c = one(runs, "file.read", size=4096000)
    assert rec["ops"] == big["n"]
    assert_cpu_bound(big, c)
    res, rec, c = one(runs, "file.stat")
    assert rec["ops"] == harness_ops(res)
    assert_cpu_bound(res, c)


@pytest.mark.slow  # about 1 s of measuring; CI runs it
def test_ipc_counters_are_per_round_trip(probe):
    runs = run_counted(probe, "ipc.pipe_lat", "ipc.unix_send", "--param", "mode=thread")
    res, rec, c = one(runs, "ipc.pipe_lat")
    assert rec["ops"] == harness_ops(res) and "partner" in rec["note"]
    assert per_op(c, "task-clock") <= 1.2 * max(res["median"], res["mean"])
    if kernel_counting(rec):  # the probe waits for the answer once per round trip
        assert per_op(c, "context-switches") == pytest.approx(1.0, abs=0.3)
    res, rec, c = one(runs, "ipc.unix_send")
    assert rec["ops"] == harness_ops(res)
    assert_cpu_bound(res, c)


@pytest.mark.slow  # about 1 s of measuring; CI runs it
def test_net_counters_are_per_round_trip(probe):
    runs = run_counted(probe, "net.tcp_rtt", "net.udp_rtt", "--param", "placement=same_cpu")
    for bench in ("net.tcp_rtt", "net.udp_rtt"):
        res, rec, c = one(runs, bench)
        # udp_rtt: a lost datagram's window is dropped, as the sample drops it
        assert rec["ops"] == harness_ops(res) and "peer" in rec["note"]
        assert per_op(c, "task-clock") <= 1.2 * max(res["median"], res["mean"])
        assert per_op(c, "page-faults") < 0.01


@pytest.mark.slow  # about 1 s of measuring; CI runs it
def test_poll_counters_are_per_call(probe):
    runs = run_counted(probe, "poll.poll", "poll.epoll", "--param", "make=once,per_call", "--param", "nfds=10")
    for bench in ("poll.poll", "poll.epoll"):
        res, rec, c = one(runs, bench, make="once")
        assert rec["ops"] == harness_ops(res) and rec["windows"] <= res["n"]
        assert_cpu_bound(res, c)
        res, rec, c = one(runs, bench, make="per_call")
        assert rec["ops"] == harness_ops(res) == rec["windows"]  # the set made and closed outside


def test_rt_counters_are_per_cycle(probe):
    runs = run_counted(probe, "rt.cyclic", "--param", "interval_us=200", "--param", "loops=200",
                       "--param", "priority=0")
    res, rec, c = one(runs, "rt.cyclic")
    assert rec["ops"] == res["n"] == 200  # a sample is a cycle; so is an operation
    if kernel_counting(rec):  # it sleeps once per cycle
        assert per_op(c, "context-switches") == pytest.approx(1.0, abs=0.1)


@pytest.mark.slow  # about 1 s of measuring; CI runs it
@pytest.mark.skipif(not Path("/sys/kernel/mm/transparent_hugepage/enabled").exists(), reason="no THP here")
def test_minor_faults_never_exceed_page_faults_with_huge_pages(probe):
    """Issue 29 saw minor-faults 0.279 per op against page-faults 0.226 for
    fault_anon thp=1: counts lost unevenly in one group. Counted apart,
    minor <= page faults holds in every record (run_counted checks it)."""
    runs = run_counted(probe, "mem.fault_anon", "task.fork_exit", "--param", "thp=1", "--param", "size=8M",
                       "--param", "touched_mib=8")
    assert runs


@pytest.mark.slow  # about 1 s of measuring; CI runs it
def test_a_counter_without_a_figure_has_no_window_cost_either(probe):
    r = run_probe(probe, "run", "syscall.null", "--counters", "cycles,task-clock", *BUDGET)
    assert r.rc == 0, r.stderr
    rec = r.of_type("counters")[0]
    for x in rec["counters"]:
        if x["status"] != "ok":  # no PMU in a VM: cycles unsupported, with its reason
            assert x["reason"] and x["value"] is None and x["window_cost"] is None and x["counted"] is None
    tc = {x["name"]: x for x in rec["counters"]}["task-clock"]
    assert tc["status"] == "ok" and tc["window_cost"] > 0
