"""Running the probe for a run: its options, its command line, feeding its
records to a RunRecorder while progress is shown, repetitions as fresh
probe processes, and what the run's ending means (status, exit code).

`osmeter run`, the studies, `hotspots` and `fleet run` all run the probe
through here; the commands only parse their options and show the result.
"""

from __future__ import annotations

import re
import shlex
import signal
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import IO, Any, Callable

from . import cgroup, textsafe
from .errors import (
    EXIT_BENCH_ERRORS,
    EXIT_OK,
    Interrupted,
    ProbeError,
    RecordError,
    StoreError,
    UsageError,
    interruption_signal,
)
from .probe import (
    PROBE_BENCH_FAILED_EXIT,
    PROBE_USAGE_EXIT,
    ProbeProcess,
    SignalForwarder,
    describe_exit,
    probe_message,
)
from .progress import PlainProgress, make_progress
from .recorder import RepetitionStarted, RunContext, RunRecorder, RunStarted
from .spool import Spool
from .records import Counters, parse_line
from .store.base import Store

SUITES = ("quick", "standard", "full", "lebench")
DEFAULT_SUITE = "standard"
# Repetitions (fresh probe processes) per suite, and for named benchmarks
# (None): each takes 1/R of the suite's default budget, so the suite's time
# stays what it was (docs/statistics.md, "Repetitions").
DEFAULT_REPEAT = {"quick": 3, "standard": 3, "full": 5, "lebench": 3, None: 3}
MAX_REPEAT = 100
CLOCKS = ("tsc", "cntvct", "monotonic_raw", "monotonic")
PROFILE_FREQUENCY = 999  # as osmeter hotspots: out of step with the scheduler's tick
MAX_PROFILE_FREQUENCY = 100_000  # the probe's --frequency range


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
    profile: bool = False  # --profile: sample each timed region (the probe's `hotspots` command)
    profile_frequency: int | None = None  # samples per second (default the probe's: 999)

    @property
    def repetitions(self) -> int:
        return self.repeat if self.repeat is not None else DEFAULT_REPEAT.get(self.suite, DEFAULT_REPEAT[None])


def probe_argv(probe: Path, opts: RunOptions) -> list[str]:
    """`osmeter-probe run --die-with-parent (--suite S | NAME...) [options]`; with
    --profile, the probe's `hotspots`: the same run, with each timed region
    sampled and a `profile` record after each result (docs/methods/hotspots.md)."""
    if opts.profile_frequency is not None and not opts.profile:
        raise UsageError("--profile-frequency goes with --profile")
    argv = [str(probe), "hotspots" if opts.profile else "run", "--die-with-parent"]
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
    if opts.profile:  # --counters go to a pass of their own (counters_argv)
        argv = [a for i, a in enumerate(argv) if a != "--counters" and (i == 0 or argv[i - 1] != "--counters")]
        argv += ["--profile", "sample", "--frequency", str(opts.profile_frequency or PROFILE_FREQUENCY)]
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


# The probe's echo of a skip on stderr (run.c): the progress line says it, once a run.
SKIP_ECHO = re.compile(r"osmeter-probe: [\w.]+: skip: ")


class WithoutSkipEchoes:
    """The probe's stderr as forwarded to `out`: every line but its echo of
    each skip, whose reason the progress line says (once per run). Only what
    the forwarding calls (write, flush); nothing to close."""

    def __init__(self, out: IO[str]) -> None:
        self._out = out

    def write(self, text: str) -> int:
        if not SKIP_ECHO.match(text):
            self._out.write(text)
        return len(text)

    def flush(self) -> None:
        self._out.flush()


@dataclass(frozen=True)
class Outcome:
    """How the probe's side of a run ended."""

    returncode: int
    signal: int | None  # the signal osmeter received, if any
    problem: str | None  # a bad record or a store failure, if any


