"""Shared helpers for the fidelity scripts: find the probe, run it, read results.

Fidelity scripts run osmeter and an established tool back to back,
interleaved, on the same CPU, and report ratios. They are not tests: they
print figures for a human (and for issue notes) and exit non-zero only when
a ratio falls outside the tolerance the issue states.
"""
from __future__ import annotations

import json
import re
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path


def find_probe() -> str:
    env = os.environ.get("OSMETER_PROBE")
    if env:
        return env
    here = Path(__file__).resolve().parent.parent
    for cand in (here / "build" / "probe" / "osmeter-probe",):
        if cand.exists():
            return str(cand)
    found = shutil.which("osmeter-probe")
    if not found:
        sys.exit("osmeter-probe not found: install osmeter (pip install .) or set OSMETER_PROBE")
    return found


def need_tool(name: str, package: str) -> str:
    path = shutil.which(name)
    if not path:
        sys.exit(f"{name} not found: install the Debian package {package} (apt-get install {package})")
    return path


def probe_results(argv: list[str]) -> list[dict]:
    """Run the probe, return its result records (raises on failure)."""
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    return [r for r in map(json.loads, out.splitlines()) if r["type"] == "result"]


def ratio_line(name: str, ours: list[float], theirs: list[float], unit: str) -> float:
    mo, mt = statistics.median(ours), statistics.median(theirs)
    r = mo / mt
    print(f"{name}: osmeter median {mo:.2f} {unit} (runs {', '.join(f'{x:.2f}' for x in ours)})")
    print(f"{' ' * len(name)}  reference median {mt:.2f} {unit} (runs {', '.join(f'{x:.2f}' for x in theirs)})")
    print(f"{' ' * len(name)}  ratio osmeter/reference = {r:.3f}")
    return r


def perf_bench_ns(perf: str, cpu: int, *bench: str) -> float:
    """Run `perf bench BENCH...` pinned to `cpu` and return its usecs/op in ns."""
    out = subprocess.run(
        ["taskset", "-c", str(cpu), perf, "bench", *bench], check=True, capture_output=True, text=True
    ).stdout
    m = re.search(r"([0-9.]+)\s+usecs/op", out)
    if not m:
        sys.exit(f"cannot read perf output:\n{out}")
    return float(m.group(1)) * 1000.0
