"""A probe that cannot pin itself says so in every result (`not-pinned`), and
in meta (`pinned: false` with the reason), instead of claiming a CPU it does
not hold.

The failure is made real, not simulated in the probe: a small wrapper
(compiled here with cc) installs a seccomp filter that makes
sched_setaffinity() fail with EPERM, then execs the probe.
"""
from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import time

import pytest

from probe_helpers import TINY, run_probe

WRAPPER_C = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sched_setaffinity, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
	if (argc < 2 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("seccomp");
		return 125;
	}
	execv(argv[1], argv + 1);
	perror("execv");
	return 126;
}
"""


@pytest.fixture(scope="module")
def no_affinity(tmp_path_factory) -> str:
    if platform.machine() not in ("x86_64", "aarch64"):
        pytest.skip("the seccomp wrapper is written for x86_64 and aarch64 hosts")
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.fail("a C compiler is needed (Debian: apt-get install build-essential)")
    d = tmp_path_factory.mktemp("seccomp")
    src, exe = d / "no_affinity.c", d / "no_affinity"
    src.write_text(WRAPPER_C)
    subprocess.run([cc, "-O2", "-o", str(exe), str(src)], check=True)
    return str(exe)


def test_a_failed_pin_flags_every_result(probe, no_affinity):
    p = subprocess.run([no_affinity, probe, "run", "syscall.null", "cpu.loop_overhead", *TINY],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    records = [json.loads(line) for line in p.stdout.splitlines()]
    meta = records[0]
    assert meta["pinned"] is False
    assert "cannot pin to CPU" in meta["pin_error"] and "not permitted" in meta["pin_error"]
    results = [x for x in records if x["type"] == "result"]
    assert len(results) == 2
    for res in results:
        assert "not-pinned" in res["flags"]


def test_a_working_pin_flags_nothing(probe):
    r = run_probe(probe, "run", "syscall.null", *TINY)
    assert r.rc == 0, r.stderr
    assert r.of_type("meta")[0]["pinned"] is True and r.of_type("meta")[0]["pin_error"] is None
    assert "not-pinned" not in r.result("syscall.null")["flags"]


def idle_jiffies() -> dict[int, int]:
    """Idle + iowait clock ticks of each CPU (/proc/stat), as the probe reads them."""
    out = {}
    for line in open("/proc/stat"):
        f = line.split()
        if f[0].startswith("cpu") and f[0] != "cpu":
            out[int(f[0][3:])] = int(f[4]) + int(f[5])
    return out


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to choose between")
def test_without_cpu_the_least_busy_cpu_is_chosen(probe):
    """Two busy loops on one CPU, none on another: a probe given no --cpu
    (its idle sample overlaps the clock's calibration) chooses the idle
    one, every time."""
    busy, other = sorted(os.sched_getaffinity(0))[:2]
    spin = "import os, sys\nos.sched_setaffinity(0, {%d})\nsys.stdout.write('x'); sys.stdout.flush()\nwhile True: pass\n" % busy
    hogs = [subprocess.Popen([sys.executable, "-c", spin], stdout=subprocess.PIPE) for _ in range(2)]
    try:
        for h in hogs:
            assert h.stdout is not None and h.stdout.read(1) == b"x"  # pinned and spinning
        chosen = []
        t0, idle0 = time.monotonic(), idle_jiffies()
        for _ in range(3):
            r = run_probe(probe, "run", "syscall.null", *TINY)
            assert r.rc == 0, r.stderr
            meta = r.of_type("meta")[0]
            assert meta["cpu_choice"] == "least_busy"
            chosen.append(meta["cpu"])
        # The premise: the other CPU idle. With a neighbour on every CPU
        # (stress-ng --cpu 2) neither is idle, and either choice is right.
        idle = (idle_jiffies()[other] - idle0[other]) / os.sysconf("SC_CLK_TCK") / (time.monotonic() - t0)
        if chosen != [other] * 3 and idle < 0.25:
            pytest.skip(f"CPU {other} was idle {idle:.0%} of the time too: no idle CPU to choose")
        assert chosen == [other] * 3, (busy, chosen, f"CPU {other} idle {idle:.0%}")
    finally:
        for h in hogs:
            h.kill()
            h.wait()
