"""osmeter study rt --kernel K [--kernel K ...]: the RT study inside a VM per
kernel (standard and PREEMPT_RT side by side, as seed 004 does on a board),
one run per kernel in one group (docs/kernels.md, "The RT study in VMs").

The plan is the study's own (osmeter.studies.rt.make_plan, for the guest's
vCPUs: the stressors run inside the guest, on its other vCPUs). A stressed
workload part runs at the period the unstressed part measured for its
kernel, so each kernel boots twice: the parts that need nothing measured
first (the unstressed workload, every rt.cyclic part), then the stressed
workload parts with the periods read off the first boot's results. Both
boots' outputs are one run. Each kernel's run gets the study's tables and
figures in DIR/RELEASE/; the text printed ends with the side-by-side tables:
per workload kernel and configuration the median, maximum and deadline
misses under each kernel, and rt.cyclic's p99 and maximum per configuration.
Under TCG the figures are the emulator's (every result flagged `emulated`):
the tables show what runs, not what an RT kernel delivers.
"""

from __future__ import annotations

import argparse
import textwrap
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Sequence

from .. import outfile
from ..errors import EXIT_OK, HostsFailed, UsageError
from ..fmt import render_table
from ..kernels import kvm
from ..kernels.cleanup import work_dir
from ..kernels import run as kernels_run
from ..kernels import state as group_state
from ..kernels.images import parse_spec
from ..kernels.options import BOOT_MARGIN_S, SLOWDOWN, choose_accel, machine_of, warn_tcg
from ..report.figures.rt import CYCLIC, WORKLOAD, Config
from ..store import open_store, resolve_location
from ..sysinfo import rt_facts
from .rt_analysis import CYCLIC_TEXT, WORKLOAD_TEXT, cyclic_rows, workload_rows

SIDE_TEXT = "rt-kernels.txt"
MEDIAN, MAX, MISSES = WORKLOAD_TEXT.index("median"), WORKLOAD_TEXT.index("max"), WORKLOAD_TEXT.index("deadline misses")
C_P99, C_MAX = CYCLIC_TEXT.index("p99"), CYCLIC_TEXT.index("max")
FACTS = ("preemption", "realtime", "kernel_hz", "isolated_cpus", "nohz_full_cpus")  # each kernel's, above the tables


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ..kernels.options import add_vm_arguments

    p.add_argument("--kernel", action="append", default=[], metavar="K", dest="boot_kernels",
                   help="run the study inside a VM booting kernel K (an image path, an installed release or "
                   "deb:PACKAGE, as `osmeter kernels run`), once per kernel, side by side (docs/kernels.md); "
                   "--kernels names the workload kernels")
    add_vm_arguments(p)


def _results(outputs: Sequence[Sequence[bytes]]) -> list[Any]:
    """The result records of a boot's outputs, as much of a result as the plan's resolve reads."""
    out = []
    for lines in outputs:
        for raw in lines:
            rec = kernels_run.record_of(raw)
            if rec is not None and rec.get("type") == "result":
                out.append(SimpleNamespace(bench=rec.get("bench"), params=rec.get("params") or {},
                                           extra=rec.get("extra") or {}, record=rec))
    return out


