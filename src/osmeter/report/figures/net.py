"""net family figures: round trips by message size, bandwidth by write size,
loopback against remote (`osmeter study net` makes a run with all three).

- **Round trip against message size** (`net-rtt-by-size`): `net.tcp_rtt`,
  `net.udp_rtt` and `net.icmp_rtt` (ping's round trip), the median with a
  band from p5 to p95, against the message size (log2 axis), one line per
  benchmark, location and placement (a remote peer dashed, same CPU dotted:
  a cross-CPU and a same-CPU round trip are never one line). Needs two sizes.
- **Bandwidth against write size** (`net-bw-by-write-size`): `net.tcp_bw`
  median in bits/s of payload (Mbit/s, Gbit/s: decimal) against the write size, one
  line per direction; one panel per location and placement, since loopback
  and a remote link differ by orders of magnitude.
- **Loopback against remote** (`net-loopback-vs-remote`): when the run has
  both, the summary's medians side by side: round trips at the smallest
  size, connect, both sides of close (log scale), and bandwidth in both
  directions at the default write size; a loopback bar's colour and legend
  say its placement.

A result's location comes from its `peer` parameter: empty is the probe's
own peer on loopback, anything else the remote peer HOST:PORT. Its placement
is the probe's record (`placement`, docs/schema.md), in words: a cross-CPU
round trip on loopback costs a wake-up on another CPU, which a same-CPU one
(and ping's, answered in the sending CPU's softirq) does not. Every loopback
line, panel and bar says which (`located`: "loopback, cross CPU").

Value axes are in the step of their unit their data needs (report.axis:
ns to µs or ms, bit/s to Mbit/s or Gbit/s).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Any, Sequence

from .. import plots
from ..axis import scaled_axis
from .base import NamedFigure, RunData

RTT = ("net.tcp_rtt", "net.udp_rtt", "net.icmp_rtt")
BW = "net.tcp_bw"
NET = RTT + (BW, "net.tcp_connect", "net.tcp_close")
DEFAULT_WRITE = 128 << 10  # net.tcp_bw's default write size
LABEL = {"net.tcp_rtt": "TCP", "net.udp_rtt": "UDP", "net.icmp_rtt": "ICMP echo (ping)"}
ROW = {"net.tcp_rtt": "TCP round trip", "net.udp_rtt": "UDP round trip", "net.icmp_rtt": "ping (ICMP echo)"}


def where(r: Any) -> str:
    """A result's location: loopback (the probe's own peer) or remote HOST:PORT."""
    peer = (r.params or {}).get("peer")
    return f"remote {peer}" if isinstance(peer, str) and peer else "loopback"


# The result's `placement` (the probe's record, docs/schema.md) in words.
PLACED = {"same_cpu": "same CPU", "cross_cpu": "cross CPU", "remote": "remote host"}


def placed(r: Any) -> str:
    """Where the result's two parties ran, in words: same CPU, cross CPU, remote host."""
    p = r.placement
    return PLACED.get(p, p) if p else "placement not recorded"


def located(r: Any) -> str:
    """A result's location and, on loopback, its placement: 'loopback, cross
    CPU', 'loopback, same CPU', 'remote HOST:PORT' (a remote host's is its own)."""
    place = where(r)
    return f"{place}, {placed(r)}" if place == "loopback" else place


def _remote(label: str) -> bool:
    return label.startswith("remote ")


def _same_cpu(label: str) -> bool:
    return label.endswith(", " + PLACED["same_cpu"])


def _order(label: str) -> tuple[bool, str]:
    """Loopback first, then remote peers; by placement within loopback."""
    return _remote(label), label


def places(results: Sequence[Any]) -> list[str]:
    """The locations of the run's ok net results, loopback first."""
    found = list(dict.fromkeys(where(r) for r in results if r.bench in NET and r.status == "ok"))
    return sorted(found, key=lambda p: p != "loopback")


# --- the summary rows (also the study's text table) --------------------------


@dataclass(frozen=True)
class Row:
    label: str
    bench: str
    match: dict[str, Any]  # params the result must have
    rate: bool = False


