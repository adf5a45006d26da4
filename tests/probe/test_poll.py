"""poll.* with tiny budgets: plausible per-call figures, epoll's cost
following the ready descriptors where select/poll follow the watched ones,
the readiness check, the parameters refused, FD_SETSIZE and RLIMIT_NOFILE,
and LEBench's select/poll/epoll rows."""
import ctypes
import errno
import json
import os
import re
import resource
import socket
import time
from pathlib import Path

import pytest

from probe_helpers import TINY, probe_finished, probe_started, run_probe

BENCHES = ("poll.select", "poll.poll", "poll.epoll")


def nofile(soft=None, hard=None):
    """preexec_fn setting RLIMIT_NOFILE in the probe's process only."""
    def set_limit():
        cur_soft, cur_hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        new_hard = cur_hard if hard is None else hard
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft or cur_soft, new_hard), new_hard))
    return set_limit


def test_every_benchmark_gives_a_plausible_figure(probe):
    r = run_probe(probe, "run", *BENCHES, "--param", "nfds=10,1000", *TINY)
    assert r.rc == 0, r.stderr
    for bench in BENCHES:
        small, big = r.result(bench, nfds=10), r.result(bench, nfds=1000)
        for res, n in ((small, 10), (big, 1000)):
            assert res["unit"] == "ns"
            assert res["params"] == {"nfds": n, "fds": "tcp", "ready": -1, "make": "once"}
            # LEBench's sockets: all ready, every call checked to say so
            assert res["extra"]["ready"] == n
            assert "unconnected TCP sockets" in res["info"]["descriptors"]
        # A system call and 10 descriptors: more than 50 ns, far less than a tick.
        assert 50 < small["median"] < 200_000, small
        # 1 000 sockets, each polled (all ready, so epoll too walks all of them).
        assert 5 * small["median"] < big["median"] < 50_000_000, (small["median"], big["median"])


def test_epoll_follows_the_ready_descriptors_select_and_poll_the_watched(probe):
    """One ready descriptor of 1 000: epoll_wait() walks its ready list (one
    item), select() and poll() scan all 1 000; with all 1 000 ready epoll
    walks 1 000 too."""
    r = run_probe(probe, "run", *BENCHES, "--param", "nfds=1000", "--param", "fds=socketpair",
                  "--param", "ready=1,1000", *TINY)
    assert r.rc == 0, r.stderr
    one = {b: r.result(b, ready=1) for b in BENCHES}
    for b in BENCHES:
        assert one[b]["extra"]["ready"] == 1 and r.result(b, ready=1000)["extra"]["ready"] == 1000
    assert one["poll.epoll"]["median"] * 10 < one["poll.poll"]["median"], one
    assert one["poll.epoll"]["median"] * 10 < one["poll.select"]["median"], one
    assert one["poll.epoll"]["median"] * 10 < r.result("poll.epoll", ready=1000)["median"]
    # select() rewrites its set to the ready ones: restored before each call,
    # it still scans all 1 000 (not restored, it would poll just the one).
    # (0.49 of it measured on one Xeon: writing 1 000 ready bits back costs
    # too; polling just the one would be about 1/100.)
    assert one["poll.select"]["median"] > 0.25 * r.result("poll.select", ready=1000)["median"]


@pytest.mark.parametrize("bench", BENCHES)
def test_any_number_of_ready_descriptors(bench, probe):
    r = run_probe(probe, "run", bench, "--param", "fds=socketpair", "--param", "ready=0,1,7,10", *TINY)
    assert r.rc == 0, r.stderr
    for k in (0, 1, 7, 10):
        res = r.result(bench, ready=k, fds="socketpair", nfds=10)
        assert res["extra"]["ready"] == k
        assert f"{k} ready" in res["info"]["descriptors"]
        assert 50 < res["median"] < 200_000, res


