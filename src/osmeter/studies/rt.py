"""osmeter study rt: the RT study's matrix, tables and figures, one stored run.

The matrix (docs/methods/rt.md, "Study"): `rt.workload` for every workload
kernel under each stress configuration, {no stress} and {k stressors of
read, of write, for k = 1 .. CPUs - 1} (CPUs = the CPUs this process may
run on; on a 1-CPU machine stress=1 is still asked for, so the probe's skip
says why there is no stressed column), N jobs per point (`--min-samples N
--max-samples N`: 1000 as the study, fewer with --quick); and `rt.cyclic`
idle and under each stressed configuration for a fixed number of cycles
(`loops`, --cyclic-s seconds at 1 ms). Each configuration is two parts,
the workload and the cyclic one, each one osmeter-probe invocation
(common.py), recorded as one run.

Then, in DIR, printed too: one table per configuration (kernel | jobs |
average | median | 95 % CI of the median | variance | max | deadline
misses | period), the study-wide summary of the finding (per kernel and
stressed configuration, stressed / unstressed ratios of median, variance
and max, with compare's tests of the max and the variance), and
rt.cyclic's latency table; as CSV (one file per table) and text
(rt-study.txt); and the figures of osmeter.report.figures.rt as SVG and
PNG. A point the probe skipped or that failed is a row with its reason,
never a figure. The tables' rows and the finding are rt_analysis.py's;
this module plans the run, runs it and writes what the analysis gives.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

from .. import outfile, textsafe
from ..argtypes import non_negative_int, positive_float, positive_int
from ..catalog import probe_catalog
from ..errors import UsageError
from ..fmt import render_table
from ..probe import locate_probe
from ..report.figures.rt import CYCLIC, WORKLOAD, Config
from ..runner import RunOptions
from ..store import open_store, resolve_location
from ..sysinfo import rt_facts
from . import rt_vm
from .common import Part, check_figures_possible, conclude, record_parts, write_files
from .common import render_csv as table_csv
from .rt_analysis import (
    CYCLIC_HEADER,
    CYCLIC_RIGHT,
    CYCLIC_TEXT,
    RATIO_HEADER,
    RATIO_RIGHT,
    RATIO_TEXT,
    WORKLOAD_HEADER,
    WORKLOAD_RIGHT,
    WORKLOAD_TEXT,
    cyclic_rows,
    finding_lines,
    ratio_rows,
    ratios,
    setting_notes,
    unstressed_period_us,
    workload_rows,
)

NAME = "rt"
HELP = ("periodic real-time workload kernels under 0..CPUs-1 memory stressors, wake-up latency histograms, "
        "deadline misses")
DESCRIPTION = ("The RT study as one stored run: rt.workload for every workload kernel with no stressor and with "
               "1 .. CPUs-1 memory read or write stressors on the other CPUs (N jobs per point), and rt.cyclic "
               "(cyclictest's wake-up latency) idle and under each stressed configuration; a table per "
               "configuration (average, median with its 95 % CI, variance, maximum, deadline misses), the "
               "stressed / unstressed ratios of median, variance and maximum per kernel, and the figures. With "
               "--kernel K (once per OS kernel): the study inside a VM booting each, one run per OS kernel, the "
               "tables side by side (docs/kernels.md).")
OPS = ("read", "write")  # the study's memory stressors
FULL_JOBS = 1000  # jobs per point, as the study
QUICK_JOBS = 300
FULL_CYCLIC_S = 60.0  # seconds of rt.cyclic per configuration
QUICK_CYCLIC_S = 10.0
CYCLIC_INTERVAL_US = 1000  # rt.cyclic's default period
PRIORITY = 80  # SCHED_FIFO priority of the measuring thread (the probe's default)
# The budget. A job of the study's kernels lasts 10-500 us and its period is
# twice its unstressed median, so a point of N jobs takes at most about
# N x 1 ms (JOB_SLOT_S). Each workload instance may run for twice that plus
# a second (set-up: the kernel's unstressed median from 31 jobs, the
# stressors' start, warm-up) but never less than MIN_POINT_S: a cap that
# ends a point whose kernel is slower than the study's (a slow board) with
# fewer jobs, shown in its row, rather than letting it run on.
JOB_SLOT_S = 1e-3
MIN_POINT_S = 3.0
FULL_MIN_POINT_S = 60.0  # the full study waits for its 1000 jobs even on a slow board
PART_OVERHEAD_S = 1.0  # one probe invocation: start, clock calibration, meta
QUICK_LIMIT_S = 300.0  # --quick's promise on a 2-CPU machine


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The rt study's options (the `study` command adds --store after them)."""
    quick_worst = worst_case_s(19, 3, QUICK_JOBS, QUICK_CYCLIC_S, True)
    p.add_argument(
        "--quick", action="store_true",
        help=f"{QUICK_JOBS} jobs per point instead of {FULL_JOBS}, and {QUICK_CYCLIC_S:g} s of rt.cyclic per "
        f"configuration instead of {FULL_CYCLIC_S:g}: on a 2-CPU machine (19 kernels x 3 configurations) "
        f"{QUICK_JOBS} jobs of at most 1 ms a point take under 20 s, the cyclic parts {3 * QUICK_CYCLIC_S:g} s, "
        f"and no point may take more than {MIN_POINT_S:g} s: at most {quick_worst / 60:.1f} minutes")
    p.add_argument("-o", "--output", metavar="DIR", default="osmeter-rt-study",
                   help="directory for the tables and figures")
    p.add_argument("--jobs", type=positive_int, metavar="N",
                   help=f"jobs per kernel and configuration (default {FULL_JOBS}; {QUICK_JOBS} with --quick)")
    p.add_argument("--kernels", metavar="LIST",
                   help="comma-separated workload kernels (default: every kernel the probe has; "
                   "`osmeter list` names them)")
    p.add_argument("--cyclic-s", type=positive_float, metavar="S",
                   help=f"seconds of rt.cyclic per configuration, at a {CYCLIC_INTERVAL_US} us interval "
                   f"(default {FULL_CYCLIC_S:g}; {QUICK_CYCLIC_S:g} with --quick)")
    p.add_argument("--priority", type=rt_priority, metavar="P",
                   help=f"SCHED_FIFO priority 1-99 of the measured thread (default {PRIORITY}; needs root, else the "
                   "probe runs SCHED_OTHER and the tables say so); 0 = SCHED_OTHER")
    p.add_argument("--cpu", type=non_negative_int, metavar="N",
                   help="the measured CPU (default: the least busy); the stressors run on the others")
    p.add_argument("--label", help="a name for the stored run (default: 'rt study')")
    rt_vm.add_arguments(p)


