"""The machine's A/A test (`osmeter noise`): what N runs of the same
benchmarks on one machine say about the noise between runs, and what
`compare` can resolve there. Pure orchestration over a Store, as comparing.

Per instance (benchmark, parameters, occurrence) ok in at least two runs:

* the spread of the runs' medians, max / min - 1, and a robust relative
  standard deviation: 1.4826 x the median absolute deviation of the log
  medians (robust_rsd);
* every pair of runs compared as `compare` compares them (comparing.compare_runs:
  the same ratio, interval and rule), the pairs it called significant being
  false alarms;
* the smallest change compare resolves (`resolves`): the smallest change,
  up or down, that compare would have called significant in every one of
  those comparisons, whichever of the two runs is the baseline. A change
  multiplies a run's median and its interval alike (the bootstrap's
  percentiles and the repetitions' log-scale interval scale with the data),
  so a pair with ratio r and interval [lo, hi] calls a change by the factor
  c significant when lo c > 1 or hi c < 1, and |r c - 1| > threshold
  (compare.is_significant). Over all pairs, both ways round (r, lo, hi and
  1/r, 1/hi, 1/lo), with lo_min the least low end, hi_max the largest high
  end and r_min the least ratio:
      up   = max(1 / lo_min, (1 + t) / r_min) - 1
      down = 1 - min(1 / hi_max, (1 - t) r_min)
  and `resolves` = max(up, down). It holds the threshold, the intervals'
  half-widths and the largest change seen between identical runs in one
  figure (docs/compare.md, "What this machine can resolve").

The result is a JSON document stored in the last noise run's meta
(RESULT_KEY); `compare` finds the newest one of the same machine
(compare_by.host_keys, as compare --by host matches runs to machines) and
adds a caveat to every significant change smaller than what that instance
resolved (apply).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from . import compare as cmp
from .compare_by import host_keys
from .errors import UsageError
from .comparing import Key, Outcome, compare_runs, instance_keys
from .model import RunInfo
from .records import canonical_params, describe_instance
from .repeats import spread
from .store.base import Store

SCHEMA = 1
TAG_KEY = "noise"  # a noise run's meta: {"series": label, "index": i, "runs": N}
RESULT_KEY = "noise_result"  # the last noise run's meta: the result's document
MIN_RUNS, MAX_RUNS, DEFAULT_RUNS = 2, 20, 3
MAD_TO_SD = 1.4826  # a normal distribution's SD over its median absolute deviation
WITHIN = (0.02, 0.05, 0.10)  # the shares of instances whose run medians agree within these spreads
SHARE = 0.9  # a family's verdict: the change this share of its instances resolve


def robust_rsd(medians: Sequence[float]) -> float:
    """The robust relative standard deviation of the medians: 1.4826 x the median
    absolute deviation of their logarithms (NaN for fewer than two, or a median not positive)."""
    m = np.asarray(medians, dtype=np.float64)
    if m.size < 2 or not np.all(m > 0):
        return math.nan
    logs = np.log(m)
    return float(MAD_TO_SD * np.median(np.abs(logs - np.median(logs))))


@dataclass(frozen=True)
class Bounds:
    """The A/A comparisons of one instance, both ways round: the least low end of
    the ratio's interval, the largest high end, the least ratio (<= 1)."""

    lo_min: float
    hi_max: float
    r_min: float

    @staticmethod
    def of(pairs: Sequence[tuple[float, float, float]]) -> Bounds | None:
        """From (ratio, low, high) per pair; None without a pair whose numbers are all positive."""
        good = [(r, lo, hi) for r, lo, hi in pairs if r > 0 and lo > 0 and hi > 0]  # NaN fails each test
        if not good:
            return None
        return Bounds(min(min(lo, 1 / hi) for _, lo, hi in good), max(max(hi, 1 / lo) for _, lo, hi in good),
                      min(min(r, 1 / r) for r, _, _ in good))

    def up(self, threshold: float) -> float:
        """The smallest rise every A/A comparison would have called significant."""
        return max(1 / self.lo_min, (1 + threshold) / self.r_min) - 1

    def down(self, threshold: float) -> float:
        """The smallest fall (as a positive fraction) every A/A comparison would have called significant."""
        return 1 - min(1 / self.hi_max, (1 - threshold) * self.r_min)

    def resolves(self, threshold: float) -> float:
        return max(self.up(threshold), self.down(threshold))


