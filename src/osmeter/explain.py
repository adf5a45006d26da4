"""compare --explain: each significant change between a baseline run and
another, with what explains it (docs/compare.md, "Explained comparisons").

For every instance whose change is significant, ordered by size:

- the change in time per operation, with its 95 % interval (the ratio's
  interval times the baseline's median);
- the counters both runs counted (`run --counters`), per operation, each
  change with its significance (counts: Poisson; task-clock: none known);
- the functions whose time per operation changed most (the profiles both
  runs stored, `run --profile`): a function's share of the samples times
  the median (hotspots.timed), with the sampling error;
- the machine facts that differ and plausibly explain it (osmeter.causes'
  rule table), and when the instance's own parameters pin what such a fact
  sets (THP vs thp=0), that warning and the parameter to use instead;
- where a side lacks a profile or counters, the command that captures them.

One line per change sums it up first, as an LKP report does:
"syscall.null +204 % (102 → 310 ns): +197 ns in __audit_syscall_exit, ...;
audit_rules: 0 → 3".
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from . import causes
from . import compare as cmp
from .comparing import Key, Outcome, instance_keys
from .counters import counter_values
from .differences import Difference, run_differences
from .fmt import fmt_quantity
from .hotspots.folded import display_name
from .hotspots.sources import from_stored
from .hotspots.timed import TimedRow, ns_per_op, timed_diff
from .model import BenchResult, RunInfo
from .records import describe_instance

TOP_FUNCTIONS = 5
Z_SIGNIFICANT = 1.96  # a counter's change: two-sided 95 %
MIN_EVENTS = 10  # fewer events on both sides: too few for the Poisson approximation to say anything


@dataclass(frozen=True)
class CounterChange:
    name: str
    unit: str
    baseline: float
    value: float
    z: float | None  # Poisson z of the change in counts per op; None for task-clock and ratios
    significant: bool | None

    @property
    def change(self) -> float | None:
        if self.baseline == 0:
            return None if self.value else 0.0
        return self.value / self.baseline - 1


@dataclass(frozen=True)
class Cause:
    key: str
    values: tuple[str, str]  # baseline, run
    rule: str
    why: str


@dataclass
class Explanation:
    comparison: cmp.Comparison
    delta_ns: float | None  # run - baseline, per operation (None: not a time)
    delta_ci: tuple[float, float] | None
    counters: list[CounterChange] = field(default_factory=list)
    counters_missing: str | None = None  # why there are none, and the command that counts them
    functions: list[TimedRow] = field(default_factory=list)
    functions_ns: tuple[str, str] | None = None  # where each side's ns per op came from
    profile_missing: str | None = None  # why there are none, and the command that captures them
    causes: list[Cause] = field(default_factory=list)
    pinned: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return instance_name(self.comparison.bench, self.comparison.params)


@dataclass
class ExplainReport:
    baseline: RunInfo
    run: RunInfo
    explanations: list[Explanation]
    differences: list[Difference]  # plausible first
    skipped: list[str]  # instances a side skipped whose skip a differing fact may explain
    threshold: float
    pinned: list[str] = field(default_factory=list)  # unchanged instances whose parameters pin a differing fact


def _counter_changes(a: BenchResult, b: BenchResult, threshold: float) -> list[CounterChange]:
    """Each counter counted in both, per operation; a count's change is significant when its Poisson z
    passes 1.96, it moved by more than the noise threshold and one side counted MIN_EVENTS or more."""
    ra, rb = a.counters or {}, b.counters or {}
    ops_a, ops_b = ra.get("ops"), rb.get("ops")
    vb = {c.name: c for c in counter_values(rb) if c.ok}
    out = []
    for ca in counter_values(ra):
        cb = vb.get(ca.name)
        if not ca.ok or cb is None or ca.value is None or cb.value is None:
            continue
        z = None
        if (ca.unit == "count" and ca.total is not None and cb.total is not None and isinstance(ops_a, int)
                and isinstance(ops_b, int) and ops_a > 0 and ops_b > 0):
            var = ca.total / ops_a**2 + cb.total / ops_b**2
            z = (cb.value - ca.value) / math.sqrt(var) if var > 0 else (0.0 if cb.value == ca.value else math.inf)
        big = z is not None and max(ca.total or 0, cb.total or 0) >= MIN_EVENTS
        moved = ca.value == 0 and cb.value != 0 or ca.value != 0 and abs(cb.value / ca.value - 1) > threshold
        out.append(CounterChange(ca.name, ca.unit, ca.value, cb.value, z,
                                 None if z is None else bool(abs(z) > Z_SIGNIFICANT and big and moved)))
    return out


def instance_name(bench: str, params: Mapping[str, Any]) -> str:
    """The instance as a reader names it: its parameters without the empty ones (dir="")."""
    return describe_instance(bench, {k: v for k, v in params.items() if v not in ("", None)})


def capture_command(c: cmp.Comparison, what: str) -> str:
    """The command that measures this instance again with `what` (--profile, --counters sw)."""
    params = " ".join(f"--param {shlex.quote(f'{k}={v}')}" for k, v in sorted(c.params.items())
                      if v not in ("", None))
    return " ".join(p for p in ("osmeter run", c.bench, params, what) if p)


def _profiles(store: Any, run_id: int) -> dict[int, Any]:
    return {p.seq: p for p in store.profiles(run_id)}


def _functions(e: Explanation, a: BenchResult, b: BenchResult, pa: Any, pb: Any) -> None:
    c = e.comparison
    missing = [f"run {rid}" for rid, p in ((c.baseline_id, pa), (c.run_id, pb)) if p is None]
    bad = [f"run {rid} ({p.status})" for rid, p in ((c.baseline_id, pa), (c.run_id, pb))
           if p is not None and p.status != "ok"]
    if missing or bad:
        e.profile_missing = (f"no profile in {' and '.join(missing + bad)}: capture one with "
                             f"`{capture_command(c, '--profile')}`")
        return
    prof_a, prof_b = from_stored(pa), from_stored(pb)
    if prof_a.weight_unit != prof_b.weight_unit:
        e.profile_missing = "the two profiles weigh differently (samples vs traced ns): not compared"
        return
    ns_a, src_a = ns_per_op(prof_a, a.summary.median if a.summary else None, a.unit)
    ns_b, src_b = ns_per_op(prof_b, b.summary.median if b.summary else None, b.unit)
    if ns_a is None or ns_b is None:
        e.profile_missing = f"no time per operation for the profiles ({src_a if ns_a is None else src_b})"
        return
    e.functions = timed_diff(prof_a.stacks, prof_b.stacks, ns_a, ns_b, prof_a.weight_unit)[:TOP_FUNCTIONS]
    e.functions_ns = (src_a, src_b)


def _causes(c: cmp.Comparison, differences: Sequence[Difference]) -> tuple[list[Cause], list[str]]:
    found, pinned = [], []
    for d in differences:
        rules = [r for r in causes.rules_for_key(d.key) if r.touches_bench(c.bench)]
        if not rules:
            continue
        rule = rules[0]
        found.append(Cause(d.key, (d.values[0], d.values[1]), rule.name, rule.why))
        for does, instead in causes.pinned(rule, c.params):
            text = f"{d.key} differs ({d.values[0]} → {d.values[1]}), but {does}: use {instead} to see it"
            if text not in pinned:
                pinned.append(text)
    return found, pinned


def explain_one(c: cmp.Comparison, a: BenchResult, b: BenchResult, pa: Any, pb: Any,
                differences: Sequence[Difference], threshold: float = cmp.DEFAULT_THRESHOLD) -> Explanation:
    delta = delta_ci = None
    if c.unit == "ns":
        delta = c.median - c.baseline_median
        delta_ci = (c.baseline_median * (c.ci_low - 1), c.baseline_median * (c.ci_high - 1))
    e = Explanation(c, delta, delta_ci)
    if a.counters and b.counters:
        e.counters = _counter_changes(a, b, threshold)
    if not e.counters:
        if a.counters and b.counters:
            why = "no counter was counted in both runs"
        else:
            why = "no counters in " + ("either run" if not (a.counters or b.counters)
                                       else f"run {c.baseline_id if not a.counters else c.run_id}")
        e.counters_missing = f"{why}: count them with `{capture_command(c, '--counters sw')}`"
    _functions(e, a, b, pa, pb)
    e.causes, e.pinned = _causes(c, differences)
    return e


def _skips(base: Mapping[Key, BenchResult], other: Mapping[Key, BenchResult], base_id: int, run_id: int,
           differences: Sequence[Difference]) -> list[str]:
    """Instances skipped on one side (or both), when a differing fact's rule touches them."""
    out = []
    for key in [k for k in base if k in other]:
        a, b = base[key], other[key]
        if "skip" not in (a.status, b.status) or a.status == b.status == "ok":
            continue
        facts = [d for d in differences if any(r.touches_bench(a.bench) for r in causes.rules_for_key(d.key))]
        if not facts:
            continue
        sides = [f"skipped in run {rid}: {r.reason}" for rid, r in ((base_id, a), (run_id, b)) if r.status == "skip"]
        shown = ", ".join(f"{d.key} {d.values[0]} → {d.values[1]}" for d in facts[:2])
        out.append(f"{instance_name(a.bench, a.params)}: {'; '.join(sides)} (differs: {shown})")
    return out


