"""Comparing stored runs: the instances two runs share (benchmark, parameters,
occurrence), each compared by osmeter.compare's statistics, what could not
be compared and why, and --fail-above's regressions. Pure orchestration over
a Store: `osmeter compare`, compare --by (osmeter.compare_by) and the reports
use it; the tables and documents are report.compare_text's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from . import compare as cmp
from . import counters as ctr
from .errors import RegressionFound, UsageError
from .frozen import built
from .model import BenchResult, RunInfo
from .records import canonical_params, describe_instance
from .repeats import uncertainty
from .stats import FloatArray
from .store.base import Store

if TYPE_CHECKING:
    from .store.sql import SQLStore

Key = tuple[str, str, int]  # bench, canonical params, occurrence (a run may repeat an instance)


_CANONICAL: dict[tuple[tuple[str, type, Any], ...], str] = {}


def _canonical(params: Mapping[str, Any]) -> str:
    """canonical_params, remembered for parameter sets of plain values (compare --by meets each
    of a few hundred sets in every run). The key holds each value's type: 1, 1.0 and True are
    equal in Python and different parameters."""
    items = tuple((k, type(v), v) for k, v in params.items())
    try:
        return _CANONICAL[items]
    except KeyError:
        text = canonical_params(params)
        if len(_CANONICAL) < 100_000:
            _CANONICAL[items] = text
        return text
    except TypeError:  # an unhashable value (a list)
        return canonical_params(params)


def instance_keys(results: Sequence[BenchResult]) -> dict[Key, BenchResult]:
    seen: dict[tuple[str, str], int] = {}
    out: dict[Key, BenchResult] = {}
    for r in results:
        base = (r.bench, _canonical(r.params))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out[(*base, n)] = r
    return out


@dataclass
class Outcome:
    runs: list[RunInfo]  # baseline first
    comparisons: list[cmp.Comparison] = field(default_factory=list)
    not_compared: list[str] = field(default_factory=list)
    counter_notes: list[str] = field(default_factory=list)  # counters not counted, once per reason
    profile_links: list[dict[str, Any]] = field(default_factory=list)  # osmeter hotspots: profiles in both runs
    read: dict[int, list[BenchResult]] = field(default_factory=dict)  # run id -> its results, as read
    _deltas: dict[int, list[ctr.CounterDelta]] = field(default_factory=dict)  # id(comparison) -> deltas
    _keys: dict[int, Key] = field(default_factory=dict)  # id(comparison) -> the instance key it compares
    noise: dict[str, Any] | None = None  # the noise result applied (osmeter noise; noise.apply), if any

    def add(self, comparison: cmp.Comparison, deltas: list[ctr.CounterDelta], key: Key | None = None) -> None:
        self.comparisons.append(comparison)
        if deltas:
            self._deltas[id(comparison)] = deltas
        if key is not None:
            self._keys[id(comparison)] = key

    def swap(self, new: Mapping[int, cmp.Comparison]) -> None:
        """Each comparison c with id(c) in `new` replaced by new[id(c)] (the same instance, e.g. with a
        noise caveat), its counters and key with it."""
        for i, old in enumerate(self.comparisons):
            if id(old) in new:
                self.comparisons[i] = repl = new[id(old)]
                for table in (self._deltas, self._keys):
                    if id(old) in table:
                        table[id(repl)] = table.pop(id(old))

    def key_of(self, comparison: cmp.Comparison) -> Key | None:
        """The instance (bench, canonical params, occurrence) this comparison compares, when known."""
        return self._keys.get(id(comparison))

    def deltas(self, comparison: cmp.Comparison) -> list[ctr.CounterDelta]:
        """The counters both runs counted for this comparison's instance (empty without --counters)."""
        return self._deltas.get(id(comparison), [])

    @property
    def has_counters(self) -> bool:
        return bool(self._deltas)


def resolve_runs(store: Store, refs: Sequence[str], baseline: str | None) -> list[RunInfo]:
    runs: list[RunInfo] = []
    for ref in refs:
        info = store.run(ref)
        if any(r.id == info.id for r in runs):
            raise UsageError(f"run {info.id} is given twice")
        runs.append(info)
    if baseline is not None:
        base = store.run(baseline)
        runs = [base] + [r for r in runs if r.id != base.id]
    if len(runs) < 2:
        raise UsageError("compare needs at least two different runs")
    return runs


