#!/usr/bin/env python3
"""Fidelity: osmeter's cold file reads against fio, the same file, O_DIRECT.

The same work: one file of --size bytes of real data (made once by this
script in a private directory under --dir, fsynced, removed at the end),
read past the page cache with O_DIRECT, one synchronous read at a time:

  osmeter  file.rand_read_cold / file.seq_read_cold --param file=FILE
           --param method=direct (pread() of one block, timed alone)
  fio      --direct=1 --ioengine=psync --iodepth=1 --readonly
           (psync: one pread() per I/O; its own random map reads each
           block once per pass, as osmeter's permutation does)

Two figures, both tools pinned to --cpu, interleaved: osmeter, fio,
osmeter, fio ... --rounds times each:

  4 KiB random reads, latency: osmeter's median time per read against
      fio's completion latency median (read.clat_ns percentile 50). For a
      synchronous engine fio's clat is "the time from when the I/O was
      submitted to the operating system to when it was completed" (fio
      HOWTO, "clat"): the pread() call, the region osmeter times. fio's
      slat is not reported for sync engines and its lat adds fio's own
      preparation of the I/O unit, so clat is the same timed region. (fio
      keeps latencies in a log-linear histogram: its percentiles are
      exact to about 1.6 %.)
  1 MiB sequential reads, MB/s (10^6 bytes/s): osmeter's extra.mb_per_s
      (block / mean read time) against fio's read.bw_bytes (bytes read /
      run time); both are means over the run. osmeter's block / median is
      printed too.

Tolerance (issue 11): each ratio osmeter/fio within 0.75 .. 1.33; the
script exits 1 when one is outside, 2 when a tool cannot measure. Without
fio it says which Debian package to install (fio) and exits 1 before
making anything.

Usage: benchmarks/file_vs_fio.py [--dir /var/tmp] [--size 256M]
       [--rounds 5] [--seconds 5] [--cpu 0]
Needs: fio (apt-get install fio). A quiet machine: the device is shared by
everything else that runs.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import find_probe, need_tool, ratio_line

LOW, HIGH = 0.75, 1.33
UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def size_arg(text: str) -> int:
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    mult = UNITS.get(t[-1:], 1)
    try:
        n = int(t[:-1] if t[-1:] in UNITS else t) * mult
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 256M)") from None
    if n < (1 << 20) or n % (1 << 20):
        raise argparse.ArgumentTypeError(f"{text}: a whole number of MiB, at least 1M")
    return n


def make_file(directory: Path, size: int) -> Path:
    """`size` bytes of real (random, not sparse) data, fsynced."""
    free = shutil.disk_usage(directory).free
    if size > free // 2:
        sys.exit(f"{directory}: {size >> 20} MiB needed, only {free >> 20} MiB free (keeping half free); "
                 "use --size or --dir")
    path = directory / "cold.dat"
    chunk = os.urandom(1 << 20)
    with open(path, "wb") as f:
        for _ in range(size >> 20):
            f.write(chunk)
        f.flush()
        os.fsync(f.fileno())
    return path


def osmeter(probe: str, bench: str, path: Path, block: str, cpu: int, seconds: float) -> dict:
    argv = [probe, "run", bench, "--param", f"file={path}", "--param", f"block={block}",
            "--param", "method=direct", "--cpu", str(cpu), "--min-time", str(seconds),
            "--max-time", str(2 * seconds), "--quiet"]
    p = subprocess.run(argv, capture_output=True, text=True)
    records = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    for r in records:
        if r["type"] == "result":
            if r["info"].get("cache_bypass") != "o_direct":
                sys.exit(f"osmeter {bench} used {r['info'].get('cache_bypass')}, not O_DIRECT")
            return r
        if r["type"] in ("skip", "error"):
            print(f"osmeter {bench} could not measure: {r.get('reason') or r.get('message')}", file=sys.stderr)
            sys.exit(2)
    print(f"osmeter {bench} gave no result (exit {p.returncode}): {p.stderr.strip()}", file=sys.stderr)
    sys.exit(2)


def fio(fio_bin: str, rw: str, path: Path, size: int, bs: str, cpu: int, seconds: float) -> dict:
    argv = [fio_bin, f"--name={rw}", f"--filename={path}", "--readonly", "--direct=1",
            "--ioengine=psync", "--iodepth=1", "--numjobs=1", f"--rw={rw}", f"--bs={bs}",
            f"--size={size}", "--time_based", f"--runtime={seconds}s", f"--cpus_allowed={cpu}",
            "--output-format=json"]
    p = subprocess.run(argv, capture_output=True, text=True)
    start = p.stdout.find("{")
    if p.returncode != 0 or start < 0:
        print(f"fio failed (exit {p.returncode}): {p.stderr.strip() or p.stdout.strip()}", file=sys.stderr)
        sys.exit(2)
    job = json.loads(p.stdout[start:])["jobs"][0]
    if job.get("error"):
        print(f"fio job error {job['error']}", file=sys.stderr)
        sys.exit(2)
    return job["read"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=Path("/var/tmp"),
                    help="directory on the file system to measure (default /var/tmp)")
    ap.add_argument("--size", type=size_arg, default=256 << 20, help="file size (default 256M)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=5.0, help="time per measurement, each tool")
    ap.add_argument("--cpu", type=int, default=0)
    a = ap.parse_args()
    if a.rounds < 1 or not a.seconds > 0:
        ap.error("--rounds must be at least 1 and --seconds above 0")
    probe = find_probe()
    fio_bin = need_tool("fio", "fio")
    if not a.dir.is_dir():
        sys.exit(f"--dir {a.dir}: not a directory")
    work = Path(tempfile.mkdtemp(prefix="osmeter-fio-", dir=a.dir))
    try:
        path = make_file(work, a.size)
        return compare(probe, fio_bin, path, a)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def compare(probe: str, fio_bin: str, path: Path, a: argparse.Namespace) -> int:
    print(f"file {path}: {a.size >> 20} MiB, O_DIRECT, CPU {a.cpu}, {a.rounds} rounds of {a.seconds} s", flush=True)
    lat_o, lat_f, bw_o, bw_f = [], [], [], []
    for i in range(a.rounds):
        r = osmeter(probe, "file.rand_read_cold", path, "4K", a.cpu, a.seconds)
        lat_o.append(r["median"] / 1000)
        f = fio(fio_bin, "randread", path, a.size, "4k", a.cpu, a.seconds)
        lat_f.append(f["clat_ns"]["percentile"]["50.000000"] / 1000)
        s = osmeter(probe, "file.seq_read_cold", path, "1M", a.cpu, a.seconds)
        bw_o.append(s["extra"]["mb_per_s"])
        g = fio(fio_bin, "read", path, a.size, "1m", a.cpu, a.seconds)
        bw_f.append(g["bw_bytes"] / 1e6)
        print(f"round {i + 1}: 4K random: osmeter {lat_o[-1]:.1f} us, fio clat p50 {lat_f[-1]:.1f} us; "
              f"1M sequential: osmeter {bw_o[-1]:.0f} MB/s (block/median {(1 << 20) / s['median'] * 1e3:.0f}), "
              f"fio {bw_f[-1]:.0f} MB/s", flush=True)
    ok = True
    for name, ours, theirs, unit in (
        ("file.rand_read_cold block=4K vs fio randread 4k clat p50", lat_o, lat_f, "us"),
        ("file.seq_read_cold block=1M mb_per_s vs fio read 1m bw", bw_o, bw_f, "MB/s"),
    ):
        r = ratio_line(name, ours, theirs, unit)
        inside = LOW <= r <= HIGH
        ok &= inside
        print(f"{' ' * len(name)}  band {LOW}..{HIGH}: {'PASS' if inside else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