def explain(store: Any, outcome: Outcome, threshold: float) -> ExplainReport:
    """The explanation of `outcome` (compare_runs of two runs: baseline first)."""
    base_run, run = outcome.runs[0], outcome.runs[1]
    differences = run_differences([base_run, run])
    base = instance_keys(outcome.read[base_run.id])
    other = instance_keys(outcome.read[run.id])
    prof_a, prof_b = _profiles(store, base_run.id), _profiles(store, run.id)
    explanations, pinned = [], []
    for c in outcome.comparisons:
        key = outcome.key_of(c)
        if c.run_id != run.id or key is None:
            continue
        a, b = base.get(key), other.get(key)
        if c.significant and a is not None and b is not None:
            explanations.append(explain_one(c, a, b, prof_a.get(a.seq), prof_b.get(b.seq), differences, threshold))
        elif not c.significant:
            pinned.extend(f"{instance_name(c.bench, c.params)}: no significant change ({c.change * 100:+.1f} %); "
                          f"{text}" for text in _causes(c, differences)[1])
    explanations.sort(key=lambda e: -abs(math.log(e.comparison.ratio)) if e.comparison.ratio > 0 else 0)
    return ExplainReport(base_run, run, explanations, differences,
                         _skips(base, other, base_run.id, run.id, differences), threshold, pinned)


