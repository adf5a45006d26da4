"""The stored model: a run and its benchmark results, immutable and validated.

These are what the store returns and what the reports and exporters read.
Raw samples are not part of a BenchResult: they can be large, so the store
hands them out separately (Store.samples()).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .repeats import UNSTABLE, Repetition, spread
from .stats import Summary

RUN_STATUSES = ("running", "complete", "incomplete")
RUN_SOURCES = ("run", "import")
RESULT_STATUSES = ("ok", "skip", "error")


@dataclass(frozen=True)
class Counts:
    ok: int = 0
    skip: int = 0
    error: int = 0

    @property
    def total(self) -> int:
        return self.ok + self.skip + self.error


@dataclass(frozen=True)
class NewRun:
    """What osmeter knows about a run when its `meta` record arrives."""

    label: str | None
    start_time: str
    source: str  # run / import
    osmeter_version: str
    probe_version: str
    suite: str | None
    argv: list[str]
    params: dict[str, Any]
    machine: dict[str, Any]
    meta: dict[str, Any]  # the meta record without `machine`
    host: str | None = None  # the inventory name of the host it ran on (osmeter fleet run)
    fleet: str | None = None  # the fleet run it belongs to (osmeter fleet run)
    uid: str | None = None  # the run's uid (store copy, spool.note_unmarked); the store makes one when None

    def __post_init__(self) -> None:
        if self.source not in RUN_SOURCES:
            raise ValueError(f"run source must be one of {RUN_SOURCES}, not {self.source!r}")


@dataclass(frozen=True)
class RunInfo:
    """A stored run."""

    id: int
    label: str | None
    start_time: str
    end_time: str | None
    status: str  # running / complete / incomplete
    status_reason: str | None
    source: str
    osmeter_version: str
    probe_version: str
    suite: str | None
    argv: list[str]
    params: dict[str, Any]
    machine: dict[str, Any]
    meta: dict[str, Any]
    counts: Counts = field(default_factory=Counts)
    host: str | None = None  # the inventory name of the host it ran on (osmeter fleet run)
    fleet: str | None = None  # the fleet run it belongs to (osmeter fleet run)

    def __post_init__(self) -> None:
        if self.status not in RUN_STATUSES:
            raise ValueError(f"run status must be one of {RUN_STATUSES}, not {self.status!r}")


@dataclass(frozen=True)
class StoredProfile:
    """The profile of one result's timed region (osmeter hotspots)."""

    run_id: int
    seq: int  # the result it belongs to
    bench: str
    params: dict[str, Any]
    status: str  # ok / unsupported / empty
    mode: str  # sample / function
    meta: dict[str, Any]  # the record's other fields: event, weight_unit, samples, lost, window, calls, notes, ...
    stacks: list[tuple[str, int]]  # folded stacks (frames root first, ';'-separated) and their weights


@dataclass(frozen=True)
class BenchResult:
    """One benchmark instance of a run: ok (with statistics), skip or error."""

    seq: int  # order within the run, from 0
    bench: str
    params: dict[str, Any]
    status: str  # ok / skip / error
    unit: str | None = None
    reason: str | None = None  # skip reason or error message
    summary: Summary | None = None  # present exactly when status == "ok"
    batch: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    counters: dict[str, Any] | None = None
    record: dict[str, Any] = field(default_factory=dict)  # as the probe wrote it (the first repetition's)
    # What the figure cannot vouch for: the probe's flags of every repetition
    # (precision-unmet, calibration-timeout, not-pinned, tsc-unstable) and
    # osmeter's (unstable, repetition-failed); docs/statistics.md.
    flags: tuple[str, ...] = ()
    repetitions: tuple[Repetition, ...] = ()  # one per probe process that ran it (--repeat)

    def __post_init__(self) -> None:
        if self.status not in RESULT_STATUSES:
            raise ValueError(f"result status must be one of {RESULT_STATUSES}, not {self.status!r}")
        if (self.summary is not None) != (self.status == "ok"):
            raise ValueError("a result has statistics exactly when its status is ok")

    @property
    def placement(self) -> str | None:
        value = self.record.get("placement")
        return value if isinstance(value, str) else None

    @property
    def cpu(self) -> int | None:
        value = self.record.get("cpu")
        return value if isinstance(value, int) else None

    @property
    def stop_reason(self) -> str | None:
        value = self.record.get("stop_reason")
        return value if isinstance(value, str) else None

    @property
    def elapsed_s(self) -> float:
        value = self.record.get("elapsed_s")
        return float(value) if isinstance(value, (int, float)) else math.nan

    @property
    def info(self) -> dict[str, str]:
        """The benchmark's facts in words (schema.md `info`: the file family's
        directory, file system, device, mount options, cache-bypass method)."""
        value = self.record.get("info")
        if not isinstance(value, dict):
            return {}
        return {str(k): v for k, v in value.items() if isinstance(v, str)}

    @property
    def lebench_row(self) -> str | None:
        """The LEBench row this result reproduces, as the probe labelled it (suite lebench)."""
        value = self.record.get("lebench_row")
        return value if isinstance(value, str) else None

    @property
    def spread(self) -> float:
        """max / min - 1 of the repetitions' medians; NaN with fewer than two."""
        return spread([r.median for r in self.repetitions if r.status == "ok"])

    @property
    def precision_unmet(self) -> bool:
        return "precision-unmet" in self.flags

    @property
    def unstable(self) -> bool:
        return UNSTABLE in self.flags