def _label(key: Key) -> str:
    return describe_instance(key[0], json.loads(key[1])) + (f" (#{key[2] + 1})" if key[2] else "")


def _wanted(key: Key, b: BenchResult, base_id: int, other_keys: dict[int, dict[Key, BenchResult]]
            ) -> list[tuple[int, int]]:
    """The results whose samples instance `key` is compared on (the baseline's first), or none."""
    pairs = [(run_id, o.seq) for run_id, keys in other_keys.items() if (o := keys.get(key)) is not None
             and o.status == "ok" and o.summary is not None and o.unit == b.unit]
    return [(base_id, b.seq), *pairs] if pairs else []


def _values(key: Key, b: BenchResult, other_keys: dict[int, dict[Key, BenchResult]]) -> int:
    """How many sample values the instance `key` brings, in every run (their summaries' n)."""
    found = [b, *(k[key] for k in other_keys.values() if key in k)]
    return sum(r.summary.n for r in found if r.summary is not None)


class _SampleWindow:
    """The samples of the instances compare RUN RUN compares, read a window of
    instances ahead: up to WINDOW_INSTANCES instances or WINDOW_VALUES sample
    values at once (one query for both runs on the same seqs, instead of a
    query per instance: 200 round trips to PostgreSQL were a tenth of a
    second or more), then the next window; the memory stays a window's."""

    WINDOW_INSTANCES = 64
    WINDOW_VALUES = 4 << 20  # 32 MiB of float64

    def __init__(self, store: SQLStore, plan: Sequence[tuple[Key, list[tuple[int, int]], int]]) -> None:
        self.store = store
        self.plan = [p for p in plan if p[1]]  # instances with something to compare
        self.planned = {p[0] for p in self.plan}
        self.at = 0  # the next instance of the plan to read
        self.read: dict[Key, dict[tuple[int, int], FloatArray | None]] = {}

    def samples(self, key: Key) -> dict[tuple[int, int], FloatArray | None]:
        """The samples of instance `key` (those of `wanted`), {} when it has none to compare."""
        if key not in self.planned:
            return {}
        if key not in self.read:
            self._next(key)
        return self.read.pop(key, {})

    def _next(self, key: Key) -> None:
        self.read.clear()
        while self.at < len(self.plan) and self.plan[self.at][0] != key:  # an instance not asked for: skipped
            self.at += 1
        chunk, values = [], 0
        while self.at < len(self.plan) and len(chunk) < self.WINDOW_INSTANCES:
            k, pairs, n = self.plan[self.at]
            if chunk and values + n > self.WINDOW_VALUES:
                break
            chunk.append((k, pairs))
            values += n
            self.at += 1
        if not chunk:
            return
        got = self.store.samples_of([p for _, pairs in chunk for p in pairs])
        for k, pairs in chunk:
            self.read[k] = {p: got[p] for p in pairs}


