"""task family figures: the fork study.

When a run holds `task.fork` at two or more `touched_mib` values for some
configuration (concurrency, migration, ...), it gets the fork study's
figures (`osmeter study fork` makes such a run):

- fork latency against the parent's touched memory, both axes logarithmic,
  one line per configuration (the median) with a band from min to max;
  what task.fork times is `fork()` until it returns in the parent (the
  child's exit and the parent's wait are off the clock: docs/methods/task.md);
- one figure per performance counter that was counted (a `counters` record
  with status ok): its value per fork against the parent's memory.

`study_points()` is the table behind them, also used by `osmeter study`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .. import plots
from ..axis import readable_ticks, scaled_axis, tick_text
from .base import NamedFigure, RunData

STUDY_BENCH = "task.fork"
NS_PER_MS = 1e6
# What one task.fork sample times (docs/methods/task.md); the child's _exit
# and the parent's waitpid() are outside the clock (that is task.fork_exit).
TIMED = "fork() until it returns in the parent"


@dataclass(frozen=True)
class StudyPoint:
    """One point of the fork study: a configuration at one parent size."""

    config: str  # label, e.g. "single, no migration"
    concurrency: int  # processes forking at once (resolved: 0 = every CPU becomes the count)
    migrate: bool
    touched_mib: int
    n: int
    min: float  # ns, of the samples (process 0's forks)
    mean: float
    median: float
    max: float
    counters: dict[str, float] = field(default_factory=dict)  # name -> value per fork (status ok only)
    counter_units: dict[str, str] = field(default_factory=dict)
    unsupported: tuple[str, ...] = ()  # counters asked for but not counted here


def config_label(concurrency: int, migrate: bool, params: dict[str, Any]) -> str:
    who = "single" if concurrency <= 1 else f"concurrent x{concurrency}"
    label = f"{who}, {'migration' if migrate else 'no migration'}"
    if params.get("thp"):
        label += ", THP"
    if params.get("vmas"):
        label += f", {params['vmas']} VMAs"
    if params.get("drop_caches"):
        label += ", caches dropped"
    return label


def _counter_values(counters: dict[str, Any] | None) -> tuple[dict[str, float], dict[str, str], tuple[str, ...]]:
    values: dict[str, float] = {}
    units: dict[str, str] = {}
    unsupported: list[str] = []
    entries = counters.get("counters") if isinstance(counters, dict) else None
    for c in entries if isinstance(entries, list) else []:
        if not isinstance(c, dict) or not isinstance(c.get("name"), str):
            continue
        v = c.get("value")
        if c.get("status") == "ok" and isinstance(v, (int, float)) and math.isfinite(v):
            values[c["name"]] = float(v)
            units[c["name"]] = str(c.get("unit") or "count")
        else:
            unsupported.append(c["name"])
    return values, units, tuple(unsupported)


def study_points(data: RunData) -> list[StudyPoint]:
    """Every ok task.fork result with a parent size, in run order."""
    points = []
    for r in data.ok(STUDY_BENCH):
        if r.summary is None or not isinstance(r.params.get("touched_mib"), int):
            continue
        k = r.extra.get("concurrency", r.params.get("concurrency", 1))
        k = int(k) if isinstance(k, (int, float)) and math.isfinite(k) else 1
        migrate = bool(r.params.get("migrate"))
        values, units, unsupported = _counter_values(r.counters)
        s = r.summary
        points.append(
            StudyPoint(
                config=config_label(k, migrate, r.params),
                concurrency=k,
                migrate=migrate,
                touched_mib=r.params["touched_mib"],
                n=s.n,
                min=s.min,
                mean=s.mean,
                median=s.median,
                max=s.max,
                counters=values,
                counter_units=units,
                unsupported=unsupported,
            )
        )
    return points


def by_config(points: list[StudyPoint]) -> dict[str, list[StudyPoint]]:
    """Points grouped by configuration, each list sorted by parent size."""
    groups: dict[str, list[StudyPoint]] = {}
    for p in points:
        groups.setdefault(p.config, []).append(p)
    return {c: sorted(ps, key=lambda p: p.touched_mib) for c, ps in groups.items()}


def _study_groups(data: RunData) -> dict[str, list[StudyPoint]]:
    groups = by_config(study_points(data))
    return {c: ps for c, ps in groups.items() if len({p.touched_mib for p in ps}) >= 2}


def _log_x(ax: Any, sizes: list[int]) -> None:
    ax.set_xscale("log", base=2)
    readable_ticks(ax.xaxis, "pow2", text=tick_text)
    ax.set_xlabel("parent memory written before the fork (MiB, log scale)")


def latency_figure(groups: dict[str, list[StudyPoint]]) -> NamedFigure:
    fig = plots.figure(7.0, 4.2)
    ax = fig.add_subplot()
    sizes: list[int] = []
    values: list[float] = []
    for config, ps in groups.items():
        x = [max(p.touched_mib, 1) for p in ps]  # 0 MiB would vanish on a log axis
        sizes += x
        values += [v for p in ps for v in (p.min, p.max)]
        (line,) = ax.plot(x, [p.median for p in ps], marker="o", markersize=3, label=config)
        ax.fill_between(x, [p.min for p in ps], [p.max for p in ps], color=line.get_color(), alpha=0.15)
    _log_x(ax, sizes)
    scaled_axis(ax, "y", "ns", values, TIMED, log=True)
    n = sorted({p.n for ps in groups.values() for p in ps})
    forks = f"{n[0]}" if len(n) == 1 else f"{n[0]}-{n[-1]}"
    title = f"task.fork: latency against parent memory (median, band min-max, {forks} forks per point)"
    plots.set_title(ax, title)
    ax.legend(loc="upper left")
    return NamedFigure("task-fork-study", title, fig)


def counter_figures(groups: dict[str, list[StudyPoint]]) -> list[NamedFigure]:
    names: list[str] = []
    for ps in groups.values():
        for p in ps:
            names += [c for c in p.counters if c not in names]
    figures = []
    for name in names:
        fig = plots.figure(7.0, 4.2)
        ax = fig.add_subplot()
        sizes: list[int] = []
        values: list[float] = []
        unit = "count"
        for config, ps in groups.items():
            pts = [p for p in ps if name in p.counters]
            if not pts:
                continue
            unit = pts[0].counter_units.get(name, unit)
            x = [max(p.touched_mib, 1) for p in pts]
            y = [p.counters[name] for p in pts]
            sizes += x
            values += y
            ax.plot(x, y, marker="o", markersize=3, label=config)
        _log_x(ax, sizes)
        positive = [v for v in values if v > 0]
        log = bool(positive) and plots.wide_spread(positive) and len(positive) == len(values)
        scaled_axis(ax, "y", unit, values, name if unit == "ratio" else f"{name} per fork", log)
        title = f"task.fork: {name} {'' if unit == 'ratio' else 'per fork '}against parent memory"
        plots.set_title(ax, title)
        ax.legend(loc="best")
        figures.append(NamedFigure(f"task-fork-study-{name}", title, fig))
    return figures


def figures(data: RunData) -> list[NamedFigure]:
    groups = _study_groups(data)
    if not groups:
        return []
    return [latency_figure(groups), *counter_figures(groups)]
