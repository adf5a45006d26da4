"""Cost against a parameter: a benchmark measured at MIN_VALUES or more
values of one numeric parameter (`nproc`, `size`, `args`, ...) is drawn as
a line of its medians with a band for their 95 % confidence intervals
(the result's summary.ci_low .. ci_high) against that parameter, one line
per combination of the other parameters that vary (at most MAX_LINES; the
ones every result shares go in the title). Byte sizes get a log2 axis
labelled 4K, 1M, ...; other positive parameters spanning LOG_SPAN× or more
a log axis; the rest a linear one.

A sweep a family figure already draws (COVERED: the memory latency curve,
the fork study, ...) is left to it. `osmeter plot` and the report put these
figures before each benchmark's distribution (distribution.py).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from .. import plots
from ..axis import readable_ticks, scaled_axis, tick_text
from .base import NamedFigure, RunData
from .labels import figure_params, is_size

MIN_VALUES = 3  # values of the parameter on at least one line
MAX_LINES = 10  # more combinations of the other parameters than this: no figure for that parameter
LOG_SPAN = 8.0  # a positive parameter spanning this factor or more gets a log axis

# (bench, parameter) swept in a family figure already: the memory latency and
# bandwidth curves, the fork study, the page-cache curve, cold reads,
# contention, round trips and TCP bandwidth (mem.py, task.py, file.py, net.py).
COVERED = frozenset({
    ("mem.latency", "size"), ("mem.bandwidth", "size"), ("task.fork", "touched_mib"),
    ("file.cache_sweep", "size"), ("file.seq_read_cold", "block"), ("file.rand_read_cold", "block"),
    ("file.contention", "procs"), ("net.tcp_rtt", "size"), ("net.udp_rtt", "size"), ("net.icmp_rtt", "size"),
    ("net.tcp_bw", "write_size"),
})

SINGLE = "median (band: its 95 % CI)"  # the label of a figure's only line
Line = tuple[str, list[tuple[float, Any]]]  # label, [(parameter value, summary)] sorted by value


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def sweeps(results: Sequence[Any]) -> list[tuple[str, dict[str, Any], list[Line]]]:
    """The parameters swept in these results (ok results of one benchmark):
    for each, the parameters every result shares and the lines, a line per
    combination of the other parameters that vary."""
    results = [r for r in results if r.summary is not None and _number(r.summary.median)]
    keys = list(dict.fromkeys(k for r in results for k in r.params))
    varying = [k for k in keys if len({repr(r.params.get(k)) for r in results}) > 1]
    out = []
    for p in varying:
        if not all(_number(r.params.get(p)) for r in results) or len({r.params[p] for r in results}) < MIN_VALUES:
            continue
        others = [k for k in varying if k != p]
        groups: dict[str, list[tuple[float, Any]]] = {}
        for r in results:
            label = figure_params({k: r.params[k] for k in others if k in r.params}) or SINGLE
            groups.setdefault(label, []).append((float(r.params[p]), r.summary))
        lines = [(label, sorted(pts, key=lambda q: q[0])) for label, pts in groups.items()]
        if len(lines) > MAX_LINES or not any(len({x for x, _ in pts}) >= MIN_VALUES for _, pts in lines):
            continue
        shared = {k: v for k, v in results[0].params.items() if k not in varying}
        out.append((p, shared, lines))
    return out


def _x_axis(ax: Any, param: str, xs: list[float]) -> None:
    positive = min(xs) > 0
    if is_size(param) and positive:
        plots.log2_size_axis(ax, [int(x) for x in xs], f"{param} (bytes, log2 scale; K = KiB, M = MiB)")
        return
    whole = all(x == int(x) for x in xs)
    if positive and max(xs) / min(xs) >= LOG_SPAN:
        powers = whole and all(int(x) & (int(x) - 1) == 0 for x in xs)
        ax.set_xscale("log", base=2 if powers else 10)
        readable_ticks(ax.xaxis, "pow2" if powers else "log", text=tick_text)
        ax.set_xlabel(f"{param} (log scale)")
    else:
        readable_ticks(ax.xaxis, "integer" if whole else "linear", text=tick_text)
        ax.set_xlabel(param)


def sweep_figure(bench: str, unit: str | None, param: str, shared: dict[str, Any], lines: list[Line]
                 ) -> NamedFigure:
    fig = plots.figure(7.0, 4.2)
    ax = fig.add_subplot()
    xs: list[float] = []
    ys: list[float] = []
    medians: list[float] = []
    for label, pts in lines:
        x = [v for v, _ in pts]
        med = [s.median for _, s in pts]
        low = [s.ci_low if _number(s.ci_low) else math.nan for _, s in pts]
        high = [s.ci_high if _number(s.ci_high) else math.nan for _, s in pts]
        xs += x
        medians += med
        ys += [v for v in med + low + high if math.isfinite(v)]
        (line,) = ax.plot(x, med, marker="o", markersize=3.5, linewidth=1.4, label=label)
        ax.fill_between(x, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
    _x_axis(ax, param, xs)
    what = {"ns": "time per operation", "bytes_per_s": "throughput"}.get(unit or "", "value")
    log = plots.wide_spread(medians)
    scaled_axis(ax, "y", unit, ys, what + ", median", log)
    if not log and min(ys, default=0.0) >= 0:
        ax.set_ylim(bottom=0)
    where = f" ({figure_params(shared)})" if shared else ""
    title = f"{bench}{where}: median against {param}"
    plots.set_title(ax, title)
    ax.legend(loc="best", fontsize=7, title=None if len(lines) == 1 else "median (band: its 95 % CI) of",
              title_fontsize=7)
    return NamedFigure(f"sweep-{bench}-{param}", title, fig)


def sweep_figures(data: RunData, bench: str) -> list[NamedFigure]:
    """The cost of `bench` against each parameter it was swept over (none when it was not)."""
    results = data.ok(bench)
    units = {r.unit for r in results}
    unit = units.pop() if len(units) == 1 else None
    return [sweep_figure(bench, unit, p, shared, lines) for p, shared, lines in sweeps(results)
            if (bench, p) not in COVERED]
