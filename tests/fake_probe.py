#!/usr/bin/env python3
"""A deterministic stand-in for osmeter-probe (hyperfine's mock-executor idea).

Commands, as the real probe (docs/schema.md):
  list --json        prints tests/data/list.json
  sysinfo --json     prints tests/data/sysinfo.json
  run [--die-with-parent] [--suite S | NAME...] [--param K=V]... [options]
                     replays a scripted run from a JSON Lines file, keeping
                     only the named benchmarks when names are given and
                     renumbering progress and the end counts to match.
                     The net family's benchmarks (NET below) are not
                     replayed but made from a model of a known machine
                     (net_record), one instance per combination of the
                     --param values, as the real probe expands them.

Bad input behaves like the real probe: a message on stderr, exit 2, nothing
on stdout (unknown benchmark, unknown parameter key, KEY=VALUE malformed).
SIGINT/SIGTERM: finish the current line, write `end` with status
interrupted, exit 128 + signal.

Knobs (environment):
  FAKE_PROBE_SCRIPT=FILE      the run to replay (default tests/data/run_x86_64.jsonl)
  FAKE_PROBE_USAGE_ERROR=MSG  `run` prints MSG on stderr and exits 2 at once
  FAKE_PROBE_DELAY=S          sleep S seconds after meta and after each benchmark
  FAKE_PROBE_DIE_AFTER=N      after N benchmarks, SIGKILL itself (no `end`)
  FAKE_PROBE_HOLD_AFTER=N     after N benchmarks, wait (up to 60 s) for a signal: a test
                              acts on a run with exactly N finished, however slow it is
  FAKE_PROBE_PARTIAL=1        with DIE_AFTER: write half a line first
  FAKE_PROBE_BAD_LINE_AFTER=N after N benchmarks, write a line that is not JSON
  FAKE_PROBE_BAD_LINE=TEXT    with BAD_LINE_AFTER: write TEXT (and a newline) instead
  FAKE_PROBE_START_DELAY=S    sleep S seconds before writing meta
  FAKE_PROBE_TMPFILE=1        make $TMPDIR/osmeter-probe.XXXXXX holding a 1 MiB file,
                              as the real probe does, and write its path to stderr
  FAKE_PROBE_SPAWN_CHILD=1    start a sleeping child process that inherits stdout
  FAKE_PROBE_ARGV_FILE=FILE   write the argv received, as JSON, to FILE
  FAKE_PROBE_STDERR=MSG       write MSG to stderr after meta
  FAKE_PROBE_RUNS_FILE=FILE   count `run` invocations in FILE (one line each): the
                              repetitions of `osmeter run --repeat`
  FAKE_PROBE_DIE_RUN=K        DIE_AFTER applies only to the K-th invocation (from 1)
  FAKE_PROBE_HOLD_RUN=K       HOLD_AFTER applies only to the K-th invocation (from 1)
  FAKE_PROBE_SCALE=F1,F2,...  multiply the samples (and result figures) of the
                              K-th invocation by FK
  FAKE_PROBE_NET_ERROR=NAME   net benchmark NAME ends in `error` (its peer vanished mid-run)
  FAKE_PROBE_NET_SKIP=NAME    net benchmark NAME is skipped (net.icmp_rtt without a ping socket)
  FAKE_PROBE_MARKER=...       not read: tests find this process and its children by it
  FAKE_PROBE_CPUS=N           the CPUs the rt model's machine gives (default 2): stress=K
                              beyond N - 1 is skipped, as the real probe does
  FAKE_PROBE_NO_FIFO=1        the rt model runs SCHED_OTHER, SCHED_FIFO refused (info.policy)
  FAKE_PROBE_LIST_RT=1        `list --json` adds the rt family (from RT below) when
                              tests/data/list.json has none

The net model (a loopback with a peer on another CPU, and a remote peer
behind a 100 Mbit/s link with 80 us more of round trip): round trip
T0 + size x per-byte cost (loopback 20 us TCP, 18 us UDP, 8 us ICMP, 0.25
ns/byte; remote + 80 us and 160 ns/byte, the 100 Mbit/s both ways); connect
30 us (remote + 80 us); close 8 us active, 12 us passive (remote x 2);
bandwidth 2.5 GB/s x min(1, write/64K) on loopback, 11.955 MB/s remote
(100 Mbit/s less the headers, docs/methods/net.md), recv 10 % under send.

The rt family (RT below, the interface of the lead's rt-spec) is made from
a model too, one instance per combination of the --param values:
rt.workload's kernel K (index i in RT_KERNELS) has an unstressed median
of 10 us x 1.24^i with 2 % of spread; under stress=k stressors the
memory-bound kernels (RT_MEMORY_BOUND) move their median by 3 % per
stressor (write 1.5 x read) but slow 3 % of the jobs per stressor (5 %
for write) by 1.3-2 x and more: the study's finding, larger variance and
maximum with a median that moves far less; the others barely move. The
period is twice the unstressed median; a job whose response (execution +
5 us) exceeds it is a deadline miss. rt.cyclic: wake-up latencies of
4 us + Exp(1.5 us) idle, plus Exp(4 us x k) and rare 200-1500 us spikes
under k stressors; `loops` samples (else 1000). Every rt instance's
samples: exactly --max-samples when given (else 200 jobs, 20 windows).
A stress=k beyond the model machine's other CPUs (FAKE_PROBE_CPUS - 1) is
skipped with the real probe's reason.
"""

