"""Turns a stream of probe records into a stored run.

`osmeter run` feeds records as the probe writes them (each finished
benchmark is committed at once); `osmeter import` feeds a whole file inside
one store transaction. Both get the same checks of the record order
(docs/schema.md):

    meta ( progress (samples result | skip | error) [counters] )* end

The run row is created only when `meta` arrives, so a probe that refuses
its input (and writes nothing) leaves nothing in the store.

Repetitions (`osmeter run --repeat R`): the streams of R probe processes,
one after the other, each from its own `meta` to its own `end`. The first
creates the run and its results; each later one adds its samples to the
result of the same instance (benchmark and parameters), whose statistics
are recomputed from all of them (osmeter.repeats) and stored again.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Iterable, Union

import numpy as np

from . import legacy, spool
from .version import __version__
from .errors import RecordError, StoreError
from .hotspots.merge import merge_profiles
from .memlevels import CACHE_EDGE, in_edge_band, run_edge_band
from .model import BenchResult, NewRun
from .records import (
    Counters,
    Profile,
    End,
    Error,
    Meta,
    Progress,
    Record,
    Result,
    Samples,
    Skip,
    Unknown,
    canonical_params,
    describe_instance,
    describe_unknown,
)
from .repeats import Repetition, pool, repetition_of
from .stats import FloatArray, higher_is_better
from .store.base import Store


@dataclass(frozen=True)
class RunContext:
    """What osmeter itself knows about a run, beyond the probe's records."""

    label: str | None
    argv: list[str]  # the probe command line, or ["import", FILE]
    params: dict[str, Any]  # the options osmeter was given
    source: str  # run / import
    host: str | None = None  # osmeter fleet run: the inventory name of the host
    fleet: str | None = None  # osmeter fleet run: the fleet run's id
    meta: dict[str, Any] = field(default_factory=dict)  # osmeter's own, added to the run's meta (osmeter noise's tag)


@dataclass(frozen=True)
class RunStarted:
    run_id: int
    meta: Meta
    repetitions: int = 1  # probe streams expected (osmeter run --repeat)


@dataclass(frozen=True)
class InstanceStarted:
    progress: Progress


@dataclass(frozen=True)
class RepetitionStarted:
    """A later repetition's probe started (its `meta` arrived)."""

    repetition: int  # from 2
    repetitions: int  # expected in all
    meta: Meta


@dataclass(frozen=True)
class InstanceDone:
    result: BenchResult  # all repetitions so far
    progress: Progress | None  # the progress record that announced it, if any
    repetition: Repetition | None = None  # what this repetition measured
    repetition_index: int = 1


@dataclass(frozen=True)
class RunEnded:
    end: End


Event = Union[RunStarted, RepetitionStarted, InstanceStarted, InstanceDone, RunEnded]


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _same_instance(a: Samples | Progress | BenchResult, bench: str, params: dict[str, Any]) -> bool:
    return a.bench == bench and a.params == params


def _key(bench: str, params: dict[str, Any]) -> tuple[str, str]:
    return bench, canonical_params(params)