def compare_runs(store: SQLStore, runs: Sequence[RunInfo], threshold: float,
                 stats: Sequence[str] | None = None) -> Outcome:
    """Every instance ok in the baseline and in another run, compared; the rest
    listed. `stats` (--stat): the extra statistics for every instance; None:
    cmp.stats_for's default (max and variance for the rt family)."""
    base_run, others = runs[0], runs[1:]
    base_results = store.results(base_run.id)
    other_results = {r.id: store.results(r.id) for r in others}
    base = instance_keys(base_results)
    other_keys = {r.id: instance_keys(other_results[r.id]) for r in others}
    outcome = Outcome(list(runs), read={base_run.id: base_results, **other_results})
    outcome.counter_notes = counter_notes(runs, [base_results, *other_results.values()])
    reasons: dict[str, list[str]] = {}  # reason -> runs

    def note(key: Key, why: str, run_id: int) -> None:
        reasons.setdefault(f"{_label(key)}: {why}", []).append(str(run_id))

    window = _SampleWindow(store, [(key, _wanted(key, b, base_run.id, other_keys), _values(key, b, other_keys))
                                   for key, b in base.items() if b.status == "ok" and b.summary is not None])
    for key, b in base.items():
        if b.status != "ok" or b.summary is None:
            for r in others:
                if key in other_keys[r.id]:
                    note(key, f"{b.status} in the baseline ({b.reason})", r.id)
            continue
        samples_of = window.samples(key)
        base_samples = None
        base_medians = None
        for r in others:
            o = other_keys[r.id].get(key)
            if o is None:
                note(key, "not in run", r.id)
                continue
            if o.status != "ok" or o.summary is None:
                note(key, f"{o.status} ({o.reason})", r.id)
                continue
            if o.unit != b.unit:
                note(key, f"measured in {o.unit}, the baseline in {b.unit}", r.id)
                continue
            other_samples = samples_of[(r.id, o.seq)]
            if base_samples is None:
                base_samples = samples_of[(base_run.id, b.seq)]
                if base_samples is None:
                    note(key, "the baseline has no stored samples", r.id)
                    break
                base_medians = cmp.baseline_resampled_medians(base_samples)
            if other_samples is None:
                note(key, "no stored samples", r.id)
                continue
            outcome.add(
                cmp.compare_instance(
                    compared_instance(b, base_samples),
                    compared_instance(o, other_samples),
                    run_id=r.id,
                    baseline_id=base_run.id,
                    threshold=threshold,
                    baseline_medians=base_medians,
                    stats=cmp.stats_for(b.bench, stats),
                ),
                ctr.deltas(b, o),
                key,
            )
    for r in others:
        for key in other_keys[r.id]:
            if key not in base:
                note(key, "not in the baseline", r.id)
    outcome.not_compared = [f"{why} (run {', '.join(ids)})" for why, ids in reasons.items()]
    compared = {c.run_id for c in outcome.comparisons}
    lonely = [r for r in others if r.id not in compared]
    if lonely:
        names = ", ".join(str(r.id) for r in lonely)
        raise UsageError(
            f"run {names} and the baseline run {base_run.id} have no benchmark in common "
            "(the same benchmark and parameters, ok in both); `osmeter show RUN` lists what each run holds"
        )
    return outcome


NO_SAMPLES = np.empty(0)  # an Instance whose samples were not read (compare --by's interval cells)
NO_SAMPLES.setflags(write=False)


def compared_instance(r: BenchResult, samples: FloatArray | None = None) -> cmp.Instance:
    """A stored result as compare needs it: its samples (None: not read, for
    the interval of compare.ratio_from_intervals, which needs none), and the
    uncertainty of its repetitions when it has several."""
    assert r.summary is not None
    return built(cmp.Instance, {  # one per cell of compare --by; Instance has no checks of its own
        "bench": r.bench,
        "params": r.params,
        "unit": r.unit,
        "median": r.summary.median,
        "samples": NO_SAMPLES if samples is None else samples,
        "uncertainty": uncertainty(r.repetitions) if len(r.repetitions) > 1 else None,
        "ci": (r.summary.ci_low, r.summary.ci_high),
        "flags": r.flags,
    })


def counter_notes(runs: Sequence[RunInfo], results: Sequence[Sequence[BenchResult]]) -> list[str]:
    """What the counters could not do, once per note, with the runs it concerns."""
    seen: dict[str, list[str]] = {}
    for run, rs in zip(runs, results):
        for note in ctr.notes(rs):
            seen.setdefault(note, []).append(str(run.id))
    every = len(runs)
    return [
        note if len(ids) == every else f"run{'s' if len(ids) > 1 else ''} {', '.join(ids)}: {note}"
        for note, ids in seen.items()
    ]


def raise_regressions(comparisons: Sequence[cmp.Comparison], limit_pct: float,
                      where: Callable[[cmp.Comparison], str]) -> None:
    """--fail-above: RegressionFound naming the five worst significant changes for the worse beyond the limit."""
    bad = sorted(cmp.regressions_above(comparisons, limit_pct / 100), key=lambda c: -c.worse)
    if bad:
        worst = ", ".join(f"{describe_instance(c.bench, c.params)} {where(c)} {100 * c.change:+.1f}%"
                          for c in bad[:5])
        more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
        raise RegressionFound(f"{len(bad)} significant regression(s) above {limit_pct:g}%: {worst}{more}")