def summary_rows(results: Sequence[Any]) -> list[Row]:
    """The smallest message's round trips (ping's too), connect, both sides
    of close, and both directions of bandwidth at the default write size
    (else the largest the run has)."""
    ok = [r for r in results if r.status == "ok" and r.bench in NET]

    def sizes(bench: str, key: str) -> list[int]:
        return sorted({r.params[key] for r in ok if r.bench == bench and isinstance(r.params.get(key), int)})

    rows = []
    for bench in RTT:
        if s := sizes(bench, "size"):
            rows.append(Row(f"{ROW[bench]}, {s[0]} B", bench, {"size": s[0]}))
    if any(r.bench == "net.tcp_connect" for r in ok):
        rows.append(Row("TCP connect", "net.tcp_connect", {}))
    for side in ("active", "passive"):
        if any(r.bench == "net.tcp_close" and r.params.get("side") == side for r in ok):
            rows.append(Row(f"TCP close, {side} side", "net.tcp_close", {"side": side}))
    writes = sizes(BW, "write_size")
    if writes:
        w = DEFAULT_WRITE if DEFAULT_WRITE in writes else writes[-1]
        for d in ("send", "recv"):
            if any(r.bench == BW and r.params.get("direction") == d for r in ok):
                rows.append(Row(f"TCP bandwidth, {d}, {plots.size_label(w)} writes", BW,
                                {"direction": d, "write_size": w}, rate=True))
    return rows


def find(results: Sequence[Any], row: Row, place: str) -> Any:
    """The ok result of a summary row at a location, or None."""
    for r in results:
        if r.bench == row.bench and r.status == "ok" and where(r) == place \
                and all(r.params.get(k) == v for k, v in row.match.items()):
            return r
    return None


# --- round trips -------------------------------------------------------------


def _series(data: RunData, bench: str, key: str, split: str | None = None) -> dict[tuple[str, str], list[Any]]:
    """(location with placement (`located`), `split` param or '') -> [(x, summary)] sorted by x."""
    groups: dict[tuple[str, str], list[Any]] = {}
    for r in data.ok(bench):
        x = r.params.get(key)
        if r.summary is None or not isinstance(x, int) or x <= 0:
            continue
        groups.setdefault((located(r), str(r.params.get(split, "")) if split else ""), []).append((x, r.summary))
    return {k: sorted(v, key=lambda p: p[0]) for k, v in groups.items()}


def rtt_figure(data: RunData) -> NamedFigure | None:
    lines = {(bench, *k): v for bench in RTT for k, v in _series(data, bench, "size").items() if len(v) >= 2}
    if not lines:
        return None
    fig = plots.figure(7.5, 4.4)
    ax = fig.add_subplot()
    colours = {"net.tcp_rtt": "tab:blue", "net.udp_rtt": "tab:orange", "net.icmp_rtt": "tab:green"}
    sizes: list[int] = []
    medians: list[float] = []
    for (bench, place, _), pts in sorted(lines.items(), key=lambda kv: (RTT.index(kv[0][0]), _order(kv[0][1]))):
        x = [p[0] for p in pts]
        sizes += x
        medians += [s.median for _, s in pts]
        remote, same = _remote(place), _same_cpu(place)
        ax.plot(x, [s.median for _, s in pts], color=colours[bench],
                linestyle="--" if remote else ":" if same else "-",
                marker="s" if remote else "^" if same else "o", markersize=3, label=f"{LABEL[bench]}, {place}")
        ax.fill_between(x, [s.p5 for _, s in pts], [s.p95 for _, s in pts], color=colours[bench], alpha=0.10)
    plots.log2_size_axis(ax, sizes, "message size (bytes, log2 scale; K = KiB)")
    log = plots.wide_spread(medians)
    scaled_axis(ax, "y", "ns", [s.p95 for pts in lines.values() for _, s in pts], "round trip", log)
    if not log:
        ax.set_ylim(bottom=0)
    ax.set_ylabel(ax.get_ylabel()[:-1] + "; median, band p5-p95)")
    title = "round trip against message size: TCP, UDP and ICMP echo (ping)"
    plots.set_title(ax, title)
    ax.legend(loc="upper left", fontsize=7)
    return NamedFigure("net-rtt-by-size", title, fig)


# --- bandwidth ---------------------------------------------------------------


def _bits(bytes_per_s: float) -> float:
    return bytes_per_s * 8


