"""Turns a stream of probe records into a stored run.

`osmeter run` feeds records as the probe writes them (each finished
benchmark is committed at once); `osmeter import` feeds a whole file inside
one store transaction. Both get the same checks of the record order
(docs/schema.md):

    meta ( progress (samples result | skip | error) [counters] )* end

The run row is created only when `meta` arrives, so a probe that refuses
its input (and writes nothing) leaves nothing in the store.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any, Union

import numpy as np

from . import __version__, legacy
from .errors import RecordError
from .model import BenchResult, NewRun
from .records import Counters, End, Error, Meta, Progress, Record, Result, Samples, Skip, describe_instance
from .stats import FloatArray, higher_is_better, summary
from .store.base import Store


@dataclass(frozen=True)
class RunContext:
    """What osmeter itself knows about a run, beyond the probe's records."""

    label: str | None
    argv: list[str]  # the probe command line, or ["import", FILE]
    params: dict[str, Any]  # the options osmeter was given
    source: str  # run / import


@dataclass(frozen=True)
class RunStarted:
    run_id: int
    meta: Meta


@dataclass(frozen=True)
class InstanceStarted:
    progress: Progress


@dataclass(frozen=True)
class InstanceDone:
    result: BenchResult
    progress: Progress | None  # the progress record that announced it, if any


@dataclass(frozen=True)
class RunEnded:
    end: End


Event = Union[RunStarted, InstanceStarted, InstanceDone, RunEnded]


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _same_instance(a: Samples | Progress | BenchResult, bench: str, params: dict[str, Any]) -> bool:
    return a.bench == bench and a.params == params


