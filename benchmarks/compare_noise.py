#!/usr/bin/env python3
"""How often `osmeter compare` cries wolf, and whether it still hears one.

Issue 9 found that three back-to-back standard runs on one machine, compared
pairwise, called 21-56 % of 136 instances slower or faster: false alarms,
because one run's interval knows nothing of the 2-5 % drift between runs.
This script measures both sides of the rule on the machine at hand:

1. **False alarms**: two back-to-back `osmeter run --suite SUITE` (with the
   suite's default repetitions), compared: how many instances are called
   significant. Target: at most 5 %.
2. **Power**: a third run of the same suite in which one benchmark is made
   slower by a known amount, compared with the first: is that instance
   found (significant, slower), and how many others are called significant?
   The slow-down is real time, not an edited figure: `--inject-ns NAME=NS`
   adds a busy wait of NS ns per operation inside NAME's timed region
   (recorded in the run's metadata). NS is FRACTION (default 10 %) of
   NAME's median in the first run.
3. With `--single` (default on), the same pair with `--repeat 1` (one
   probe process per run, the interval from its samples alone: osmeter
   0.1's method), for contrast.

Everything runs back to back into a temporary store (or --store), pinned to
one CPU. Timings mean something only on an otherwise idle machine: run
nothing else meanwhile. Prints the counts, the significant instances, and
the wall time of each run (a standard run must stay under 5 minutes).

Usage: benchmarks/compare_noise.py [--suite standard] [--cpu 1] [--bench syscall.null]
                                   [--fraction 0.10] [--no-single] [--store PATH] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_FALSE = 0.05


def osmeter(store: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, OSMETER_STORE=store)
    return subprocess.run([sys.executable, "-m", "osmeter", *args], capture_output=True, text=True, env=env)


def timed_run(store: str, label: str, *args: str) -> tuple[int, float]:
    """`osmeter run ARGS --label LABEL`: (run id, wall seconds); exits on failure."""
    t0 = time.monotonic()
    r = osmeter(store, "run", *args, "--label", label, "--json")
    wall = time.monotonic() - t0
    if r.returncode not in (0, 8):  # 8: a benchmark reported an error; the run itself is fine
        sys.exit(f"osmeter run {' '.join(args)} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    doc = json.loads(r.stdout)
    return int(doc["run"]["id"]), wall


def compared(store: str, a: int, b: int) -> list[dict]:
    r = osmeter(store, "compare", str(a), str(b), "--json")
    if r.returncode != 0:
        sys.exit(f"osmeter compare {a} {b} failed ({r.returncode}):\n{r.stderr}")
    return json.loads(r.stdout)["comparisons"]


def median_of(store: str, run_id: int, bench: str) -> float:
    r = osmeter(store, "export", str(run_id), "--format", "json")
    doc = json.loads(r.stdout)
    for res in doc["results"]:
        if res["bench"] == bench and res["status"] == "ok":
            return float(res["median"])
    sys.exit(f"run {run_id} has no ok result of {bench}")


def describe(c: dict) -> str:
    params = " ".join(f"{k}={v}" for k, v in sorted(c["params"].items()))
    caveat = f" [{c['caveat']}]" if c.get("caveat") else ""
    return f"{c['bench']} {params}: {c['verdict']} ({100 * (c['ratio'] - 1):+.1f} %){caveat}"


def report_pair(title: str, comps: list[dict]) -> dict:
    sig = [c for c in comps if c["significant"]]
    share = len(sig) / len(comps) if comps else 0.0
    print(f"{title}: {len(sig)} of {len(comps)} instances called significant ({100 * share:.1f} %; "
          f"target at most {100 * TARGET_FALSE:.0f} %)")
    for c in sig:
        print(f"    {describe(c)}")
    return {"compared": len(comps), "significant": len(sig), "share": share, "which": [describe(c) for c in sig]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", default="standard")
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--bench", default="syscall.null", help="the benchmark made slower in the third run")
    ap.add_argument("--fraction", type=float, default=0.10, help="how much slower (0.10 = +10 %%)")
    ap.add_argument("--no-single", dest="single", action="store_false", help="skip the --repeat 1 pair")
    ap.add_argument("--store", help="store to use (default: a temporary one, removed afterwards)")
    ap.add_argument("--json", metavar="FILE", help="write the figures to FILE")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="osmeter-noise-") as tmp:
        store = args.store or str(Path(tmp) / "noise.db")
        common = ("--suite", args.suite, "--cpu", str(args.cpu))
        out: dict = {"suite": args.suite, "cpu": args.cpu, "bench": args.bench, "fraction": args.fraction}

        a, wall_a = timed_run(store, "noise A", *common)
        b, wall_b = timed_run(store, "noise B", *common)
        base = median_of(store, a, args.bench)
        ns = args.fraction * base
        c, wall_c = timed_run(store, f"noise C: {args.bench} +{ns:.3g} ns", *common,
                              "--inject-ns", f"{args.bench}={ns:.6g}")
        print(f"suite {args.suite} (default repetitions), CPU {args.cpu}: runs {a}, {b}, {c}; "
              f"wall times {wall_a:.0f} s, {wall_b:.0f} s, {wall_c:.0f} s")
        out["wall_s"] = [wall_a, wall_b, wall_c]
        out["same"] = report_pair("A vs B (same machine, back to back)", compared(store, a, b))
        injected = compared(store, a, c)
        hit = [x for x in injected if x["bench"] == args.bench]
        others = [x for x in injected if x["bench"] != args.bench]
        print(f"A vs C ({args.bench} made {100 * args.fraction:.0f} % slower: +{ns:.3g} ns per operation "
              f"on a median of {base:.4g} ns):")
        for x in hit:
            print(f"    {describe(x)} -> {'FOUND' if x['significant'] and x['verdict'] == 'slower' else 'MISSED'}")
        out["injected"] = {"ns_per_op": ns, "found": [x["significant"] and x["verdict"] == "slower" for x in hit],
                           "ratio": [x["ratio"] for x in hit]}
        out["others"] = report_pair("    the other instances", others)

        if args.single:
            d, wall_d = timed_run(store, "noise D (--repeat 1)", *common, "--repeat", "1")
            e, wall_e = timed_run(store, "noise E (--repeat 1)", *common, "--repeat", "1")
            print(f"one repetition per run (osmeter 0.1's method): runs {d}, {e}; wall times {wall_d:.0f} s, "
                  f"{wall_e:.0f} s")
            out["single_wall_s"] = [wall_d, wall_e]
            out["single"] = report_pair("D vs E", compared(store, d, e))

    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    ok = out["same"]["share"] <= TARGET_FALSE and all(out["injected"]["found"])
    print("OK" if ok else "NOT OK: see above")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
