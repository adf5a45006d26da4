"""Coded, actionable warnings about a run: what looks wrong and what to do.

Each warning has a stable code (for scripts and docs), what was seen, and
the advice. Result warnings name the benchmark instances they concern;
`show` and `run` print them under the summary table.

| code | when |
| --- | --- |
| unstable | the repetitions' medians disagree by more than 5 % (the flag `unstable`) |
| precision-unmet | sampling stopped before the median reached its target precision (the flag) |
| bimodal | the samples have two modes (the flag `bimodal`; both named) |
| few-samples | fewer than 10 samples |

The result warnings fire on what changes what a figure means, not on every
heavy tail: a few interrupted samples make the coefficient of variation
hundreds of per cent while the median and its interval stay put (issue 28;
osmeter 0.2 warned `high-cv` and `outliers` for them, on every instance of
a quick run). The spread shown is robust (IQR / median) and the tail is a
column of its own (p99 / median).
| clock | x86-64 without the TSC, or aarch64 without cntvct_el0 |
| cpu-governor | a frequency governor other than `performance` |
| virtualized | the machine is a virtual machine |
| cpu-boost | turbo / boost is on: the clock speed depends on temperature and load |
| clocksource | the kernel's clocksource is paravirtual or slow (clock_gettime may trap) |
| debug-build | the probe was built without optimisation |
| profiled | the run was measured while its timed regions were sampled (run --profile): ctxsw and fork read higher |
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from .fmt import fmt_quantity
from .model import BenchResult, RunInfo
from .records import describe_instance
from .repeats import BIMODAL, UNSTABLE
from .sysinfo import KEY_ARCH, KEY_GOVERNOR, KEY_VIRTUALIZATION, format_value

FEW_SAMPLES = 10
MAX_NAMED = 5  # instances named per warning before "and N more"

_X86 = ("x86_64", "amd64")
_ARM64 = ("aarch64", "arm64")
_NOT_VIRTUAL = ("", "none", "no", "false", "bare-metal", "bare_metal")


@dataclass(frozen=True)
class CodedWarning:
    code: str
    message: str  # what was seen
    advice: str  # what to do about it

    def render(self) -> str:
        return f"warning [{self.code}]: {self.message}. {self.advice}"


ParamsOf = Callable[[BenchResult], Mapping[str, Any]]  # the parameters a warning names an instance by


def _every(r: BenchResult) -> Mapping[str, Any]:
    return r.params


def _named(items: Sequence[str]) -> str:
    shown = ", ".join(items[:MAX_NAMED])
    return shown + (f" and {len(items) - MAX_NAMED} more" if len(items) > MAX_NAMED else "")


def _flagged(ok: Sequence[BenchResult], flag: str, said: Callable[[BenchResult], str], params_of: ParamsOf) -> list[str]:
    out = []
    for r in ok:
        if flag in r.flags:
            what, note = describe_instance(r.bench, params_of(r)), said(r)
            out.append(f"{what} ({note})" if note else what)
    return out


def result_warnings(results: Sequence[BenchResult], params_of: ParamsOf = _every) -> list[CodedWarning]:
    """The results' warnings, each instance named by `params_of`'s parameters (report.params: those
    that vary or differ from the default; every one by default)."""
    ok = [r for r in results if r.summary is not None]
    out = []
    checks = (
        (UNSTABLE, lambda r: f"{r.spread:.0%}" if r.spread == r.spread else "",
         "the repetitions' medians (fresh probe processes) disagree by more than 5 %",
         "The figure moved between processes: close other programs, pin to an idle CPU with --cpu, "
         "and run again with more --repeat"),
        ("precision-unmet", lambda r: "",
         "sampling stopped before the median reached its target precision",
         "The interval is wider than asked: raise --max-time (or --max-samples), or quiet the machine"),
        (BIMODAL, lambda r: _modes(r),
         "the samples have two modes",
         "The median is one path of two, or between: see the distribution (osmeter plot) and what could "
         "switch (placement, a cache, THP, frequency) before quoting one figure"),
    )
    for flag, said, seen, advice in checks:
        named = _flagged(ok, flag, said, params_of)
        if named:
            out.append(CodedWarning(flag, f"{seen} for {_named(named)}", advice))
    few = [f"{describe_instance(r.bench, params_of(r))} (n={r.summary.n})" for r in ok if r.summary and r.summary.n < FEW_SAMPLES]
    if few:
        out.append(
            CodedWarning(
                "few-samples",
                f"fewer than {FEW_SAMPLES} samples for {_named(few)}",
                "The statistics are rough: raise --min-samples or --max-time",
            )
        )
    return out


def _modes(r: BenchResult) -> str:
    s = r.summary
    if s is None or not s.bimodal:
        return ""
    return f"{fmt_quantity(s.mode_low, r.unit, 3)} and {fmt_quantity(s.mode_high, r.unit, 3)}"


def _arch(run: RunInfo) -> str | None:
    build = run.meta.get("build")
    arch = build.get("arch") if isinstance(build, dict) else None
    arch = arch or run.machine.get(KEY_ARCH)
    return arch if isinstance(arch, str) else None


def clock_warning(run: RunInfo) -> CodedWarning | None:
    clock = run.meta.get("clock")
    if not isinstance(clock, dict) or not isinstance(clock.get("source"), str):
        return None
    source, arch = clock["source"], _arch(run)
    wanted = "tsc" if arch in _X86 else "cntvct" if arch in _ARM64 else None
    if wanted is None or source == wanted:
        return None
    if clock.get("forced"):
        advice = f"You chose --clock {source}; leave --clock out to let the probe use {wanted}"
    else:
        advice = (
            f"The probe could not use {wanted} (on x86 the TSC must be invariant); short operations are "
            "timed with a coarser, costlier clock, so trust batched results more than single-operation ones"
        )
    overhead = clock.get("overhead_ns")
    seen = f"timing used {source} on {arch}" + (
        f" (read overhead {overhead:.0f} ns)" if isinstance(overhead, (int, float)) else ""
    )
    return CodedWarning("clock", seen, advice)


def governor_warning(machine: Mapping[str, Any]) -> CodedWarning | None:
    value = machine.get(KEY_GOVERNOR)
    if value is None:
        return None
    # One governor, or one per CPU policy; stored JSON may hold anything, so compare as text.
    governors = {format_value(v) for v in value} if isinstance(value, list) else {format_value(value)}
    if governors <= {"performance"}:
        return None
    return CodedWarning(
        "cpu-governor",
        f"CPU frequency governor is {format_value(value)}, not performance",
        "The clock speed moves during the run: `sudo cpupower frequency-set -g performance` "
        "(set it back afterwards), or compare only runs made with the same governor",
    )


def virtualization_warning(machine: Mapping[str, Any]) -> CodedWarning | None:
    value = machine.get(KEY_VIRTUALIZATION)
    if value is None or value is False or str(value).strip().lower() in _NOT_VIRTUAL:
        return None
    return CodedWarning(
        "virtualized",
        f"the machine is virtualised ({format_value(value)})",
        "The hypervisor adds its own costs (exits, steal time, a virtual clock): compare only with runs "
        "on the same kind of machine, and use cross_cpu/same_cpu placement figures with care",
    )


# Kernel clocksources that make clock_gettime() slow or leave the vDSO (a
# system call per read) or hand timing to a hypervisor.
_SLOW_CLOCKSOURCES = ("hpet", "acpi_pm", "jiffies", "pit", "refined-jiffies")
_VIRTUAL_CLOCKSOURCES = ("kvm-clock", "xen", "hyperv_clocksource_tsc_page", "hyperv_clocksource_msr", "vmware")


def boost_warning(machine: Mapping[str, Any]) -> CodedWarning | None:
    if machine.get("cpu_boost") is not True:
        return None
    return CodedWarning(
        "cpu-boost",
        "turbo/boost is on: the CPU's clock speed depends on its temperature and on what the other cores do",
        "For repeatable numbers turn it off for the run: `echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/"
        "no_turbo` (intel_pstate) or `echo 0 | sudo tee /sys/devices/system/cpu/cpufreq/boost`, and back afterwards",
    )


def clocksource_warning(machine: Mapping[str, Any]) -> CodedWarning | None:
    source = machine.get("clocksource")
    if not isinstance(source, str):
        return None
    available = machine.get("available_clocksources")
    better = "tsc" if isinstance(available, list) and "tsc" in available else None
    fix = (
        f"switch to {better}: `echo {better} | sudo tee /sys/devices/system/clocksource/clocksource0/"
        "current_clocksource`"
        if better
        else "compare timer-based figures only with runs that use the same clocksource"
    )
    if source in _SLOW_CLOCKSOURCES:
        return CodedWarning(
            "clocksource",
            f"the kernel's clocksource is {source}: clock_gettime() leaves the vDSO and costs a system call",
            f"Benchmarks that read the kernel's clocks (cpu.timer_overhead source=monotonic, rt.*) pay for it; {fix}",
        )
    if source in _VIRTUAL_CLOCKSOURCES:
        return CodedWarning(
            "clocksource",
            f"the kernel's clocksource is {source}, a paravirtual clock",
            f"Kernel clock reads go through the hypervisor's page and can jump when the VM is descheduled; {fix}",
        )
    return None


def debug_build_warning(run: RunInfo) -> CodedWarning | None:
    build = run.meta.get("build")
    if not isinstance(build, dict):
        return None
    build_type = build.get("build_type")
    flags = build.get("flags")
    unoptimised = build_type == "Debug" or (isinstance(flags, str) and ("-O0" in flags.split() or "-O" not in flags))
    if not unoptimised:
        return None
    return CodedWarning(
        "debug-build",
        f"the probe was built without optimisation (build type {build_type}, flags {flags!r})",
        "Loop and call overheads are inflated: build the probe as Release (pip install . does), "
        "or cmake -DCMAKE_BUILD_TYPE=Release",
    )


def profiled_warning(run: RunInfo) -> CodedWarning | None:
    """A run measured while its timed regions were sampled (run --profile, hotspots)."""
    if run.meta.get("command") != "hotspots":
        return None
    return CodedWarning(
        "profiled",
        "the figures were measured while the timed regions were sampled (run --profile): every context switch "
        "also switches the sampling event, and fork copies the profiler's memory, so ctxsw.* and task.fork* "
        "read higher than without (on a KVM guest: ctxsw.yield 2.2x, task.fork 3-4x; cpu.* and syscall.* "
        "within the noise)",
        "Compare a profiled run with profiled runs only (compare --explain names the difference); quote "
        "figures from a run without --profile",
    )


def run_warnings(run: RunInfo, results: Sequence[BenchResult], params_of: ParamsOf = _every) -> list[CodedWarning]:
    """Every warning for one stored run: machine and clock first, then results."""
    machine_level = [
        clock_warning(run),
        governor_warning(run.machine),
        boost_warning(run.machine),
        virtualization_warning(run.machine),
        clocksource_warning(run.machine),
        debug_build_warning(run),
        profiled_warning(run),
    ]
    return [w for w in machine_level if w is not None] + result_warnings(results, params_of)
