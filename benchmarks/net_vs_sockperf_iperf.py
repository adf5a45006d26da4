#!/usr/bin/env python3
"""Fidelity: osmeter's net round trips against sockperf, TCP bandwidth against iperf3.

The same work on loopback, client and server pinned alike: the client on
--client-cpu (0), the server on --server-cpu (1).

  round trip  osmeter  net.tcp_rtt / net.udp_rtt --param size=S
                       --param placement=cross_cpu --cpu CLIENT: its own
                       peer (the echo server) runs on another CPU; the
                       script checks which (the peer process's affinity,
                       read while it runs) and says so.
              sockperf taskset -c SERVER sockperf server [--tcp]
                       taskset -c CLIENT sockperf ping-pong [--tcp] -m S
                       One message of S bytes out, the same back, blocking
                       recvfrom() on both sides (sockperf's default for a
                       single socket), Nagle off.

      sockperf reports HALF the round trip: its "latency" (avg-lat and the
      percentiles) is the round-trip time / 2 (sockperf's --full-rtt
      prints the round trip itself). osmeter's net.*_rtt is one whole round
      trip (ns per round trip). The script aligns them by DOUBLING
      sockperf's median ("percentile 50.000"), and prints both numbers.
      sockperf's smallest message is 14 bytes (its header): sizes below
      that are refused.

  bandwidth   osmeter  net.tcp_bw --param direction=send|recv
                       --param write_size=W (its own peer on the other
                       CPU, as above) for --seconds: samples of 100 ms of
                       streaming (the default `duration`), each after its
                       own warm-up; the median sample, payload bytes/s.
              iperf3   taskset -c SERVER iperf3 -s; taskset -c CLIENT
                       iperf3 -c -l W -O 1 -t SECONDS (send: the client
                       sends, as osmeter's send) and with -R (recv: the
                       server sends). -O 1 leaves out the first second
                       (slow start, buffers filling), as osmeter's warm-up
                       does. Its receiver's figure (sum_received) in
                       bytes/s: payload, as osmeter's.

Interleaved: for each round, each point is measured by osmeter and then by
the reference tool, --rounds times; the medians of the rounds and their
ratio osmeter/reference are printed per point.

Tolerance (issue 12): each ratio within 0.75 .. 1.33; the script exits 1
when one is outside, 2 when a tool cannot measure. A quiet machine: the
load average is printed before and after.

Usage: benchmarks/net_vs_sockperf_iperf.py [--rounds 5] [--client-cpu 0]
       [--server-cpu 1] [--sizes 16,1024,16384] [--write-sizes 16K,128K,1M]
       [--seconds 2] [--only rtt|bw]
Needs: sockperf and iperf3 (Debian: apt-get install sockperf iperf3),
taskset (util-linux).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from typing import Iterator

from _common import find_probe, need_tool, ratio_line

LOW, HIGH = 0.75, 1.33
SOCKPERF_MIN_SIZE = 14
UNITS = {"K": 1 << 10, "M": 1 << 20}


def size_list(text: str) -> list[int]:
    out = []
    for word in text.split(","):
        w = word.strip().upper()
        try:
            out.append(int(w[:-1]) * UNITS[w[-1]] if w[-1:] in UNITS else int(w))
        except (ValueError, IndexError):
            raise argparse.ArgumentTypeError(f"not a size list: {text!r} (e.g. 16,1K,16K)") from None
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def server(argv: list[str], cpu: int, port: int) -> Iterator[subprocess.Popen[str]]:
    """A reference server pinned to `cpu`, up until the block ends (stopped by its pid)."""
    proc = subprocess.Popen(["taskset", "-c", str(cpu), *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break  # TCP listening (a UDP server: its TCP probe fails; the sleep below covers it)
            except OSError:
                time.sleep(0.1)
        time.sleep(0.3)
        if proc.poll() is not None:
            sys.exit(f"{argv[0]} server failed: {proc.stderr.read() if proc.stderr else ''}")
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --- osmeter -----------------------------------------------------------------


def osmeter(probe: str, bench: str, params: dict[str, str], cpu: int, budget: list[str],
            watch: dict | None = None) -> dict:
    """One osmeter-probe run of one instance; `watch`: record the CPUs its own peer may run on."""
    argv = [probe, "run", bench, "--cpu", str(cpu), "--quiet", *budget]
    for k, v in {**params, "placement": "cross_cpu"}.items():
        argv += ["--param", f"{k}={v}"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watcher = None
    if watch is not None:
        watcher = threading.Thread(target=watch_peer, args=(proc.pid, watch), daemon=True)
        watcher.start()
    out, err = proc.communicate()
    if watcher is not None:
        watcher.join()
    for r in (json.loads(line) for line in out.splitlines() if line.startswith("{")):
        if r["type"] == "result":
            return r
        if r["type"] in ("skip", "error"):
            print(f"osmeter {bench} {params} could not measure: {r.get('reason') or r.get('message')}",
                  file=sys.stderr)
            sys.exit(2)
    print(f"osmeter {bench} gave no result (exit {proc.returncode}): {err.strip()}", file=sys.stderr)
    sys.exit(2)


def watch_peer(pid: int, seen: dict) -> None:
    """While the probe `pid` runs: the Cpus_allowed_list of its child processes (its own peer)."""
    while os.path.exists(f"/proc/{pid}") and not seen.get("done"):
        try:
            children = open(f"/proc/{pid}/task/{pid}/children").read().split()
        except OSError:
            break
        for child in children:
            try:
                status = open(f"/proc/{child}/status").read()
                cmd = open(f"/proc/{child}/cmdline").read().replace("\0", " ").strip()
            except OSError:
                continue
            m = re.search(r"Cpus_allowed_list:\s*(\S+)", status)
            if m:
                seen.setdefault("peers", {})[child] = (m.group(1), cmd)
        time.sleep(0.02)


# --- the reference tools ------------------------------------------------------


def sockperf_rtt_ns(sockperf: str, port: int, size: int, tcp: bool, cpu: int, seconds: float) -> float:
    """sockperf ping-pong's median latency, doubled: ns per round trip."""
    argv = ["taskset", "-c", str(cpu), sockperf, "ping-pong", "-i", "127.0.0.1", "-p", str(port), "-m", str(size),
            "-t", str(seconds), *(["--tcp"] if tcp else [])]
    p = subprocess.run(argv, capture_output=True, text=True)
    m = re.search(r"percentile 50\.000 =\s*([0-9.]+)", p.stdout + p.stderr)
    if p.returncode != 0 or not m:
        print(f"sockperf failed (exit {p.returncode}): {(p.stderr or p.stdout).strip()[-500:]}", file=sys.stderr)
        sys.exit(2)
    return 2 * float(m.group(1)) * 1e3  # usec of half a round trip -> ns of a round trip


