"""osmeter kernels run|check: kernels booted in VMs with the probe as init,
one run per kernel in one group (docs/kernels.md; the steps: osmeter.kernels.run).

Everything that can be checked is checked before the first kernel boots:
the --kernel values parse, qemu is there, the suite and parameters are ones
the probe accepts (the installed probe checks them: commands.fleet's
check_probe_arguments, which also gives the suite's size for the default
--timeout), the guest's probe is a static x86-64 one, the store opens.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from datetime import datetime, timezone
from typing import Any

from .. import textsafe
from ..errors import EXIT_BENCH_ERRORS, EXIT_OK, HostsFailed, MissingDependencyError, ProbeError, UsageError
from ..fleet.probes import ProbeFinder, arch_named
from ..kernels import images, kvm, qemu
from ..kernels import options as kernels_options
from ..kernels.options import choose_accel, default_timeout, machine_of, qemu_binary
from ..kernels import run as kernels_run
from ..kernels import state as group_state
from ..runner import SUITES, RunOptions
from ..store import open_store, resolve_location
from ..store.base import Store
from .fleet import kept_store, check_probe_arguments
from .options import add_budget_options, add_store_option
from .run import param_assignment

NAME = "kernels"
DEFAULT_SUITE = "quick"
PROBE_OPTIONS = ("params", "min_time", "max_time", "min_samples", "max_samples", "target_rse", "repeat")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(NAME, help="boot kernels in VMs with the probe as init and compare them",
                       description="Boot each kernel with qemu (KVM when it works, else TCG), the static probe as "
                       "init, run benchmarks inside and store one run per kernel (docs/kernels.md).")
    ksub = p.add_subparsers(dest="kernels_command", metavar="SUBCOMMAND", required=True)
    r = ksub.add_parser("run", help="boot each kernel, run benchmarks inside, store one run per kernel",
                        description="Boot each --kernel under qemu with an initramfs whose init is the static "
                        "probe, run a suite or benchmarks inside, store one run per kernel in one group "
                        "(compare them with `osmeter compare --by kernel --fleet ID`).")
    add_run_arguments(r)
    add_store_option(r)
    c = ksub.add_parser("check", help="say whether kernels can boot here, and under KVM or TCG",
                        description="Look for qemu-system-x86_64, try KVM (create a VM and run guest code) and "
                        "check the static probe the guests get.")
    c.add_argument("--kvm-device", default=kvm.DEVICE, help=argparse.SUPPRESS)
    return p


def add_run_arguments(r: argparse.ArgumentParser) -> None:
    """What the guests run, then the VM's options (kernels.options)."""
    r.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run in each guest (default: "
                   f"--suite {DEFAULT_SUITE})")
    r.add_argument("--kernel", action="append", default=[], metavar="K",
                   help="a kernel: an image path (PATH[,initrd=FILE][,modules=DIR][,config=FILE]), an "
                   "installed release (/boot/vmlinuz-RELEASE), or deb:PACKAGE; give it once per kernel")
    r.add_argument("--suite", choices=SUITES, help=f"the suite each guest runs (default {DEFAULT_SUITE})")
    r.add_argument("--param", action="append", default=[], type=param_assignment, metavar="KEY=VALUE",
                   help="a parameter, as for `osmeter run`")
    add_budget_options(r, "kernel")
    r.add_argument("--label", help="a label for every run of the group")
    r.add_argument("--resume", nargs="?", const=group_state.LATEST, metavar="GROUP_ID",
                   help="boot only the kernels of group GROUP_ID (default: the latest) with no complete run yet")
    kernels_options.add_vm_arguments(r)


def _options(suite: str | None, names: list[str], given: dict[str, Any], label: str | None) -> RunOptions:
    return RunOptions(names=tuple(names), suite=suite, params=tuple(given.get("params") or ()), cpu=None,
                      label=label, min_time=given.get("min_time"), max_time=given.get("max_time"),
                      min_samples=given.get("min_samples"), fifo=None, mlock=False, clock=None,
                      max_samples=given.get("max_samples"), target_rse=given.get("target_rse"),
                      repeat=given.get("repeat"))