def rt_priority(text: str) -> int:
    """argparse type for --priority: 0 (SCHED_OTHER) or a SCHED_FIFO priority 1-99."""
    value = non_negative_int(text)
    if value > 99:
        raise argparse.ArgumentTypeError(f"{text} is out of range: 0 (SCHED_OTHER) or 1-99 (SCHED_FIFO)")
    return value


def worst_case_s(n_kernels: int, n_configs: int, jobs: int, cyclic_s: float, quick: bool) -> float:
    """The longest the study may take: every workload point at its time cap,
    every cyclic part its cycles plus a second, every probe invocation its
    start-up."""
    invocations = 2 * n_configs + (n_configs - 1) * (n_kernels - 1)  # stressed workloads: one per kernel
    return (n_kernels * n_configs * point_cap_s(jobs, quick) + n_configs * cyclic_cap_s(cyclic_s)
            + invocations * PART_OVERHEAD_S)


def cyclic_cap_s(cyclic_s: float) -> float:
    """--max-time of one rt.cyclic instance: its cycles, set-up and warm-up."""
    return cyclic_s + 2.0


def point_cap_s(jobs: int, quick: bool) -> float:
    """--max-time of one workload instance."""
    return max(MIN_POINT_S if quick else FULL_MIN_POINT_S, 2 * jobs * JOB_SLOT_S + 1.0)


# --- the plan ----------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    kernels: tuple[str, ...]
    configs: tuple[Config, ...]
    jobs: int
    cyclic_s: float
    cyclic_loops: int
    priority: int
    parts: tuple[Part, ...]
    notes: tuple[str, ...] = ()


def stress_configs(cpus: int) -> tuple[Config, ...]:
    """{no stress} and k x read, k x write for k = 1 .. cpus - 1; k = 1 even
    on one CPU, so the probe's skip tells why nothing was stressed."""
    return (Config(0, ""),) + tuple(Config(k, op) for k in range(1, max(2, cpus)) for op in OPS)


def choose_kernels(text: str | None, known: Sequence[str]) -> tuple[str, ...]:
    """--kernels checked against the probe's kernels (all of them by default)."""
    if text is None:
        return tuple(known)
    names = [k.strip() for k in text.split(",") if k.strip()]
    bad = [k for k in names if k not in known]
    if bad or not names:
        raise UsageError(f"--kernels {text}: {'unknown kernel ' + ', '.join(bad) if bad else 'no kernel named'}; "
                         f"the probe has {', '.join(known)}")
    return tuple(dict.fromkeys(names))


def probe_kernels(catalog: Any) -> tuple[str, ...]:
    """rt.workload's kernel choices from the probe's catalogue."""
    bench = next((b for b in catalog.benchmarks if b.name == WORKLOAD), None)
    param = next((p for p in bench.params if p.name == "kernel"), None) if bench is not None else None
    if param is None or not param.choices:
        raise UsageError(f"this osmeter-probe ({catalog.probe_version}) has no {WORKLOAD} with a kernel parameter: "
                         "build a probe with the rt family")
    return param.choices