def test_fresh_descriptors_for_every_call(probe):
    """make=per_call (LEBench): each call timed alone over descriptors made
    for it; --lebench-exact: one call per sample."""
    r = run_probe(probe, "run", *BENCHES, "--param", "make=per_call", "--param", "nfds=10", "--lebench-exact",
                  *TINY)
    assert r.rc == 0, r.stderr
    for b in BENCHES:
        res = r.result(b, make="per_call")
        assert res["batch"] == 1 and res["extra"]["ready"] == 10
        assert 50 < res["median"] < 200_000, res


@pytest.mark.parametrize("bench,bad,allowed", [
    ("poll.select", "nfds=0", "1..1024"),
    ("poll.select", "nfds=1025", "1..1024"),
    ("poll.poll", "nfds=100001", "100000"),
    ("poll.epoll", "nfds=ten", "nfds"),
    ("poll.poll", "fds=pipe", "tcp, socketpair"),
    ("poll.epoll", "ready=-2", "-1"),
    ("poll.select", "make=sometimes", "once, per_call"),
    ("poll.poll", "sockets=10", "nfds, fds, ready, make"),
])
def test_bad_parameters_are_refused_before_anything_runs(probe, bench, bad, allowed):
    r = run_probe(probe, "run", bench, "--param", bad)
    assert r.rc == 2 and r.stdout == "", (bad, r.stderr)
    assert allowed in r.stderr, r.stderr


@pytest.mark.parametrize("bench,params,why", [
    ("poll.poll", ["nfds=10", "fds=socketpair", "ready=11"], "ready=11 is more than nfds=10"),
    ("poll.poll", ["nfds=10", "ready=3"], "fds=tcp"),
    ("poll.select", ["fds=tcp", "ready=0"], "fds=tcp"),
    ("poll.epoll", ["nfds=5,10", "fds=socketpair", "ready=7"], "ready=7 is more than nfds=5"),
])
def test_inconsistent_parameters_are_refused_before_anything_runs(probe, bench, params, why):
    """Each value alone is in range, so the catalogue passes them; their
    combination is refused (bench.h's check) before the first benchmark
    runs: exit 2, the instance and the reason named, no record written."""
    args = [a for p in params for a in ("--param", p)]
    r = run_probe(probe, "run", bench, "syscall.getuid", *args, *TINY)
    assert r.rc == 2 and r.stdout == "", r.stdout
    assert f"{bench} (" in r.stderr and why in r.stderr, r.stderr
    if "fds=tcp" in why:
        assert "fds=socketpair" in r.stderr
    # The same through a suite.
    r = run_probe(probe, "run", "--suite", "standard", *args, *TINY)
    assert r.rc == 2 and r.stdout == "" and why in r.stderr, r.stderr


def described_numbers(text: str) -> list[int]:
    """The descriptor numbers info.descriptors lists ("3..9, 11..13", "3..21 by 2", "5")."""
    nums = []
    part = re.search(r"numbers (.*?), (?:all ready|\d+ ready)", text).group(1)
    for item in part.split(", "):
        m = re.fullmatch(r"(\d+)\.\.(\d+)(?: by (\d+))?", item)
        if m:
            nums += range(int(m[1]), int(m[2]) + 1, int(m[3] or 1))
        else:
            nums.append(int(item))
    return nums


@pytest.mark.parametrize("bench", BENCHES)
def test_info_names_exactly_the_watched_descriptors(probe, bench):
    """nfds numbers, distinct, the highest extra.max_fd: never a range that
    takes in a descriptor of the probe's own that is not watched."""
    r = run_probe(probe, "run", bench, "--param", "nfds=10,100", "--param", "fds=tcp,socketpair", *TINY)
    assert r.rc == 0, r.stderr
    for res in r.of_type("result"):
        nums = described_numbers(res["info"]["descriptors"])
        assert len(nums) == len(set(nums)) == res["params"]["nfds"], res["info"]["descriptors"]
        assert max(nums) == res["extra"]["max_fd"]