def run(args: argparse.Namespace, plan_for: Any, write_outputs: Any, directory: Path) -> int:
    """Every --kernel booted twice (above); `plan_for(cpus)` makes the study's plan for the guest."""
    check = kvm.check()
    machine = machine_of(args, choose_accel(args.accel, check))
    for k in args.boot_kernels:
        parse_spec(k)
    if len(set(args.boot_kernels)) != len(args.boot_kernels):
        raise UsageError("a --kernel is given twice")
    plan = plan_for(machine.cpus)
    if machine.emulated:
        warn_tcg(check.reason if args.accel != "tcg" else "--accel tcg")
    first = [p for p in plan.parts if p.resolve is None]
    later = [p for p in plan.parts if p.resolve is not None]
    budget = sum(p.opts.max_time or 0 for p in plan.parts) + 2.0 * len(plan.parts)
    timeout = args.timeout or round(BOOT_MARGIN_S + SLOWDOWN[machine.accel] * budget)
    location = resolve_location(args.store)
    st = group_state.GroupState(
        id=group_state.new_id(), created=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        kernels=list(args.boot_kernels), commands=[], probe_options={"study": "rt"},
        machine={"accel": machine.accel, "cpus": machine.cpus, "memory_mib": machine.memory_mib,
                 "append": list(machine.append), "pin": list(machine.pin)},
        timeout=timeout, store=location, label=args.label or "rt study")
    guest = kernels_run.guest_probe()
    store = open_store(location, create=True)
    runs: list[tuple[str, int]] = []
    try:
        with group_state.locked(st):
            group = kernels_run.make_group(st, store, machine, guest)
            group.unit = "part"
            group.save()
            params = {"study": "rt", "jobs": plan.jobs, "kernels": list(plan.kernels),
                      "configs": [c.label for c in plan.configs], "cyclic_s": plan.cyclic_s,
                      "cyclic_loops": plan.cyclic_loops, "priority": plan.priority}
            for i, kernel in enumerate(st.kernels, 1):
                image = group.image_of(i, kernel)
                if image is None:
                    continue
                with work_dir("osmeter-rt-vm.") as tmp:
                    run_id = _one_kernel(group, kernel, image, first, later, params, tmp)
                if run_id is not None:
                    runs.append((image.release, run_id))
                    write_outputs(store, run_id, directory / image.release, plan)
        text = side_by_side(store, runs, plan.configs, plan.kernels, machine.emulated)
        outfile.write(directory / SIDE_TEXT, text)
        print(text, end="")
        print(f"group {st.id}: {len(runs)} of {len(st.kernels)} kernel(s) stored"
              + (" (emulated: TCG)" if machine.emulated and runs else "") + f"; per kernel: {directory}/RELEASE/")
    finally:
        store.close()
    failed = [k for k in st.kernels if st.outcomes.get(k) and st.outcomes[k].status == "failed"]
    if failed:
        raise HostsFailed(f"kernels {st.id}: {len(failed)} kernel(s) failed: {', '.join(failed)}")
    return EXIT_OK


def _one_kernel(group: kernels_run.Group, kernel: str, image: Any, first: list, later: list,
                params: dict[str, Any], tmp: Path) -> int | None:
    (tmp / "a").mkdir()
    a = group.boot(kernel, image, [kernels_run.guest_argv(p.opts) for p in first], tmp / "a",
                   f" (boot 1 of {2 if later else 1}: the parts that need nothing measured first)")
    if a is None:
        return None
    boots = [a]
    if later:
        done = SimpleNamespace(results=_results(a.outputs))
        resolved = [p.resolve(done) for p in later]
        (tmp / "b").mkdir()
        b = group.boot(kernel, image, [kernels_run.guest_argv(o) for o in resolved], tmp / "b",
                       " (boot 2 of 2: the stressed workload parts, at the periods boot 1 measured)")
        if b is None:
            return None
        boots.append(b)
    return group.store_run(kernel, image, boots, params, tmp)


def side_by_side(store: Any, runs: Sequence[tuple[str, int]], configs: Sequence[Config],
                 kernels: Sequence[str], emulated: bool) -> str:
    """The workload and cyclic tables with one group of columns per booted kernel."""
    if not runs:
        return "no kernel's study was stored\n"
    caveat = (textwrap.fill("EMULATED (TCG, no KVM): every figure below is qemu's emulator's, not the kernel's; "
                            "the tables show that the study runs on each kernel, not their real-time latency "
                            "(docs/kernels.md)", 100) + "\n\n" if emulated else "")
    results = {release: store.results(run_id) for release, run_id in runs}
    head = ["workload", "configuration"]
    for release, _ in runs:
        head += [f"{release} median", "max", "misses"]
    rows = []
    for c in configs:
        per = {rel: {r.kernel: r.text for r in workload_rows(results[rel], c, kernels)} for rel, _ in runs}
        for k in kernels:
            row = [k, c.label or "no stress"]
            for rel, _ in runs:
                t = per[rel][k]
                row += [t[MEDIAN], t[MAX], t[MISSES]]
            rows.append(row)
    chead = ["configuration"]
    for release, _ in runs:
        chead += [f"{release} p99", "max"]
    crow_sets = {rel: cyclic_rows(results[rel], configs)[1] for rel, _ in runs}
    crows = []
    for i, c in enumerate(configs):
        row = [c.label or "no stress"]
        for rel, _ in runs:
            t = crow_sets[rel][i]
            row += [t[C_P99], t[C_MAX]]
        crows.append(row)
    right = [False, False] + [True] * (3 * len(runs))
    facts = "\n".join(f"  {rel}: " + ", ".join(f"{k} {v}" for k, v in rt_facts(store.run(str(run_id)).machine) if k in FACTS)
                      for rel, run_id in runs)
    return (f"{caveat}kernels:\n{facts}\n\n{WORKLOAD}, execution time per job (us), side by side\n" + render_table(head, rows, right) + "\n\n"
            f"{CYCLIC}: wake-up latency (us), side by side\n"
            + render_table(chead, crows, [False] + [True] * (2 * len(runs))) + "\n")
