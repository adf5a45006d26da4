"""What the studies share: the figures-possible check, CSV tables, and a
study made of several osmeter-probe invocations, recorded as one run.

`study files`, `net` and `rt` cut their matrix into parts (a `--param`
applies to every named benchmark that has it, so one invocation would
multiply the matrix, or give one part another's budget); each part is one
probe invocation, announced on the progress line as "part K of N", and
all of them feed one recorder, as the repetitions of `run --repeat` do. A
part that fails stops the study; what ran is kept and the run is marked
incomplete.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from .. import cgroup, outfile, textsafe
from ..errors import MissingDependencyError, UsageError
from ..probe import describe_exit, locate_probe
from ..progress import PlainProgress, make_progress
from ..recorder import RepetitionStarted, RunContext, RunRecorder, RunStarted
from ..runner import (
    Outcome,
    RunOptions,
    drive,
    probe_argv,
    problem_text,
    try_finish,
    verdict,
)
from ..store.base import Store


def check_figures_possible() -> None:
    """Before anything runs: the figures need matplotlib."""
    if importlib.util.find_spec("matplotlib") is None:
        raise MissingDependencyError(
            "the study's figures need matplotlib: pip install matplotlib (nothing was run)"
        )


def render_csv(header: list[str], rows: list[list[str]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


@dataclass(frozen=True)
class Part:
    title: str
    opts: RunOptions
    in_cgroup: bool = False
    # Options that depend on what earlier parts measured: called with the
    # recorder (its results so far) just before the part runs; opts is then
    # what is recorded as the plan.
    resolve: Callable[[RunRecorder], RunOptions] | None = None


class PartProgress:
    """The run's progress, with each probe stream announced as a part (not a repetition)."""

    def __init__(self, inner: PlainProgress, titles: Sequence[str]) -> None:
        self._inner = inner
        self._titles = list(titles)

    def show(self, event: Any) -> None:
        if isinstance(event, RunStarted):
            self._inner.show(replace(event, repetitions=1))
            self._inner.note(f"part 1 of {len(self._titles)}: {self._titles[0]}")
        elif isinstance(event, RepetitionStarted):
            k = event.repetition
            self._inner.note(f"part {k} of {len(self._titles)}: {self._titles[k - 1]}")
        else:
            self._inner.show(event)

    def note(self, text: str) -> None:
        self._inner.note(text)

    def close(self) -> None:
        self._inner.close()


def _ok(outcome: Outcome, recorder: RunRecorder) -> bool:
    return outcome.signal is None and outcome.problem is None and recorder.end is not None \
        and recorder.end.status == "complete"


def run_parts(parts: Sequence[Part], probe: Any, recorder: RunRecorder, progress: PartProgress,
              cg: cgroup.MemoryCgroup | None = None) -> Outcome:
    """Each part's probe run into the one recorder, while each ends well."""
    outcome = Outcome(0, None, None)
    for k, part in enumerate(parts):
        before = recorder.repetition
        argv = probe_argv(probe, part.resolve(recorder) if part.resolve is not None else part.opts)
        outcome = drive(argv, recorder, progress, cg.enter() if part.in_cgroup and cg is not None else None)  # type: ignore[arg-type]
        if k and recorder.repetition == before and outcome.problem is None and outcome.signal is None:
            outcome = Outcome(outcome.returncode, None,
                              f"part {k + 1} ({part.title.split(':')[0]}): osmeter-probe did not start "
                              f"({describe_exit(outcome.returncode)})")
        if not _ok(outcome, recorder):
            break
    return outcome


@dataclass(frozen=True)
class Recorded:
    recorder: RunRecorder
    outcome: Outcome
    status: str  # the run's status once finished ("complete", "incomplete")
    elapsed_s: float


def record_parts(store: Store, parts: Sequence[Part], params: dict[str, Any],
                 cg: cgroup.MemoryCgroup | None = None) -> Recorded:
    """Every part into one stored run (params: the run's recorded params),
    finished and its notes said; raises when not even the first part started."""
    probe = locate_probe()
    argv = probe_argv(probe, parts[0].opts)
    recorder = RunRecorder(store, RunContext(label=parts[0].opts.label, argv=argv, params=params, source="run"),
                           repetitions=len(parts))
    progress = PartProgress(make_progress(sys.stderr), [p.title for p in parts])
    started = time.monotonic()
    try:
        outcome = run_parts(parts, probe, recorder, progress, cg)
    except BaseException as e:  # Ctrl-C between parts, a store failure: never leave the run 'running'
        progress.close()
        try_finish(recorder, f"osmeter stopped: {type(e).__name__}")
        raise
    progress.close()
    elapsed = time.monotonic() - started
    if recorder.run_id is None:
        raise UsageError("the study was interrupted before it started; nothing stored")
    status = recorder.finish(problem_text(outcome, recorder)) or "incomplete"
    for note in recorder.notes:
        textsafe.say("note", note)
    return Recorded(recorder, outcome, status, elapsed)


def write_files(directory: Path, tables: Sequence[tuple[str, str]], figures: Iterable[Any]) -> list[Path]:
    """The study's tables (name, text) and its figures (NamedFigure) as SVG and PNG, into `directory`."""
    from ..report import plots

    written = [outfile.write(directory / name, content) for name, content in tables]
    for nf in figures:
        try:
            for fmt in ("svg", "png"):
                written.append(outfile.write(directory / f"{nf.name}.{fmt}", plots.render(nf.figure, fmt)))
        finally:
            plots.close(nf.figure)
    return written


def conclude(rec: Recorded, parts: int, text: str, written: Sequence[Path]) -> int:
    """Print the study's text, its run and files; the exit code (or the error) of the run."""
    sys.stdout.write(textsafe.terminal(text))
    print(f"run {rec.recorder.run_id} ({rec.status}): {parts} parts, {rec.elapsed_s:.0f} s")
    for path in written:
        print(path)
    return verdict(rec.recorder, rec.outcome, rec.status)