def merge_counters(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The counters of several repetitions of one instance as one record:
    totals, counts before the windows' cost (`counted`), operations and
    windows summed, values per operation recomputed (a ratio such as ipc:
    weighted by operations), a window's cost the mean over all windows. The
    first record's other keys."""
    if len(records) == 1:
        return records[0]
    ops = [r.get("ops") if isinstance(r.get("ops"), int) else 0 for r in records]
    windows = [r.get("windows") if isinstance(r.get("windows"), int) else 0 for r in records]
    merged = dict(records[0])
    merged["ops"] = sum(ops)
    if all(isinstance(r.get("windows"), int) for r in records):
        merged["windows"] = sum(windows)
    out = []
    for c in records[0].get("counters", []) if isinstance(records[0].get("counters"), list) else []:
        if not isinstance(c, dict):
            continue
        same = [next((d for d in r.get("counters", []) if isinstance(d, dict) and d.get("name") == c.get("name")), None)
                for r in records]
        c = dict(c)
        if all(d is not None and d.get("status") == "ok" for d in same) and merged["ops"] > 0:
            totals = [d.get("total") for d in same]  # type: ignore[union-attr]
            values = [d.get("value") for d in same]  # type: ignore[union-attr]
            if all(isinstance(t, (int, float)) for t in totals):
                c["total"] = sum(totals)
                c["value"] = c["total"] / merged["ops"]
            elif all(isinstance(v, (int, float)) for v in values):
                c["value"] = sum(v * o for v, o in zip(values, ops)) / merged["ops"]
            counted = [d.get("counted") for d in same]  # type: ignore[union-attr]
            if all(isinstance(x, (int, float)) for x in counted):
                c["counted"] = sum(counted)  # before the windows' cost was taken off
            costs = [d.get("window_cost") for d in same]  # type: ignore[union-attr]
            if all(isinstance(x, (int, float)) for x in costs) and sum(windows) > 0:
                c["window_cost"] = sum(x * w for x, w in zip(costs, windows)) / sum(windows)  # per window
            running = [d.get("running") for d in same]  # type: ignore[union-attr]
            if all(isinstance(x, (int, float)) for x in running):
                c["running"] = min(running)
        elif any(d is None or d.get("status") != "ok" for d in same) and c.get("status") == "ok":
            bad = next(d for d in same if d is None or d.get("status") != "ok")
            c = dict(bad) if bad is not None else {**c, "status": "not_counted", "value": None, "total": None,
                                                     "reason": "not counted in every repetition"}
        out.append(c)
    merged["counters"] = out
    return merged


class DiscardStore:
    """A store that keeps nothing: what a recorder writes to once the real
    store failed mid-run (its results still shown; the spool keeps them)."""

    def __init__(self, run_id: int) -> None:
        self.run_id = run_id

    def create_run(self, run: NewRun) -> int:
        return self.run_id

    def add_result(self, *args: Any) -> None:
        pass

    replace_result = set_counters = add_profile = finish_run = add_result


@dataclass(frozen=True)
class StoreLoss:
    """The store failed mid-run: what it kept, and why it failed."""

    error: StoreError
    run_id: int | None  # the run in the store (None: it was never created)
    stored: int  # results written before the failure


class RunRecorder:
    """Feeds records into the store; raises RecordError on an order violation."""

    def __init__(self, store: Store, context: RunContext, repetitions: int = 1) -> None:
        self._store: Any = store
        self._real_store = store
        self.lost: StoreLoss | None = None
        self.mark_error: StoreError | None = None  # marking the stored run after a loss failed too
        self.mark_later = False  # ... and it is noted for the next osmeter that opens the store
        self._context = context
        self.repetitions = repetitions  # how many probe streams are expected
        self.repetition = 0  # the one being fed, from 1
        self.run_id: int | None = None
        self.uid: str | None = None  # the stored run's
        self.meta: Meta | None = None
        self.end: End | None = None  # of the repetition being fed
        self.ends: list[End] = []  # of every repetition that ended
        self.results: list[BenchResult] = []
        self.notes: list[str] = []  # things worth telling the user, not errors
        self.warnings: list[str] = []  # records skipped (unknown types)
        self._progress: Progress | None = None
        self._samples: Samples | None = None
        self._last_seq: int | None = None  # the result the next `counters` belongs to
        self._seq_of: dict[tuple[str, str], int] = {}
        self._reps: dict[int, list[Repetition]] = {}
        self._rep_samples: dict[int, list[FloatArray]] = {}
        self._counters_of: dict[int, list[dict[str, Any]]] = {}
        self._profiles_of: dict[int, list[dict[str, Any]]] = {}
        self.profile_gaps: dict[str, list[str]] = {}  # why a profile is missing -> the instances
        self._rep_counts = {"ok": 0, "skip": 0, "error": 0}

    # --- feeding -----------------------------------------------------

    def feed(self, record: Record) -> Event | None:
        if self.meta is None:
            if not isinstance(record, Meta):
                raise RecordError(f"the first record must be 'meta', not '{type(record).__name__.lower()}'")
            return self._start(record)
        if isinstance(record, Meta):
            if self.end is None:
                raise RecordError("a second 'meta' record before the first stream's 'end'")
            return self._next_repetition(record)
        if isinstance(record, Unknown):
            self.warnings.append(describe_unknown(record))  # schema.md: readers skip unknown record types
            return None
        if self.end is not None:
            raise RecordError("a record after 'end'")
        if isinstance(record, (Progress, Samples, Result, Skip, Error, Counters, Profile)):
            bench, params = legacy.upgrade(record.bench, record.params, self.meta.probe_version)
            if (bench, params) != (record.bench, record.params):
                record = replace(record, bench=bench, params=params)
        if isinstance(record, Samples):
            self._expect_no_pending_samples()
            self._samples = record
            return None
        if isinstance(record, Result):
            return self._ok(record)
        self._expect_no_pending_samples()
        if isinstance(record, Progress):
            self._progress = record
            return InstanceStarted(record)
        if isinstance(record, Skip):
            return self._failed("skip", record.bench, record.params, record.reason, record.raw)
        if isinstance(record, Error):
            return self._failed("error", record.bench, record.params, record.message, record.raw)
        if isinstance(record, Counters):
            return self._counters(record)
        if isinstance(record, Profile):
            return self._profile(record)
        if isinstance(record, End):
            return self._end(record)
        raise RecordError(f"unexpected record {type(record).__name__}")

    def _start(self, meta: Meta) -> RunStarted:
        if meta.command not in ("run", "hotspots"):
            raise RecordError(f"meta.command is {meta.command!r}: only the output of `osmeter-probe run` or "
                              "`osmeter-probe hotspots` holds a run")
        meta_without_machine = {**{k: v for k, v in meta.raw.items() if k != "machine"}, **self._context.meta}
        self.uid = str(uuid.uuid4())
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
                host=self._context.host,
                fleet=self._context.fleet,
                uid=self.uid,
            )
        )
        self.meta = meta
        self.repetition = 1
        return RunStarted(self.run_id, meta, self.repetitions)

    def _next_repetition(self, meta: Meta) -> RepetitionStarted:
        assert self.meta is not None
        if meta.command not in ("run", "hotspots"):
            raise RecordError(f"meta.command is {meta.command!r}: only the output of `osmeter-probe run` or "
                              "`osmeter-probe hotspots` holds a run")
        for what, a, b in (("probe version", self.meta.probe_version, meta.probe_version),
                           ("suite", self.meta.suite, meta.suite),
                           ("clock", self.meta.clock.source, meta.clock.source)):
            if a != b:
                raise RecordError(f"repetition {self.repetition + 1} has another {what} ({b}) than the first ({a})")
        self.repetition += 1
        self.end = None
        self._progress = None
        self._last_seq = None
        self._rep_counts = {"ok": 0, "skip": 0, "error": 0}
        return RepetitionStarted(self.repetition, self.repetitions, meta)

    def _expect_no_pending_samples(self) -> None:
        if self._samples is not None:
            s = self._samples
            raise RecordError(f"'samples' for {describe_instance(s.bench, s.params)} not followed by its 'result'")

    def _ok(self, result: Result) -> InstanceDone:
        """A result and the samples just before it, as this repetition's measurement."""
        samples = self._samples
        self._samples = None
        what = describe_instance(result.bench, result.params)
        if samples is None or not _same_instance(samples, result.bench, result.params):
            raise RecordError(f"'result' for {what} without its 'samples' just before it")
        if len(samples.values) != result.n:
            raise RecordError(f"'result' for {what} says n={result.n} but its 'samples' hold {len(samples.values)}")
        if samples.unit != result.unit or samples.batch != result.batch:
            raise RecordError(f"'result' and 'samples' for {what} disagree on unit or batch")
        values = np.asarray(samples.values, dtype=np.float64)  # finite: records.py refuses anything else
        if values.size == 0:
            rep = Repetition("error", reason="the probe reported a result without any sample", batch=result.batch)
            return self._record(result.bench, result.params, result.unit, rep, None, result.raw, result.extra)
        rep = repetition_of(values, batch=result.batch, stop_reason=result.stop_reason, flags=result.flags,
                            elapsed_s=result.elapsed_s, higher_is_better=higher_is_better(result.unit))
        return self._record(result.bench, result.params, result.unit, rep, values, result.raw, result.extra)

    def _failed(self, status: str, bench: str, params: dict[str, Any], why: str, raw: dict[str, Any]) -> InstanceDone:
        return self._record(bench, params, None, Repetition(status, reason=why), None, raw, {})

    def _record(self, bench: str, params: dict[str, Any], unit: str | None, rep: Repetition,
                values: FloatArray | None, raw: dict[str, Any], extra: dict[str, Any]) -> InstanceDone:
        """Store this repetition's measurement of an instance: a new result in
        the first repetition (or for an instance it did not have), else the
        instance's result recomputed from every repetition."""
        assert self.run_id is not None
        self._rep_counts[rep.status] += 1
        key = _key(bench, params)
        seq = self._seq_of.get(key)
        new = seq is None or seq >= len(self.results)
        if new:
            seq = len(self.results)
            self._seq_of[key] = seq
            self._reps[seq] = []
            self._rep_samples[seq] = []
        assert seq is not None
        self._reps[seq].append(rep)
        if values is not None:
            self._rep_samples[seq].append(values)
        old = None if new else self.results[seq]
        built = self._build(seq, bench, params, unit or (old.unit if old else None), raw if old is None else old.record,
                            extra if old is None or old.status != "ok" else old.extra)
        if new:
            self._store.add_result(self.run_id, built, self._pooled_samples(seq))
            self.results.append(built)
        else:
            self._store.replace_result(self.run_id, built, self._pooled_samples(seq))
            self.results[seq] = built
        self._last_seq = seq
        progress = self._progress
        self._progress = None
        if progress is not None and not _same_instance(progress, bench, params):
            progress = None
        return InstanceDone(built, progress, rep, self.repetition)

    def _pooled_samples(self, seq: int) -> FloatArray | None:
        parts = self._rep_samples[seq]
        return np.concatenate(parts) if parts else None

    def _build(self, seq: int, bench: str, params: dict[str, Any], unit: str | None, record: dict[str, Any],
               extra: dict[str, Any]) -> BenchResult:
        reps = tuple(self._reps[seq])
        extra = dict(extra)
        counters = merge_counters(self._counters_of[seq]) if self._counters_of.get(seq) else None
        ok = [r for r in reps if r.status == "ok"]
        if not ok:
            last = reps[-1]
            return BenchResult(seq=seq, bench=bench, params=params, status=last.status, unit=unit,
                               reason=last.reason, batch=last.batch, extra=extra, counters=counters, record=record,
                               flags=(), repetitions=reps)
        pooled = pool(self._rep_samples[seq], reps, higher_is_better=higher_is_better(unit))
        batch = ok[0].batch if all(r.batch == ok[0].batch for r in ok) else None
        return BenchResult(seq=seq, bench=bench, params=params, status="ok", unit=unit, summary=pooled.summary,
                           batch=batch, extra=extra, counters=counters, record=record, flags=pooled.flags,
                           repetitions=reps)

    def _owner(self, record: Counters | Profile, stray: str) -> int | None:
        """The seq of the result a counters or profile record follows, or None
        (noted: "'KIND' for INSTANCE {stray}; ignored")."""
        assert self.run_id is not None
        seq = self._last_seq
        if seq is None or not _same_instance(self.results[seq], record.bench, record.params):
            what = describe_instance(record.bench, record.params)
            self.notes.append(f"'{type(record).__name__.lower()}' for {what} {stray}; ignored")
            return None
        return seq

    def _counters(self, record: Counters) -> None:
        seq = self._owner(record, "follow no result of theirs")
        if seq is not None and self.run_id is not None:
            self._add_counters(seq, record.raw)
        return None

    def _add_counters(self, seq: int, raw: dict[str, Any]) -> None:
        """One more counters record of result `seq`: merged with the earlier ones, stored."""
        assert self.run_id is not None
        self._counters_of.setdefault(seq, []).append(raw)
        merged = merge_counters(self._counters_of[seq])
        self.results[seq] = replace(self.results[seq], counters=merged)
        self._store.set_counters(self.run_id, seq, merged)

    def attach_counters(self, record: Counters) -> None:
        """A counters record of a pass whose figures are not pooled (run --profile --counters):
        it joins the stored result of its instance."""
        seq = self._seq_of.get(_key(record.bench, record.params))
        if seq is None or self.run_id is None:
            self.notes.append(f"counters for {describe_instance(record.bench, record.params)}, which the run "
                              "did not measure; ignored")
            return
        self._add_counters(seq, record.raw)

    def _profile(self, record: Profile) -> None:
        """A profile belongs to the result just before it, as counters do."""
        seq = self._owner(record, "follows no result of its own")
        if seq is None or self.run_id is None:
            return None
        self._profiles_of.setdefault(seq, []).append(record.raw)
        merged = merge_profiles(self._profiles_of[seq])
        self._store.add_profile(self.run_id, seq, merged)
        raw = record.raw
        if raw.get("status") != "ok" or raw.get("kernel") is False:
            why = raw.get("reason") if raw.get("status") != "ok" else raw.get("kernel_reason")
            what = f"{raw.get('status')}: {why}" if raw.get("status") != "ok" else f"user space only: {why}"
            self.profile_gaps.setdefault(what, []).append(describe_instance(record.bench, record.params))
        return None

    def profile_note(self) -> str | None:
        """Why profiles are missing or partial, once per reason (run --profile)."""
        parts = []
        for why, seen in self.profile_gaps.items():
            instances = list(dict.fromkeys(seen))
            named = ", ".join(instances[:3]) + (f" and {len(instances) - 3} more" if len(instances) > 3 else "")
            parts.append(f"{len(instances)} profile(s) {why} ({named})")
        return "; ".join(parts) or None

    def _end(self, end: End) -> RunEnded:
        self.end = end
        self.ends.append(end)
        if self._rep_counts != end.counts:
            which = f" (repetition {self.repetition})" if self.repetitions > 1 else ""
            self.notes.append(f"the probe's end record counts {end.counts}, osmeter stored {self._rep_counts}{which}")
        return RunEnded(end)

    # --- losing the store ---------------------------------------------

    def lose_store(self, error: StoreError, records: Iterable[Record]) -> Event | None:
        """The store failed while a record was fed: from now on nothing is
        written to it. The recorder is rebuilt from `records` (every record
        of the run so far, the failed one last, as the spool holds them) over
        a store that keeps nothing, so progress and the summary go on; the
        event of the last record is returned. finish() marks the stored run."""
        self.lost = StoreLoss(error, self.run_id, len(self.results))
        fresh = RunRecorder(DiscardStore(self.run_id or 0), self._context, self.repetitions)
        event = None
        for record in records:
            event = fresh.feed(record)
        lost, real, uid = self.lost, self._real_store, self.uid
        self.__dict__.update(fresh.__dict__)
        self.lost, self._real_store, self.uid = lost, real, uid
        return event

    # --- finishing ---------------------------------------------------

    def finish(self, problem: str | None = None) -> str | None:
        """Mark the run complete or incomplete; returns the status (None: no run).

        `problem` is what went wrong on osmeter's side (a signal it
        forwarded, a dead probe, a bad record) and, when given, is the
        reason recorded. Without one, the run is complete when every
        repetition's `end` says complete; an interrupted `end`, a missing
        one, or fewer repetitions than asked for make it incomplete.
        """
        if self.lost is not None:
            return self._finish_lost(problem)
        if self.run_id is None:
            return None
        if problem:
            reason: str | None = problem
        elif self.end is None:
            reason = "the probe's output ended without an 'end' record"
        elif self.end.status != "complete":
            reason = f"probe interrupted by {self.end.signal or 'a signal'}"
        elif len(self.ends) < self.repetitions:
            reason = f"{len(self.ends)} of {self.repetitions} repetitions ran"
        else:
            reason = None
        status = "incomplete" if reason else "complete"
        end_time = self.end.end_time if self.end is not None else utc_now()
        self._flag_cache_edges()
        self._store.finish_run(self.run_id, status, end_time, reason)
        return status

    def _flag_cache_edges(self) -> None:
        """The run's mem.latency results between its last cache and memory
        (memlevels.EdgeBand, read off the run's own curve) get the flag
        cache-edge: a figure there depends on the share of a shared cache the
        run got, so compare shows it as a caveat (issue 30)."""
        assert self.run_id is not None
        band = run_edge_band(self.results, self.meta.machine if self.meta is not None else None)
        for seq, r in enumerate(self.results):
            if in_edge_band(r, band) and CACHE_EDGE not in r.flags:
                flagged = replace(r, flags=r.flags + (CACHE_EDGE,))
                self._store.replace_result(self.run_id, flagged, self._pooled_samples(seq))
                self.results[seq] = flagged

    def _finish_lost(self, problem: str | None) -> str | None:
        """After lose_store: the stored run marked incomplete, if the store
        can be written again (a failure here is kept in lost.mark_error)."""
        assert self.lost is not None
        if self.lost.run_id is None:
            return None
        why = f"the store failed after {self.lost.stored} result(s): {self.lost.error.message}"
        if problem:
            why = f"{problem}; {why}"
        end_time = self.end.end_time if self.end is not None else utc_now()
        try:
            self._real_store.finish_run(self.lost.run_id, "incomplete", end_time, why)
        except StoreError as e:
            self.mark_error = e
            self.remember_unmarked("incomplete", why)
            return None
        return "incomplete"

    def remember_unmarked(self, status: str, reason: str) -> None:
        """The stored run could not be marked: noted for the next osmeter that
        opens its store (spool.note_unmarked); mark_later says if it was."""
        run_id = self.lost.run_id if self.lost is not None else self.run_id
        if run_id is None or self.uid is None:
            return
        end_time = self.end.end_time if self.end is not None else utc_now()
        self.mark_later = spool.note_unmarked(self.uid, getattr(self._real_store, "shown", ""), run_id, status,
                                              end_time, reason)
