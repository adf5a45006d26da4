"""rt family figures: execution times of the periodic workload kernels per
stress level, deadline misses, and cyclictest-style latency histograms
(`osmeter study rt` makes a run with all three).

A result's **configuration** is its stressors: `stress` threads of
`stress_op` on the other CPUs (stress 0 is "no stress", whatever the op).
Figures show ok results only; a configuration the probe skipped (too few
CPUs for its stressors) has no data here, and the study's text says why.

- **Execution time per kernel and stress level** (`rt-workload-distributions`):
  one panel per `rt.workload` kernel, a violin per configuration of its
  jobs' execution times (us) with the median (white bar) and the maximum
  (red cross) marked: the study's finding, a tail and a maximum that grow
  with the stressors while the median moves far less, is read across the
  violins of a panel. Each panel has its own value axis, logarithmic when
  its samples span more than plots.WIDE_SPREAD x.
- **Deadline misses** (`rt-deadline-misses`): per kernel a bar per
  configuration, the share of jobs whose response time (release to end)
  exceeded the deadline (the probe's extra.misses of extra.jobs); a row
  of zeros is drawn and said, not left out.
- **Wake-up latency histograms** (`rt-cyclic-histogram`): `rt.cyclic`'s
  samples, one step line per configuration (idle and each stress level),
  1 us bins from 0 to the end of the data or `hist_us` (cyclictest -h),
  counts on a log axis; latencies above `hist_us` are one overflow bar per
  configuration to the right, labelled with their count, as cyclictest's
  histogram counts them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .. import plots
from ..axis import readable_ticks, scaled_axis, tick_text
from .base import NamedFigure, RunData

WORKLOAD = "rt.workload"
CYCLIC = "rt.cyclic"
US = 1e3
OPS = ("read", "write", "cpu", "syscall")  # the probe's stress_op order
DEFAULT_HIST_US = 1000  # rt.cyclic's default hist_us
PANEL_COLUMNS = 5


@dataclass(frozen=True)
class Config:
    """A stress configuration: `stress` stressor threads of `op` (op '' when stress is 0)."""

    stress: int
    op: str

    @property
    def label(self) -> str:
        if self.stress == 0:
            return "no stress"
        return f"{self.stress} x {self.op}"

    @property
    def slug(self) -> str:
        """For file names: stress0, stress1-read."""
        return "stress0" if self.stress == 0 else f"stress{self.stress}-{self.op}"

    def sort_key(self) -> tuple[int, int, str]:
        return (self.stress, OPS.index(self.op) if self.op in OPS else len(OPS), self.op)


def stress_label(c: Config) -> str:
    """`no stress`, `1 x read stressor`, `3 x write stressors`."""
    return c.label if c.stress == 0 else f"{c.label} stressor{'s' if c.stress > 1 else ''}"


def config_of(r: Any) -> Config:
    """The stress configuration of an rt result, from its parameters."""
    p = r.params or {}
    k = p.get("stress", 0)
    k = k if isinstance(k, int) and not isinstance(k, bool) else 0
    return Config(k, "" if k == 0 else str(p.get("stress_op", "read")))


def configs(results: Sequence[Any], bench: str | None = None) -> list[Config]:
    """The configurations of the rt results (of `bench`, any status), unstressed first."""
    found = {config_of(r) for r in results if r.bench.startswith("rt.") and (bench is None or r.bench == bench)}
    return sorted(found, key=Config.sort_key)


def kernels(results: Sequence[Any]) -> list[str]:
    """The rt.workload kernels, in run order."""
    return list(dict.fromkeys(str((r.params or {}).get("kernel")) for r in results if r.bench == WORKLOAD))


def find(results: Sequence[Any], bench: str, config: Config, **match: Any) -> Any:
    """The result of `bench` in `config` (matching `match` params), any status; None when absent."""
    for r in results:
        if r.bench == bench and config_of(r) == config and all((r.params or {}).get(k) == v for k, v in match.items()):
            return r
    return None


def _colours(n: int) -> list[Any]:
    import matplotlib

    cmap = matplotlib.colormaps["viridis"]
    return [cmap(0.1 + 0.75 * i / max(1, n - 1)) for i in range(n)]


# --- execution times ----------------------------------------------------------


def workload_figure(data: RunData) -> NamedFigure | None:
    ok = data.ok(WORKLOAD)
    cfgs = [c for c in configs(ok)]
    panels = []
    for kernel in kernels(ok):
        shown = []
        for c in cfgs:
            r = find(ok, WORKLOAD, c, kernel=kernel)
            x = data.samples(r) if r is not None else None
            if x is not None and x.size:
                shown.append((c, np.asarray(x, dtype=float)))
        if shown:
            panels.append((kernel, shown))
    if not panels:
        return None
    cols = min(PANEL_COLUMNS, len(panels))
    rows = math.ceil(len(panels) / cols)
    fig = plots.figure(2.3 * cols + 0.6, 2.0 * rows + 0.9)
    axes = fig.subplots(rows, cols, squeeze=False)
    colour = dict(zip(cfgs, _colours(len(cfgs))))
    for ax, (kernel, shown) in zip(axes.flat, panels):
        values = [plots.thin(x) for _, x in shown]
        pos = list(range(1, len(shown) + 1))
        parts = ax.violinplot(values, positions=pos, widths=0.8, showextrema=False)
        for body, (c, _) in zip(parts["bodies"], shown):
            body.set_facecolor(colour[c])
            body.set_edgecolor(colour[c])
            body.set_alpha(0.7)
        ax.hlines([float(np.median(x)) for _, x in shown], [p - 0.3 for p in pos], [p + 0.3 for p in pos],
                  colors="white", linewidth=1.5)
        ax.plot(pos, [float(np.max(x)) for _, x in shown], "x", color=plots.MEDIAN_COLOUR, markersize=5)
        every = np.concatenate([x for _, x in shown])
        scaled_axis(ax, "y", "ns", every, "execution time", plots.wide_spread(every))
        ax.yaxis.label.set_fontsize(8)
        ax.set_xticks(pos)
        ax.set_xticklabels([c.label.replace(" x ", "x") for c, _ in shown], fontsize=7, rotation=30)
        ax.set_title(kernel, fontsize=9)
        ax.tick_params(axis="y", labelsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles: list[Any] = [Patch(color=colour[c], alpha=0.7, label=stress_label(c)) for c in cfgs]
    handles += [Line2D([], [], color="white", markeredgecolor="black", marker="_", linestyle="", markersize=10,
                       label="median (white bar)"),
                Line2D([], [], color=plots.MEDIAN_COLOUR, marker="x", linestyle="", label="maximum")]
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 6), fontsize=8)
    title = "rt.workload: execution time per job, per kernel and stress level (violins)"
    fig.suptitle(title, fontsize=10)
    return NamedFigure("rt-workload-distributions", title, fig)


# --- deadline misses ----------------------------------------------------------


def miss_share(r: Any) -> float | None:
    """extra.misses / extra.jobs of an rt.workload result, or None when not reported."""
    extra = r.extra or {}
    misses, jobs = extra.get("misses"), extra.get("jobs")
    if not isinstance(misses, (int, float)) or not isinstance(jobs, (int, float)) or not jobs > 0:
        return None
    return float(misses) / float(jobs)


def misses_figure(data: RunData) -> NamedFigure | None:
    ok = data.ok(WORKLOAD)
    cfgs = configs(ok)
    names = kernels(ok)
    cells = {(k, c): miss_share(r) for k in names for c in cfgs if (r := find(ok, WORKLOAD, c, kernel=k)) is not None}
    if not any(v is not None for v in cells.values()):
        return None
    fig = plots.figure(min(11.0, max(6.4, 0.18 * len(names) * len(cfgs) + 1.5)), 3.8)
    ax = fig.add_subplot()
    width = 0.8 / len(cfgs)
    for j, (c, colour) in enumerate(zip(cfgs, _colours(len(cfgs)))):
        xs = [i + (j - (len(cfgs) - 1) / 2) * width for i, k in enumerate(names) if cells.get((k, c)) is not None]
        ys = [100 * v for k in names if (v := cells.get((k, c))) is not None]
        ax.bar(xs, ys, width=width, color=colour, label=stress_label(c))
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("deadline misses (% of jobs)")
    top = max((v for v in cells.values() if v is not None), default=0.0)
    if top == 0:
        ax.set_ylim(0, 1)
        ax.text(0.5, 0.5, "no job missed its deadline", transform=ax.transAxes, ha="center", va="center",
                fontsize=10, color="#555555")
    else:
        ax.set_ylim(bottom=0)
    ax.legend(fontsize=7, loc="upper left")
    title = "rt.workload: deadline misses per kernel and stress level (response time > deadline)"
    plots.set_title(ax, title)
    return NamedFigure("rt-deadline-misses", title, fig)


# --- wake-up latency histograms --------------------------------------------------


def hist_us(r: Any) -> int:
    v = (r.params or {}).get("hist_us", DEFAULT_HIST_US)
    return v if isinstance(v, int) and v > 0 else DEFAULT_HIST_US


def histogram(samples_ns: np.ndarray, limit_us: int) -> tuple[np.ndarray, int]:
    """cyclictest's histogram: counts per 1 us bin [k, k+1) us for k in
    0..limit_us-1, and the overflows (latencies of limit_us or more: at or
    above the last bin's end)."""
    us = np.asarray(samples_ns, dtype=float) / US
    inside = us[us < limit_us]
    counts = np.bincount(np.clip(np.floor(inside), 0, None).astype(np.int64), minlength=limit_us)[:limit_us]
    return counts, int(us.size - inside.size)


def _data_end_us(x: np.ndarray, limit_us: int) -> int:
    """Where the histogram's bins can stop: just past the largest latency under limit_us."""
    inside = x[x < limit_us * US]
    return int(math.floor(float(np.max(inside)) / US)) + 2 if inside.size else 0


def cyclic_figure(data: RunData) -> NamedFigure | None:
    ok = data.ok(CYCLIC)
    lines = []
    for c in configs(ok):
        r = next((r for r in ok if config_of(r) == c), None)
        x = data.samples(r) if r is not None else None
        if x is not None and x.size:
            lines.append((c, r, np.asarray(x, dtype=float)))
    if not lines:
        return None
    limit = max(hist_us(r) for _, r, _ in lines)
    end = max(10, min(limit, max(_data_end_us(x, hist_us(r)) for _, r, x in lines)))
    fig = plots.figure(8.0, 4.2)
    ax = fig.add_subplot()
    over_x = end + max(2.0, 0.04 * end)  # the overflow bars, right of the bins
    width = max(1.0, 0.03 * end)
    any_over = False
    for i, ((c, r, x), colour) in enumerate(zip(lines, _colours(len(lines)))):
        counts, overflows = histogram(x, hist_us(r))
        shown = counts[:end].astype(float)
        label = f"{stress_label(c) if c.stress else 'no stress (idle)'}: n={x.size}, max {float(np.max(x)) / US:.0f} us"
        ax.stairs(np.where(shown > 0, shown, np.nan), np.arange(end + 1), color=colour, linewidth=1.2, label=label)
        if overflows:
            any_over = True
            bx = over_x + i * width
            ax.bar([bx], [overflows], width=width * 0.9, color=colour, hatch="//", edgecolor="black", linewidth=0.3)
            ax.annotate(str(overflows), (bx, overflows), textcoords="offset points", xytext=(0, 2), ha="center",
                        fontsize=7)
    if any_over:
        ax.axvline(end + 0.5 * (over_x - end), color="#999999", linewidth=0.8, linestyle=":")
        ax.text(over_x + (len(lines) - 1) * width / 2, 1.0, f"> {limit} us", ha="center", va="bottom", fontsize=7,
                transform=ax.get_xaxis_transform())
    ax.set_yscale("log")
    readable_ticks(ax.yaxis, "log", text=tick_text)
    ax.set_ylim(bottom=0.5)  # a bin of one cycle stays visible
    ax.set_xlim(0, over_x + len(lines) * width + 1)
    ax.set_xlabel(f"wake-up latency (us; 1 us bins up to {end} us" + (f"; hatched: above hist_us = {limit} us)"
                                                                        if any_over else ")"))
    ax.set_ylabel("cycles (log scale)")
    ax.legend(fontsize=7, loc="upper right")
    title = "rt.cyclic: wake-up latency histogram, idle and under stressors"
    plots.set_title(ax, title)
    return NamedFigure("rt-cyclic-histogram", title, fig)


def figures(data: RunData) -> list[NamedFigure]:
    out = [workload_figure(data), misses_figure(data), cyclic_figure(data)]
    return [f for f in out if f is not None]
