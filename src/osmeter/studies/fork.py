"""osmeter study fork: fork cost against parent memory, one stored run.

The matrix: `task.fork` with the parent's written memory at 1, 8, 16, 32,
64, 128, 256, 512 and 1024 MiB, x {single process, one process per CPU
forking at once (concurrency=0)} x {no migration, a CPU migration before
every fork}, N forks per point (1000, or 100 with --quick), with performance
counters (`--counters all`: software counters, and hardware ones where the
PMU has them; `--counters none` for latencies without the counters' constant
cost). One probe invocation, stored as one run.

Then, in DIR: the figures of `osmeter.report.figures.task` (fork latency
against parent memory, one line per configuration with a min-max band, and
one figure per counted counter) as SVG and PNG, and the table of min / mean
/ median / max per point (plus counters per fork) as CSV and text, which is
also printed.

Points the machine cannot hold (K x 1024 MiB beyond what it can spare) are
skipped by the probe with a message, never left to the OOM killer.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path

from .. import outfile, textsafe
from ..fmt import fmt_num
from ..argtypes import counter_list, non_negative_int, positive_int
from ..errors import UsageError
from ..probe import locate_probe
from ..progress import make_progress
from ..recorder import RunContext, RunRecorder
from ..report.figures.task import NS_PER_MS, StudyPoint, by_config, study_points
from ..runner import RunOptions, drive, probe_argv, problem_text, verdict
from ..store import open_store, resolve_location
from ..store.base import Store
from .common import check_figures_possible, render_csv

NAME = "fork"
HELP = "fork cost against parent memory"
DESCRIPTION = ("task.fork with 1..1024 MiB of written parent memory, alone and on every CPU at once, with "
               "and without a CPU migration before each fork, with performance counters.")
SIZES_MIB = (1, 8, 16, 32, 64, 128, 256, 512, 1024)
FULL_FORKS = 1000
QUICK_FORKS = 100
# Per point: generous, so N forks finish even at 1 GiB with every CPU
# forking and migrating (~50 ms a fork on a small VM); N stops it first.
MAX_TIME_S = 900.0
COUNTERS = "all"
TABLE_COUNTERS = ("task-clock", "page-faults", "context-switches", "cpu-migrations", "cycles", "instructions")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The fork study's options (the `study` command adds --store after them)."""
    p.add_argument("--quick", action="store_true", help=f"{QUICK_FORKS} forks per point instead of {FULL_FORKS}")
    p.add_argument("--forks", type=positive_int, metavar="N", help="forks per point (overrides --quick)")
    p.add_argument(
        "-o", "--output", metavar="DIR", default="osmeter-fork-study", help="directory for figures and table"
    )
    p.add_argument(
        "--drop-caches", action="store_true", help="drop the page cache before every fork, as the study did (root)"
    )
    p.add_argument(
        "--counters",
        type=counter_list,
        default=COUNTERS,
        metavar="LIST",
        help=f"performance counters (default {COUNTERS}); 'none' for latencies without their constant "
        "cost (docs/methods/counters.md)",
    )
    p.add_argument("--cpu", type=non_negative_int, metavar="N", help="CPU of the single process (default: least busy)")
    p.add_argument("--label", help="a name for the stored run (default: 'fork study')")


def fork_options(
    forks: int, drop_caches: bool, cpu: int | None, label: str | None, counters: str | None = COUNTERS
) -> RunOptions:
    """The probe run of the fork study: configurations outermost, sizes innermost."""
    params = [
        "concurrency=1,0",
        "migrate=0,1",
        "touched_mib=" + ",".join(str(s) for s in SIZES_MIB),
    ]
    if drop_caches:
        params.append("drop_caches=1")
    return RunOptions(
        names=("task.fork",),
        suite=None,
        params=tuple(params),
        cpu=cpu,
        label=label or "fork study",
        min_time=None,
        max_time=MAX_TIME_S,
        min_samples=forks,
        fifo=None,
        mlock=False,
        clock=None,
        max_samples=forks,
        counters=None if counters in (None, "none") else counters,
    )


# --- the table --------------------------------------------------------------


def _ms(ns: float) -> str:
    return f"{ns / NS_PER_MS:.3f}"


