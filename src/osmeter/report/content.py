"""What a report says about one run, gathered once for every format.

`build_run_report` reads the store (results, samples) and draws the figures;
html.py and markdown.py only lay the result out. The machine description
comes with its help text where osmeter knows the key: a run stores the
machine as {key: value}, and the help the probe prints with `sysinfo --json`
is mirrored in MACHINE_HELP for the keys docs/schema.md lists (an unknown key
is shown without help).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from .params import Defaults, ParamsOf, every_param, telling_params
from ..catalog import LebenchRow
from ..fmt import fmt_g
from ..lebench import RowNames
from ..model import BenchResult, RunInfo, StoredProfile
from ..store.base import Store
from ..warnings import CodedWarning, run_warnings
from .expect import Prediction, PredictionRow, match
from .figures import FigureFailure, NamedFigure, RunData, family_figures

MACHINE_HELP: dict[str, str] = {
    "hostname": "Host name (uname nodename)",
    "machine_id": "The machine's identity: osmeter's hash of /etc/machine-id (docs/fleet.md)",
    "os": "Distribution (PRETTY_NAME of /etc/os-release)",
    "kernel_release": "Kernel release (uname -r)",
    "kernel_version": "Kernel build string (uname -v)",
    "arch": "Machine architecture as the kernel reports it (uname -m)",
    "kernel_cmdline": "Kernel command line (/proc/cmdline)",
    "preemption": "Preemption model: none, voluntary, full, lazy, rt or dynamic",
    "preemption_source": "Where the preemption model was read: debugfs, cmdline (preempt=) or uname",
    "realtime": "PREEMPT_RT kernel (/sys/kernel/realtime reads 1; false when it reads 0 or is absent)",
    "kernel_hz": "Scheduler tick rate CONFIG_HZ from /boot/config-$(uname -r); null = unknown",
    "cpu_model": "CPU model (/proc/cpuinfo model name; on ARM the decoded implementer/part)",
    "cpu_vendor": "CPU vendor (/proc/cpuinfo vendor_id, or the ARM implementer)",
    "board": "Board or system model (device tree, or DMI vendor and product)",
    "cpu_flags": "CPU feature flags of the first CPU (/proc/cpuinfo)",
    "cpus_online": "Online logical CPUs",
    "cpus_allowed": "Logical CPUs this process may run on (taskset, cpusets)",
    "sockets": "CPU packages",
    "cores_per_socket": "Physical cores per package",
    "threads_per_core": "Hardware threads per core (1 = no SMT)",
    "smt_control": "SMT state (/sys/devices/system/cpu/smt/control)",
    "isolated_cpus": "CPUs isolated from the scheduler (isolcpus=); empty = none",
    "nohz_full_cpus": "CPUs in adaptive-tick mode (nohz_full=); empty = none",
    "caches": "Caches seen by CPU 0 (sysfs)",
    "numa_nodes": "NUMA nodes",
    "cpufreq_driver": "CPU frequency driver (none in most VMs)",
    "cpufreq_governor": "CPU frequency governor (performance avoids frequency changes)",
    "cpu_max_mhz": "Highest CPU frequency in MHz",
    "cpu_min_mhz": "Lowest CPU frequency in MHz",
    "cpu_boost": "Turbo/boost enabled",
    "cpuidle_driver": "CPU idle driver",
    "memory_bytes": "Physical memory seen by the kernel (MemTotal)",
    "memory_type": "Memory type and speed (SMBIOS; root only)",
    "cgroup_memory_limit_bytes": "Smallest cgroup memory limit over this process's cgroups",
    "cgroup_cpu_limit": "cgroup CPU bandwidth limit in CPUs",
    "hugepage_size_bytes": "Default huge page size",
    "thp_enabled": "Transparent huge pages mode",
    "thp": "Transparent huge pages mode",
    "thp_defrag": "Transparent huge pages defrag mode",
    "fault_around_bytes": "Page fault-around size (debugfs; root only)",
    "disks": "Block devices: size, rotational, model, I/O scheduler",
    "nics": "Network interfaces: state, link speed, MTU, driver",
    "mitigations": "CPU vulnerability status per issue (/sys/devices/system/cpu/vulnerabilities)",
    "clocksource": "Current kernel clocksource",
    "available_clocksources": "Clocksources the kernel could use",
    "virtualization": "Hypervisor (none on bare metal; null if unknowable)",
    "emulation": "qemu-user when the CPU described is another architecture than the probe's",
    "container": "Container runtime (none = no sign found)",
    "perf_event_paranoid": "What unprivileged perf counters may do (/proc/sys/kernel/perf_event_paranoid)",
    "aslr": "Address space randomisation (0 off, 1 partial, 2 full)",
    "libc": "C library the probe runs with",
    "build_compiler": "Compiler that built the probe",
    "build_flags": "C flags the probe was built with",
    "build_type": "CMake build type of the probe",
    "build_static": "Probe statically linked",
    "build_arch": "Architecture the probe was built for",
    "cgroup_pids_limit": (
        "Smallest cgroup task limit over this process's cgroup and its parents (pids.max, v1 or v2); null if "
        "none"
    ),
    "cgroup_cpuset_cpus": (
        "CPUs of this process's cpuset, as a cpu list (cpuset.effective_cpus on cgroup v1, "
        "cpuset.cpus.effective on v2; the nearest cgroup that has it)"
    ),
    "thp_shmem_enabled": (
        "Transparent huge pages for shared memory and tmpfs "
        "(/sys/kernel/mm/transparent_hugepage/shmem_enabled)"
    ),
    "ksm_run": "Kernel samepage merging: 0 stopped, 1 running, 2 unmerging (/sys/kernel/mm/ksm/run)",
    "numa_balancing": (
        "Automatic NUMA balancing: 0 off, 1 on, 2 memory tiering, 3 both (/proc/sys/kernel/numa_balancing)"
    ),
    "zswap_enabled": "Compressed swap cache on (/sys/module/zswap/parameters/enabled)",
    "audit_enabled": (
        "Kernel audit: 0 off, 1 on, 2 on and locked (AUDIT_GET over the audit netlink socket: root, "
        "CAP_AUDIT_CONTROL; 0 when the kernel has no audit socket, CONFIG_AUDIT off or audit=0). Trap: once "
        "audit was on in this boot, every task keeps an audit context and every system call pays for it, even"
        " after auditctl -e 0, until reboot (audit_ever_enabled); the probe never changes audit"
    ),
    "audit_rules": (
        "Audit rules loaded (AUDIT_LIST_RULES over the audit netlink socket, its replies counted: root, "
        "CAP_AUDIT_CONTROL; 0 without an audit socket). Rules slow the system calls they watch; and once "
        "audit was on in this boot, every task keeps an audit context and every system call pays for it even "
        "after auditctl -e 0"
    ),
    "audit_ever_enabled": (
        "Audit was on at some time in this boot: then every task keeps an audit context and every system call"
        " pays for it, even after auditctl -e 0, until reboot. From audit= on the command line "
        "(/proc/cmdline), else AUDIT_GET (on now = true; no audit socket = false), else the kernel log "
        "(/dev/kmsg, root): a record only an enabled audit writes (type=1305, type=1300, audit_enabled=1) = "
        "true; false only when the log still holds audit's start (state=initialized), no audit daemon takes "
        "the records and none was lost; else null (null_reasons says why)"
    ),
    "audit_ever_enabled_source": (
        "Where audit_ever_enabled was learnt: cmdline (audit= in /proc/cmdline), audit_status (AUDIT_GET) or "
        "kmsg (/dev/kmsg)"
    ),
    "seccomp_mode": (
        "The probe's own seccomp mode: 0 none, 1 strict, 2 filter (Seccomp in /proc/self/status); a probe "
        "started under filters runs them on every system call"
    ),
    "seccomp_filters": (
        "seccomp filters on the probe itself (Seccomp_filters in /proc/self/status, 5.9+): each runs on every"
        " system call it makes"
    ),
    "lockdown": (
        "Kernel lockdown: none, integrity or confidentiality (/sys/kernel/security/lockdown, the bracketed "
        "value; none when the lockdown LSM is not active); null when securityfs is not mounted (the probe "
        "does not mount it)"
    ),
    "lsms": (
        "Active Linux security modules, in order (/sys/kernel/security/lsm); null when securityfs is not "
        "mounted"
    ),
    "bpf_programs": (
        "Loaded BPF programs (bpf(BPF_PROG_GET_NEXT_ID) over every id: root, CAP_SYS_ADMIN); seccomp filters "
        "are not among them"
    ),
    "bpf_program_types": (
        "Loaded BPF programs by type (bpf(BPF_PROG_GET_FD_BY_ID), bpf(BPF_OBJ_GET_INFO_BY_FD): root)"
    ),
    "tracing": (
        "Active tracing, from tracefs where /proc/self/mounts lists it (the probe does not mount it): path, "
        "current_tracer, tracing_on, kprobe_events and uprobe_events (lines of those files), enabled_events "
        "(lines of set_event), ftrace_functions (functions with an ftrace hook: lines of enabled_functions), "
        "instances; a member is null where its file is absent or unreadable"
    ),
    "null_reasons": (
        "Why a field above is null, where the probe knows (field: reason): not mounted, not permitted, absent"
        " from this kernel, no limit set; must stay the last field"
    ),
}


def fmt_bytes(n: float) -> str:
    """1536 -> '1.5 KiB' (binary units, as caches and memory are sized)."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.4g} {unit}"  # under 1024: never an exponent
        value /= 1024
    raise AssertionError("unreachable")