def guest_commands(opts: RunOptions) -> list[list[str]]:
    """The plan: one `run` per repetition (each with 1/R of the budget, as `osmeter run --repeat R`),
    without --die-with-parent: the parent is init itself (PID 1, which the probe takes for an orphan's)."""
    return [kernels_run.guest_argv(opts) for _ in range(opts.repetitions)]


def check_kernels(kernels: list[str]) -> None:
    """The --kernel values, refused before anything else when malformed or repeated, and
    a local image (a path, an installed release) when it is missing or no x86 kernel:
    what would fail again on every attempt is a usage error, not a failed kernel.
    (A deb: package is downloaded at its turn: the network may come back.)"""
    if not kernels:
        raise UsageError("kernels run needs --kernel K (once per kernel), or --resume")
    if len(set(kernels)) != len(kernels):
        raise UsageError("a --kernel is given twice")
    for k in kernels:
        spec = images.parse_spec(k)
        if spec.kind != "deb":
            images.resolve(spec)


def new_group(args: argparse.Namespace, machine: qemu.Machine, location: str) -> group_state.GroupState:
    if args.suite and args.names:
        raise UsageError("give benchmark names or --suite, not both")
    suite = args.suite if args.suite or args.names else DEFAULT_SUITE
    given = {k: getattr(args, "param" if k == "params" else k) for k in PROBE_OPTIONS}
    given["params"] = list(given["params"])
    opts = _options(suite, args.names, given, args.label)
    commands = guest_commands(opts)
    max_time, instances = check_probe_arguments(commands[0])
    timeout = args.timeout or default_timeout(max_time, instances, opts.repetitions, machine.accel)
    st = group_state.GroupState(
        id=group_state.new_id(), created=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        kernels=list(args.kernel), commands=commands, probe_options={"suite": suite, "names": args.names, **given},
        machine={"accel": machine.accel, "cpus": machine.cpus, "memory_mib": machine.memory_mib,
                 "append": list(machine.append), "pin": list(machine.pin)},
        timeout=timeout, store=kept_store(location), label=args.label)
    return st


def resumed_group(args: argparse.Namespace) -> group_state.GroupState:
    given = [o for o, v in (("--kernel", args.kernel), ("NAME", args.names), ("--suite", args.suite),
                            ("--param", args.param), ("--label", args.label), ("--repeat", args.repeat),
                            ("--min-time", args.min_time), ("--max-time", args.max_time),
                            ("--min-samples", args.min_samples), ("--max-samples", args.max_samples),
                            ("--target-rse", args.target_rse), ("--accel", args.accel != "auto"),
                            ("--cpus", args.cpus), ("--memory", args.memory), ("--append", args.append),
                            ("--pin", args.pin is not None)) if v]
    if given:
        raise UsageError(f"--resume boots the group's own kernels with its own benchmarks and VM: leave out "
                         f"{given[0]} (only --timeout and --store may be given)")
    st = group_state.load(args.resume)
    if args.timeout:
        st.timeout = args.timeout
    return st


def run(args: argparse.Namespace) -> int:
    if args.kernels_command == "check":
        return check_command(args)
    resuming = args.resume is not None
    st = resumed_group(args) if resuming else None
    if st is None:
        if args.suite and args.names:
            raise UsageError("give benchmark names or --suite, not both")
        check_kernels(args.kernel)
    check = kvm.check()
    accel = choose_accel(st.machine["accel"] if st else args.accel, check)
    if st is None:
        location = resolve_location(args.store)
        st = new_group(args, machine_of(args, accel), location)
    else:
        location = resolve_location(args.store) if args.store else st.store
        if st.machine["accel"] == "kvm" and accel != "kvm":
            raise UsageError(f"--resume {st.id}: the group was booted under KVM, which does not work now: "
                             f"{check.reason}")
    m = st.machine
    machine = qemu.Machine(accel, m["cpus"], m["memory_mib"], tuple(m["append"]), tuple(m["pin"]), qemu_binary())
    if accel == "tcg":
        kernels_options.warn_tcg("--accel tcg" if args.accel == "tcg" else check.reason)
    guest = kernels_run.guest_probe()
    with group_state.locked(st):
        return _attempt(st, machine, location, resuming, guest)