def test_select_stops_at_fd_setsize(probe):
    """The probe holds stdin, stdout and stderr at least, so 1 024
    descriptors reach number 1 024: a skip naming FD_SETSIZE, never an
    FD_SET() past the set. poll() has no such limit."""
    r = run_probe(probe, "run", "poll.select", "poll.poll", "--param", "nfds=1024", *TINY)
    assert r.rc == 0, r.stderr
    skip = r.of_type("skip")
    assert [s["bench"] for s in skip] == ["poll.select"], skip
    assert "FD_SETSIZE (1024)" in skip[0]["reason"] and "poll.poll" in skip[0]["reason"]
    assert r.result("poll.poll", nfds=1024)["extra"]["ready"] == 1024


def test_the_fd_setsize_skip_names_the_nfds_that_fits(probe):
    """With 200 more descriptors inherited, 1 000 no longer fit below 1 024;
    the skip says how many do, and that many run."""
    extra = [os.open("/dev/null", os.O_RDONLY) for _ in range(200)]
    try:
        kw = {"pass_fds": extra, "preexec_fn": nofile(soft=4096)}
        r = run_probe(probe, "run", "poll.select", "--param", "nfds=1000", *TINY, **kw)
        assert r.rc == 0, r.stderr
        reason = r.of_type("skip")[0]["reason"]
        fits = int(re.search(r"use nfds=(\d+) at most", reason).group(1))
        assert 700 < fits < 1000, reason
        ok = run_probe(probe, "run", "poll.select", "--param", f"nfds={fits}", *TINY, **kw)
        assert ok.rc == 0, ok.stderr
        assert ok.result("poll.select")["extra"]["max_fd"] == 1023
        over = run_probe(probe, "run", "poll.select", "--param", f"nfds={fits + 1}", *TINY, **kw)
        assert over.of_type("skip"), over.stdout
    finally:
        for fd in extra:
            os.close(fd)


def test_rlimit_nofile_is_raised_for_the_benchmark_and_restored(probe):
    """Soft limit 256, hard as it is: each benchmark raises the soft limit
    to the hard one and puts it back, so the next one must raise it again."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 2200:
        pytest.skip(f"the hard RLIMIT_NOFILE here is {hard}: too low to raise to")
    r = run_probe(probe, "run", "poll.poll", "poll.epoll", "--param", "nfds=1000", "--param", "fds=socketpair",
                  "--param", "ready=1", *TINY, preexec_fn=nofile(soft=256))
    assert r.rc == 0, r.stderr
    for b in ("poll.poll", "poll.epoll"):
        info = r.result(b)["info"]
        assert info["rlimit_nofile"].startswith("soft limit raised from 256 to "), info
    small = run_probe(probe, "run", "poll.poll", *TINY, preexec_fn=nofile(soft=256))
    assert "rlimit_nofile" not in small.result("poll.poll")["info"]


def test_a_hard_rlimit_nofile_too_low_is_a_skip_with_the_reason(probe):
    r = run_probe(probe, "run", *BENCHES, "--param", "nfds=1000", *TINY, preexec_fn=nofile(soft=256, hard=256))
    assert r.rc == 0, r.stderr
    skips = r.of_type("skip")
    assert [s["bench"] for s in skips] == list(BENCHES)
    for s in skips:
        assert "RLIMIT_NOFILE allows 256" in s["reason"] and "ulimit -Hn" in s["reason"], s


def pidfd_getfd(pid: int, fd: int) -> int:
    """A copy of another process's descriptor (Linux 5.6; ptrace rights)."""
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(pid)
    try:
        got = libc.syscall(438, pidfd, fd, 0)  # SYS_pidfd_getfd, the same number on every architecture
        if got < 0:
            e = ctypes.get_errno()
            if e in (errno.ENOSYS, errno.EPERM):
                pytest.skip(f"pidfd_getfd: {os.strerror(e)}")
            raise OSError(e, os.strerror(e))
        return got
    finally:
        os.close(pidfd)


