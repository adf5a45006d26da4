"""Progress of a run on stderr: a bar on a terminal, plain lines otherwise."""

from __future__ import annotations

import shutil
from typing import IO

from . import textsafe
from .recorder import Event, InstanceDone, InstanceStarted, RepetitionStarted, RunStarted
from .records import describe_instance
from .fmt import fmt_quantity

BAR_WIDTH = 24


AS_ABOVE = "skipped (as above)"


def done_line(event: InstanceDone, done: int, skips_said: set[tuple[str, str]] | None = None) -> str:
    """`[3/12] cpu.call args=3 ... 12.34 ns` (or skipped / error with the reason):
    what this repetition measured. `skips_said`: the (instance, reason) of the
    skips said so far in this run; a later repetition skipping the instance
    for the same reason says only AS_ABOVE, and the pair is added."""
    r, p, rep = event.result, event.progress, event.repetition
    position = f"[{p.index + 1}/{p.total}]" if p is not None else f"[{done}]"
    what = describe_instance(r.bench, r.params)
    if r.lebench_row:
        what = f"{r.lebench_row!r} ({what})"
    status = rep.status if rep is not None else r.status
    reason = rep.reason if rep is not None else r.reason
    median = rep.median if rep is not None else (r.summary.median if r.summary is not None else None)
    flags = rep.flags if rep is not None else r.flags
    if status == "ok" and median is not None:
        outcome = fmt_quantity(median, r.unit)
        if "precision-unmet" in flags:
            outcome += " (precision-unmet)"
    elif status == "skip":
        said = (what, str(reason))
        outcome = AS_ABOVE if skips_said is not None and said in skips_said else f"skipped: {reason}"
        if skips_said is not None:
            skips_said.add(said)
    else:
        outcome = f"error: {reason}"
    return f"{position} {what} ... {outcome}"


class PlainProgress:
    """One line per finished benchmark; for logs and pipes. A skip's reason is
    said once per run: later repetitions of the instance skipping for the
    same reason say "skipped (as above)"."""

    def __init__(self, out: IO[str]) -> None:
        self._out = out
        self._done = 0
        self._skips_said: set[tuple[str, str]] = set()  # a skip's reason is said once per run

    def _print(self, text: str) -> None:
        # Names, params and reasons come from the probe: no escape sequence of theirs reaches the terminal.
        self._out.write(textsafe.terminal(text) + "\n")
        self._out.flush()

    def show(self, event: Event | None) -> None:
        if isinstance(event, RunStarted):
            m = event.meta
            exact = ", LEBench-exact (one call per clock pair)" if m.raw.get("lebench_exact") else ""
            pinned = "" if m.raw.get("pinned", True) else f", NOT pinned: {m.raw.get('pin_error')}"
            reps = f"; repetition 1 of {event.repetitions}" if event.repetitions > 1 else ""
            self._print(
                f"run {event.run_id}: osmeter-probe {m.probe_version}, clock {m.clock.source}, "
                f"CPU {m.cpu} ({m.cpu_choice.replace('_', ' ')}{pinned}){exact}{reps}"
            )
        elif isinstance(event, RepetitionStarted):
            self._done = 0
            self._print(f"repetition {event.repetition} of {event.repetitions}: a fresh osmeter-probe, "
                        f"the same benchmarks again")
        elif isinstance(event, InstanceDone):
            self._done += 1
            self._print(done_line(event, self._done, self._skips_said))

    def note(self, text: str) -> None:
        self._print(f"osmeter: {text}")

    def close(self) -> None:
        pass


class BarProgress(PlainProgress):
    """Finished benchmarks scroll by above a bar showing the one running."""

    def __init__(self, out: IO[str]) -> None:
        super().__init__(out)
        self._bar = ""

    def _clear(self) -> None:
        if self._bar:
            self._out.write("\r\x1b[K")
            self._bar = ""

    def _draw(self, index: int, total: int, what: str) -> None:
        filled = BAR_WIDTH * index // total if total else 0
        bar = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {index}/{total} {what}"
        width = shutil.get_terminal_size((80, 24)).columns
        self._bar = bar[: max(10, width - 1)]
        self._out.write("\r\x1b[K" + self._bar)
        self._out.flush()

    def _print(self, text: str) -> None:
        bar = self._bar
        self._clear()
        super()._print(text)
        if bar:
            self._bar = bar
            self._out.write(bar)
            self._out.flush()

    def show(self, event: Event | None) -> None:
        if isinstance(event, InstanceStarted):
            p = event.progress
            what = describe_instance(p.bench, p.params)
            self._draw(p.index, p.total, f"{p.lebench_row!r} ({what})" if p.lebench_row else what)
            return
        if isinstance(event, InstanceDone):
            self._clear()
        super().show(event)

    def close(self) -> None:
        self._clear()
        self._out.flush()


def make_progress(out: IO[str]) -> PlainProgress:
    return BarProgress(out) if out.isatty() else PlainProgress(out)