def iperf3_bytes_s(iperf3: str, port: int, write: int, reverse: bool, cpu: int, seconds: float) -> float:
    argv = ["taskset", "-c", str(cpu), iperf3, "-c", "127.0.0.1", "-p", str(port), "-l", str(write), "-O", "1",
            "-t", f"{seconds:g}", "-J", *(["-R"] if reverse else [])]
    p = subprocess.run(argv, capture_output=True, text=True)
    try:
        end = json.loads(p.stdout)["end"]
        return end["sum_received"]["bits_per_second"] / 8
    except (ValueError, KeyError):
        print(f"iperf3 failed (exit {p.returncode}): {(p.stderr or p.stdout).strip()[-500:]}", file=sys.stderr)
        sys.exit(2)


# --- the comparison ------------------------------------------------------------


def compare_rtt(probe: str, sockperf: str, a: argparse.Namespace, watch: dict) -> list[float]:
    ratios = []
    budget = ["--min-time", f"{a.seconds:g}", "--max-time", f"{2 * a.seconds:g}"]
    for tcp in (True, False):
        port = free_port()
        proto = "tcp" if tcp else "udp"
        srv = [sockperf, "server", "-i", "127.0.0.1", "-p", str(port), *(["--tcp"] if tcp else [])]
        with server(srv, a.server_cpu, port):
            for size in a.sizes:
                ours, theirs = [], []
                for i in range(a.rounds):
                    r = osmeter(probe, f"net.{proto}_rtt", {"size": str(size)}, a.client_cpu, budget,
                                watch if not watch.get("peers") else None)
                    ours.append(r["median"] / 1e3)
                    theirs.append(sockperf_rtt_ns(sockperf, port, size, tcp, a.client_cpu, a.seconds) / 1e3)
                    print(f"  round {i + 1}: net.{proto}_rtt size={size}: osmeter {ours[-1]:.2f} us, "
                          f"sockperf 2 x p50 {theirs[-1]:.2f} us", flush=True)
                ratios.append(ratio_line(f"{proto.upper()} round trip, {size} B (sockperf: 2 x half-RTT p50)",
                                         ours, theirs, "us"))
    return ratios