def drive(argv: list[str], recorder: RunRecorder, progress: PlainProgress,
          before_exec: Callable[[], None] | None = None, spool: Spool | None = None) -> Outcome:
    """Run the probe and feed its records to the recorder until its output ends.
    `before_exec`: see ProbeProcess.start (the memory cgroup of --cgroup-mem).

    With a spool, every line is also written there, and a store that fails
    (after the store's own reconnects) no longer stops the run: the probe
    goes on, into the spool (recorder.lost says so)."""
    problem = None
    if spool is not None:
        spool.start_repetition()
    with ProbeProcess.start(argv, before_exec) as proc, SignalForwarder(proc) as signals:
        for lineno, line in enumerate(proc.lines(), 1):
            if not line.complete:
                progress.note(f"ignored the probe's last line {lineno}: it was cut off in the middle")
                continue
            if line.error is None and not line.text.strip():
                continue  # blank lines carry nothing; `import` skips them too
            if spool is not None and line.error is None:
                spool.write(line.text)
                if recorder.lost is not None and not spool.ok:  # neither the store nor the spool keeps it
                    problem = f"the measuring stopped: {spool.error}"
                    break
            try:
                if line.error is not None:
                    raise RecordError(line.error)
                event = recorder.feed(parse_line(line.text))
            except RecordError as e:
                problem = f"the probe wrote an invalid record on line {lineno}: {e.message}"
                break
            except StoreError as e:
                if spool is None or not spool.ok or recorder.lost is not None:
                    raise
                progress.note(f"{e.message}\nthe measuring goes on; what the probe writes is kept in "
                              f"{spool.files[-1]}")
                event = recorder.lose_store(e, (parse_line(text) for text in spool.lines()))
            if isinstance(event, (RunStarted, RepetitionStarted)):
                proc.forward_stderr(WithoutSkipEchoes(sys.stderr))  # type: ignore[arg-type]
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


def verdict(recorder: RunRecorder, outcome: Outcome, status: str) -> int:
    """The exit code, or the error to raise, once the run is stored and shown."""
    kept = f"{len(recorder.results)} finished benchmark(s) kept in run {recorder.run_id}, marked {status}"
    if outcome.signal is not None:
        raise Interrupted(outcome.signal, f"interrupted by {signame(outcome.signal)}: {kept}")
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


def signame(signum: int) -> str:
    return signal.Signals(signum).name


def problem_text(outcome: Outcome, recorder: RunRecorder) -> str | None:
    """Why the run is incomplete, from osmeter's side; None if nothing went wrong."""
    probe_completed = recorder.end is not None and recorder.end.status == "complete"
    if outcome.signal is not None and not probe_completed:  # a signal after `end` costs nothing
        return f"osmeter interrupted by {signame(outcome.signal)}"
    if outcome.problem is not None:
        return outcome.problem
    if recorder.end is None:
        return f"osmeter-probe stopped without an 'end' record ({describe_exit(outcome.returncode)})"
    return None


def drive_repetitions(argv: list[str], recorder: RunRecorder, progress: PlainProgress,
                      before_exec: Callable[[], None] | None = None, spool: Spool | None = None) -> Outcome:
    """The probe run once per repetition, into one recorder, while each ends well."""
    outcome = drive(argv, recorder, progress, before_exec, spool)
    while recorder.repetition < recorder.repetitions and _repetition_ok(outcome, recorder):
        done = recorder.repetition
        outcome = drive(argv, recorder, progress, before_exec, spool)
        if recorder.repetition == done and outcome.problem is None and outcome.signal is None:
            said = describe_exit(outcome.returncode)
            outcome = Outcome(outcome.returncode, None, f"repetition {done + 1}: osmeter-probe did not start ({said})")
    return outcome


def counters_argv(probe: Path, opts: RunOptions) -> list[str]:
    """--profile with --counters: the pass that counts (the probe's `run --counters`), as long as one repetition."""
    return probe_argv(probe, replace(opts, profile=False, profile_frequency=None))


