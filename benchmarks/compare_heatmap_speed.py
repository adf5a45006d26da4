#!/usr/bin/env python3
"""Speed: `osmeter compare` of 50 runs × 60 benchmarks renders the heatmap in under 10 s.

Builds a throw-away store of RUNS synthetic runs with BENCHES benchmark
instances each (raw samples of realistic sizes: 300 to 20 000 per instance,
as the quick and standard suites produce, plus one 100 000-sample instance
per run, the probe's largest), then times the whole command as a user runs
it, Python start-up included:

    osmeter compare 1 2 ... 50 -o heatmap.html     (the HTML heatmap)
    osmeter compare 1 2 ... 50 -o heatmap.svg      (the matplotlib figure)

Usage: PYTHONPATH=src benchmarks/compare_heatmap_speed.py [--runs 50] [--benches 60] [--keep DIR]
Target (issue 4): under 10 s for the HTML heatmap. Exits 1 above it.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from osmeter.model import BenchResult, NewRun
from osmeter.stats import higher_is_better, summary
from osmeter.store import open_store

TARGET_S = 10.0
SIZES = (300, 1000, 5000, 20_000)


def build_store(path: Path, runs: int, benches: int, seed: int = 1) -> None:
    rng = np.random.default_rng(seed)
    medians = rng.lognormal(5, 2, benches)
    store = open_store(str(path), create=True)
    try:
        for r in range(runs):
            with store.transaction():
                run_id = store.create_run(
                    NewRun(
                        label=f"k{r}",
                        start_time="2026-11-22T08:00:00Z",
                        source="import",
                        osmeter_version="0.1.0",
                        probe_version="0.1.0",
                        suite="standard",
                        argv=["synthetic"],
                        params={},
                        machine={"hostname": "bench", "kernel_release": f"6.{r}.0"},
                        meta={"clock": {"source": "tsc"}},
                    )
                )
                drift = rng.normal(1.0, 0.05, benches)  # every run differs a little from the first
                for b in range(benches):
                    n = 100_000 if b == 0 else SIZES[b % len(SIZES)]
                    x = medians[b] * drift[b] * rng.lognormal(0, 0.05, n)
                    unit = "bytes_per_s" if b % 10 == 9 else "ns"
                    result = BenchResult(seq=b, bench=f"fam{b % 6}.op{b}", params={"size": 4096 * (b % 3)},
                                         status="ok", unit=unit, summary=summary(x, higher_is_better=higher_is_better(unit)), batch=1)
                    store.add_result(run_id, result, x)
                store.finish_run(run_id, "complete", "2026-11-22T08:01:00Z", None)
    finally:
        store.close()


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    r = subprocess.run(argv, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if r.returncode != 0:
        sys.exit(f"{' '.join(argv[:4])} ... failed ({r.returncode}): {r.stderr}")
    return elapsed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--benches", type=int, default=60)
    ap.add_argument("--keep", metavar="DIR", help="build the store and outputs in DIR and keep them")
    args = ap.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="osmeter-heatmap-"))
    work.mkdir(parents=True, exist_ok=True)
    store = work / "store.db"
    if store.exists():
        store.unlink()
    t0 = time.perf_counter()
    build_store(store, args.runs, args.benches)
    print(f"built {args.runs} runs x {args.benches} benchmarks in {time.perf_counter() - t0:.1f} s ({store})")
    env = dict(os.environ, OSMETER_STORE=str(store))
    ids = [str(i) for i in range(1, args.runs + 1)]
    base = [sys.executable, "-m", "osmeter", "compare", *ids]
    html_s = timed([*base, "-o", str(work / "heatmap.html")], env)
    svg_s = timed([*base, "-o", str(work / "heatmap.svg")], env)
    json_s = timed([*base, "--json"], env)
    cells = (args.runs - 1) * args.benches
    print(f"compare, {cells} cells: HTML heatmap {html_s:.2f} s, SVG heatmap {svg_s:.2f} s, --json {json_s:.2f} s "
          f"(target: HTML under {TARGET_S:.0f} s)")
    print(f"outputs in {work}")
    return 0 if html_s < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