def _signed_ns(ns: float) -> str:
    return ("+" if ns >= 0 else "-") + fmt_quantity(abs(ns), "ns", 3)


def summary_line(e: Explanation) -> str:
    """One line, as an LKP report's: the change, where its time went, and the likeliest cause."""
    c = e.comparison
    head = (f"{e.name} {c.change * 100:+.0f} % ({fmt_quantity(c.baseline_median, c.unit)} → "
            f"{fmt_quantity(c.median, c.unit)})")
    parts = [head]
    if e.functions and e.delta_ns:
        sign = 1 if e.delta_ns > 0 else -1
        clear = [f for f in e.functions if sign * f.self_delta_ns > 0
                 and (f.se_ns is None or abs(f.self_delta_ns) > 2 * f.se_ns)]
        if clear:
            parts.append(", ".join(f"{_signed_ns(f.self_delta_ns)} in {display_name(f.function)}"
                                   + (" (new)" if f.appeared else "") for f in clear[:3]))
    if e.causes:
        parts.append("; ".join(f"{x.key}: {x.values[0]} → {x.values[1]}" for x in e.causes[:2]))
    if e.pinned:
        parts.append("pinned by its parameters")
    return ": ".join(parts[:2]) + "".join(f"; {p}" for p in parts[2:])
