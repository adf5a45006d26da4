#!/usr/bin/env python3
"""At scale (issue 27): the commands people run on a big store, timed.

Builds a throw-away store of RUNS runs x RESULTS results, on SQLite and on
PostgreSQL (a server of its own, tests/pgserver.py), then times each command
as a user runs it (a subprocess, Python start-up included, wall time): an
untimed round that leaves Python's bytecode written, then --repeat rounds,
each running every command on both backends once (a slow minute of a
shared guest falls on all alike); best and median of the rounds:

    osmeter runs                              (the newest 50)
    osmeter runs --all
    osmeter show N
    osmeter compare A B                       (two runs of one host)
    osmeter compare --by host --fleet F       (a fleet run over every host)
    osmeter report --fleet F                  (its HTML report, on stdout)
    osmeter report --fleet F --format txt     (the same as text)
    osmeter report --fleet F --all-runs --format txt  (with every run's section)

The store: --hosts hosts (default 100; runs.host and the machine's
hostname), one run per host per round, oldest first; four of the rounds
are fleet runs (runs.fleet), the last of them with its first host resumed
(an incomplete run, then a complete one); five kernels over time (the
machine JSON's kernel_release, a realistic machine description around
it); labels on some runs; a few incomplete runs. Each result holds a
samples blob of 200 to 400 values, its statistics, the probe's record and
a repetition; a few results per run are skips and errors.

Quickly: the first 8 runs are stored through osmeter's own store API (the
templates); the other runs' rows are inserted in bulk, and their results
copied from the templates in one INSERT ... SELECT, so every row is one
osmeter wrote. PostgreSQL is then VACUUM ANALYZEd (its autovacuum would,
a minute later); SQLite is left as osmeter leaves it.

Prints the table `command | SQLite | PostgreSQL` (seconds, best / median). Everything lives in a
temp dir removed on every exit path (an error, Ctrl-C, SIGTERM), and the
PostgreSQL server is stopped. Timings on a shared machine are indicative.

Usage: .venv/bin/python benchmarks/store_scale.py [--runs 10000] [--results 200]
           [--backends sqlite,postgresql] [--repeat 5]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import sqlalchemy as sa

from osmeter.model import BenchResult, NewRun
from osmeter.repeats import Repetition
from osmeter.stats import higher_is_better, summary
from osmeter.store import open_store

HERE = Path(__file__).resolve().parent
BACKENDS = ("sqlite", "postgresql")
TITLES = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}
TEMPLATES = 8  # runs stored through the API; the others copy their results
KERNELS = ("5.15.0-105-generic", "6.1.0-18-amd64", "6.5.0-35-generic", "6.8.0-31-generic", "6.10.3-arch1")
LONG_S = 30.0  # an attempt slower than this is not repeated
# benchmark, unit, parameter swept (a power of two from `start`)
BENCHES = (
    ("syscall.null", "ns", None, 0), ("syscall.getpid", "ns", None, 0), ("cpu.call", "ns", "args", 0),
    ("ctxsw.pipe", "ns", "msg_bytes", 1), ("task.fork_exit", "ns", "size", 4096), ("task.thread_join", "ns", None, 0),
    ("mem.mmap", "ns", "size", 4096), ("mem.munmap", "ns", "size", 4096), ("mem.page_fault", "ns", "size", 4096),
    ("mem.bandwidth", "bytes_per_s", "size", 4096), ("mem.latency", "ns", "size", 4096),
    ("file.read", "ns", "size", 512), ("file.write", "ns", "size", 512), ("file.open", "ns", None, 0),
    ("net.tcp_rtt", "ns", "msg_bytes", 1), ("net.udp_rtt", "ns", "msg_bytes", 1),
    ("net.tcp_bandwidth", "bytes_per_s", "msg_bytes", 64), ("rt.timer_latency", "ns", "interval_us", 100),
    ("sched.yield", "ns", None, 0), ("ipc.futex_wake", "ns", "waiters", 1),
)


def instances(count: int) -> list[tuple[str, str, dict[str, Any]]]:
    """`count` benchmark instances, each benchmark swept over its parameter."""
    out: list[tuple[str, str, dict[str, Any]]] = []
    step = 0
    while len(out) < count:
        for bench, unit, param, start in BENCHES:
            if len(out) == count:
                break
            if param is None:
                params: dict[str, Any] = {} if step == 0 else {"variant": step}
            else:
                params = {param: start * 2 ** step if start else step}
            out.append((bench, unit, params))
        step += 1
    return out


# --- the store ---------------------------------------------------------------------------


def machine(host: str, kernel: str) -> dict[str, Any]:
    """A machine description of the size the probe writes."""
    return {
        "hostname": host, "kernel_release": kernel, "kernel_version": "#1 SMP PREEMPT_DYNAMIC", "arch": "x86_64",
        "os": "Debian GNU/Linux 12 (bookworm)", "kernel_cmdline": f"BOOT_IMAGE=/vmlinuz-{kernel} root=/dev/vda1 ro quiet",
        "preemption": "voluntary", "preemption_source": "debugfs", "realtime": False, "kernel_hz": 250,
        "cpu_model": "AMD EPYC 7763 64-Core Processor", "cpu_vendor": "AuthenticAMD", "board": "QEMU Standard PC",
        "cpu_flags": ["fpu", "vme", "de", "pse", "tsc", "msr", "pae", "mce", "cx8", "apic", "sep", "mtrr", "pge",
                      "mca", "cmov", "pat", "pse36", "clflush", "mmx", "fxsr", "sse", "sse2", "ht", "syscall", "nx",
                      "mmxext", "fxsr_opt", "pdpe1gb", "rdtscp", "lm", "rep_good", "nopl", "cpuid", "extd_apicid",
                      "tsc_known_freq", "pni", "pclmulqdq", "ssse3", "fma", "cx16", "pcid", "sse4_1", "sse4_2",
                      "x2apic", "movbe", "popcnt", "aes", "xsave", "avx", "f16c", "rdrand", "hypervisor", "lahf_lm",
                      "cmp_legacy", "svm", "cr8_legacy", "abm", "sse4a", "misalignsse", "3dnowprefetch", "osvw",
                      "topoext", "invpcid_single", "ssbd", "ibrs", "ibpb", "stibp", "vmmcall", "fsgsbase", "bmi1",
                      "avx2", "smep", "bmi2", "erms", "invpcid", "rdseed", "adx", "smap", "clflushopt", "clwb",
                      "sha_ni", "xsaveopt", "xsavec", "xgetbv1", "xsaves", "clzero", "xsaveerptr", "wbnoinvd",
                      "arat", "npt", "nrip_save", "umip", "pku", "ospke", "vaes", "vpclmulqdq", "rdpid", "fsrm"],
        "cpus_online": 16, "cpus_allowed": "0-15", "sockets": 1, "cores_per_socket": 8, "threads_per_core": 2,
        "smt_control": "on", "isolated_cpus": "", "nohz_full_cpus": "", "numa_nodes": 1,
        "caches": [{"level": 1, "type": "Data", "size_bytes": 32768, "line_bytes": 64, "ways": 8, "shared_cpu_list": "0,8"},
                   {"level": 1, "type": "Instruction", "size_bytes": 32768, "line_bytes": 64, "ways": 8,
                    "shared_cpu_list": "0,8"},
                   {"level": 2, "type": "Unified", "size_bytes": 524288, "line_bytes": 64, "ways": 8,
                    "shared_cpu_list": "0,8"},
                   {"level": 3, "type": "Unified", "size_bytes": 33554432, "line_bytes": 64, "ways": 16,
                    "shared_cpu_list": "0-15"}],
        "cpufreq_driver": None, "cpufreq_governor": None, "cpu_max_mhz": None, "cpu_min_mhz": None, "cpu_boost": None,
        "cpuidle_driver": "haltpoll", "memory_bytes": 67430268928, "memory_type": None,
        "cgroup_memory_limit_bytes": None, "cgroup_cpu_limit": None, "hugepage_size_bytes": 2097152,
        "thp_enabled": "madvise", "thp_defrag": "madvise", "fault_around_bytes": 65536,
        "disks": [{"name": "vda", "size_bytes": 274877906944, "rotational": False, "model": None, "scheduler": "none"}],
        "nics": [{"name": "eth0", "state": "up", "speed_mbps": None, "mtu": 1500, "driver": "virtio_net"}],
        "mitigations": {"spectre_v1": "Mitigation: usercopy/swapgs barriers", "spectre_v2": "Mitigation: Retpolines",
                        "meltdown": "Not affected", "spec_store_bypass": "Mitigation: Speculative Store Bypass disabled",
                        "retbleed": "Not affected", "srso": "Mitigation: SMT disabled"},
        "clocksource": "tsc", "available_clocksources": ["tsc", "kvm-clock", "acpi_pm"], "virtualization": "kvm",
        "emulation": None, "container": "none", "perf_event_paranoid": 2, "aslr": 2, "libc": "glibc 2.36",
    }


META = {
    "type": "meta", "schema": 1, "command": "run", "probe_version": "0.2.0",
    "clock": {"source": "tsc", "forced": False, "hz": 2.445e9, "resolution_ns": 8.0, "overhead_ns": 18.7,
              "invariant": True, "calibration_ns": 100000000},
    "cpu": 1, "cpu_choice": "least_busy", "fifo": {"requested": None, "applied": False, "reason": None},
    "mlock": {"requested": False, "applied": False, "reason": None},
    "budget": {"min_time_s": 0.05, "max_time_s": 2, "min_samples": 20, "max_samples": 100000, "target_rse": 0.01},
    "build": {"compiler": "gcc 12.2.0", "flags": "-O2", "static": True, "build_type": "Release", "arch": "x86_64"},
}


@dataclass
class Spec:
    """One run: when, where, which fleet run, how it ended."""

    host: str
    kernel: str
    label: str | None
    fleet: str | None
    status: str
    start: str


def plan(runs: int, hosts: int) -> tuple[list[Spec], list[str]]:
    """The runs, oldest first, and the fleet runs' ids (the last one resumed on its first host)."""
    rounds = max(1, -(-runs // hosts))
    fleet_rounds = sorted({max(0, rounds * (k + 1) // 4 - 1) for k in range(4)})
    specs: list[Spec] = []
    t0 = 1_767_225_600  # 2026-01-01
    for rnd in range(rounds):
        fleet = f"nightly-{rnd + 1:03d}" if rnd in fleet_rounds else None
        label = fleet or ("baseline" if rnd == 0 else f"ci-{rnd}" if rnd % 5 == 0 else None)
        for h in range(hosts):
            kernel = KERNELS[min(len(KERNELS) - 1, (rnd * len(KERNELS)) // rounds + (h % 7 == 3))]
            status = "incomplete" if (fleet is None and (rnd * hosts + h) % 97 == 13) else "complete"
            start = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0 + rnd * 86400 + h * 60))
            if fleet is not None and rnd == fleet_rounds[-1] and h == 0:  # resumed: stopped, then again
                specs.append(Spec(f"node{h + 1}", kernel, label, fleet, "incomplete", start))
                start = start[:-3] + "30Z"
            specs.append(Spec(f"node{h + 1}", kernel, label, fleet, status, start))
    return specs[:runs], [f"nightly-{r + 1:03d}" for r in fleet_rounds]


def new_run(s: Spec) -> NewRun:
    return NewRun(label=s.label, start_time=s.start, source="run", osmeter_version="0.3.0", probe_version="0.2.0",
                  suite="standard", argv=["osmeter-probe", "run", "--suite", "standard", "--jsonl"],
                  params={"suite": "standard", "repeat": 1}, machine=machine(s.host, s.kernel),
                  meta=dict(META, suite="standard", start_time=s.start), host=s.host, fleet=s.fleet)


def template_results(variant: int, count: int) -> Iterator[tuple[BenchResult, np.ndarray | None]]:
    """A run's results: mostly ok with 200-400 samples, a skip every 40, an error every 97."""
    rng = np.random.default_rng(1000 + variant)
    for seq, (bench, unit, params) in enumerate(instances(count)):
        if seq % 40 == 39:
            yield BenchResult(seq=seq, bench=bench, params=params, status="skip", reason="needs CAP_SYS_ADMIN",
                              record={"type": "skip", "bench": bench, "params": params}), None
            continue
        if seq % 97 == 96:
            yield BenchResult(seq=seq, bench=bench, params=params, status="error", reason="EAGAIN from the kernel",
                              record={"type": "error", "bench": bench, "params": params}), None
            continue
        base = 50.0 * (1 + (seq * 7919) % 97) * (1 + 0.03 * variant * ((seq % 3) - 1))
        values = np.round(base * rng.lognormal(0.0, 0.04, int(rng.integers(200, 401))), 1)
        s = summary(values, higher_is_better=higher_is_better(unit))
        elapsed = round(float(values.sum()) * 1e-6, 3)
        flags = ("precision-unmet",) if seq % 23 == 5 else ()
        record = {"type": "result", "bench": bench, "params": params, "unit": unit, "n": s.n, "min": s.min,
                  "median": s.median, "mean": s.mean, "batch": 1000, "cpu": 1, "placement": None,
                  "elapsed_s": elapsed, "stop_reason": "rse", "ref_cycles": round(s.median * 2.445, 2),
                  "flags": list(flags), "extra": {}}
        rep = Repetition("ok", s.n, s.median, s.ci_low, s.ci_high, 1000, "rse", flags, elapsed)
        yield BenchResult(seq=seq, bench=bench, params=params, status="ok", unit=unit, summary=s, batch=1000,
                          record=record, flags=flags, repetitions=(rep,)), values


def _json(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def run_row(s: Spec) -> dict[str, Any]:
    """A runs row as the store writes it (sql.SQLStore.create_run, then finish_run)."""
    r = new_run(s)
    end = s.start[:-3] + "59Z"
    return {"label": r.label, "start_time": r.start_time, "end_time": end, "status": s.status,
            "status_reason": "interrupted by SIGINT" if s.status == "incomplete" else None, "source": r.source,
            "osmeter_version": r.osmeter_version, "probe_version": r.probe_version, "suite": r.suite,
            "argv": _json(r.argv), "params": _json(r.params), "machine": _json(r.machine), "meta": _json(r.meta),
            "host": r.host, "fleet": r.fleet, "uid": str(uuid.uuid4())}


def build(location: str, engine_url: str, runs: int, results: int, hosts: int) -> tuple[list[str], int]:
    """The store at `location`; the fleet runs' ids and the number of runs."""
    specs, fleets = plan(runs, hosts)
    store = open_store(location, create=True)
    try:
        for i, s in enumerate(specs[:TEMPLATES]):  # the templates, through the store API
            with store.transaction():
                run_id = store.create_run(new_run(s))
                for result, values in template_results(i, results):
                    store.add_result(run_id, result, values)
                store.finish_run(run_id, s.status, s.start[:-3] + "59Z",
                                 "interrupted by SIGINT" if s.status == "incomplete" else None)
    finally:
        store.close()
    engine = sa.create_engine(engine_url)
    try:
        with engine.begin() as conn:
            rows = [run_row(s) for s in specs[TEMPLATES:]]
            for i in range(0, len(rows), 1000):
                chunk = rows[i:i + 1000]
                cols = list(chunk[0])
                conn.execute(sa.text(f"INSERT INTO runs ({', '.join(cols)}) VALUES "
                                     f"({', '.join(':' + c for c in cols)})"), chunk)
            cols = [c["name"] for c in sa.inspect(conn).get_columns("results") if c["name"] not in ("id", "run_id")]
            n = min(TEMPLATES, len(specs))
            conn.execute(sa.text(
                f"INSERT INTO results (run_id, {', '.join(cols)}) SELECT r.id, {', '.join('t.' + c for c in cols)} "
                f"FROM runs r JOIN results t ON t.run_id = (r.id - 1) % {n} + 1 WHERE r.id > {n} ORDER BY r.id, t.seq"))
        if engine.dialect.name == "postgresql":
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.exec_driver_sql("VACUUM ANALYZE")
    finally:
        engine.dispose()
    return fleets, len(specs)


# --- timing ------------------------------------------------------------------------------------


def osmeter_argv(given: str | None) -> list[str]:
    """--osmeter, else the `osmeter` command next to this Python (a venv's), else `python -m osmeter`."""
    if given:
        return [given]
    exe = Path(sys.executable).parent / "osmeter"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "osmeter"]


def commands(n_runs: int, hosts: int, fleet: str) -> list[tuple[str, list[str]]]:
    mid = max(1, n_runs // 2)
    other = mid + hosts if mid + hosts <= n_runs else max(1, mid - hosts)
    if other == mid:
        other = mid % n_runs + 1
    return [
        ("osmeter runs", ["runs"]),
        ("osmeter runs --all", ["runs", "--all"]),
        ("osmeter show N", ["show", str(mid)]),
        ("osmeter compare A B", ["compare", str(mid), str(other)]),
        ("osmeter compare --by host --fleet F", ["compare", "--by", "host", "--fleet", fleet]),
        ("osmeter report --fleet F", ["report", "--fleet", fleet]),
        ("osmeter report --fleet F --format txt", ["report", "--fleet", fleet, "--format", "txt"]),
        ("osmeter report --fleet F --all-runs --format txt",
         ["report", "--fleet", fleet, "--all-runs", "--format", "txt"]),
    ]


@dataclass
class Target:
    """One command on one backend, and its attempts."""

    backend: str
    name: str
    argv: list[str]
    env: dict[str, str]
    times: list[float] = field(default_factory=list)
    failed: str | None = None  # 'failed (N)' or '>TIMEOUT': not tried again

    @property
    def long(self) -> bool:
        return bool(self.times) and self.times[0] > LONG_S

    def cell(self) -> str:
        """`best / median` of the timed attempts; `T*` for one attempt over LONG_S; why it failed."""
        if self.failed is not None:
            return self.failed
        if self.long:
            return f"{self.times[0]:.2f}*"
        return f"{min(self.times):.2f} / {statistics.median(self.times):.2f}"


def attempt(target: Target, timeout: float) -> float | None:
    """One run of the command, its wall time; None (and target.failed set) when it fails."""
    t = time.perf_counter()
    try:
        r = subprocess.run(target.argv, env=target.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        target.failed = f">{timeout:g}"
        return None
    dt = time.perf_counter() - t
    if r.returncode != 0:
        err = r.stderr.decode(errors="replace").strip().splitlines()
        print(f"  {target.backend}: {target.name}: exit {r.returncode}: {err[-1] if err else ''}", file=sys.stderr)
        target.failed = f"failed ({r.returncode})"
        return None
    return dt


def time_in_rounds(targets: list[Target], repeat: int, timeout: float) -> None:
    """An untimed round, then `repeat` timed rounds, each running every command on every backend once,
    so a slow minute of a shared guest (its speed varies by half from minute to minute) falls on all of
    them alike, not on one command's attempts. The untimed round is a user's first run: Python writes
    the bytecode of osmeter's modules then (the children's environment has no PYTHONDONTWRITEBYTECODE),
    as installing osmeter does; without it, an editable install whose sources are newer than their
    bytecode compiles them again at every start (0.3-0.5 s a command here). An attempt over LONG_S
    counts alone, and is not repeated."""
    for rnd in range(repeat + 1):
        for target in targets:
            if target.failed is not None or target.long:
                continue
            dt = attempt(target, timeout)
            if dt is not None and (rnd > 0 or dt > LONG_S):
                target.times.append(dt)
        print(f"round {rnd} of {repeat} done" + (" (untimed)" if rnd == 0 else ""), file=sys.stderr)


def speed_reference() -> float:
    """Seconds of a fixed piece of Python (3e7 additions), best of 3: this
    machine's speed at the time (a shared guest's varies by half from
    minute to minute), printed before and after the timings."""
    best = math.inf
    for _ in range(3):
        t = time.perf_counter()
        sum(range(30_000_000))
        best = min(best, time.perf_counter() - t)
    return best


def render(rows: list[tuple[str, dict[str, str]]]) -> str:
    head = ["command", *TITLES.values()]
    body = [[name, *(cells.get(b, "-") for b in BACKENDS)] for name, cells in rows]
    width = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    line = lambda r: " | ".join(c.ljust(width[0]) if i == 0 else c.rjust(width[i]) for i, c in enumerate(r))  # noqa: E731
    return "\n".join([line(head), "-|-".join("-" * w for w in width), *(line(r) for r in body)]) + "\n"


def load_pgserver() -> Any:
    spec = importlib.util.spec_from_file_location("osmeter_bench_pgserver", HERE.parent / "tests" / "pgserver.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def prepare(backend: str, tmp: Path, args: argparse.Namespace, cleanup: list[Callable[[], None]]) -> list[Target]:
    """The backend's store built (its server started, stopped by `cleanup`); its commands to time."""
    if backend == "sqlite":
        location = str(tmp / "store.db")
        engine_url = f"sqlite:///{location}"
    else:
        pgserver = load_pgserver()
        bindir = pgserver.binaries()
        if bindir is None:
            print(f"PostgreSQL: skipped ({pgserver.INSTALL_HINT})", file=sys.stderr)
            return []
        server = pgserver.Server(bindir)
        cleanup.append(server.stop)
        server.start()
        location = server.database()
        engine_url = location.replace("postgresql://", "postgresql+psycopg://", 1)
    t = time.perf_counter()
    fleets, n_runs = build(location, engine_url, args.runs, args.results, args.hosts_used)
    print(f"{backend}: {n_runs} runs x {args.results} results stored in {time.perf_counter() - t:.1f} s",
          file=sys.stderr)
    env = dict({k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, OSMETER_STORE=location,
               HOME=str(tmp), XDG_DATA_HOME=str(tmp / "data"), XDG_STATE_HOME=str(tmp / "state"),
               XDG_CACHE_HOME=str(tmp / "cache"), XDG_CONFIG_HOME=str(tmp / "config"), MPLCONFIGDIR=str(tmp / "mpl"))
    return [Target(backend, name, osmeter_argv(args.osmeter) + argv, env)
            for name, argv in commands(n_runs, args.hosts_used, fleets[-1])]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=10000, help="runs in the store (default 10000)")
    p.add_argument("--results", type=int, default=200, help="results per run (default 200)")
    p.add_argument("--hosts", type=int, default=100, help="distinct hosts (default 100; at most runs/2)")
    p.add_argument("--backends", default=",".join(BACKENDS), help="sqlite, postgresql or both (default both)")
    p.add_argument("--repeat", type=int, default=5,
                   help="times each command is timed, after an untimed run; the best counts (default 5)")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds one command may take (default 900)")
    p.add_argument("--osmeter", metavar="CMD", help="the osmeter command to time (default: the one next to this "
                   "Python); another version's, to compare")
    args = p.parse_args(argv)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if not backends or any(b not in BACKENDS for b in backends):
        p.error(f"--backends: one or both of {', '.join(BACKENDS)}")
    if args.runs < 2 or args.results < 1 or args.hosts < 2 or args.repeat < 1:
        p.error("--runs and --hosts take at least 2, --results and --repeat at least 1")
    args.hosts_used = min(args.hosts, args.runs // 2)

    def stop(signum: int, _frame: Any) -> None:
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)
    speed_before = speed_reference()
    tmp = Path(tempfile.mkdtemp(prefix="osmeter-scale."))
    cleanup: list[Callable[[], None]] = []
    timings: dict[str, dict[str, str]] = {}
    try:
        targets = [t for backend in backends for t in prepare(backend, tmp, args, cleanup)]
        time_in_rounds(targets, args.repeat, args.timeout)
        for t in targets:
            timings.setdefault(t.name, {})[t.backend] = t.cell()
            print(f"  {t.backend}: {t.name}: {t.cell()}", file=sys.stderr)
    finally:
        for fn in reversed(cleanup):
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - the temp dir still goes
                print(f"cleanup: {e}", file=sys.stderr)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{args.runs} runs x {args.results} results, {args.hosts_used} hosts; wall time in s, best / median of "
          f"{args.repeat} rounds over every command and backend (* one attempt, over {LONG_S:g} s); "
          f"the speed reference (3e7 additions in Python) took "
          f"{speed_before:.2f} s before and {speed_reference():.2f} s after")
    sys.stdout.write(render([(name, cells) for name, cells in timings.items()]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
