"""mem family figures: the memory hierarchy.

- **Latency curve** (`mem-latency`): `mem.latency` ns per load against the
  working set (log2 axis), one line per curve (base pages, huge pages,
  other patterns); the levels `osmeter.memlevels` reads off each curve drawn
  as a bar over their plateau with the boundary marked, and the sysfs cache
  sizes of the run's machine as dotted vertical lines named on a scale
  above the axes, so agreement and disagreement are visible at a glance.
  Level labels are moved apart until none overlaps another.
- **Bandwidth curve** (`mem-bandwidth-curve`): `mem.bandwidth` (decimal
  units: GB/s is 10^9 bytes/s) against the buffer size, one line per operation and
  thread count measured at two or more sizes, with the sysfs cache sizes.
- **Bandwidth by operation** (`mem-bandwidth`): the auto-sized (>= 4 x LLC)
  figures of each operation, one thread and all CPUs side by side.
"""

from __future__ import annotations

from typing import Any

from ... import memlevels
from .. import plots
from ..axis import scaled_axis, short_number, short_quantity
from ...fmt import human_bytes
from .base import NamedFigure, RunData



def _sysfs_lines(ax: Any, machine: dict[str, Any], lo: int, hi: int) -> None:
    """The sysfs cache sizes as dotted lines, named on a scale of their own
    above the axes (where no data label can collide with them)."""
    caches = machine.get("caches") if isinstance(machine, dict) else None
    ticks: dict[int, str] = {}
    for c in caches if isinstance(caches, list) else []:
        size, level, ctype = c.get("size_bytes"), c.get("level"), c.get("type")
        if not isinstance(size, int) or ctype == "Instruction" or not lo / 2 <= size <= hi * 2:
            continue
        ax.axvline(size, color="0.45", linestyle=":", linewidth=1)
        ticks[size] = f"L{level} {human_bytes(size)}" if size not in ticks else ticks[size] + f", L{level}"
    if not ticks:
        return
    top = ax.secondary_xaxis("top")
    top.set_xticks(sorted(ticks), [ticks[t] for t in sorted(ticks)], fontsize=7, color="0.35")
    top.minorticks_off()
    top.tick_params(length=3, color="0.45")
    top.set_xlabel("sysfs cache sizes (dotted)", fontsize=7, color="0.35")


def latency_figure(data: RunData) -> NamedFigure | None:
    analyses = memlevels.analyse_results(data.results, data.run.machine)
    analyses = [a for a in analyses if len(a.points) >= 2]
    if not analyses:
        return None
    fig = plots.figure(7.5, 4.6)
    ax = fig.add_subplot()
    sizes: list[int] = []
    values: list[float] = []
    labels = []
    for a in analyses:
        x = [p.size_bytes for p in a.points]
        sizes += x
        values += [p.ns for p in a.points]
        (line,) = ax.plot(x, [p.ns for p in a.points], marker="o", markersize=2.5, linewidth=1, label=a.label)
        colour = line.get_color()
        for lv in a.detection.levels:
            ax.hlines(lv.ns, lv.first_bytes, lv.last_bytes, colors=colour, linewidth=4, alpha=0.35)
            cyc = f", {lv.cycles:.1f} ref cycles" if lv.cycles is not None else ""  # TSC ticks, not core cycles
            where = "" if lv is a.detection.memory else f", ~{plots.size_label(lv.size_bytes)}"
            label = ax.annotate(f"{lv.name}: {short_quantity(lv.ns, 'ns')}{cyc}{where}", (lv.first_bytes, lv.ns),
                                xytext=(0, 4 if a.thp == 0 else -10), textcoords="offset points", fontsize=7,
                                color=colour)
            label.right_xy = (lv.last_bytes, lv.ns)  # where it is anchored if it runs off the right
            labels.append(label)
            if lv is not a.detection.memory:
                # the detected size: half-way up the climb to the next level
                ax.axvline(lv.size_bytes, color=colour, linestyle="--", linewidth=0.8, alpha=0.6)
    plots.log2_size_axis(ax, sizes, "working set (bytes, log2 scale; K = KiB, M = MiB)")
    _sysfs_lines(ax, data.run.machine, min(sizes), max(sizes))  # after the scale: its own axis copies it
    scaled_axis(ax, "y", "ns", values, "load-to-use latency per load", log=True)
    title = "mem.latency against working set (median; bars: levels, dashed: detected sizes, dotted: sysfs)"
    plots.set_title(ax, title)
    ax.legend(loc="lower right")
    plots.separate_labels(fig, labels)
    return NamedFigure("mem-latency", title, fig)