def compare_bw(probe: str, iperf3: str, a: argparse.Namespace) -> list[float]:
    ratios = []
    port = free_port()
    with server([iperf3, "-s", "-p", str(port), "-B", "127.0.0.1"], a.server_cpu, port):
        for direction in ("send", "recv"):
            for write in a.write_sizes:
                ours, theirs = [], []
                for i in range(a.rounds):
                    r = osmeter(probe, "net.tcp_bw", {"direction": direction, "write_size": str(write)},
                                a.client_cpu, ["--min-time", f"{a.seconds:g}", "--max-time", f"{2 * a.seconds:g}"])
                    ours.append(r["median"] / 1e6)
                    theirs.append(iperf3_bytes_s(iperf3, port, write, direction == "recv", a.client_cpu,
                                                 a.seconds) / 1e6)
                    print(f"  round {i + 1}: net.tcp_bw {direction} write_size={write}: osmeter {ours[-1]:.0f} "
                          f"MB/s, iperf3{' -R' if direction == 'recv' else ''} {theirs[-1]:.0f} MB/s", flush=True)
                ratios.append(ratio_line(f"TCP bandwidth {direction}, {write} B writes (iperf3"
                                         f"{' -R' if direction == 'recv' else ''})", ours, theirs, "MB/s"))
    return ratios


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--client-cpu", type=int, default=0)
    ap.add_argument("--server-cpu", type=int, default=1)
    ap.add_argument("--sizes", type=size_list, default=[16, 1024, 16384], help="round-trip message sizes")
    ap.add_argument("--write-sizes", type=size_list, default=[16 << 10, 128 << 10, 1 << 20])
    ap.add_argument("--seconds", type=float, default=2.0, help="time per measurement, each tool")
    ap.add_argument("--only", choices=("rtt", "bw"))
    a = ap.parse_args()
    if a.rounds < 1 or not a.seconds > 0:
        ap.error("--rounds must be at least 1 and --seconds above 0")
    if a.client_cpu == a.server_cpu:
        ap.error("--client-cpu and --server-cpu must differ (osmeter's placement=cross_cpu)")
    if min(a.sizes) < SOCKPERF_MIN_SIZE:
        ap.error(f"--sizes: sockperf's smallest message is {SOCKPERF_MIN_SIZE} bytes")
    probe = find_probe()
    need_tool("taskset", "util-linux")
    sockperf = need_tool("sockperf", "sockperf") if a.only != "bw" else ""
    iperf3 = need_tool("iperf3", "iperf3") if a.only != "rtt" else ""
    print(f"load average before: {open('/proc/loadavg').read().split()[:3]}; client CPU {a.client_cpu}, "
          f"server CPU {a.server_cpu}, {a.rounds} rounds of {a.seconds:g} s", flush=True)
    watch: dict = {}
    ratios = []
    if a.only != "bw":
        ratios += compare_rtt(probe, sockperf, a, watch)
        peers = watch.get("peers", {})
        for pid, (cpus, _) in peers.items():
            print(f"osmeter's own peer (the probe's child, pid {pid}) was allowed on CPU {cpus}; the probe "
                  f"on {a.client_cpu}")
        if not peers:
            print("osmeter's own peer was not seen: its CPU is unverified")
    if a.only != "rtt":
        ratios += compare_bw(probe, iperf3, a)
    print(f"load average after: {open('/proc/loadavg').read().split()[:3]}")
    bad = [r for r in ratios if not LOW <= r <= HIGH]
    print(f"{len(ratios) - len(bad)} of {len(ratios)} ratios within {LOW}..{HIGH}: {'PASS' if not bad else 'FAIL'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
