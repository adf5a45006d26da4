"""osmeter run: run benchmarks with the probe and store every result as it arrives.

The probe checks the names and parameters itself and exits 2 before
writing anything when they are wrong; osmeter then shows its message and
stores nothing (the run row is created only when `meta` arrives).
"""

from __future__ import annotations

import argparse
import re
import signal
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

from .. import cgroup, textsafe
from ..errors import (
    EXIT_BENCH_ERRORS,
    EXIT_OK,
    Interrupted,
    ProbeError,
    RecordError,
    StoreError,
    UsageError,
    interruption_signal,
)
from ..probe import (
    PROBE_BENCH_FAILED_EXIT,
    PROBE_USAGE_EXIT,
    ProbeProcess,
    SignalForwarder,
    describe_exit,
    locate_probe,
    probe_message,
)
from ..progress import PlainProgress, make_progress
from ..recorder import RepetitionStarted, RunContext, RunRecorder, RunStarted
from ..records import parse_line
from ..store import open_store, resolve_location
from ..store.base import Store
from .options import add_json_option, add_store_option, fifo_priority, non_negative_int, positive_float, positive_int
from .show import render_stored_run

NAME = "run"
SUITES = ("quick", "standard", "full", "lebench")
DEFAULT_SUITE = "standard"
# Repetitions (fresh probe processes) per suite, and for named benchmarks
# (None): each takes 1/R of the suite's default budget, so the suite's time
# stays what it was (docs/statistics.md, "Repetitions").
DEFAULT_REPEAT = {"quick": 3, "standard": 3, "full": 5, "lebench": 3, None: 3}
MAX_REPEAT = 100
CLOCKS = ("tsc", "cntvct", "monotonic_raw", "monotonic")
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


def counter_list(text: str) -> str:
    """argparse type for --counters: a non-empty comma-separated list (the probe checks the names)."""
    if not text or not all(part.strip() for part in text.split(",")) or any(c.isspace() for c in text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of counters (for example sw,cycles)")
    return text


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
        "--cgroup-mem",
        type=cgroup_size,
        metavar="SIZE",
        help="run the probe inside a new memory cgroup limited to SIZE (e.g. 512M; needs root), so the page "
        "cache it fills is charged to SIZE (file.cache_sweep finds that size); removed afterwards",
    )
    add_store_option(p)
    add_json_option(p, "the run")
    return p


@dataclass(frozen=True)
class RunOptions:
    names: tuple[str, ...]
    suite: str | None
    params: tuple[str, ...]
    cpu: int | None
    label: str | None
    min_time: float | None
    max_time: float | None
    min_samples: int | None
    fifo: int | None
    mlock: bool
    clock: str | None
    sweep: bool = False
    max_samples: int | None = None
    target_rse: float | None = None
    counters: str | None = None  # --counters LIST, passed to the probe as is
    lebench_exact: bool = False
    repeat: int | None = None  # None: the suite's default (DEFAULT_REPEAT)
    inject_ns: str | None = None  # NAME=NS: a known slow-down, for testing compare
    cgroup_mem: int | None = None  # --cgroup-mem: bytes; the probe runs in a memory cgroup of this limit

    @property
    def repetitions(self) -> int:
        return self.repeat if self.repeat is not None else DEFAULT_REPEAT.get(self.suite, DEFAULT_REPEAT[None])


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
    )


def probe_argv(probe: Path, opts: RunOptions) -> list[str]:
    """`osmeter-probe run --die-with-parent (--suite S | NAME...) [options]`."""
    argv = [str(probe), "run", "--die-with-parent"]
    argv += ["--suite", opts.suite] if opts.suite else list(opts.names)
    for assignment in opts.params:
        argv += ["--param", assignment]
    valued = (
        ("--cpu", opts.cpu),
        ("--min-time", opts.min_time),
        ("--max-time", opts.max_time),
        ("--min-samples", opts.min_samples),
        ("--max-samples", opts.max_samples),
        ("--target-rse", opts.target_rse),
        ("--fifo", opts.fifo),
        ("--clock", opts.clock),
        ("--counters", opts.counters),
        ("--inject-ns", opts.inject_ns),
    )
    for flag, value in valued:
        if value is not None:
            argv += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    if opts.mlock:
        argv.append("--mlock")
    if opts.lebench_exact:
        argv.append("--lebench-exact")
    if opts.repetitions > MAX_REPEAT:
        raise UsageError(f"--repeat {opts.repetitions} is more than {MAX_REPEAT} repetitions")
    if opts.repetitions > 1:
        argv += ["--budget-fraction", f"{1 / opts.repetitions:.6g}"]
    if opts.sweep:
        if opts.suite:
            raise UsageError("--sweep goes with benchmark names; a suite already runs its sweeps")
        argv.append("--sweep")
    return argv


