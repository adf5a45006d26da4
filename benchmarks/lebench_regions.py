#!/usr/bin/env python3
"""LEBench's timed regions next to osmeter's, one difference at a time (issue 30).

Builds benchmarks/lebench_regions.c with cc into a temporary directory (and,
with --static, a second, statically linked copy: osmeter's probe is static,
LEBench's OS_Eval dynamic), runs it pinned to one CPU (taskset) with its
test files in that directory, and prints per LEBench row the variants it
timed, interleaved in one process: LEBench's region, osmeter's, and each
with one difference switched (open/close around each call or lseek; the
test file grown as LEBench's or written in large chunks, which decides the
page cache's folios and so what fault-around and read/write walk; written
back or not; the set-id mode LEBench's open() without a mode leaves on its
file; the fork parent's written memory; LEBench's child or
osmeter's). For each: LEBench's k-best (osmeter.stats.lebench_kbest, its
calc_k_closest) and the median, and their ratio to LEBench's variant.

Then the page cache's folios of each test file (root only: /proc/kpageflags):
over the first 16 pages (fault-around's reach) and the whole file.

Usage: benchmarks/lebench_regions.py [--cpu 0] [--rounds 10] [--per 200] [--static] [--keep DIR] [ROW...]
  rows: write4k read4k write40k write4000k write40000k read40k fault40k fault4000k fault40000k epoll10 epoll1000 fork hugefork (default: all)
Without cc it prints "skipped: ..." and exits 0. Not a pass/fail check: the
figures explain docs/lebench.md's rows.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from osmeter.stats import lebench_kbest

SRC = Path(__file__).resolve().parent / "lebench_regions.c"


def build(cc: str, out: Path, static: bool) -> Path:
    exe = out / ("lebench_regions" + ("-static" if static else ""))
    cmd = [cc, "-O2", "-Wall", "-o", str(exe), str(SRC)] + (["-static"] if static else [])
    subprocess.run(cmd, check=True)
    return exe


def parse(text: str, tag: str, samples: dict, whats: dict, folios: list) -> None:
    for line in text.splitlines():
        f = line.split("\t")
        if f[0] == "#":
            whats[(f[1], f[2] + tag)] = f[3]
        elif f[0] == "fill":
            whats[(f[1], f[2] + tag)] += f" (its fill took {fmt_ns(float(f[3]))})"
        elif f[0] == "folios":
            if not tag:
                folios.append(f[1:])
        else:
            samples[(f[0], f[1] + tag)].append(float(f[2]))


def fmt_ns(v: float) -> str:
    for unit, scale in (("ms", 1e6), ("µs", 1e3)):
        if v >= scale:
            return f"{v / scale:.2f} {unit}"
    return f"{v:.0f} ns"


def table(samples: dict, whats: dict) -> str:
    rows: dict[str, list] = defaultdict(list)
    for (row, var), xs in samples.items():
        rows[row].append((var, lebench_kbest(xs).value, statistics.median(xs), len(xs)))
    out = []
    for row, vs in rows.items():
        ref = next((v for v in vs if v[0] in ("lebench", "leb-child")), vs[0])
        out.append(f"\n{row}  (ratios against {ref[0]})")
        out.append(f"  {'variant':<22} {'k-best':>10} {'median':>10} {'k-best/ref':>10} {'median/ref':>10} {'n':>6}  what")
        for var, kb, med, n in vs:
            out.append(f"  {var:<22} {fmt_ns(kb):>10} {fmt_ns(med):>10} {kb / ref[1]:>10.2f} {med / ref[2]:>10.2f} "
                       f"{n:>6}  {whats.get((row, var), '')}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=10, help="interleaved rounds (default 10)")
    ap.add_argument("--per", type=int, default=200, help="samples per variant per round (forks: a quarter)")
    ap.add_argument("--static", action="store_true", help="also run a statically linked build (fork rows)")
    ap.add_argument("--keep", metavar="DIR", help="build and write the test files here, and keep them")
    ap.add_argument("rows", nargs="*")
    a = ap.parse_args(argv)
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        print("skipped: no C compiler (cc) on PATH: install gcc (apt-get install gcc) to build lebench_regions.c")
        return 0
    taskset = shutil.which("taskset")
    tmp = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="osm-lebench-regions-"))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        builds = [("", build(cc, tmp, False))]
        if a.static:
            builds.append(("/static", build(cc, tmp, True)))
        samples: dict = defaultdict(list)
        whats: dict = {}
        folios: list = []
        for tag, exe in builds:
            cmd = [str(exe), str(tmp), str(a.rounds), str(a.per), *a.rows]
            if taskset:
                cmd = [taskset, "-c", str(a.cpu), *cmd]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            parse(out, tag, samples, whats, folios)
        print(f"LEBench's regions and osmeter's, interleaved on CPU {a.cpu} ({a.rounds} rounds of {a.per}):")
        print(table(samples, whats))
        print("\npage-cache folios of the test files (first 16 pages / whole file / pages; -1: not root)")
        for name, first, total, pages in folios:
            print(f"  {name:<28} {first:>4} {total:>6} {pages:>6}")
    except subprocess.CalledProcessError as e:
        print(f"lebench_regions failed: {e}\n{(e.stderr or '').strip()}", file=sys.stderr)
        return 1
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