def table_rows(points: list[StudyPoint]) -> tuple[list[str], list[list[str]]]:
    """Header and rows: one per point, configurations in run order, sizes ascending."""
    counters: list[str] = []
    for p in points:
        counters += [c for c in p.counters if c not in counters]
    header = ["configuration", "parent_mib", "forks", "min_ms", "mean_ms", "median_ms", "max_ms"]
    header += [f"{c}_per_fork" + ("_ms" if _unit(points, c) == "ns" else "") for c in counters]
    rows = []
    for config, ps in by_config(points).items():
        for p in ps:
            row = [config, str(p.touched_mib), str(p.n), _ms(p.min), _ms(p.mean), _ms(p.median), _ms(p.max)]
            for c in counters:
                v = p.counters.get(c)
                if v is None or not math.isfinite(v):
                    row.append("")
                elif _unit(points, c) == "ns":
                    row.append(_ms(v))
                else:
                    row.append(fmt_num(v, grouped=False))  # no exponent, no separator (the CSV's too)
            rows.append(row)
    return header, rows


def _unit(points: list[StudyPoint], counter: str) -> str:
    for p in points:
        if counter in p.counter_units:
            return p.counter_units[counter]
    return "count"


def render_text(header: list[str], rows: list[list[str]]) -> str:
    """A fixed-width table: the timing columns and the main counters."""
    keep = [i for i, h in enumerate(header) if i < 7 or any(h.startswith(c + "_") for c in TABLE_COUNTERS)]
    cols = [[header[i]] + [r[i] for r in rows] for i in keep]
    widths = [max(len(x) for x in col) for col in cols]
    lines = []
    for k in range(len(rows) + 1):
        cells = [col[k].ljust(w) if i == 0 else col[k].rjust(w) for i, (col, w) in enumerate(zip(cols, widths))]
        lines.append("  ".join(cells).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


# --- running ----------------------------------------------------------------


TABLES = ("fork-study.csv", "fork-study.txt")  # what write_outputs writes, checked before the study runs
FIGURES = ("task-fork-study*.svg", "task-fork-study*.png")  # report/figures/task.py names them so


def write_outputs(store: Store, run_id: int, directory: Path) -> list[Path]:
    """Figures (SVG and PNG) and the table (CSV and text) of a stored fork-study run."""
    from ..report import plots
    from ..report.content import run_data
    from ..report.figures.task import figures

    data = run_data(store, store.run(str(run_id)))
    written = []
    header, rows = table_rows(study_points(data))
    for name, text in zip(TABLES, (render_csv(header, rows), render_text(header, rows))):
        outfile.write(directory / name, text)
        written.append(directory / name)
    for nf in figures(data):
        try:
            for fmt in ("svg", "png"):
                path = directory / f"{nf.name}.{fmt}"
                outfile.write(path, plots.render(nf.figure, fmt))
                written.append(path)
        finally:
            plots.close(nf.figure)
    return written


def run(args: argparse.Namespace) -> int:
    if args.drop_caches and os.geteuid() != 0:
        raise UsageError("--drop-caches needs root: only root may write /proc/sys/vm/drop_caches")
    check_figures_possible()
    directory = Path(args.output)
    outfile.prepare_directory(directory)  # checked and made before any work; links followed
    outfile.check_entries(directory, TABLES, FIGURES)
    forks = args.forks or (QUICK_FORKS if args.quick else FULL_FORKS)
    opts = fork_options(forks, args.drop_caches, args.cpu, args.label, args.counters)
    store = open_store(resolve_location(args.store), create=True)
    try:
        probe = locate_probe()
        argv = probe_argv(probe, opts)
        context = RunContext(label=opts.label, argv=argv, params={**asdict(opts), "study": "fork"}, source="run")
        recorder = RunRecorder(store, context)
        progress = make_progress(sys.stderr)
        started = time.monotonic()
        try:
            outcome = drive(argv, recorder, progress)
        finally:
            progress.close()
        elapsed = time.monotonic() - started
        if recorder.run_id is None:
            raise UsageError("the study was interrupted before it started; nothing stored")
        status = recorder.finish(problem_text(outcome, recorder))
        for note in recorder.notes:
            textsafe.say("note", note)
        written = write_outputs(store, recorder.run_id, directory)
        sys.stdout.write((directory / TABLES[1]).read_text(encoding="utf-8"))
        for r in recorder.results:
            if r.status != "ok":
                print(textsafe.line(f"{r.status}: task.fork {r.params}: {r.reason}"))
        print(f"run {recorder.run_id} ({status}): {forks} forks per point, {elapsed:.0f} s")
        for path in written:
            print(path)
        return verdict(recorder, outcome, status or "incomplete")
    finally:
        store.close()