def _scalar(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _describe_cache(c: dict[str, Any]) -> str:
    """`L1 Data 48 KiB, 12-way, 64 B lines, CPUs 0`."""
    text = f"L{c.get('level', '?')} {c.get('type') or ''}".strip()
    if isinstance(c.get("size_bytes"), (int, float)):
        text += f" {fmt_bytes(c['size_bytes'])}"
    if c.get("ways"):
        text += f", {c['ways']}-way"
    if c.get("line_bytes"):
        text += f", {c['line_bytes']} B lines"
    if c.get("shared_cpu_list") not in (None, ""):
        text += f", CPUs {c['shared_cpu_list']}"
    return text


def _describe_item(item: Any) -> str:
    """One element of a list of objects (a cache, a disk, a NIC) on one line."""
    if not isinstance(item, dict):
        return _scalar(item)
    if "level" in item and "size_bytes" in item:
        return _describe_cache(item)
    parts = []
    for k, v in item.items():
        if v is None:
            continue
        if isinstance(v, (int, float)) and not isinstance(v, bool) and k.endswith("bytes"):
            parts.append(f"{k.removesuffix('_bytes').removesuffix('bytes') or 'size'} {fmt_bytes(v)}")
        else:
            parts.append(f"{k} {_scalar(v) if not isinstance(v, (dict, list)) else json.dumps(v)}")
    return ", ".join(parts)


def machine_value(key: str, value: Any) -> str:
    """A machine value for people: sizes in KiB/MiB/GiB, one line per list item."""
    if value is None:
        return "- (not exposed)"
    if isinstance(value, list):
        if all(not isinstance(v, (dict, list)) for v in value):
            return " ".join(_scalar(v) for v in value) if value else "(none)"
        return "\n".join(_describe_item(v) for v in value)
    if isinstance(value, dict):
        lines = []
        for k in value:
            v = value[k]
            text = fmt_bytes(v) if key == "caches" and isinstance(v, (int, float)) else _describe_item(v)
            lines.append(f"{k}: {text}")
        return "\n".join(lines) if lines else "(none)"
    if isinstance(value, (int, float)) and not isinstance(value, bool) and key.endswith("_bytes"):
        return f"{fmt_bytes(value)} ({value} bytes)"
    return _scalar(value)


@dataclass(frozen=True)
class Row:
    key: str
    value: str
    help: str


def machine_rows(run: RunInfo) -> list[Row]:
    """The machine description in the probe's order (MACHINE_HELP), unknown keys last."""
    order = {k: i for i, k in enumerate(MACHINE_HELP)}
    keys = sorted(run.machine, key=lambda k: (order.get(k, len(order)), k))
    return [Row(k, machine_value(k, run.machine[k]), MACHINE_HELP.get(k, "")) for k in keys]


def _get(d: Any, *path: str) -> Any:
    for p in path:
        if not isinstance(d, dict):
            return None
        d = d.get(p)
    return d


def setup_rows(run: RunInfo) -> list[Row]:
    """How the probe measured: clock, pinning, scheduling, budget, build."""
    m = run.meta
    rows: list[Row] = []

    def add(key: str, value: Any, help_text: str) -> None:
        if value is not None:
            rows.append(Row(key, value if isinstance(value, str) else _scalar(value), help_text))

    clock = _get(m, "clock")
    if isinstance(clock, dict):
        parts = [str(clock.get("source"))]
        if isinstance(clock.get("hz"), (int, float)):
            parts.append(f"{clock['hz'] / 1e6:.1f} MHz")
        if isinstance(clock.get("resolution_ns"), (int, float)):
            parts.append(f"resolution {fmt_g(clock['resolution_ns'])} ns")
        if isinstance(clock.get("overhead_ns"), (int, float)):
            parts.append(f"read overhead {fmt_g(clock['overhead_ns'])} ns")
        if clock.get("forced"):
            parts.append("chosen with --clock")
        add("clock", ", ".join(parts), "the probe's timer, its resolution and the cost of one timed region")
    if "cpu" in m:
        add("cpu", f"{m.get('cpu')} ({m.get('cpu_choice', '?')})", "CPU the probe pinned itself to, and how it was chosen")
    for key, what in (("fifo", "SCHED_FIFO"), ("mlock", "mlockall")):
        d = _get(m, key)
        if isinstance(d, dict) and (d.get("requested") not in (None, False) or d.get("applied")):
            state = "applied" if d.get("applied") else f"not applied ({d.get('reason') or 'no reason given'})"
            add(key, f"requested {_scalar(d.get('requested'))}, {state}", what)
    budget = _get(m, "budget")
    if isinstance(budget, dict):
        add("budget", ", ".join(f"{k} {_scalar(v)}" for k, v in budget.items()), "sampling budget per benchmark")
    build = _get(m, "build")
    if isinstance(build, dict):
        add("build", ", ".join(f"{k} {_scalar(v)}" for k, v in build.items()), "how the probe was built")
    add("probe", run.probe_version, "osmeter-probe version")
    add("osmeter", run.osmeter_version, "front-end version that stored the run")
    add("source", run.source, "run: measured by osmeter run; import: from a probe file")
    add("command", " ".join(run.argv), "the probe command line (or the imported file)")
    add("time", f"{run.start_time} .. {run.end_time or '?'}", "start and end, UTC")
    return rows


@dataclass
class RunReport:
    """Everything a report shows for one run."""

    data: RunData
    warnings: list[CodedWarning]
    predictions: list[PredictionRow] = field(default_factory=list)
    figures: list[NamedFigure] = field(default_factory=list)  # family figures first, then distributions
    failures: list[FigureFailure] = field(default_factory=list)
    names: RowNames | None = None  # --names lebench: rows labelled and ordered as LEBench's table
    lebench_rows: tuple[LebenchRow, ...] = ()  # LEBench's table, for a run of the lebench suite
    profiles: tuple[StoredProfile, ...] = ()  # osmeter hotspots: the run's stored profiles
    params_of: ParamsOf = every_param  # the parameters the tables name an instance by (report.params)

    @property
    def run(self) -> RunInfo:
        return self.data.run

    @property
    def results(self) -> Sequence[BenchResult]:
        return self.data.results


def run_data(store: Store, run: RunInfo, results: Sequence[BenchResult] | None = None) -> RunData:
    """The run's results (`results` when already read) and its samples, read when asked for."""
    results = tuple(store.results(run.id) if results is None else results)
    cache: dict[int, Any] = {}

    def samples(r: BenchResult) -> Any:
        if r.seq not in cache:
            cache[r.seq] = store.samples(run.id, r.seq)
        return cache[r.seq]

    return RunData(run, results, samples)


def build_run_report(
    store: Store,
    run: RunInfo,
    predictions: Sequence[Prediction] = (),
    expect_path: str = "",
    with_figures: bool = True,
    names: RowNames | None = None,
    lebench_rows: Sequence[LebenchRow] = (),
    results: Sequence[BenchResult] | None = None,
    defaults: Defaults | None = None,
) -> RunReport:
    """Gather one run's report (`results`: the run's, when already read; `defaults`: the catalogue's
    parameter defaults, so the tables show only the parameters that vary or differ from them; None:
    every parameter); raises UsageError for a prediction whose unit does not fit."""
    data = run_data(store, run, results)
    params_of = telling_params(data.results, defaults)
    report = RunReport(data, run_warnings(run, data.results, params_of), names=names,
                       lebench_rows=tuple(lebench_rows), params_of=params_of)
    report.predictions = match(predictions, data.results, expect_path) if predictions else []
    report.profiles = tuple(store.profiles(run.id))
    if with_figures:
        from .figures.distribution import distribution_figures

        report.figures, report.failures = family_figures(data)
        report.figures += distribution_figures(data)
    return report


def ratio_text(ratio: float | None) -> str:
    if ratio is None or not math.isfinite(ratio):
        return "-"
    return f"{ratio:.2f}×"
