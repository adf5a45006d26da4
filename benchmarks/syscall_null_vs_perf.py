#!/usr/bin/env python3
"""Fidelity: osmeter's syscall.null against `perf bench syscall basic`.

Definitions aligned: perf times 10 000 000 getppid() calls with
gettimeofday() around the loop and prints usecs/op, a mean over the loop;
osmeter times raw syscall(SYS_getpid) in calibrated batches and reports the
median of the batch means. Both are "one trivial system call, entry to
return". Both run pinned to the same CPU (perf under taskset), interleaved:
osmeter, perf, osmeter, perf ... five times each.

Usage: benchmarks/syscall_null_vs_perf.py [--rounds 5] [--cpu 0]
Tolerance (issue 2): the ratio of medians lies within 0.8 .. 1.25.
"""
from __future__ import annotations

import argparse
import sys

from _common import find_probe, need_tool, perf_bench_ns, probe_results, ratio_line

LOW, HIGH = 0.8, 1.25


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cpu", type=int, default=0)
    a = ap.parse_args()
    probe = find_probe()
    perf = need_tool("perf", "linux-perf")
    ours, theirs = [], []
    for i in range(a.rounds):
        res = probe_results([probe, "run", "syscall.null", "--cpu", str(a.cpu), "--quiet"])
        ours.append(res[0]["median"])
        theirs.append(perf_bench_ns(perf, a.cpu, "syscall", "basic"))
        print(f"round {i + 1}: osmeter {ours[-1]:.2f} ns, perf {theirs[-1]:.2f} ns", flush=True)
    r = ratio_line("syscall.null vs perf bench syscall basic", ours, theirs, "ns")
    ok = LOW <= r <= HIGH
    print(f"tolerance {LOW}..{HIGH}: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