class RunRecorder:
    """Feeds records into the store; raises RecordError on an order violation."""

    def __init__(self, store: Store, context: RunContext) -> None:
        self._store = store
        self._context = context
        self.run_id: int | None = None
        self.meta: Meta | None = None
        self.end: End | None = None
        self.results: list[BenchResult] = []
        self.notes: list[str] = []  # things worth telling the user, not errors
        self._progress: Progress | None = None
        self._samples: Samples | None = None

    # --- feeding -----------------------------------------------------

    def feed(self, record: Record) -> Event | None:
        if self.meta is None:
            if not isinstance(record, Meta):
                raise RecordError(f"the first record must be 'meta', not '{type(record).__name__.lower()}'")
            return self._start(record)
        if self.end is not None:
            raise RecordError("a record after 'end'")
        if isinstance(record, Meta):
            raise RecordError("a second 'meta' record")
        if isinstance(record, (Progress, Samples, Result, Skip, Error, Counters)):
            bench, params = legacy.upgrade(record.bench, record.params, self.meta.probe_version)
            if (bench, params) != (record.bench, record.params):
                record = replace(record, bench=bench, params=params)
        if isinstance(record, Samples):
            self._expect_no_pending_samples()
            self._samples = record
            return None
        if isinstance(record, Result):
            return self._done(*self._ok(record))
        self._expect_no_pending_samples()
        if isinstance(record, Progress):
            self._progress = record
            return InstanceStarted(record)
        if isinstance(record, Skip):
            return self._done(self._failed("skip", record.bench, record.params, record.reason, record.raw))
        if isinstance(record, Error):
            return self._done(self._failed("error", record.bench, record.params, record.message, record.raw))
        if isinstance(record, Counters):
            return self._counters(record)
        if isinstance(record, End):
            return self._end(record)
        raise RecordError(f"unexpected record {type(record).__name__}")

    def _start(self, meta: Meta) -> RunStarted:
        if meta.command != "run":
            raise RecordError(f"meta.command is {meta.command!r}: only the output of `osmeter-probe run` holds a run")
        meta_without_machine = {k: v for k, v in meta.raw.items() if k != "machine"}
        self.run_id = self._store.create_run(
            NewRun(
                label=self._context.label,
                start_time=meta.start_time,
                source=self._context.source,
                osmeter_version=__version__,
                probe_version=meta.probe_version,
                suite=meta.suite,
                argv=self._context.argv,
                params=self._context.params,
                machine=meta.machine,
                meta=meta_without_machine,
            )
        )
        self.meta = meta
        return RunStarted(self.run_id, meta)

    def _expect_no_pending_samples(self) -> None:
        if self._samples is not None:
            s = self._samples
            raise RecordError(f"'samples' for {describe_instance(s.bench, s.params)} not followed by its 'result'")

    def _ok(self, result: Result) -> tuple[BenchResult, FloatArray | None]:
        """The stored form of a result and the samples to keep with it."""
        samples = self._samples
        self._samples = None
        what = describe_instance(result.bench, result.params)
        if samples is None or not _same_instance(samples, result.bench, result.params):
            raise RecordError(f"'result' for {what} without its 'samples' just before it")
        if len(samples.values) != result.n:
            raise RecordError(f"'result' for {what} says n={result.n} but its 'samples' hold {len(samples.values)}")
        if samples.unit != result.unit or samples.batch != result.batch:
            raise RecordError(f"'result' and 'samples' for {what} disagree on unit or batch")
        values = np.asarray(samples.values, dtype=np.float64)
        finite = values[np.isfinite(values)]
        extra = dict(result.extra)
        if finite.size < values.size:
            dropped = int(values.size - finite.size)
            self.notes.append(f"{what}: {dropped} of {values.size} samples were null (NaN/inf) and were left out")
            extra["osmeter_dropped_samples"] = dropped
        if finite.size == 0:
            failed = BenchResult(
                seq=len(self.results),
                bench=result.bench,
                params=result.params,
                status="error",
                unit=result.unit,
                reason="the probe reported a result without any finite sample",
                batch=result.batch,
                extra=extra,
                record=result.raw,
            )
            return failed, None
        built = BenchResult(
            seq=len(self.results),
            bench=result.bench,
            params=result.params,
            status="ok",
            unit=result.unit,
            summary=summary(finite, higher_is_better=higher_is_better(result.unit)),
            batch=result.batch,
            extra=extra,
            record=result.raw,
        )
        return built, finite

    def _failed(self, status: str, bench: str, params: dict[str, Any], why: str, raw: dict[str, Any]) -> BenchResult:
        return BenchResult(seq=len(self.results), bench=bench, params=params, status=status, reason=why, record=raw)

    def _done(self, result: BenchResult, values: FloatArray | None = None) -> InstanceDone:
        assert self.run_id is not None
        self._store.add_result(self.run_id, result, values)
        self.results.append(result)
        progress = self._progress
        self._progress = None
        if progress is not None and not _same_instance(progress, result.bench, result.params):
            progress = None
        return InstanceDone(result, progress)

    def _counters(self, record: Counters) -> None:
        assert self.run_id is not None
        if not self.results or not _same_instance(self.results[-1], record.bench, record.params):
            what = describe_instance(record.bench, record.params)
            self.notes.append(f"'counters' for {what} follow no result of theirs; ignored")
            return None
        last = replace(self.results[-1], counters=record.raw)
        self.results[-1] = last
        self._store.set_counters(self.run_id, last.seq, record.raw)
        return None

    def _end(self, end: End) -> RunEnded:
        self.end = end
        mine = {s: sum(1 for r in self.results if r.status == s) for s in ("ok", "skip", "error")}
        if mine != end.counts:
            self.notes.append(f"the probe's end record counts {end.counts}, osmeter stored {mine}")
        return RunEnded(end)

    # --- finishing ---------------------------------------------------

    def finish(self, problem: str | None = None) -> str | None:
        """Mark the run complete or incomplete; returns the status (None: no run).

        `problem` is what went wrong on osmeter's side (a signal it
        forwarded, a dead probe, a bad record) and, when given, is the
        reason recorded. Without one, an `end` that says complete makes the
        run complete; an interrupted `end`, or none, makes it incomplete.
        """
        if self.run_id is None:
            return None
        if problem:
            reason: str | None = problem
        elif self.end is None:
            reason = "the probe's output ended without an 'end' record"
        elif self.end.status != "complete":
            reason = f"probe interrupted by {self.end.signal or 'a signal'}"
        else:
            reason = None
        status = "incomplete" if reason else "complete"
        end_time = self.end.end_time if self.end is not None else utc_now()
        self._store.finish_run(self.run_id, status, end_time, reason)
        return status