def _options(names: tuple[str, ...], params: Sequence[str], cpu: int | None, label: str, samples: int,
             max_time: float) -> RunOptions:
    return RunOptions(names=names, suite=None, params=tuple(params), cpu=cpu, label=label, min_time=None,
                      max_time=max_time, min_samples=samples, fifo=None, mlock=False, clock=None,
                      max_samples=samples, repeat=1)


def _with_unstressed_period(kernel: str, params: list[str], cpu: int | None, label: str, jobs: int,
                            cap: float) -> Any:
    def resolve(recorder: Any) -> RunOptions:
        us = unstressed_period_us(recorder.results, kernel)
        # No unstressed figure (skipped, failed): the probe's own default.
        return _options((WORKLOAD,), [*params, f"period_us={us if us is not None else 0}"], cpu, label, jobs, cap)
    return resolve


def _stress_params(c: Config) -> list[str]:
    return [f"stress={c.stress}"] + ([f"stress_op={c.op}"] if c.stress else [])


def make_plan(args: argparse.Namespace, cpus: int, known_kernels: Sequence[str]) -> Plan:
    """Everything decided before anything runs: two parts per configuration."""
    kernels = choose_kernels(args.kernels, known_kernels)
    jobs = args.jobs or (QUICK_JOBS if args.quick else FULL_JOBS)
    cyclic_s = args.cyclic_s or (QUICK_CYCLIC_S if args.quick else FULL_CYCLIC_S)
    loops = max(1, round(cyclic_s * 1e6 / CYCLIC_INTERVAL_US))
    priority = PRIORITY if args.priority is None else args.priority
    label = args.label or "rt study"
    configs = stress_configs(cpus)
    parts: list[Part] = []
    for c in configs:
        where = "no stress" if c.stress == 0 else f"{c.label} stressor{'s' if c.stress > 1 else ''}"
        common = _stress_params(c) + [f"priority={priority}"]
        cap = point_cap_s(jobs, args.quick)
        if c.stress == 0:
            parts.append(Part(f"rt.workload, {where}: {len(kernels)} kernels x {jobs} jobs",
                              _options((WORKLOAD,), ["kernel=" + ",".join(kernels), *common], args.cpu, label, jobs,
                                       cap)))
        else:
            # One part per kernel: its period (and so its deadline) is the
            # one the unstressed part measured for it, the same in every
            # configuration, so deadline misses compare across them.
            for k in kernels:
                plan_opts = _options((WORKLOAD,), [f"kernel={k}", "period_us=UNSTRESSED", *common], args.cpu,
                                     label, jobs, cap)
                parts.append(Part(f"rt.workload, {where}: {k} x {jobs} jobs", plan_opts,
                                  resolve=_with_unstressed_period(k, [f"kernel={k}", *common], args.cpu, label,
                                                                  jobs, cap)))
        parts.append(Part(f"rt.cyclic, {where}: {loops} cycles of {CYCLIC_INTERVAL_US} us",
                          _options((CYCLIC,), [f"loops={loops}", f"interval_us={CYCLIC_INTERVAL_US}", *common],
                                   args.cpu, label, loops, cyclic_cap_s(cyclic_s))))
    notes = []
    if cpus < 2:
        notes.append("this process may run on one CPU only: no CPU is left for a stressor, so the stressed "
                     "configurations are skipped (the probe says so in their rows)")
    return Plan(kernels, configs, jobs, cyclic_s, loops, priority, tuple(parts), tuple(notes))


# --- output ------------------------------------------------------------------

TEXT = "rt-study.txt"
RATIOS = "rt-study-ratios.csv"
CYCLIC_CSV = "rt-cyclic.csv"
GLOBS = ("rt-workload-*.csv", "rt-*.svg", "rt-*.png")  # the tables per configuration, report/figures/rt.py's names


def workload_csv_name(c: Config) -> str:
    return f"rt-workload-{c.slug}.csv"