import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
PR_SET_PDEATHSIG = 1
stop_signal = None


def on_signal(signum, frame):
    global stop_signal
    if stop_signal is None:
        stop_signal = signum


def usage(message):
    sys.stderr.write(f"osmeter-probe: error: {message}\n")
    sys.exit(2)


def emit(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def knob_of_run(name, run_name, invocation):
    """FAKE_PROBE_<name> as an integer (-1 unset), or -1 when FAKE_PROBE_<run_name> names another invocation."""
    only = os.environ.get(f"FAKE_PROBE_{run_name}")
    return -1 if only and int(only) != invocation else int(os.environ.get(f"FAKE_PROBE_{name}", "-1"))


def pause(seconds):
    """Sleep in small steps so a signal is acted on quickly."""
    deadline = time.monotonic() + seconds
    while stop_signal is None and time.monotonic() < deadline:
        time.sleep(0.01)


# The net family as the fake knows it: each benchmark's own parameters with
# their defaults, and those every net benchmark has. A unit test checks them
# against the real catalogue (tests/data/list.json) once it has the family.
NET = {
    "net.tcp_rtt": {"size": "1"},
    "net.udp_rtt": {"size": "16"},
    "net.icmp_rtt": {"size": "56", "method": "auto"},
    "net.tcp_bw": {"direction": "send", "write_size": "128K", "duration": "100"},
    "net.tcp_connect": {},
    "net.tcp_close": {"side": "active"},
}
NET_RANGES = {("net.tcp_rtt", "size"): (1, 1 << 20), ("net.udp_rtt", "size"): (8, 65507),
              ("net.icmp_rtt", "size"): (0, 65507), ("net.tcp_bw", "write_size"): (1 << 10, 16 << 20),
              ("net.tcp_bw", "duration"): (10, 60000)}
NET_COMMON = {"peer": "", "token_file": "", "family": "ipv4", "placement": "cross_cpu"}
NET_CHOICES = {"direction": ("send", "recv"), "side": ("active", "passive"), "family": ("ipv4", "ipv6"),
               "placement": ("same_cpu", "cross_cpu"), "method": ("auto", "ping", "raw")}
NET_STRINGS = ("peer", "token_file")  # taken whole, commas included
NET_BYTES = ("size", "write_size")
UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def net_value(name, key, text):
    """A net parameter's value as the probe records it (sizes in bytes), or a usage error."""
    if key in NET_CHOICES:
        if text not in NET_CHOICES[key]:
            usage(f"--param {key}={text}: allowed values: {', '.join(NET_CHOICES[key])}")
        return text
    if key in NET_STRINGS:
        return text
    try:
        sized = key in NET_BYTES and name != "net.icmp_rtt"  # icmp_rtt's size is a plain integer
        n = int(text[:-1]) * UNITS[text[-1]] if sized and text[-1:] in UNITS else int(text)
    except (ValueError, IndexError):
        usage(f"--param {key}={text}: not an integer")
    lo, hi = NET_RANGES[(name, key)]
    if not lo <= n <= hi:
        usage(f"--param {key}={text}: out of range for {name}, allowed {lo}..{hi}")
    return n


def cross_instances(names, assignments, strings, keys_of, value):
    """(name, params) per instance: names outermost, then keys in order of first
    appearance, each --param's values crossed with the others (as the probe's
    own lists); keys_of(name) gives a benchmark's keys and defaults,
    value(name, key, text) parses and checks one value."""
    given = {}
    for a in assignments:
        key, _, text = a.partition("=")
        values = [text] if key in strings else text.split(",")
        given.setdefault(key, [])
        given[key] += [v for v in values if v not in given[key]]
    out = []
    for name in names:
        keys = keys_of(name)
        insts = [{k: value(name, k, v) for k, v in keys.items()}]
        for key, values in given.items():
            if key in keys:
                insts = [dict(i, **{key: value(name, key, v)}) for i in insts for v in values]
        out += [(name, i) for i in insts]
    return out


def net_instances(names, assignments):
    return cross_instances(names, assignments, NET_STRINGS, lambda n: {**NET[n], **NET_COMMON}, net_value)


def net_record(name, params):
    """(unit, samples, extra, info) of one instance on the model machine."""
    remote = params["peer"] != ""
    size = params.get("size", 0)
    base = {"net.tcp_rtt": 20e3, "net.udp_rtt": 18e3, "net.icmp_rtt": 8e3}
    info = {"peer": params["peer"] or "127.0.0.1:40000 (own peer on CPU 1)", "peer_version": "0.3.0",
            "placement": "remote" if remote else params["placement"]}
    link = {"path_mtu": 1500 if remote else 65536}
    spread = [1 + 0.01 * (k - 10) for k in range(21)]  # +-10 %, the median the model's value
    if name == "net.tcp_bw":
        rate = 11.955e6 if remote else 2.5e9 * min(1.0, params["write_size"] / 65536)
        rate *= 0.9 if params["direction"] == "recv" else 1.0
        values = [rate * f for f in spread]
        return "bytes_per_s", values, {"bits_per_s": 8 * rate, "mss": 1448 if remote else 65483, **link}, info
    if name in base:
        ns = base[name] + size * 0.25 + ((80e3 + size * 160) if remote else 0)
    elif name == "net.tcp_connect":
        ns = 30e3 + (80e3 if remote else 0)
    else:
        ns = (8e3 if params["side"] == "active" else 12e3) * (2 if remote else 1)
    return "ns", [ns * f for f in spread], link, info


def net_records(name, params):
    """The records of one net instance after its progress line."""
    head = {"bench": name, "params": params}
    if os.environ.get("FAKE_PROBE_NET_SKIP") == name:
        return [{"type": "skip", **head, "reason": "no ICMP socket: needs root, or the group in "
                 "net.ipv4.ping_group_range"}]
    if os.environ.get("FAKE_PROBE_NET_ERROR") == name:
        return [{"type": "error", **head, "message": "the peer closed the connection mid-run (Connection reset by "
                 "peer)"}]
    unit, values, extra, info = net_record(name, params)
    values.sort()
    return [{"type": "samples", **head, "unit": unit, "batch": 1, "values": values},
            {"type": "result", **head, "unit": unit, "n": len(values), "min": values[0],
             "median": values[len(values) // 2], "mean": sum(values) / len(values), "batch": 1, "cpu": 0,
             "placement": info["placement"], "elapsed_s": 0.1,
             "stop_reason": "rse", "ref_cycles": None, "extra": extra, "info": info}]


# The rt family as the fake knows it (the lead's rt-spec): own parameters with
# their defaults, and the stressor parameters every rt benchmark has.
RT_KERNELS = ("bsort", "binarysearch", "bitonic", "complex_updates", "countnegative", "crc", "factorial",
              "filterbank", "fir2dim", "iir", "insertsort", "jfdctint", "lms", "ludcmp", "matrix1", "minver",
              "prime", "recursion", "st")
RT_MEMORY_BOUND = ("filterbank", "fir2dim", "ludcmp", "matrix1", "minver", "st")
RT = {
    "rt.cyclic": {"interval_us": "1000", "priority": "80", "loops": "0", "cpus": "", "breaktrace_us": "0",
                  "pm_qos_us": "0", "hist_us": "1000"},
    "rt.osnoise": {"window_ms": "10", "threshold_ns": "5000", "priority": "0"},
    "rt.workload": {"kernel": "bsort", "period_us": "0", "deadline_us": "0", "priority": "80"},
}
RT_COMMON = {"stress": "0", "stress_op": "read", "stress_size": "0"}
RT_CHOICES = {"kernel": RT_KERNELS, "stress_op": ("read", "write", "cpu", "syscall")}
RT_STRINGS = ("cpus",)
RT_RANGES = {"interval_us": (50, 1000000), "priority": (0, 99), "loops": (0, 1000000000),
             "breaktrace_us": (0, 10000000), "pm_qos_us": (-1, 100000000), "hist_us": (1, 1000000), "window_ms": (1, 10000),
             "threshold_ns": (100, 1000000000), "period_us": (0, 10000000), "deadline_us": (0, 10000000),
             "stress": (0, 256), "stress_size": (0, 16 << 30)}
RT_DESCRIPTION = {"rt.cyclic": "wake-up latency of a periodic thread (cyclictest)",
                  "rt.osnoise": "OS noise (oslat): the largest gap of a busy loop per window",
                  "rt.workload": "execution time of one job of a periodic real-time workload kernel"}


def rt_value(key, text):
    if key in RT_CHOICES:
        if text not in RT_CHOICES[key]:
            usage(f"--param {key}={text}: allowed values: {', '.join(RT_CHOICES[key])}")
        return text
    if key in RT_STRINGS:
        return text
    try:
        n = int(text[:-1]) * UNITS[text[-1]] if key == "stress_size" and text[-1:] in UNITS else int(text)
    except (ValueError, IndexError):
        usage(f"--param {key}={text}: not an integer")
    lo, hi = RT_RANGES[key]
    if not lo <= n <= hi:
        usage(f"--param {key}={text}: out of range, allowed {lo}..{hi}")
    return n


def rt_instances(names, assignments):
    return cross_instances(names, assignments, RT_STRINGS, lambda n: {**RT[n], **RT_COMMON},
                           lambda _name, key, text: rt_value(key, text))


def rt_catalog_entries():
    """The rt family as `list --json` describes it (FAKE_PROBE_LIST_RT)."""
    out = []
    for name, own in RT.items():
        params = []
        for key, default in {**own, **RT_COMMON}.items():
            if key in RT_CHOICES:
                params.append({"name": key, "type": "enum", "default": default, "choices": list(RT_CHOICES[key]),
                               "help": key})
            elif key in RT_STRINGS:
                params.append({"name": key, "type": "string", "default": default, "help": key, "max_len": 256})
            else:
                lo, hi = RT_RANGES[key]
                params.append({"name": key, "type": "size" if key == "stress_size" else "int",
                               "default": int(default), "min": lo, "max": hi, "help": key})
        out.append({"name": name, "family": "rt", "description": RT_DESCRIPTION[name], "unit": "ns",
                    "requires": [], "suites": ["standard", "full"], "sweep": [], "params": params})
    return out


def rt_records(name, params, samples_wanted):
    """The records of one rt instance after its progress line (a skip when the model
    machine has too few CPUs for the stressors)."""
    import random  # noqa: PLC0415

    head = {"bench": name, "params": params}
    cpus = int(os.environ.get("FAKE_PROBE_CPUS", "2"))
    k, op = params["stress"], params["stress_op"]
    if k > cpus - 1:
        return [{"type": "skip", **head, "reason": f"stress={k} needs {k} other CPUs; this machine gives "
                 f"{cpus - 1}"}]
    rng = random.Random(json.dumps([name, params], sort_keys=True))
    prio = params["priority"]
    if prio == 0:
        policy = "SCHED_OTHER (priority=0)"
    elif os.environ.get("FAKE_PROBE_NO_FIFO"):
        policy = f"SCHED_OTHER: SCHED_FIFO {prio} refused: needs root or CAP_SYS_NICE (or RLIMIT_RTPRIO >= {prio})"
    else:
        policy = f"SCHED_FIFO {prio}"
    stress = "none" if k == 0 else f"{k} x {op} over 64 MiB (2 x LLC of 32 MiB) on CPUs " + \
        ",".join(str(c) for c in range(1, k + 1))
    info = {"policy": policy, "mlock": "locked", "stress": stress}
    extra = {}
    stop = "max_samples"
    if name == "rt.workload":
        i = RT_KERNELS.index(params["kernel"])
        median = 10e3 * 1.24 ** i
        memory = params["kernel"] in RT_MEMORY_BOUND and op in ("read", "write")
        weight = 1.5 if op == "write" else 1.0
        shift = 1 + (0.03 * weight * k if memory else 0.002 * k)
        tail = (0.03 if op == "read" else 0.05) * k if memory else 0.002 * k
        n = samples_wanted or 200
        values = []
        for _ in range(n):
            v = median * shift * rng.lognormvariate(0, 0.02)
            if rng.random() < tail:
                v *= rng.uniform(1.3, 2.0 + 0.5 * k) if memory else rng.uniform(1.05, 1.2)
            values.append(v)
        period = params["period_us"] * 1000 or round(2 * median)
        deadline = params["deadline_us"] * 1000 or period
        resp = [v + 5e3 for v in values]
        extra = {"period_ns": period, "deadline_ns": deadline, "misses": sum(r > deadline for r in resp),
                 "jobs": n, "resp_mean_ns": sum(resp) / n, "resp_median_ns": sorted(resp)[n // 2],
                 "resp_max_ns": max(resp), "unstressed_median_ns": median}
        info["checksum"] = "0x%08x" % (0x1234567 + i)
    elif name == "rt.cyclic":
        n = params["loops"] or samples_wanted or 1000
        values = []
        for _ in range(n):
            v = 4e3 + rng.expovariate(1 / 1.5e3)
            if k:
                v += rng.expovariate(1 / (4e3 * k))
                if rng.random() < 0.0005 * k:
                    v += rng.uniform(200e3, 1500e3)
            values.append(round(v))
        hist = params["hist_us"] * 1000
        extra = {"avg_ns": sum(values) / n, "max_ns": max(values), "overflows": sum(v > hist for v in values),
                 "cycles": n, "skipped": 0, "interval_ns": params["interval_us"] * 1000}
        qos = params["pm_qos_us"]
        info["pm_qos"] = "not set (pm_qos_us=-1)" if qos < 0 else f"/dev/cpu_dma_latency held at {qos} us"
        stop = "loops" if params["loops"] else stop
    else:
        n = samples_wanted or 20
        values = [8e3 + rng.expovariate(1 / (2e3 + 3e3 * k)) for _ in range(n)]
        extra = {"noise_ns_per_s": 100.0 * (1 + k), "gaps_per_s": 2.0, "gaps": 2 * n, "max_gap_ns": max(values),
                 "gap_median_ns": 7e3, "duration_s": n * 0.1, "loop_ns": 20.0}
    ordered = sorted(values)
    return [{"type": "samples", **head, "unit": "ns", "batch": 1, "values": values},
            {"type": "result", **head, "unit": "ns", "n": n, "min": ordered[0], "median": ordered[n // 2],
             "mean": sum(values) / n, "batch": 1, "cpu": 0, "placement": None, "elapsed_s": 0.1, "stop_reason": stop,
             "ref_cycles": None, "extra": extra, "info": info}]


def parse_run_args(args):
    opts = {"suite": None, "names": [], "params": [], "max_samples": None}
    valued = {"--suite", "--param", "--cpu", "--min-time", "--max-time", "--min-samples", "--max-samples",
              "--target-rse", "--fifo", "--clock", "--counters", "--budget-fraction", "--inject-ns", "-o"}
    i = 0
    while i < len(args):
        a = args[i]
        if a in valued:
            if i + 1 >= len(args):
                usage(f"{a} needs a value")
            value = args[i + 1]
            if a == "--suite":
                opts["suite"] = value
            elif a == "--param":
                opts["params"].append(value)
            elif a == "--max-samples":
                opts["max_samples"] = int(value)
            i += 2
        elif a in ("--die-with-parent", "--mlock", "--sweep", "--lebench-exact", "--quiet"):
            if a == "--die-with-parent":
                ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            i += 1
        elif a.startswith("-"):
            usage(f"unknown option {a}")
        else:
            opts["names"].append(a)
            i += 1
    return opts


def check_input(opts):
    catalog = json.loads((DATA / "list.json").read_text())
    known = {b["name"]: b for b in catalog["benchmarks"]}
    known.update({n: {"params": [{"name": k} for k in {**p, **NET_COMMON}]} for n, p in NET.items()
                  if n not in known})
    known.update({n: {"params": [{"name": k} for k in {**p, **RT_COMMON}]} for n, p in RT.items()
                  if n not in known})
    for name in opts["names"]:
        if name not in known:
            usage(f"unknown benchmark '{name}'; `osmeter-probe list` shows the {len(known)} benchmarks")
    keys = {p["name"] for b in known.values() for p in b["params"]}
    for assignment in opts["params"]:
        key, sep, _ = assignment.partition("=")
        if not sep:
            usage(f"--param {assignment}: expected KEY=VALUE")
        if key not in keys:
            usage(f"unknown parameter '{key}'; known: {', '.join(sorted(keys))}")
    if opts["suite"] not in (None, "quick", "standard", "full", "lebench"):
        usage(f"unknown suite '{opts['suite']}'; known: quick, standard, full, lebench")


def load_script(path):
    """meta, [instance records...] per benchmark, end."""
    records = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    meta, end = records[0], records[-1]
    instances = []
    for rec in records[1:-1]:
        if rec["type"] == "progress":
            instances.append([])
        instances[-1].append(rec)
    return meta, instances, end


def spawn_child():
    # Inherits stdout: the worst case for a reader waiting for EOF.
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", "fake-probe-child"])


def run(args):
    argv_file = os.environ.get("FAKE_PROBE_ARGV_FILE")
    if argv_file:
        Path(argv_file).write_text(json.dumps(["run", *args]))
    if os.environ.get("FAKE_PROBE_USAGE_ERROR"):
        usage(os.environ["FAKE_PROBE_USAGE_ERROR"])
    opts = parse_run_args(args)
    check_input(opts)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if os.environ.get("FAKE_PROBE_SPAWN_CHILD"):
        spawn_child()

    invocation = 1
    runs_file = os.environ.get("FAKE_PROBE_RUNS_FILE")
    if runs_file:
        with open(runs_file, "a+") as f:
            f.seek(0)
            invocation = len(f.read().splitlines()) + 1
            f.write("run\n")
    meta, instances, end = load_script(os.environ.get("FAKE_PROBE_SCRIPT") or DATA / "run_x86_64.jsonl")
    scales = [float(x) for x in os.environ.get("FAKE_PROBE_SCALE", "").split(",") if x]
    if scales:
        factor = scales[(invocation - 1) % len(scales)]
        for records in instances:
            for rec in records:
                if rec["type"] == "samples":
                    rec["values"] = [None if v is None else v * factor for v in rec["values"]]
                elif rec["type"] == "result":
                    for key in ("min", "median", "mean"):
                        if isinstance(rec.get(key), (int, float)):
                            rec[key] *= factor
    if opts["names"]:
        instances = [i for i in instances if i[0]["bench"] in opts["names"]]
        meta["suite"] = None
        net = [n for n in opts["names"] if n in NET]
        instances += [[{"type": "progress", "index": 0, "total": 0, "bench": n, "params": p}, *net_records(n, p)]
                      for n, p in net_instances(net, [a for a in opts["params"] if a.partition("=")[0] in
                                                      {k for n in net for k in {**NET[n], **NET_COMMON}}])]
        rt = [n for n in opts["names"] if n in RT]
        rt_keys = {k for n in rt for k in {**RT[n], **RT_COMMON}}
        instances += [[{"type": "progress", "index": 0, "total": 0, "bench": n, "params": p},
                       *rt_records(n, p, opts["max_samples"])]
                      for n, p in rt_instances(rt, [a for a in opts["params"] if a.partition("=")[0] in rt_keys])]
    delay = float(os.environ.get("FAKE_PROBE_DELAY", "0"))
    die_after = knob_of_run("DIE_AFTER", "DIE_RUN", invocation)
    bad_after = int(os.environ.get("FAKE_PROBE_BAD_LINE_AFTER", "-1"))
    hold_after = knob_of_run("HOLD_AFTER", "HOLD_RUN", invocation)
    counts = {"ok": 0, "skip": 0, "error": 0}

    if os.environ.get("FAKE_PROBE_TMPFILE"):
        workdir = tempfile.mkdtemp(prefix="osmeter-probe.")
        Path(workdir, "buffer").write_bytes(b"\0" * (1 << 20))
        sys.stderr.write(f"workdir {workdir}\n")
        sys.stderr.flush()
    pause(float(os.environ.get("FAKE_PROBE_START_DELAY", "0")))
    if stop_signal is not None:
        sys.exit(128 + stop_signal)  # the real probe writes nothing before meta
    emit(meta)
    if os.environ.get("FAKE_PROBE_STDERR"):
        sys.stderr.write(os.environ["FAKE_PROBE_STDERR"] + "\n")
        sys.stderr.flush()
    pause(delay)
    for done, records in enumerate(instances):
        if stop_signal is not None:
            break
        if done == die_after:
            if os.environ.get("FAKE_PROBE_PARTIAL"):
                sys.stdout.write('{"type":"progress","index":')
                sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        if done == bad_after:
            sys.stdout.write(os.environ.get("FAKE_PROBE_BAD_LINE", "this is not JSON") + "\n")
            sys.stdout.flush()
        for rec in records:
            if rec["type"] == "progress":
                rec = dict(rec, index=done, total=len(instances))
            emit(rec)
        last = records[-1]["type"]
        counts["ok" if last in ("result", "counters") else last] += 1
        pause(60 if done + 1 == hold_after else delay)

    if stop_signal is not None:
        name = signal.Signals(stop_signal).name
        emit({"type": "end", "status": "interrupted", "signal": name, "end_time": end["end_time"], "counts": counts})
        sys.exit(128 + stop_signal)
    emit(dict(end, counts=counts))
    return 0


def main(argv):
    if argv[:2] == ["list", "--json"]:
        text = (DATA / "list.json").read_text()
        if os.environ.get("FAKE_PROBE_LIST_RT"):
            doc = json.loads(text)
            if not any(b["family"] == "rt" for b in doc["benchmarks"]):
                doc["benchmarks"] += rt_catalog_entries()
            text = json.dumps(doc)
        sys.stdout.write(text)
        return 0
    if argv[:2] == ["sysinfo", "--json"]:
        sys.stdout.write((DATA / "sysinfo.json").read_text())
        return 0
    if argv[:1] == ["run"]:
        return run(argv[1:])
    usage(f"unknown command {' '.join(argv) or '(none)'}; commands: list, run, sysinfo, serve")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