def drive_counters(argv: list[str], recorder: RunRecorder, progress: PlainProgress,
                   before_exec: Callable[[], None] | None = None) -> Outcome:
    """One more probe process after the profiled repetitions, whose counters
    records join the stored results (RunRecorder.attach_counters) and whose
    figures are not pooled: a profile and counters are never taken in one
    process (the counters' switching would be in the profile)."""
    progress.note("--counters with --profile: one more pass of the probe counts them (its figures are not pooled)")
    with ProbeProcess.start(argv, before_exec) as proc, SignalForwarder(proc) as signals:
        proc.forward_stderr(WithoutSkipEchoes(sys.stderr))  # type: ignore[arg-type]
        for line in proc.lines():
            if not line.complete or line.error is not None or not line.text.strip():
                continue
            try:
                record = parse_line(line.text)
            except RecordError:
                continue  # the pass adds counters; the profiled repetitions hold the run
            if isinstance(record, Counters):
                recorder.attach_counters(record)
        returncode = proc.close()
    return Outcome(returncode, signals.received, None)


def _repetition_ok(outcome: Outcome, recorder: RunRecorder) -> bool:
    return (
        outcome.signal is None
        and outcome.problem is None
        and recorder.end is not None
        and recorder.end.status == "complete"
    )


def record_run(opts: RunOptions, store: Store, probe: Path, cg: cgroup.MemoryCgroup | None = None,
               meta: dict[str, Any] | None = None) -> tuple[RunRecorder, Outcome, str]:
    """Run and store; with `cg` (--cgroup-mem) the probe runs inside that memory
    cgroup; `meta`: osmeter's own entries of the run's meta (osmeter noise's
    tag). Returns the recorder, how the probe's side ended and the run's
    status, once warnings and notes are said; the caller shows the run and
    then returns verdict(...)."""
    argv = probe_argv(probe, opts)
    params: dict[str, Any] = {**asdict(opts), "repeat": opts.repetitions}
    if cg is not None:
        params["cgroup"] = {**cg.describe(), "scope": "the whole run"}
    context = RunContext(label=opts.label, argv=argv, params=params, source="run", meta=dict(meta or {}))
    recorder = RunRecorder(store, context, repetitions=opts.repetitions)
    progress = make_progress(sys.stderr)
    spool = Spool()
    try:
        outcome = drive_repetitions(argv, recorder, progress, cg.enter() if cg is not None else None, spool)
        if opts.profile and opts.counters and _repetition_ok(outcome, recorder) and recorder.lost is None:
            counted = drive_counters(counters_argv(probe, opts), recorder, progress,
                                     cg.enter() if cg is not None else None)
            if counted.signal is not None:
                outcome = Outcome(outcome.returncode, counted.signal, None)
    except StoreError:
        progress.close()
        try_finish(recorder, "the store could not be written")
        spool.discard()
        raise
    except KeyboardInterrupt as e:  # Ctrl-C, SIGTERM, SIGHUP outside a probe's lifetime (between repetitions)
        progress.close()
        try_finish(recorder, f"osmeter interrupted by {signame(interruption_signal(e))}")
        _keep_or_discard(spool, recorder)
        raise
    except BaseException as e:  # never leave the run 'running'
        progress.close()
        try_finish(recorder, f"osmeter failed: {type(e).__name__}")
        _keep_or_discard(spool, recorder)
        raise
    progress.close()
    if recorder.lost is not None:
        spool.close()
        raise _store_lost(recorder, spool, opts.label, getattr(store, "shown", None), problem_text(outcome, recorder))
    spool.discard()  # the store holds every result
    for warning in recorder.warnings:
        textsafe.say("warning", warning)
    if recorder.run_id is None:
        assert outcome.signal is not None  # drive() raised for every other way of ending here
        name = signame(outcome.signal)
        raise Interrupted(outcome.signal, f"interrupted by {name} before the run started; nothing stored")
    problem = problem_text(outcome, recorder)
    try:
        status = recorder.finish(problem)
    except StoreError as e:
        wanted = "incomplete" if problem else "complete"
        recorder.remember_unmarked(wanted, problem or "marked after its store failed")
        later = "the next osmeter that opens this store marks it" if recorder.mark_later else "it stays running"
        raise StoreError(f"{e.message}\nrun {recorder.run_id} holds every result but could not be marked "
                         f"{wanted}; {later}") from None
    assert status is not None
    for note in recorder.notes:
        textsafe.say("note", note)
    if opts.profile and recorder.profile_note():  # the probe's option named as osmeter run's
        textsafe.say("note", "--profile: " + str(recorder.profile_note()).replace("--frequency", "--profile-frequency"))
    note_unexpected_exit(recorder, outcome.returncode)
    return recorder, outcome, status