@dataclass(frozen=True)
class Outcome:
    """How the probe's side of a run ended."""

    returncode: int
    signal: int | None  # the signal osmeter received, if any
    problem: str | None  # a bad record or a store failure, if any


def drive(argv: list[str], recorder: RunRecorder, progress: PlainProgress,
          before_exec: Callable[[], None] | None = None) -> Outcome:
    """Run the probe and feed its records to the recorder until its output ends.
    `before_exec`: see ProbeProcess.start (the memory cgroup of --cgroup-mem)."""
    problem = None
    with ProbeProcess.start(argv, before_exec) as proc, SignalForwarder(proc) as signals:
        for lineno, line in enumerate(proc.lines(), 1):
            if not line.complete:
                progress.note(f"ignored the probe's last line {lineno}: it was cut off in the middle")
                continue
            if line.error is None and not line.text.strip():
                continue  # blank lines carry nothing; `import` skips them too
            try:
                if line.error is not None:
                    raise RecordError(line.error)
                event = recorder.feed(parse_line(line.text))
            except RecordError as e:
                problem = f"the probe wrote an invalid record on line {lineno}: {e.message}"
                break
            if isinstance(event, (RunStarted, RepetitionStarted)):
                proc.forward_stderr(sys.stderr)
            progress.show(event)
        returncode = proc.close()
        for path in proc.leftovers:
            progress.note(f"removed the work directory the stopped probe left: {path}")
        if recorder.run_id is None and signals.received is None:
            if returncode == PROBE_USAGE_EXIT and problem is None:
                raise UsageError(probe_message(proc.stderr_text()) or "osmeter-probe rejected the arguments")
            said = problem or probe_message(proc.stderr_text())
            raise ProbeError(
                f"osmeter-probe stopped before starting the run ({describe_exit(returncode)})"
                + (f": {said}" if said else "")
                + f"\ncommand: {' '.join(argv)}"
            )
        return Outcome(returncode, signals.received, problem)


def _verdict(recorder: RunRecorder, outcome: Outcome, status: str) -> int:
    """The exit code, or the error to raise, once the run is stored and shown."""
    kept = f"{len(recorder.results)} finished benchmark(s) kept in run {recorder.run_id}, marked {status}"
    if outcome.signal is not None:
        raise Interrupted(outcome.signal, f"interrupted by {_signame(outcome.signal)}: {kept}")
    if outcome.problem is not None:
        raise ProbeError(f"{outcome.problem}; {kept}")
    end = recorder.end
    if end is None:
        stopped = describe_exit(outcome.returncode)
        raise ProbeError(f"osmeter-probe stopped before the end of the run ({stopped}); {kept}")
    if end.status != "complete":
        raise ProbeError(f"osmeter-probe was interrupted by {end.signal or 'a signal'} (not by osmeter); {kept}")
    failed = sum(1 for r in recorder.results if r.status == "error")
    if failed:
        print(f"osmeter: {failed} benchmark(s) reported an error (exit status {EXIT_BENCH_ERRORS})", file=sys.stderr)
        return EXIT_BENCH_ERRORS
    return EXIT_OK


def _signame(signum: int) -> str:
    return signal.Signals(signum).name


def _problem_text(outcome: Outcome, recorder: RunRecorder) -> str | None:
    """Why the run is incomplete, from osmeter's side; None if nothing went wrong."""
    probe_completed = recorder.end is not None and recorder.end.status == "complete"
    if outcome.signal is not None and not probe_completed:  # a signal after `end` costs nothing
        return f"osmeter interrupted by {_signame(outcome.signal)}"
    if outcome.problem is not None:
        return outcome.problem
    if recorder.end is None:
        return f"osmeter-probe stopped without an 'end' record ({describe_exit(outcome.returncode)})"
    return None


