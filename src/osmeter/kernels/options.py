"""The VM's options, shared by `osmeter kernels run` and `osmeter study rt --kernel`
(docs/kernels.md, "The VM"), and what they make: the accelerator, the Machine, the time limit."""

from __future__ import annotations

import argparse
import os
import shutil

from ..argtypes import positive_float, positive_int
from .. import textsafe
from ..errors import UsageError
from . import kvm, qemu

DEFAULT_MEMORY_MIB = 2048
MAX_CPUS = 64
BOOT_MARGIN_S = 120.0  # boot, init, power-off: seconds under TCG
SLOWDOWN = {"tcg": 2.0, "kvm": 1.5}  # the guest's sampling and set-up against the host's
SETUP_S = 0.5  # an instance's set-up (processes, files, calibration) beyond its sampling time


def cpu_list(text: str) -> tuple[int, ...]:
    """argparse type for --pin: none, or CPU,CPU,..."""
    if text == "none":
        return ()
    try:
        cpus = tuple(int(c) for c in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not 'none' or host CPUs as N,N,...") from None
    if any(c < 0 for c in cpus) or len(set(cpus)) != len(cpus):
        raise argparse.ArgumentTypeError(f"{text!r}: CPUs are distinct numbers from 0")
    return cpus


def add_vm_arguments(r: argparse.ArgumentParser) -> None:
    """--accel, --cpus, --memory, --append, --pin, --timeout."""
    r.add_argument("--accel", choices=("auto", "kvm", "tcg"), default="auto",
                   help="kvm, tcg (emulated: figures are the emulator's), or auto: KVM when it works (default)")
    r.add_argument("--cpus", type=positive_int, metavar="N", help="the guest's vCPUs (default: 2, or fewer "
                   "when this machine has fewer CPUs)")
    r.add_argument("--memory", type=positive_int, metavar="MIB",
                   help=f"the guest's memory in MiB (default {DEFAULT_MEMORY_MIB})")
    r.add_argument("--append", action="append", default=[], metavar="PARAMS",
                   help="kernel parameters added after osmeter's (console=ttyS0 panic=-1 ...), e.g. "
                   "'mitigations=off'")
    r.add_argument("--pin", type=cpu_list, metavar="CPUS",
                   help="host CPUs for the vCPU threads, one each (N,N,...), or none (default: the first "
                   "CPUs this process may use)")
    r.add_argument("--timeout", type=positive_float, metavar="S",
                   help="seconds each kernel may take from boot to power-off (default: from what the guest runs "
                   "and its time budget, with a margin; docs/kernels.md)")


def warn_tcg(why: str) -> None:
    """The warning before guests boot under TCG."""
    textsafe.say("warning", f"KVM is not used: {why}. The guests run under TCG, qemu's emulator: every result "
                 "is flagged 'emulated', the emulator's figure, not the kernel's (docs/kernels.md)")


def choose_accel(asked: str, check: kvm.KvmCheck) -> str:
    """The accelerator for --accel `asked`; UsageError when kvm is asked for and does not work."""
    if asked == "kvm" and not check.usable:
        raise UsageError(f"--accel kvm: KVM does not work here: {check.reason}; use --accel tcg (emulated)")
    if asked == "tcg" or not check.usable:
        return "tcg"
    return "kvm"


def host_memory_mib(meminfo: str = "/proc/meminfo") -> int | None:
    try:
        with open(meminfo) as f:
            for line in f.read(65536).splitlines():
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def machine_of(args: argparse.Namespace, accel: str) -> qemu.Machine:
    """The VM of --cpus, --memory, --append, --pin, checked against this machine."""
    allowed = sorted(os.sched_getaffinity(0))
    cpus = args.cpus or min(2, len(allowed))
    if cpus > MAX_CPUS:
        raise UsageError(f"--cpus {cpus}: at most {MAX_CPUS}")
    pin = args.pin if args.pin is not None else tuple(allowed[:cpus]) if len(allowed) >= cpus else ()
    if pin and not set(pin) <= set(allowed):
        raise UsageError(f"--pin {','.join(map(str, pin))}: this process may use CPUs {','.join(map(str, allowed))}")
    if pin and len(pin) != cpus:
        raise UsageError(f"--pin gives {len(pin)} host CPU(s) for {cpus} vCPU(s): one each, or --pin none")
    memory = args.memory or DEFAULT_MEMORY_MIB
    total = host_memory_mib()
    if total is not None and memory > total:
        raise UsageError(f"--memory {memory}: this machine has {total} MiB")
    return qemu.Machine(accel, cpus, memory, qemu.check_append(args.append), pin, qemu_binary())


def qemu_binary() -> str:
    found = shutil.which(qemu.QEMU)
    if not found:
        raise UsageError(f"{qemu.QEMU} not found: install qemu (Debian: apt-get install qemu-system-x86)")
    return found


def default_timeout(max_time: float | None, instances: int | None, repetitions: int, accel: str) -> float:
    """Seconds a kernel may take: the boot's margin, then per repetition and instance its longest
    sampling time (already the repetition's share) and its set-up, times the accelerator's slowdown."""
    if max_time is None or instances is None:
        return 4 * 3600.0
    return round(BOOT_MARGIN_S + SLOWDOWN[accel] * repetitions * instances * (max_time + SETUP_S))