def render(data: Any, plan: Plan) -> tuple[list[tuple[str, str]], str]:
    """The study's CSV tables (name, content) and its text."""
    results = data.results
    tables: list[tuple[str, str]] = []
    parts = [
        f"rt study: {len(plan.kernels)} kernels x {len(plan.configs)} configurations "
        f"({', '.join(c.label for c in plan.configs)}), {plan.jobs} jobs per point; rt.cyclic "
        f"{plan.cyclic_loops} cycles ({plan.cyclic_s:g} s) per configuration; asked for "
        + ("SCHED_OTHER (priority 0)" if plan.priority == 0 else f"SCHED_FIFO priority {plan.priority}")
        + " (what each point got: the policy column and the notes)",
        "machine: " + ", ".join(f"{k} {v}" for k, v in rt_facts(data.run.machine)),
    ]
    for c in plan.configs:
        rows = workload_rows(results, c, plan.kernels)
        tables.append((workload_csv_name(c), table_csv(WORKLOAD_HEADER, [r.csv for r in rows])))
        title = "no stress" if c.stress == 0 else f"{c.label} stressor{'s' if c.stress > 1 else ''} on other CPUs"
        parts.append(f"rt.workload, {title}: execution time per job (us)\n"
                     + render_table(WORKLOAD_TEXT, [r.text for r in rows], WORKLOAD_RIGHT))
    rs = ratios(data, plan.configs, plan.kernels)
    csv_rows, text_rows = ratio_rows(rs)
    tables.append((RATIOS, table_csv(RATIO_HEADER, csv_rows)))
    if text_rows:
        parts.append("stressed / unstressed, per kernel: the ratio of the median, the variance and the max; the "
                     "max and variance changes by compare's tests (docs/compare.md)\n"
                     + render_table(RATIO_TEXT, text_rows, RATIO_RIGHT) + "\n"
                     + "\n".join(finding_lines(rs, plan.configs)))
    else:
        parts.append("stressed / unstressed: no kernel has both an unstressed and a stressed result")
    csv_rows, text_rows = cyclic_rows(results, plan.configs)
    tables.append((CYCLIC_CSV, table_csv(CYCLIC_HEADER, csv_rows)))
    parts.append(f"rt.cyclic: wake-up latency (us), interval {CYCLIC_INTERVAL_US} us\n"
                 + render_table(CYCLIC_TEXT, text_rows, CYCLIC_RIGHT))
    notes = setting_notes(results) + list(plan.notes)
    if any(r.bench.startswith("rt.") and "precision-unmet" in r.flags for r in results):
        notes.append("[precision-unmet]: the study takes a fixed number of jobs and cycles, so the median's "
                     "target precision was not what stopped them; its 95% CI shows the precision reached")
    if notes:
        parts.append("\n".join(f"note: {n}" for n in notes))
    text = "\n\n".join(parts) + "\n"
    return tables + [(TEXT, text)], text


def write_outputs(store: Any, run_id: int, directory: Path, plan: Plan) -> tuple[list[Path], str]:
    from ..report.content import run_data
    from ..report.figures.rt import figures

    directory = outfile.prepare_directory(directory)
    data = run_data(store, store.run(str(run_id)))
    tables, text = render(data, plan)
    return write_files(directory, tables, figures(data)), text


def allowed_cpus() -> int:
    """The CPUs this process (and so the probe) may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _vm_options_alone(args: argparse.Namespace) -> None:
    given = [name for name, value in (("--accel", args.accel != "auto"), ("--cpus", args.cpus),
                                      ("--memory", args.memory), ("--append", args.append), ("--pin", args.pin),
                                      ("--timeout", args.timeout)) if value]
    if given and not args.boot_kernels:
        raise UsageError(f"{given[0]} is an option of the VM: it goes with --kernel K (the study inside a VM)")


def run(args: argparse.Namespace) -> int:
    check_figures_possible()
    _vm_options_alone(args)
    catalog, _ = probe_catalog(locate_probe())
    if args.boot_kernels:
        known = probe_kernels(catalog)
        directory = outfile.prepare_directory(Path(args.output))
        return rt_vm.run(args, lambda cpus: make_plan(args, cpus, known), write_outputs, directory)
    plan = make_plan(args, allowed_cpus(), probe_kernels(catalog))
    directory = outfile.prepare_directory(Path(args.output))  # checked and made before any work
    outfile.check_entries(directory, [TEXT, RATIOS, CYCLIC_CSV, *(workload_csv_name(c) for c in plan.configs)],
                          GLOBS)
    for note in plan.notes:
        textsafe.say("note", note)
    store = open_store(resolve_location(args.store), create=True)
    try:
        params: dict[str, Any] = {"study": "rt", "quick": bool(args.quick), "jobs": plan.jobs,
                                  "kernels": list(plan.kernels), "configs": [c.label for c in plan.configs],
                                  "cyclic_s": plan.cyclic_s, "cyclic_loops": plan.cyclic_loops,
                                  "priority": plan.priority,
                                  # without the label: it is the run's, and compare would list it as a difference
                                  "parts": [{k: v for k, v in asdict(p.opts).items() if k != "label"}
                                            for p in plan.parts]}
        rec = record_parts(store, plan.parts, params)
        assert rec.recorder.run_id is not None  # record_parts raises otherwise
        written, text = write_outputs(store, rec.recorder.run_id, directory, plan)
        return conclude(rec, len(plan.parts), text, written)
    finally:
        store.close()