def drive_repetitions(argv: list[str], recorder: RunRecorder, progress: PlainProgress,
                      before_exec: Callable[[], None] | None = None) -> Outcome:
    """The probe run once per repetition, into one recorder, while each ends well."""
    outcome = drive(argv, recorder, progress, before_exec)
    while recorder.repetition < recorder.repetitions and _repetition_ok(outcome, recorder):
        done = recorder.repetition
        outcome = drive(argv, recorder, progress, before_exec)
        if recorder.repetition == done and outcome.problem is None and outcome.signal is None:
            said = describe_exit(outcome.returncode)
            outcome = Outcome(outcome.returncode, None, f"repetition {done + 1}: osmeter-probe did not start ({said})")
    return outcome


def _repetition_ok(outcome: Outcome, recorder: RunRecorder) -> bool:
    return (
        outcome.signal is None
        and outcome.problem is None
        and recorder.end is not None
        and recorder.end.status == "complete"
    )


def execute(opts: RunOptions, store: Store, probe: Path, as_json: bool, cg: cgroup.MemoryCgroup | None = None) -> int:
    """Run and store; with `cg` (--cgroup-mem) the probe runs inside that memory cgroup."""
    argv = probe_argv(probe, opts)
    params: dict[str, Any] = {**asdict(opts), "repeat": opts.repetitions}
    if cg is not None:
        params["cgroup"] = {**cg.describe(), "scope": "the whole run"}
    context = RunContext(label=opts.label, argv=argv, params=params, source="run")
    recorder = RunRecorder(store, context, repetitions=opts.repetitions)
    progress = make_progress(sys.stderr)
    try:
        outcome = drive_repetitions(argv, recorder, progress, cg.enter() if cg is not None else None)
    except StoreError:
        progress.close()
        _try_finish(recorder, "the store could not be written")
        raise
    except KeyboardInterrupt as e:  # Ctrl-C, SIGTERM, SIGHUP outside a probe's lifetime (between repetitions)
        progress.close()
        _try_finish(recorder, f"osmeter interrupted by {_signame(interruption_signal(e))}")
        raise
    except BaseException as e:  # never leave the run 'running'
        progress.close()
        _try_finish(recorder, f"osmeter failed: {type(e).__name__}")
        raise
    progress.close()
    for warning in recorder.warnings:
        textsafe.say("warning", warning)
    if recorder.run_id is None:
        assert outcome.signal is not None  # drive() raised for every other way of ending here
        name = _signame(outcome.signal)
        raise Interrupted(outcome.signal, f"interrupted by {name} before the run started; nothing stored")
    status = recorder.finish(_problem_text(outcome, recorder))
    assert status is not None
    for note in recorder.notes:
        textsafe.say("note", note)
    _note_unexpected_exit(recorder, outcome.returncode)
    sys.stdout.write(render_stored_run(store, str(recorder.run_id), as_json))
    sys.stdout.flush()
    return _verdict(recorder, outcome, status)


def _note_unexpected_exit(recorder: RunRecorder, returncode: int) -> None:
    """A probe that finished its run but exited oddly is worth a note, not a failure."""
    if recorder.end is None or recorder.end.status != "complete" or returncode == 0:
        return
    if returncode == PROBE_BENCH_FAILED_EXIT and any(r.status == "error" for r in recorder.results):
        return  # the documented status for "a benchmark failed"
    textsafe.say("note", f"osmeter-probe ended with {describe_exit(returncode)} after a complete run")


def _try_finish(recorder: RunRecorder, problem: str) -> None:
    """Best effort: the store may be failing, so marking the run may fail too."""
    try:
        recorder.finish(problem)
    except Exception:
        pass


def run(args: argparse.Namespace) -> int:
    opts = options_from_args(args)
    if opts.cgroup_mem is not None:
        cgroup.check_possible(opts.cgroup_mem)  # not root, no controller, a bad size: before the store is touched
    store = open_store(resolve_location(args.store), create=True)  # fails before anything runs
    try:
        probe = locate_probe()
        if opts.cgroup_mem is None:
            return execute(opts, store, probe, args.json)
        with cgroup.MemoryCgroup.create(opts.cgroup_mem) as cg:  # removed on every way out
            return execute(opts, store, probe, args.json, cg)
    finally:
        store.close()
