"""file family figures: the page cache, cold reads, remote files, contention.

- **Page-cache curve** (`file-cache-sweep`): `file.cache_sweep` re-read
  time per block against the file size (log2 axis): the mean (what the
  knee is read from, osmeter.pagecache) and the median (which stays on the
  fast reads until half the blocks miss), the share of the file in the
  page cache on a second axis, the knee (dashed) with its bracket (shaded),
  and what the machine suggested (dotted): MemAvailable and the memory
  cgroup's limit. One figure per block size and directory.
- **Cold reads by block size** (`file-cold-reads`): `file.seq_read_cold`
  and `file.rand_read_cold`, time per block (median) and throughput (block size /
  mean time per block) against the block size, one line per benchmark and
  directory (remote directories dashed).
- **Local against remote** (`file-local-vs-remote`): when the run read a
  remote directory (its result's info says remote = yes) and a local one,
  the throughput of both side by side per block size, sequential and random.
- **Contention** (`file-contention`): `file.contention` time per block
  (median, band p5-p95) against the number of processes reading at once,
  one line per pattern and sharing.
"""

from __future__ import annotations

import math
from typing import Any

from ... import pagecache
from .. import plots
from ..axis import readable_ticks, scaled_axis, tick_text
from .base import NamedFigure, RunData

COLD = ("file.seq_read_cold", "file.rand_read_cold")
CONTENTION = "file.contention"


# --- the page-cache curve ----------------------------------------------------


def _suggested_lines(ax: Any, a: pagecache.CacheAnalysis, lo: int, hi: int) -> None:
    for value, name in ((a.mem_available, "MemAvailable"), (a.cgroup_limit, "cgroup limit")):
        if value and lo / 2 <= value <= hi * 2:
            ax.axvline(value, color="0.4", linestyle=":", linewidth=1)
            ax.annotate(f"{name} {pagecache.fmt_bytes(value)}", (value, 1.0), xycoords=("data", "axes fraction"),
                        xytext=(2, -10), textcoords="offset points", fontsize=7, color="0.3")


def cache_figure(a: pagecache.CacheAnalysis, name: str) -> NamedFigure:
    fig = plots.figure(7.5, 4.4)
    ax = fig.add_subplot()
    x = [p.size_bytes for p in a.points]
    ax.plot(x, [p.ns for p in a.points], marker="o", markersize=3, label="mean (the curve)")
    med = [(p.size_bytes, p.median_ns) for p in a.points if p.median_ns is not None]
    if med:
        ax.plot([m[0] for m in med], [m[1] for m in med], linestyle="--", linewidth=1, alpha=0.7, label="median")
    k = a.knee
    if k.status == "knee" and k.size_bytes and k.low_bytes and k.high_bytes:
        ax.axvspan(k.low_bytes, k.high_bytes, color="tab:red", alpha=0.08)
        ax.axvline(k.size_bytes, color="tab:red", linestyle="--", linewidth=1,
                   label=f"knee {pagecache.fmt_bytes(k.size_bytes)}")
    if k.threshold_ns:
        ax.axhline(k.threshold_ns, color="0.6", linewidth=0.8, linestyle="-.",
                   label=f"plateau x{1 + pagecache.TOL:g}")
    plots.log2_size_axis(ax, x, "file size (bytes, log2 scale; M = MiB, G = GiB)")
    ys = [p.ns for p in a.points]
    scaled_axis(ax, "y", "ns", ys + [m[1] for m in med], "re-read time per block", plots.wide_spread(ys))
    _suggested_lines(ax, a, min(x), max(x))
    handles, labels = ax.get_legend_handles_labels()
    res = [(p.size_bytes, 100 * p.resident) for p in a.points if p.resident is not None]
    if res:
        ax2 = ax.twinx()
        (line,) = ax2.plot([r[0] for r in res], [r[1] for r in res], color="tab:green", linestyle=":", marker=".",
                           markersize=3, linewidth=1)
        ax2.set_ylim(0, 105)
        ax2.set_ylabel("share of the file in the page cache (%, dotted green)")
        ax2.grid(False)
        handles.append(line)
        labels.append("in the page cache (%, right axis)")
    title = f"file.cache_sweep: re-read time per block against file size ({a.label})"
    plots.set_title(ax, title)
    ax.legend(handles, labels, loc="upper left")
    return NamedFigure(name, title, fig)


def cache_figures(data: RunData) -> list[NamedFigure]:
    analyses = [a for a in pagecache.analyse(data.results, data.run.params if data.run else None)
                if len(a.points) >= 2]
    return [cache_figure(a, "file-cache-sweep" + (f"-{i + 1}" if i else "")) for i, a in enumerate(analyses)]


# --- cold reads and remote files --------------------------------------------


def location(r: Any) -> tuple[str, bool]:
    """A result's directory as a label ("local (ext4)", "remote (fuse.sshfs) /mnt/x") and whether it is remote."""
    info = r.record.get("info") if isinstance(r.record, dict) else None
    info = info if isinstance(info, dict) else {}
    remote = info.get("remote") == "yes"
    fs = info.get("fs_type")
    label = ("remote" if remote else "local") + (f" ({fs})" if isinstance(fs, str) and fs else "")
    return label, remote


def cold_points(data: RunData) -> dict[tuple[str, str, bool], list[tuple[int, float, float]]]:
    """(bench, location, remote) -> [(block, median ns, mean ns)] sorted by block."""
    groups: dict[tuple[str, str, bool], list[tuple[int, float, float]]] = {}
    for bench in COLD:
        for r in data.ok(bench):
            block = r.params.get("block")
            if r.summary is None or not isinstance(block, int):
                continue
            where, remote = location(r)
            groups.setdefault((bench, where, remote), []).append((block, r.summary.median, r.summary.mean))
    return {k: sorted(v) for k, v in groups.items()}