def bw_figure(data: RunData) -> NamedFigure | None:
    lines = {k: v for k, v in _series(data, BW, "write_size", "direction").items() if len(v) >= 2}
    if not lines:
        return None
    where_list = sorted({p for p, _ in lines}, key=_order)
    fig = plots.figure(4.6 * len(where_list) + 1.0, 4.0)
    axes = fig.subplots(1, len(where_list), squeeze=False)[0]
    for ax, place in zip(axes, where_list):
        sizes: list[int] = []
        for (p, direction), pts in sorted(lines.items()):
            if p != place:
                continue
            x = [q[0] for q in pts]
            sizes += x
            (line,) = ax.plot(x, [_bits(s.median) for _, s in pts], marker="o", markersize=3,
                              linestyle="-" if direction == "send" else "--",
                              label=f"{direction} ({'to' if direction == 'send' else 'from'} the peer)")
            ax.fill_between(x, [_bits(s.p5) for _, s in pts], [_bits(s.p95) for _, s in pts],
                            color=line.get_color(), alpha=0.12)
        plots.log2_size_axis(ax, sizes, "write size (bytes, log2; K = KiB, M = MiB)")
        shown = [_bits(s.p95) for (p, _), pts in lines.items() if p == place for _, s in pts]
        scaled_axis(ax, "y", "bits_per_s", shown, "TCP payload, decimal units")
        ax.set_ylim(bottom=0)
        ax.set_ylabel(ax.get_ylabel()[:-1] + "; median, band p5-p95)")
        plots.set_title(ax, place)
        ax.legend(loc="lower right", fontsize=7)
    title = "net.tcp_bw: bandwidth against write size"
    fig.suptitle(title, fontsize=10)
    return NamedFigure("net-bw-by-write-size", title, fig)


# --- loopback against remote -------------------------------------------------


def _bars(ax: Any, rows: list[Row], results: Sequence[Any], where_list: list[str], scale: Any,
          colours: dict[str, str]) -> list[float]:
    """The bars of `rows` (each median through `scale`), a group per row, a
    slot per location; each bar's colour and legend label is its location
    with placement (`located`: loopback's differ by row, ping's is same CPU).
    Returns their heights."""
    width = 0.8 / len(where_list)
    heights: list[float] = []
    for k, place in enumerate(where_list):
        bars: dict[str, tuple[list[float], list[float]]] = {}
        for i, row in enumerate(rows):
            r = find(results, row, place)
            if r is not None and r.summary is not None:
                xs, ys = bars.setdefault(located(r), ([], []))
                xs.append(i + (k - (len(where_list) - 1) / 2) * width)
                ys.append(scale(r.summary.median))
        for label, (xs, ys) in sorted(bars.items(), key=lambda kv: _order(kv[0])):
            ax.bar(xs, ys, width=width, label=label, color=colours[label], hatch="//" if _remote(label) else None)
            heights += ys
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([textwrap.fill(row.label, 14) for row in rows], fontsize=7)
    return heights


def _colours(rows: list[Row], results: Sequence[Any], where_list: list[str]) -> dict[str, str]:
    """One colour per location with placement, the same in both panels."""
    found = [find(results, row, place) for row in rows for place in where_list]
    labels = sorted({located(r) for r in found if r is not None}, key=_order)
    return {label: f"C{i % 10}" for i, label in enumerate(labels)}


def remote_figure(data: RunData) -> NamedFigure | None:
    where_list = places(data.results)
    if "loopback" not in where_list or len(where_list) < 2:
        return None
    rows = summary_rows(data.results)
    lat = [r for r in rows if not r.rate]
    rate = [r for r in rows if r.rate]
    panels = [p for p in (lat, rate) if p]
    if not panels:
        return None
    colours = _colours(rows, data.results, where_list)
    fig = plots.figure(9.5, 4.2)
    axes = fig.subplots(1, len(panels), squeeze=False, width_ratios=[len(p) + 1 for p in panels])[0]
    for ax, panel in zip(axes, panels):
        if panel is lat:
            scaled_axis(ax, "y", "ns", _bars(ax, panel, data.results, where_list, float, colours), "median",
                        log=True)
            plots.set_title(ax, "latencies")
        else:
            heights = _bars(ax, panel, data.results, where_list, _bits, colours)
            scaled_axis(ax, "y", "bits_per_s", heights, "median of the payload", log=True)
            plots.set_title(ax, "bandwidth")
    handles = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    labels = [label for label in colours if label in handles]
    fig.legend([handles[label] for label in labels], labels, loc="outside lower center", ncols=len(labels),
               fontsize=8)  # off the bars
    title = "loopback against remote: round trips, connect, close and bandwidth (medians)"
    fig.suptitle(title, fontsize=10)
    return NamedFigure("net-loopback-vs-remote", title, fig)


def figures(data: RunData) -> list[NamedFigure]:
    out = [rtt_figure(data), bw_figure(data), remote_figure(data)]
    return [f for f in out if f is not None]