def _attempt(st: group_state.GroupState, machine: qemu.Machine, location: str,
             resuming: bool, guest: kernels_run.GuestProbe) -> int:
    store = open_store(location, create=True)
    try:
        done = group_state.done_kernels(store, st) if resuming else {}
        todo = [k for k in st.kernels if k not in done]
        print(f"group {st.id}: {len(todo)} kernel(s) to boot" + (f", {len(done)} stored before" if done else "")
              + f"; each within {st.timeout:g} s (--timeout)", file=sys.stderr, flush=True)
        st.attempts += 1
        group = kernels_run.make_group(st, store, machine, guest)
        group.save()
        for k in todo:
            st.outcomes.setdefault(k, group_state.KernelOutcome()).status = "pending"
        try:
            for i, kernel in enumerate(todo, 1):
                group.run_kernel(i, kernel)
        except KeyboardInterrupt:
            for k in todo:
                if st.outcomes[k].status == "pending":
                    st.outcomes[k].status, st.outcomes[k].reason = "failed", "interrupted"
            group.save()
            print(f"group {st.id}: interrupted; `osmeter kernels run --resume {st.id}` boots the kernels not "
                  "stored yet", file=sys.stderr, flush=True)
            raise
        return _summary(st, done, store, machine)
    finally:
        store.close()
        print(f"group {st.id}: state in {st.directory()}", file=sys.stderr, flush=True)


def _summary(st: group_state.GroupState, done: dict[str, int], store: Store, machine: qemu.Machine) -> int:
    failed = [k for k in st.kernels if st.outcomes.get(k) and st.outcomes[k].status == "failed" and k not in done]
    stored = len(st.kernels) - len(failed)
    print(f"group {st.id}: {stored} of {len(st.kernels)} kernel(s) stored, {len(failed)} failed"
          + (" (emulated: TCG)" if machine.emulated and stored else ""))
    errors = 0
    for k in st.kernels:
        o = st.outcomes.get(k) or group_state.KernelOutcome()
        if k in failed:
            print(f"  {textsafe.line(k)}: failed: {textsafe.line(o.reason or 'no reason given')}")
            continue
        run_id = done.get(k, o.run_id)
        print(f"  {textsafe.line(k)}: {o.release}: run {run_id}" + (" (stored before)" if k in done else ""))
        if run_id is not None:
            errors += sum(1 for r in store.results(run_id) if r.status == "error")
    if len(st.kernels) - len(failed) >= 2:
        print(f"compare them: osmeter compare --by kernel --fleet {st.id}")
    sys.stdout.flush()
    if failed:
        raise HostsFailed(f"group {st.id}: {len(failed)} kernel(s) failed; `osmeter kernels run --resume {st.id}` "
                          "boots them again, with the group's kernels, benchmarks and VM")
    return EXIT_BENCH_ERRORS if errors else EXIT_OK


def check_command(args: argparse.Namespace) -> int:
    """`osmeter kernels check`: qemu, KVM, the guest probe; exit 0 when kernels can boot (under KVM or TCG)."""
    missing = []
    found = shutil.which(qemu.QEMU)
    print(f"qemu: {found or 'not found (Debian: apt-get install qemu-system-x86)'}")
    if found is None:
        missing.append(qemu.QEMU)
    check = kvm.check(args.kvm_device)
    print(f"kvm: {'usable' if check.usable else 'not usable'}: {check.reason}")
    accel = "kvm" if check.usable else "tcg (emulated: the figures are the emulator's, not the kernels')"
    print(f"accelerator: {accel}")
    try:
        guest = ProbeFinder({}, os.environ).probe_for(arch_named("x86-64"))
        print(f"guest probe: {guest.probe} (static x86-64, {guest.origin})")
    except ProbeError as e:
        print(f"guest probe: {textsafe.line(e.message)}")
        missing.append("a static x86-64 osmeter-probe")
    sys.stdout.flush()
    if missing:
        raise MissingDependencyError(f"kernels cannot boot here: {' and '.join(missing)} missing (above)")
    return EXIT_OK