def socket_fds(pid: int) -> list[int]:
    fds = []
    for link in Path(f"/proc/{pid}/fd").iterdir():
        try:
            if os.readlink(link).startswith("socket:"):
                fds.append(int(link.name))
        except OSError:
            pass
    return sorted(fds)


def test_a_readiness_that_changes_is_an_error_not_a_figure(probe):
    """A byte written from outside into one of 4 idle socket pairs makes one
    descriptor ready: the next call reports 1, not 0, and the benchmark
    stops with an error naming both counts."""
    with probe_started(probe, "run", "poll.poll", "--param", "nfds=4", "--param", "fds=socketpair",
                       "--param", "ready=0", "--min-time", "20", "--max-time", "20", "--quiet") as p:
        deadline = time.monotonic() + 10
        while len(socket_fds(p.pid)) < 8 and time.monotonic() < deadline:
            time.sleep(0.02)
        fds = socket_fds(p.pid)
        assert len(fds) == 8, fds
        peer = pidfd_getfd(p.pid, fds[-1])  # the peer ends are above the watched ones
        with socket.socket(fileno=peer) as s:
            s.send(b"x")
        r = probe_finished(p, timeout=15)
    assert r.rc == 1, r.stderr
    errors = r.of_type("error")
    assert len(errors) == 1 and "poll() reported 1 ready descriptors of 4, expected 0" in errors[0]["message"]
    assert not r.of_type("result")


def test_suites(probe):
    cat = json.loads(run_probe(probe, "list", "--json").stdout)
    benches = {b["name"]: b for b in cat["benchmarks"] if b["family"] == "poll"}
    assert set(benches) == set(BENCHES)
    for b in benches.values():
        assert "quick" not in b["suites"] and {"standard", "full", "lebench"} <= set(b["suites"])
        tcp = [s["nfds"] for s in b["sweep"] if s["fds"] == "tcp"]
        assert {10, 1000} <= set(tcp)
        assert {"nfds": 1000, "fds": "socketpair", "ready": 1, "make": "once"} in b["sweep"]


LEBENCH_ROWS = {"select": ("poll.select", 10), "poll": ("poll.poll", 10), "epoll": ("poll.epoll", 10),
                "select big": ("poll.select", 1000), "poll big": ("poll.poll", 1000),
                "epoll big": ("poll.epoll", 1000)}


@pytest.mark.slow  # ~7 s; test_lebench.py runs the whole lebench suite, these rows included, by default
def test_lebench_rows_run_with_their_names(probe):
    cat = json.loads(run_probe(probe, "list", "--json").stdout)
    rows = {r["name"]: r for r in cat["lebench_rows"] if r["name"] in LEBENCH_ROWS}
    for name, (bench, n) in LEBENCH_ROWS.items():
        row = rows[name]
        assert row["available"] and row["bench"] == bench and row["exact_batch"] == 1
        assert row["params"] == {"nfds": n, "fds": "tcp", "ready": -1, "make": "per_call"}
        assert "unconnected TCP sockets" in row["region"]
    r = run_probe(probe, "run", "--suite", "lebench", *TINY, timeout=300)
    assert r.rc == 0, r.stderr
    got = {x["lebench_row"]: x for x in r.of_type("result") if x["bench"].startswith("poll.")}
    assert set(got) == set(LEBENCH_ROWS)
    for name, (bench, n) in LEBENCH_ROWS.items():
        res = got[name]
        assert res["bench"] == bench and res["params"]["nfds"] == n and res["params"]["make"] == "per_call"
        assert res["unit"] == "ns" and res["extra"]["ready"] == n
    for name in ("select", "poll", "epoll"):
        assert 50 < got[name]["median"] < 200_000
        assert got[f"{name} big"]["median"] > 5 * got[name]["median"]