def _rate(block: int, ns: float) -> float:
    return block / ns * 1e9 if ns > 0 else math.nan  # bytes per second


def cold_figure(data: RunData) -> NamedFigure | None:
    groups = {k: v for k, v in cold_points(data).items() if len(v) >= 2}
    if not groups:
        return None
    fig = plots.figure(9.0, 4.0)
    ax_t, ax_b = fig.subplots(1, 2)
    blocks: list[int] = []
    for (bench, where, remote), pts in groups.items():
        label = f"{bench.split('.')[1].replace('_read_cold', '')}, {where}"
        style = "--" if remote else "-"
        x = [p[0] for p in pts]
        blocks += x
        ax_t.plot(x, [p[1] for p in pts], linestyle=style, marker="o", markersize=3, label=label)
        ax_b.plot(x, [_rate(p[0], p[2]) for p in pts], linestyle=style, marker="o", markersize=3, label=label)
    for ax in (ax_t, ax_b):
        plots.log2_size_axis(ax, blocks, "block size (bytes, log2; K = KiB, M = MiB)")
    points = [p for pts in groups.values() for p in pts]
    scaled_axis(ax_t, "y", "ns", [p[1] for p in points], "time per block, median", log=True)
    scaled_axis(ax_b, "y", "bytes_per_s", [_rate(p[0], p[2]) for p in points], "throughput: block / mean time")
    ax_b.set_ylim(bottom=0)
    ax_t.legend(loc="upper left")
    title = "cold reads (page cache bypassed): sequential and random, by block size"
    plots.set_title(ax_t, "time per block")
    plots.set_title(ax_b, "throughput")
    fig.suptitle(title, fontsize=10)
    return NamedFigure("file-cold-reads", title, fig)


def remote_figure(data: RunData) -> NamedFigure | None:
    groups = cold_points(data)
    if not any(remote for _, _, remote in groups) or all(remote for _, _, remote in groups):
        return None
    fig = plots.figure(9.0, 3.8)
    axes = fig.subplots(1, 2)
    for ax, bench in zip(axes, COLD):
        series = {(where, remote): {b: _rate(b, mean) for b, _, mean in pts}
                  for (bn, where, remote), pts in groups.items() if bn == bench}
        blocks = sorted({b for s in series.values() for b in s})
        width = 0.8 / max(len(series), 1)
        for k, ((where, remote), vals) in enumerate(sorted(series.items(), key=lambda kv: kv[0][1])):
            xs = [i + (k - (len(series) - 1) / 2) * width for i, b in enumerate(blocks) if b in vals]
            ax.bar(xs, [vals[b] for b in blocks if b in vals], width=width, label=where,
                   hatch="//" if remote else None)
        ax.set_xticks(range(len(blocks)))
        ax.set_xticklabels([plots.size_label(b) for b in blocks])
        ax.set_xlabel("block size")
        scaled_axis(ax, "y", "bytes_per_s", [v for vals in series.values() for v in vals.values()],
                    "throughput, decimal units")
        plots.set_title(ax, bench.replace("file.", "").replace("_read_cold", " reads").replace("seq", "sequential")
                        .replace("rand", "random"))
        if series:
            ax.legend(loc="upper left")
    title = "local against remote files: cold reads, throughput by block size"
    fig.suptitle(title, fontsize=10)
    return NamedFigure("file-local-vs-remote", title, fig)


# --- contention --------------------------------------------------------------


def contention_groups(data: RunData) -> dict[str, list[tuple[int, Any]]]:
    groups: dict[str, list[tuple[int, Any]]] = {}
    for r in data.ok(CONTENTION):
        procs = r.params.get("procs")
        if r.summary is None or not isinstance(procs, int):
            continue
        key = f"{r.params.get('pattern', 'seq')}, {'one shared file' if r.params.get('shared') else 'a file each'}"
        where, _ = location(r)
        groups.setdefault(f"{key}, {where}", []).append((procs, r.summary))
    return {k: sorted(v, key=lambda p: p[0]) for k, v in groups.items() if len(v) >= 2}


def contention_figure(data: RunData) -> NamedFigure | None:
    groups = contention_groups(data)
    if not groups:
        return None
    fig = plots.figure(7.0, 4.2)
    ax = fig.add_subplot()
    procs: list[int] = []
    for label, pts in groups.items():
        x = [p for p, _ in pts]
        procs += x
        (line,) = ax.plot(x, [s.median for _, s in pts], marker="o", markersize=3, label=label)
        ax.fill_between(x, [s.p5 for _, s in pts], [s.p95 for _, s in pts], color=line.get_color(), alpha=0.15)
    ax.set_xscale("log", base=2)
    readable_ticks(ax.xaxis, "pow2", text=tick_text)
    ax.set_xlabel("processes reading at once (log2 scale)")
    scaled_axis(ax, "y", "ns", [s.p95 for pts in groups.values() for _, s in pts], "time per block")
    ax.set_ylabel(ax.get_ylabel()[:-1] + "; median, band p5-p95)")
    ax.set_ylim(bottom=0)
    title = "file.contention: time per block against processes reading at once (page cache bypassed)"
    plots.set_title(ax, title)
    ax.legend(loc="upper left")
    return NamedFigure("file-contention", title, fig)


def figures(data: RunData) -> list[NamedFigure]:
    out: list[NamedFigure | None] = [*cache_figures(data), cold_figure(data), remote_figure(data),
                                     contention_figure(data)]
    return [f for f in out if f is not None]
