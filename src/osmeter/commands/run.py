"""osmeter run: run benchmarks with the probe and store every result as it arrives.

The probe checks the names and parameters itself and exits 2 before
writing anything when they are wrong; osmeter then shows its message and
stores nothing (the run row is created only when `meta` arrives).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from .. import cgroup
from ..argtypes import counter_list, positive_int_up_to
from ..errors import UsageError
from ..probe import locate_probe
from ..runner import (
    CLOCKS,
    DEFAULT_REPEAT,
    DEFAULT_SUITE,
    MAX_PROFILE_FREQUENCY,
    PROFILE_FREQUENCY,
    SUITES,
    RunOptions,
    record_run,
    verdict,
)
from ..store import open_store, resolve_location
from ..store.base import Store
from .options import (
    add_json_option,
    add_store_option,
    fifo_priority,
    non_negative_int,
    positive_float,
    positive_int,
)
from .show import add_wide_option, render_stored_run

NAME = "run"
_PARAM = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def param_assignment(text: str) -> str:
    """argparse type for --param: KEY=VALUE with a snake_case key."""
    if not _PARAM.match(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE (for example --param size=4k)")
    return text


def cgroup_size(text: str) -> int:
    """argparse type for --cgroup-mem: a size (512M, 1G); its range is checked with the machine."""
    try:
        return cgroup.parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        NAME,
        help="run benchmarks and store the results",
        description="Run benchmarks (by name, or a suite; the standard suite when nothing is given), "
        "show progress, store each result as it finishes and print a summary.",
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run, e.g. syscall.null (see `osmeter list`)")
    p.add_argument("--suite", choices=SUITES, help=f"run a suite (default when no NAME is given: {DEFAULT_SUITE})")
    p.add_argument(
        "--param", action="append", default=[], type=param_assignment, metavar="KEY=VALUE",
        help="set a parameter; KEY=A,B (or --param given again for KEY) measures each value, "
        "KEY=A..B every integer from A to B (integer parameters)"
    )
    p.add_argument("--cpu", type=non_negative_int, metavar="N", help="pin to CPU N (default: the least busy)")
    p.add_argument("--label", help="a name for this run, shown by `osmeter runs`")
    p.add_argument("--min-time", type=positive_float, metavar="S", help="minimum time per benchmark, seconds")
    p.add_argument("--max-time", type=positive_float, metavar="S", help="maximum time per benchmark, seconds")
    p.add_argument("--min-samples", type=positive_int, metavar="N", help="minimum samples per benchmark")
    p.add_argument("--fifo", type=fifo_priority, metavar="PRIO", help="run under SCHED_FIFO at PRIO 1-99 (needs root)")
    p.add_argument("--mlock", action="store_true", help="lock the probe's memory (mlockall)")
    p.add_argument(
        "--sweep", action="store_true", help="run each named benchmark over its suite sweep (e.g. cpu.call args=0..7)"
    )
    p.add_argument("--max-samples", type=positive_int, metavar="N", help="maximum samples per benchmark")
    p.add_argument(
        "--target-rse",
        type=positive_float,
        metavar="R",
        help="stop sampling when the robust relative standard error of the median is under R (0.01 = 1%%)",
    )
    p.add_argument(
        "--repeat",
        type=positive_int,
        metavar="R",
        help="measure every benchmark in R repetitions, each a fresh probe process, interleaved across the "
        "suite; the confidence interval and compare use their spread (default: "
        + ", ".join(f"{k or 'named benchmarks'} {v}" for k, v in DEFAULT_REPEAT.items())
        + "; --min-time/--max-time/--max-samples given here are per repetition)",
    )
    p.add_argument("--clock", choices=CLOCKS, help="force the clock (default: the best one available)")
    # A testing aid for compare (benchmarks/compare_noise.py): a busy wait of
    # NS ns per operation inside the timed region of NAME, recorded in the
    # run's metadata. Not for measuring anything.
    p.add_argument("--inject-ns", metavar="NAME=NS", help=argparse.SUPPRESS)
    p.add_argument(
        "--lebench-exact",
        action="store_true",
        help="time one call per clock pair with CLOCK_MONOTONIC, as LEBench does (with --suite lebench: "
        "reproduces LEBench's own figures; see docs/lebench.md)",
    )
    p.add_argument(
        "--counters",
        type=counter_list,
        metavar="LIST",
        help="performance counters per operation, comma-separated: sw, hw, all, task-clock, page-faults, "
        "cycles, instructions, ipc, cache-misses, ..., r<hex> (see docs/methods/counters.md)",
    )
    p.add_argument(
        "--profile", action="store_true",
        help="also sample each benchmark's timed region (perf_event_open, as `osmeter hotspots`) and store the "
        "profile with its result, for `hotspots --show RUN:BENCH` and `compare --explain` (not with --counters)",
    )
    p.add_argument("--profile-frequency", type=positive_int_up_to(MAX_PROFILE_FREQUENCY), metavar="HZ",
                   help=f"samples per second with --profile, 1..{MAX_PROFILE_FREQUENCY} (default {PROFILE_FREQUENCY})")
    p.add_argument(
        "--cgroup-mem",
        type=cgroup_size,
        metavar="SIZE",
        help="run the probe inside a new memory cgroup limited to SIZE (e.g. 512M; needs root), so the page "
        "cache it fills is charged to SIZE (file.cache_sweep finds that size); removed afterwards",
    )
    add_wide_option(p)
    add_store_option(p)
    add_json_option(p, "the run")
    return p


def options_from_args(args: argparse.Namespace) -> RunOptions:
    if args.names and args.suite:
        raise UsageError("give benchmark names or --suite, not both")
    return RunOptions(
        names=tuple(args.names),
        suite=None if args.names else (args.suite or DEFAULT_SUITE),
        params=tuple(args.param),
        cpu=args.cpu,
        label=args.label,
        min_time=args.min_time,
        max_time=args.max_time,
        min_samples=args.min_samples,
        fifo=args.fifo,
        mlock=args.mlock,
        clock=args.clock,
        sweep=args.sweep,
        max_samples=args.max_samples,
        target_rse=args.target_rse,
        counters=args.counters,
        lebench_exact=args.lebench_exact,
        repeat=args.repeat,
        inject_ns=args.inject_ns,
        cgroup_mem=args.cgroup_mem,
        profile=args.profile,
        profile_frequency=args.profile_frequency,
    )


def execute(opts: RunOptions, store: Store, probe: Path, as_json: bool, cg: cgroup.MemoryCgroup | None = None,
            wide: bool = False) -> int:
    """Run and store; with `cg` (--cgroup-mem) the probe runs inside that memory cgroup; `wide`: the
    summary's every column and parameter (--wide)."""
    recorder, outcome, status = record_run(opts, store, probe, cg)
    sys.stdout.write(render_stored_run(store, str(recorder.run_id), as_json, wide=wide))
    sys.stdout.flush()
    return verdict(recorder, outcome, status)


def run(args: argparse.Namespace) -> int:
    opts = options_from_args(args)
    if opts.cgroup_mem is not None:
        cgroup.check_possible(opts.cgroup_mem)  # not root, no controller, a bad size: before the store is touched
    store = open_store(resolve_location(args.store), create=True)  # fails before anything runs
    try:
        probe = locate_probe()
        if opts.cgroup_mem is None:
            return execute(opts, store, probe, args.json, wide=args.wide)
        with cgroup.MemoryCgroup.create(opts.cgroup_mem) as cg:  # removed on every way out
            return execute(opts, store, probe, args.json, cg, args.wide)
    finally:
        store.close()