def _bw_key(params: dict[str, Any]) -> str:
    threads = params.get("threads", "1")
    return f"{params.get('op', 'read')}, {'all CPUs' if threads == 'all' else '1 thread'}"


def bandwidth_curve_figure(data: RunData) -> NamedFigure | None:
    groups: dict[str, list[tuple[int, float]]] = {}
    for r in data.ok("mem.bandwidth"):
        if r.summary is None or not r.params.get("size"):
            continue  # the auto-sized results are in the other figure
        size = int(r.extra.get("size_bytes", r.params["size"]))
        groups.setdefault(_bw_key(r.params), []).append((size, r.summary.median))
    groups = {k: sorted(v) for k, v in groups.items() if len({s for s, _ in v}) >= 2}
    if not groups:
        return None
    fig = plots.figure(7.5, 4.4)
    ax = fig.add_subplot()
    sizes: list[int] = []
    for key, pts in groups.items():
        sizes += [s for s, _ in pts]
        ax.plot([s for s, _ in pts], [g for _, g in pts], marker="o", markersize=3, label=key)
    plots.log2_size_axis(ax, sizes, "working set (bytes, log2 scale; K = KiB, M = MiB)")
    _sysfs_lines(ax, data.run.machine, min(sizes), max(sizes))  # after the scale: its own axis copies it
    ax.set_xlabel("buffer (bytes, log2 scale; K = KiB, M = MiB)")
    scaled_axis(ax, "y", "bytes_per_s", [g for pts in groups.values() for _, g in pts], "bandwidth, decimal units")
    ax.set_ylim(bottom=0)
    title = "mem.bandwidth: bandwidth against buffer size (median; dotted: sysfs cache sizes)"
    plots.set_title(ax, title)
    ax.legend(loc="upper right")
    return NamedFigure("mem-bandwidth-curve", title, fig)


def bandwidth_ops_figure(data: RunData) -> NamedFigure | None:
    ops: list[str] = []
    values: dict[tuple[str, str], float] = {}
    size = None
    for r in data.ok("mem.bandwidth"):
        if r.summary is None or r.params.get("size"):
            continue
        op, threads = str(r.params.get("op", "read")), str(r.params.get("threads", "1"))
        if op not in ops:
            ops.append(op)
        values[(op, threads)] = r.summary.median
        size = r.extra.get("size_bytes", size)
    if not values:
        return None
    fig = plots.figure(6.4, 3.8)
    ax = fig.add_subplot()
    scale = scaled_axis(ax, "y", "bytes_per_s", list(values.values()), "bandwidth, decimal units")
    width = 0.38
    for k, (threads, label) in enumerate((("1", "1 thread"), ("all", "all CPUs"))):
        xs = [i + (k - 0.5) * width for i, op in enumerate(ops) if (op, threads) in values]
        ys = [values[(op, threads)] for op in ops if (op, threads) in values]
        if xs:
            bars = ax.bar(xs, ys, width=width, label=label)
            ax.bar_label(bars, labels=[short_number(y, scale.factor) for y in ys], fontsize=7)
    ax.set_xticks(range(len(ops)))
    ax.set_xticklabels(ops)
    buf = f", {human_bytes(size)} buffer" if isinstance(size, (int, float)) and size >= 1024 else ""
    title = f"mem.bandwidth by operation (median{buf}; copies count bytes copied once)"
    plots.set_title(ax, title)
    ax.legend(loc="upper right")
    return NamedFigure("mem-bandwidth", title, fig)


def figures(data: RunData) -> list[NamedFigure]:
    out = [latency_figure(data), bandwidth_curve_figure(data), bandwidth_ops_figure(data)]
    return [f for f in out if f is not None]