@dataclass
class InstanceNoise:
    key: Key
    unit: str | None
    params: dict[str, Any]
    medians: dict[int, float] = field(default_factory=dict)  # run id -> its median
    pairs: list[tuple[float, float, float]] = field(default_factory=list)  # (ratio, low, high) per compared pair
    false_alarms: list[dict[str, Any]] = field(default_factory=list)  # {baseline, run, change}
    flags: list[str] = field(default_factory=list)

    @property
    def bench(self) -> str:
        return self.key[0]

    @property
    def bounds(self) -> Bounds | None:
        return Bounds.of(self.pairs)


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def analyse(store: Any, runs: Sequence[RunInfo], threshold: float = cmp.DEFAULT_THRESHOLD) -> list[InstanceNoise]:
    """Every instance ok in two runs or more, with its medians and its A/A comparisons
    (each run against each later one, as `compare` makes them)."""
    found: dict[Key, InstanceNoise] = {}
    for run in runs:
        for key, r in instance_keys(store.results(run.id)).items():
            if r.status != "ok" or r.summary is None:
                continue
            x = found.setdefault(key, InstanceNoise(key, r.unit, dict(r.params)))
            x.medians[run.id] = r.summary.median
            x.flags += [f for f in r.flags if f not in x.flags]
    for i, base in enumerate(runs[:-1]):
        ours = [r for r in runs[i + 1:] if r.counts.ok]
        if not base.counts.ok or not ours:
            continue
        try:
            outcome = compare_runs(store, [base, *ours], threshold, ())
        except UsageError:  # a run with no instance in common with this one: nothing to compare
            continue
        for c in outcome.comparisons:
            key = outcome.key_of(c)
            if key is None or key not in found:
                continue
            x = found[key]
            x.pairs.append((c.ratio, c.ci_low, c.ci_high))
            if c.significant:
                x.false_alarms.append({"baseline": c.baseline_id, "run": c.run_id, "change": _finite(c.change)})
    return [x for x in found.values() if len(x.medians) >= 2]


def _quantile_high(values: Sequence[float], share: float) -> float:
    """The smallest value at least `share` of the values are at or under (nearest rank)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def family_lines(instances: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per family (in the order first met): its count, median spread, the change
    SHARE of its instances resolve, its worst instance (by spread), its false alarms."""
    families: dict[str, list[dict[str, Any]]] = {}
    for x in instances:
        families.setdefault(x["bench"].split(".", 1)[0], []).append(x)
    out = []
    for name, xs in families.items():
        spreads = [x["spread"] for x in xs if x["spread"] is not None]
        resolved = [x["resolves"] for x in xs if x["resolves"] is not None]
        worst = max((x for x in xs if x["spread"] is not None), key=lambda x: x["spread"], default=None)
        out.append({
            "family": name,
            "instances": len(xs),
            "median_spread": float(np.median(spreads)) if spreads else None,
            "share": SHARE,
            "resolves": _quantile_high(resolved, SHARE) if resolved else None,
            "worst": None if worst is None else {"name": worst["name"], "spread": worst["spread"]},
            "false_alarms": sum(len(x["false_alarms"]) for x in xs),
        })
        out[-1]["verdict"] = family_verdict(out[-1])
    return out


ParamsOf = Callable[[str, Mapping[str, Any]], Mapping[str, Any]]  # the parameters an instance is named by


def document(instances: Sequence[InstanceNoise], runs: Sequence[RunInfo], threshold: float,
             walls: Mapping[int, float] | None = None, params_of: ParamsOf | None = None) -> dict[str, Any]:
    """The result as stored and written by --json (no NaN: null). `params_of`: the parameters
    each instance's name shows (report.params' telling ones; default every one)."""
    rows = []
    for x in instances:
        b = x.bounds
        m = list(x.medians.values())
        name = describe_instance(x.bench, params_of(x.bench, x.params) if params_of else x.params)
        rows.append({
            "bench": x.bench, "params": x.params, "occurrence": x.key[2], "unit": x.unit,
            "name": name + (f" (#{x.key[2] + 1})" if x.key[2] else ""),
            "medians": {str(k): v for k, v in x.medians.items()},
            "median": float(np.median(m)),
            "spread": _finite(spread(m)),
            "rsd": _finite(robust_rsd(m)),
            "bounds": None if b is None else [b.lo_min, b.hi_max, b.r_min],
            "resolves": None if b is None else _finite(b.resolves(threshold)),
            "pairs": len(x.pairs),
            "false_alarms": x.false_alarms,
            "flags": x.flags,
        })
    pairs = sum(len(x.pairs) for x in instances)
    ids = [r.id for r in runs]
    spreads = [r["spread"] for r in rows if r["spread"] is not None]
    return {
        "osmeter_noise": SCHEMA,
        "runs": [{"id": r.id, "label": r.label, "status": r.status, "wall_s": _finite((walls or {}).get(r.id))}
                 for r in runs],
        "run": ids[-1] if ids else None,
        "threshold": threshold,
        "suite": runs[0].suite if runs else None,
        "comparisons": pairs,
        "false_alarms": sum(len(x.false_alarms) for x in instances),
        "within": {f"{w:g}": (sum(s <= w for s in spreads) / len(spreads) if spreads else None) for w in WITHIN},
        "families": family_lines(rows),
        "instances": rows,
    }