def _keep_or_discard(spool: Spool, recorder: RunRecorder) -> None:
    """The spool kept when the store lost results it holds, else removed."""
    if recorder.lost is not None and spool.files:
        spool.close()
        textsafe.say("note", f"the results the store lost are in {' '.join(map(str, spool.files))}")
    else:
        spool.discard()


def _store_lost(recorder: RunRecorder, spool: Spool, label: str | None, shown: str | None,
                problem: str | None) -> StoreError:
    """The run ended after its store failed: the error that says what is
    where, and the command that stores the rest (marking the stored run
    incomplete first, when the store can be written again)."""
    lost = recorder.lost
    assert lost is not None
    status = recorder.finish(problem)
    files = " ".join(shlex.quote(str(p)) for p in spool.files)
    label_opt = f" --label {shlex.quote(label)}" if label else ""
    store = f" --store {shlex.quote(shown)}" if shown else ""  # a URL without its password
    if lost.run_id is None:
        kept = "nothing was stored"
    elif status == "incomplete":
        kept = f"run {lost.run_id} keeps the {lost.stored} result(s) stored before, marked incomplete"
    else:
        later = ("; the next osmeter that opens this store marks it" if recorder.mark_later
                 else "; it stays marked running")
        kept = (f"run {lost.run_id} keeps the {lost.stored} result(s) stored before, and could not be marked "
                "incomplete now (the store still fails)" + later)
    done = f"{len(recorder.results)} result(s)" + (f" in {len(spool.files)} repetitions" if len(spool.files) > 1 else "")
    if spool.ok:
        return StoreError(f"the store failed during the run: {lost.error.message}\n{kept}; the measuring went on "
                          f"and all {done} are in {files}\nstore them, as a new run, with:\n"
                          f"  osmeter import{store}{label_opt} {files}")
    return StoreError(f"the store failed during the run: {lost.error.message}\n{kept}; the measuring went on into "
                      f"the spool until {spool.error}, and stopped there: {done} in {files}\nstore what they hold, "
                      f"as a new incomplete run, with:\n"
                      f"  osmeter import --allow-incomplete{store}{label_opt} {files}")


def note_unexpected_exit(recorder: RunRecorder, returncode: int) -> None:
    """A probe that finished its run but exited oddly is worth a note, not a failure."""
    if recorder.end is None or recorder.end.status != "complete" or returncode == 0:
        return
    if returncode == PROBE_BENCH_FAILED_EXIT and any(r.status == "error" for r in recorder.results):
        return  # the documented status for "a benchmark failed"
    textsafe.say("note", f"osmeter-probe ended with {describe_exit(returncode)} after a complete run")


def try_finish(recorder: RunRecorder, problem: str) -> None:
    """Best effort: the store may be failing, so marking the run may fail
    too; then it is noted for the next osmeter that opens the store."""
    try:
        recorder.finish(problem)
    except Exception:  # noqa: BLE001
        try:
            recorder.remember_unmarked("incomplete", problem)
        except Exception:  # noqa: BLE001 (never hide the error being raised)
            pass
