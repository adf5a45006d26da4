"""Which differences between two machines' states plausibly change which
benchmarks: the rule table of `osmeter compare --explain`, and the order in
which `compare` lists what differs (docs/compare.md, "Explained
comparisons").

A rule names facts of the machine description (`osmeter sysinfo`, flat as
osmeter.differences has them: `mitigations.spectre_v2`, `tracing.kprobes`)
by their key or key prefix, the benchmark families or names it touches, and
why, in words a reader can check. Rules are ordered by how often they
explain a change on one kernel: a kernel change first, then the states that
change kernel costs without one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

ALL = "*"
# Families whose timed region enters the kernel (every benchmark but the pure-CPU and memory-hierarchy ones).
SYSCALL_FAMILIES = ("syscall", "file", "ipc", "net", "poll", "task", "ctxsw", "mem.mmap", "mem.munmap",
                    "mem.page_fault", "mem.fault_anon", "mem.fault_file_minor", "mem.fault_file_major", "rt")


@dataclass(frozen=True)
class Rule:
    name: str  # what a reader calls it: "audit", "seccomp", "THP"
    keys: tuple[str, ...]  # machine facts: a key, or a prefix ending in '.' or '_'
    touches: tuple[str, ...]  # families ("syscall"), benchmark names ("mem.fault_anon") or ALL
    why: str

    def matches_key(self, key: str) -> bool:
        return any(key == k or (k.endswith((".", "_")) and key.startswith(k)) for k in self.keys)

    def touches_bench(self, bench: str) -> bool:
        family = bench.split(".", 1)[0]
        return ALL in self.touches or bench in self.touches or family in self.touches


RULES: tuple[Rule, ...] = (
    Rule("kernel", ("kernel_release", "kernel_version", "osmeter_version", "probe_version"), (ALL,),
         "another kernel (or osmeter) can change every cost"),
    Rule("audit", ("audit_",), SYSCALL_FAMILIES,
         "with audit on (or ever on in this boot) every system call runs audit's entry and exit hooks "
         "(__audit_syscall_entry/exit, audit_filter_*), more with each rule"),
    Rule("seccomp", ("seccomp_mode", "seccomp_filters"), SYSCALL_FAMILIES,
         "a seccomp filter runs on every system call of the probe (__seccomp_filter, and the filters' JIT-compiled "
         "classic BPF, which kallsyms does not list: [kernel outside text])"),
    Rule("mitigations", ("mitigations.",), SYSCALL_FAMILIES,
         "CPU vulnerability mitigations add work at kernel entry and exit and at context switches"),
    Rule("boot options", ("kernel_cmdline",), (ALL,),
         "the kernel's command line sets mitigations, audit, THP, isolation and more: read what changed"),
    Rule("THP", ("thp_", "fault_around_bytes"), ("mem.fault_anon", "mem.mmap", "mem.munmap", "mem.page_fault", "task.fork",
                            "task.fork_exit", "task.fork_child", "mem.latency", "mem.bandwidth"),
         "transparent huge pages change how many faults an anonymous region takes and what fork copies"),
    Rule("CPU frequency", ("cpufreq_", "cpu_boost", "cpu_max_mhz", "cpu_min_mhz", "cpuidle_driver"), (ALL,),
         "the frequency governor and boost set the clock every figure runs at"),
    Rule("CPU", ("cpu_model", "cpu_vendor", "cpu_flags", "caches", "smt_control", "threads_per_core",
                 "cores_per_socket", "cpus_online", "virtualization", "emulation", "isolated_cpus",
                 "nohz_full_cpus"), (ALL,),
         "another CPU, topology or hypervisor changes every cost"),
    Rule("cgroup limit", ("cgroup_", "option.cgroup"), ("file", "mem", "task"),
         "a memory limit reclaims the page cache and anonymous memory; a CPU limit throttles"),
    Rule("tracing", ("tracing", "tracing.current_tracer", "tracing.tracing_on", "tracing.kprobe_events",
                     "tracing.uprobe_events", "tracing.enabled_events", "tracing.ftrace_functions",
                     "tracing.instances"), (ALL,),
         "an active tracer, kprobe or enabled trace event runs in the paths it hooks"),
    Rule("BPF", ("bpf_programs", "bpf_program_types."), SYSCALL_FAMILIES,
         "attached BPF programs run in the hooks they are attached to"),
    Rule("LSM", ("lsms", "lockdown"), ("file", "syscall", "net", "task", "ipc"),
         "security modules hook file opens, permission checks, sockets and exec"),
    Rule("KSM / NUMA / zswap", ("ksm_run", "numa_balancing", "zswap_enabled"), ("mem", "task", "file"),
         "page merging, NUMA hinting faults and compressed swap change the memory paths"),
    Rule("clock source", ("clocksource", "clock."), (ALL,),
         "the clock every time is read with; its cost is in every timed region"),
    Rule("preemption", ("preemption", "realtime", "kernel_hz"), ("ctxsw", "rt", "syscall", "task"),
         "the preemption model changes the scheduler's and the syscall exit's work"),
    # Last: it explains only what switches or forks, and only when nothing above differs as well.
    Rule("profiling", ("probe_command",), ("ctxsw", "task", "ipc", "net", "poll", "rt"),
         "one run was profiled (run --profile) and the other not: every context switch also switches the "
         "sampling event and fork copies the profiler's memory (ctxsw.yield 2.2x, task.fork 3-4x on a KVM "
         "guest; cpu and syscall figures within the noise): compare runs profiled the same way"),
)


def rules_for_key(key: str) -> list[Rule]:
    return [r for r in RULES if r.matches_key(key)]


def plausibility(key: str) -> int:
    """The rank of a differing fact in compare's "what differs": the index
    of its first rule, len(RULES) for a fact no rule names."""
    return next((i for i, r in enumerate(RULES) if r.matches_key(key)), len(RULES))


# Parameters by which a benchmark pins a setting the machine's state would
# otherwise decide: (rule name, parameter) -> what the benchmark does, and
# what to use to see the setting's effect.
PINNED: Mapping[tuple[str, str], tuple[str, str]] = {
    ("THP", "thp"): ("thp=0 maps its memory with MADV_NOHUGEPAGE and thp=1 with MADV_HUGEPAGE, whatever the "
                     "system's setting (thp=1 is skipped where the setting is never)",
                     "thp=2 (no madvise: the system's setting decides)"),
}


def pinned(rule: Rule, params: Mapping[str, object]) -> list[tuple[str, str]]:
    """What the instance's own parameters pin of what `rule` is about: (what it does, what to use instead)."""
    return [PINNED[(rule.name, p)] for p in params if (rule.name, p) in PINNED and params[p] != 2]