def percent(fraction: float | None) -> str:
    """`6.1%`, `12%`, `30x` for a ratio of 2 or more (spread + 1); '-' for none."""
    if fraction is None or not math.isfinite(fraction):
        return "-"
    if fraction >= 1.0:
        return f"{fraction + 1:.2g}x" if fraction < 9 else f"{fraction + 1:.0f}x"
    return f"{100 * fraction:.1f}%" if fraction < 0.1 else f"{100 * fraction:.0f}%"


def family_verdict(f: Mapping[str, Any]) -> str:
    """`file: 41 instances, median spread 3.1%; compare resolves a change over 6.0% in 90% of them;
    worst file.create files=1000 (spread 30x)`: for 90 % of the family's instances, any change
    larger than 6.0 % (either way) is significant in every comparison of the identical runs."""
    line = (f"{f['family']}: {f['instances']} instance{'s' if f['instances'] != 1 else ''}, "
            f"median spread {percent(f['median_spread'])}; "
            f"compare resolves a change over {percent(f['resolves'])}"
            + (f" in {100 * f['share']:.0f}% of them" if f["instances"] > 1 else ""))
    if f["worst"] is not None:
        line += f"; worst {f['worst']['name']} (spread {percent(f['worst']['spread'])})"
    if f["false_alarms"]:
        line += f"; {f['false_alarms']} false alarm{'s' if f['false_alarms'] != 1 else ''}"
    return line


# --- compare's caveat ------------------------------------------------------


def is_result(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("osmeter_noise") == SCHEMA and isinstance(doc.get("instances"), list)


def find(store: Store, runs: Sequence[RunInfo]) -> tuple[RunInfo, dict[str, Any]] | None:
    """The newest stored noise result of the baseline's machine (runs[0]): its run and document."""
    holders = [r for r in store.runs() if is_result(r.meta.get(RESULT_KEY))]
    if not holders:
        return None
    keys = host_keys([*runs, *holders])
    mine = [r for r in holders if keys[r.id] == keys[runs[0].id]]
    return (mine[-1], mine[-1].meta[RESULT_KEY]) if mine else None


def caveat_text(run_id: int, limit: float, rise: bool) -> str:
    """`below this machine's noise (noise run 12: +17%)`: the limit of the change's direction
    (a fall's as `-15%`; a rise of 2x or more as `3.2x`)."""
    shown = percent(limit)
    if shown.endswith("%"):
        shown = ("+" if rise else "-") + shown
    return f"below this machine's noise (noise run {run_id}: {shown})"


def apply(outcome: Outcome, store: Store, threshold: float) -> None:
    """With a noise result of the baseline's machine: each significant change of a
    run of that machine smaller than what its instance resolved in that direction
    (Bounds.up for a rise, Bounds.down for a fall) gets the caveat."""
    got = find(store, outcome.runs)
    if got is None:
        return
    holder, doc = got
    keys = host_keys([*outcome.runs, holder])
    same = {r.id for r in outcome.runs if keys[r.id] == keys[holder.id]}
    resolved: dict[Key, Bounds] = {}
    for x in doc["instances"]:
        b = x.get("bounds")
        if isinstance(b, list) and len(b) == 3 and all(isinstance(v, (int, float)) and v > 0 for v in b):
            key = (x["bench"], canonical_params(x["params"]), x["occurrence"])
            resolved[key] = Bounds(*b)
    new = {}
    for c in outcome.comparisons:
        key = outcome.key_of(c)
        if not c.significant or c.run_id not in same or key is None or key not in resolved:
            continue
        rise = c.change > 0
        limit = resolved[key].up(threshold) if rise else resolved[key].down(threshold)
        if abs(c.change) < limit:  # a fall is at most 100 %: set against max(up, down) every fall was below
            new[id(c)] = replace(c, noise=caveat_text(holder.id, limit, rise))
    outcome.swap(new)
    outcome.noise = {"run": holder.id, "label": holder.label, "runs": [r["id"] for r in doc.get("runs", [])],
                     "threshold": threshold, "instances": len(resolved)}

