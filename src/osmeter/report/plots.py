"""Figures with matplotlib: the shared style, SVG for inlining, files for papers.

Inline SVG (the HTML report) keeps text as text (`svg.fonttype = none`: small
files, selectable labels, the page's fonts) and is rewritten so several
figures can share one page: the XML prolog, DOCTYPE and metadata go, and
every id (and every reference to one) gets a per-figure prefix, because
matplotlib numbers ids the same way in every figure.

matplotlib is imported lazily (`osmeter show` and `run` never load it), and
pyplot never: figures are plain Figure objects, saved through their canvas.
"""

from __future__ import annotations

import io
import math
import re
import weakref
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..fmt import fmt_quantity
from .axis import readable_ticks, scaled_axis

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FORMATS = ("svg", "png", "pdf")
PNG_DPI = 200
WIDE_SPREAD = 20.0  # max / min above this: a logarithmic value axis
HIST_WIDE_SPREAD = 5.0  # the same for a histogram, over the range it shows
VIOLIN_POINTS = 2000  # samples kept per violin (quantiles, so the shape is kept)
MAX_VIOLINS = 24  # more instances than this: box plots instead of violins

# Colours: the baseline blue of matplotlib's default cycle for data, a fixed
# red/green pair for slower/faster (the heatmap's as well).
DATA_COLOUR = "#1f77b4"
MEDIAN_COLOUR = "#d62728"
KBEST_COLOUR = "#2ca02c"

STYLE = {
    "figure.dpi": 100,
    "savefig.dpi": PNG_DPI,
    # No "savefig.bbox: tight": it draws every figure twice, and figure() uses
    # constrained layout, which already fits labels and legends.
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.fontsize": 8,
    "legend.framealpha": 0.8,
    # Never 1e6 or an offset on an axis: value axes get their own ticks
    # (axis.scaled_axis), and any other axis plain numbers.
    "axes.formatter.useoffset": False,
    "axes.formatter.limits": (-15, 15),
    "svg.fonttype": "none",
    "pdf.fonttype": 42,  # TrueType in PDFs (journals refuse Type 3)
    "ps.fonttype": 42,
}

TRIM: "weakref.WeakSet[Figure]" = weakref.WeakSet()


def fixed_figure(width: float, height: float, left: float, bottom: float = 0.5, top: float = 0.3,
                 right: float = 0.2) -> "Figure":
    """A Figure with margins given in inches instead of constrained layout.

    Constrained layout measures every text before the real draw, which
    doubles the cost of a figure; for figures whose labels osmeter knows
    (distributions, the heatmap) margins computed from the label lengths
    do the same job in one draw.
    """
    import matplotlib

    matplotlib.rcParams.update(STYLE)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    fig.subplots_adjust(left=left / width, right=1 - right / width, bottom=bottom / height, top=1 - top / height)
    return fig


def text_inches(text: str, size: float = 9.0) -> float:
    """How wide `text` is when drawn in the osmeter style's font at `size` points, in inches."""
    import matplotlib

    matplotlib.rcParams.update(STYLE)
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties

    dpi = PNG_DPI  # hinting makes text at low resolutions narrower than drawn
    renderer = RendererAgg(10, 10, dpi)
    width, _, _ = renderer.get_text_width_height_descent(text, FontProperties(size=size), ismath=False)
    return float(width) / dpi


def label_inches(labels: Sequence[str], size: float = 9.0) -> float:
    """How wide the longest label is when drawn, in inches (a little spare)."""
    return 1.03 * max((text_inches(s, size) for s in labels), default=0.0)


def wrap_title(text: str, width_inches: float, size: float = 10.0) -> str:
    """`text` broken at spaces into lines no wider than `width_inches` when
    drawn (a title that would run off the figure); a newline in it is kept."""
    lines: list[str] = []
    for part in text.split("\n"):
        current = ""
        for word in part.split(" "):
            candidate = f"{current} {word}" if current else word
            if current and text_inches(candidate, size) > width_inches:
                lines.append(current)
                current = word
            else:
                current = candidate
        lines.append(current)
    return "\n".join(lines)


def set_title(ax: Any, text: str) -> None:
    """The axes' title, wrapped to the figure's width (less a margin)."""
    fig = ax.get_figure()
    width = fig.get_figwidth() - 0.5  # the figure's padding, and a little spare
    ax.set_title(wrap_title(text, width, float(STYLE["axes.titlesize"])))


def separate_labels(fig: "Figure", labels: Sequence[Any], step_points: float = 2.0, rounds: int = 40) -> None:
    """Move annotations (made with textcoords="offset points") apart until no
    two overlap: the later of an overlapping pair moves up, or down when its
    offset already points down, a little at a time; one that runs off the
    right of its axes is anchored by its right end instead. Lays the figure
    out first (constrained layout), so positions are final ones."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not labels:
        return
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    fig.draw_without_rendering()
    renderer = canvas.get_renderer()
    for label in labels:
        box, axes_box = label.get_window_extent(renderer), label.axes.get_window_extent(renderer)
        if box.x1 > axes_box.x1 and label.get_horizontalalignment() == "left":
            label.set_horizontalalignment("right")
            x, y = label.xyann
            label.xyann = (-x, y)
            if getattr(label, "right_xy", None) is not None:
                label.xy = label.right_xy
    pad = step_points * fig.dpi / 72
    for _ in range(rounds):
        boxes = [label.get_window_extent(renderer).expanded(1.0, 1.0).padded(1) for label in labels]
        moved = False
        for j in range(1, len(labels)):
            for i in range(j):
                if boxes[i].overlaps(boxes[j]):
                    x, y = labels[j].xyann
                    labels[j].xyann = (x, y - step_points if y < 0 else y + step_points)
                    boxes[j] = boxes[j].translated(0, -pad if y < 0 else pad)
                    moved = True
        if not moved:
            return


def figure(width: float = 6.4, height: float = 3.6) -> "Figure":
    """A new Figure (no pyplot state, so no GUI backend is involved) in the osmeter style.

    The style is set in matplotlib's rcParams (artists read it when they are
    made, after this returns); pyplot and its backend are never touched."""
    import matplotlib

    matplotlib.rcParams.update(STYLE)
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def size_label(b: float) -> str:
    """A byte count as a tick label: 4K, 1.5M, 2G (binary units)."""
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if b >= 1 << shift:
            v = b / (1 << shift)
            return f"{v:.0f}{unit}" if v == int(v) else f"{v:.3g}{unit}"
    return f"{b:.0f}"


def log2_size_axis(ax: Any, sizes: Sequence[int], label: str) -> None:
    """A log2 x axis over byte sizes, ticks at powers of two labelled with
    size_label: every one, or every other (third, ...) when their labels
    would touch as drawn (axis.readable_ticks)."""
    ax.set_xscale("log", base=2)
    lo, hi = min(sizes), max(sizes)
    readable_ticks(ax.xaxis, "pow2", text=size_label)
    ax.set_xlim(lo / 1.2, hi * 1.2)
    ax.set_xlabel(label)


def _save(fig: "Figure", fmt: str, salt: str = "") -> bytes:
    import matplotlib

    matplotlib.rcParams.update(STYLE)
    buf = io.BytesIO()
    metadata: dict[str, Any] = {"Date": None} if fmt == "svg" else {"CreationDate": None} if fmt == "pdf" else {}
    # Only figures whose margins are guesses (the heatmap's rotated labels) are
    # trimmed to their content: trimming costs a second draw.
    tight = "tight" if fig in TRIM else None
    with matplotlib.rc_context({"svg.hashsalt": salt or None}):
        fig.savefig(buf, format=fmt, metadata=metadata, bbox_inches=tight)
    return buf.getvalue()


def render(fig: "Figure", fmt: str) -> bytes:
    """The figure as a file's bytes: svg, png or pdf."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, not {fmt!r}")
    return _save(fig, fmt)


_PROLOG = re.compile(r"<\?xml[^>]*\?>\s*|<!DOCTYPE[^>]*>\s*", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)
_ID = re.compile(r'\bid="([^"]+)"')
_REF = re.compile(r'(url\(#|href="#)([^")]+)')


def inline_svg(fig: "Figure", prefix: str) -> str:
    """The figure as an <svg> element fit to paste into an HTML page.

    `prefix` (letters, digits, '-') must be unique within the page.
    """
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9-]*", prefix):
        raise ValueError(f"bad SVG id prefix {prefix!r}")
    text = _save(fig, "svg", salt=prefix).decode("utf-8")
    text = _PROLOG.sub("", text)
    text = _METADATA.sub("", text)
    text = _ID.sub(lambda m: f'id="{prefix}-{m.group(1)}"', text)
    text = _REF.sub(lambda m: f"{m.group(1)}{prefix}-{m.group(2)}", text)
    return text.strip()


def close(fig: "Figure") -> None:
    """Drop a figure's artists now (Figure objects are not tracked by pyplot)."""
    fig.clear()


# --- distribution of one benchmark's samples ------------------------------


def wide_spread(values: Sequence[float] | np.ndarray) -> bool:
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0 or np.min(x) <= 0:
        return False
    return float(np.max(x) / np.min(x)) > WIDE_SPREAD


def thin(samples: np.ndarray, points: int = VIOLIN_POINTS) -> np.ndarray:
    """At most `points` values with the samples' distribution (evenly spaced quantiles)."""
    if samples.size <= points:
        return samples
    return np.quantile(samples, np.linspace(0.0, 1.0, points))


def distribution_figure(
    title: str,
    unit: str | None,
    labels: Sequence[str],
    samples: Sequence[np.ndarray],
    medians: Sequence[float],
    kbests: Sequence[float] | None = None,
) -> "Figure":
    """The samples of one benchmark: a histogram for one instance, violins
    (or box plots, past MAX_VIOLINS) side by side for several, with the
    median marked. The value axis spans the samples' robust range
    (robust_range: a few outliers do not squeeze the rest into a sliver;
    the legend counts what it leaves out), logarithmic when that range spans
    more than WIDE_SPREAD× (HIST_WIDE_SPREAD× for a histogram)."""
    if len(labels) != len(samples) or len(samples) != len(medians) or not samples:
        raise ValueError("one label, sample array and median per instance")
    arrays = [np.asarray(s, dtype=float) for s in samples]
    what = {"ns": "time per operation", "bytes_per_s": "throughput"}.get(unit or "", "value")
    if len(arrays) == 1:
        return _histogram(title, unit, what, arrays[0], medians[0], kbests[0] if kbests else None)
    return _violins(title, unit, what, labels, arrays, medians)


ROBUST_Q = (0.005, 0.995)  # the quantiles a value axis may stop at
LONG_TAIL = 0.5  # ... when the tail beyond one is longer than this share of the range between them


def robust_range(samples: Sequence[np.ndarray]) -> tuple[float, float]:
    """Where a value axis of these samples should start and end: for each
    instance, its p0.5 and p99.5 where the tail beyond is long (LONG_TAIL of
    the range between them, measured on a log scale for positive values),
    else its minimum and maximum; the lowest start and the highest end."""
    lows, highs = [], []
    for s in samples:
        x = np.asarray(s, dtype=float)
        x = x[np.isfinite(x)]
        if not x.size:
            continue
        lo, hi = float(np.min(x)), float(np.max(x))
        qa, qb = (float(q) for q in np.quantile(x, ROBUST_Q))
        f: Any = np.log if lo > 0 else (lambda v: v)
        body = f(qb) - f(qa)
        lows.append(qa if f(qa) - f(lo) > LONG_TAIL * body else lo)
        highs.append(qb if f(hi) - f(qb) > LONG_TAIL * body else hi)
    if not lows:
        return 0.0, 1.0
    return min(lows), max(highs)


def padded(lo: float, hi: float, log: bool) -> tuple[float, float]:
    """The axis limits for data from lo to hi: a little room at both ends
    (never below 0 for data that is not)."""
    if log:
        room = max(1.05, (hi / lo) ** 0.04)
        return lo / room, hi * room
    span = hi - lo or abs(hi) * 0.1 or 1.0
    start = lo - 0.04 * span
    return (max(0.0, start) if lo >= 0 else start), hi + 0.04 * span


def not_shown(ax: Any, x: np.ndarray, lo: float, hi: float, unit: str | None) -> int:
    """Legend lines (empty handles) for the samples below `lo` and above `hi`; how many lines."""
    lines = 0
    below, above = int(np.count_nonzero(x < lo)), int(np.count_nonzero(x > hi))
    if below:
        ax.plot([], [], " ", label=f"{below} below {fmt_quantity(lo, unit)} not shown "
                                   f"(min {fmt_quantity(float(np.min(x)), unit)})")
        lines += 1
    if above:
        ax.plot([], [], " ", label=f"{above} above {fmt_quantity(hi, unit)} not shown "
                                   f"(max {fmt_quantity(float(np.max(x)), unit)})")
        lines += 1
    return lines


def _histogram(title: str, unit: str | None, what: str, x: np.ndarray, median: float, kbest: float | None
               ) -> "Figure":
    fig = fixed_figure(6.4, 3.4, left=0.75, bottom=0.5, top=0.5)
    ax = fig.add_subplot()
    x = x[np.isfinite(x)]
    lo, hi = robust_range([x])
    shown = x[(x >= lo) & (x <= hi)]
    # A histogram goes logarithmic sooner than the violins: a cluster of slow
    # samples at 10x the median would squeeze the body into one bin.
    log = lo > 0 and hi / lo > HIST_WIDE_SPREAD
    if log:
        bins: Any = np.geomspace(lo, hi * (1 + 1e-9), 60)
    else:
        bins = min(60, max(5, int(math.sqrt(shown.size))))
        if hi == lo:
            bins = 1
    ax.hist(shown, bins=bins, color=DATA_COLOUR, alpha=0.75, label=f"samples (n={x.size})")
    ax.axvline(median, color=MEDIAN_COLOUR, linewidth=1.5, label=f"median {fmt_quantity(median, unit)}")
    if kbest is not None and math.isfinite(kbest):
        ax.axvline(kbest, color=KBEST_COLOUR, linewidth=1.2, linestyle="--",
                   label=f"lebench_kbest {fmt_quantity(kbest, unit)}")
    not_shown(ax, x, lo, hi, unit)
    scaled_axis(ax, "x", unit, [lo, hi], what, log)
    ax.set_ylabel("samples")
    set_title(ax, title)
    ax.legend(loc="upper right")
    return fig


def _violins(title: str, unit: str | None, what: str, labels: Sequence[str], samples: Sequence[np.ndarray],
             medians: Sequence[float]) -> "Figure":
    count = len(samples)
    everything = np.concatenate([s[np.isfinite(s)] for s in samples])
    lo, hi = robust_range(samples)
    log = lo > 0 and hi / lo > WIDE_SPREAD
    left, right = padded(lo, hi, log)
    cut = int(np.count_nonzero(everything < left)) > 0, int(np.count_nonzero(everything > right)) > 0
    height = max(2.4, 0.85 + (0.3 if count <= MAX_VIOLINS else 0.2) * count)
    legend_rows = math.ceil((2 + sum(cut)) / 2)
    # The legend sits under the axis label, where it cannot hide a row.
    fig = fixed_figure(6.4, height + 0.3 + 0.2 * (legend_rows - 1), left=label_inches(labels) + 0.25,
                       bottom=0.65 + 0.2 * legend_rows, top=0.5)
    ax = fig.add_subplot()
    positions = np.arange(count, 0, -1)  # first instance at the top
    data = [thin(s[np.isfinite(s)]) for s in samples]
    # The violins' density is of the samples on the axis: an outlier off it
    # would widen the kernel and flatten the body.
    inside = [d[(d >= left) & (d <= right)] for d in data]
    if log:
        ax.set_xscale("log")
    if count <= MAX_VIOLINS and all(d.size >= 2 and np.ptp(d) > 0 for d in inside):
        # Violins of log-values on a log axis keep their shape readable.
        parts = ax.violinplot([np.log10(d) for d in inside] if log else inside, positions=positions,
                              orientation="horizontal", widths=0.8, showextrema=False)
        for body in parts["bodies"]:
            body.set_facecolor(DATA_COLOUR)
            body.set_alpha(0.45)
            if log:
                verts = body.get_paths()[0].vertices
                verts[:, 0] = 10 ** verts[:, 0]
        shape = "violins: density of the samples"
    else:
        ax.boxplot(data, positions=positions, orientation="horizontal", widths=0.6, showfliers=False,
                   patch_artist=True, boxprops={"facecolor": DATA_COLOUR, "alpha": 0.45})
        shape = "boxes: quartiles, whiskers 1.5 IQR"
    ax.scatter(medians, positions, color=MEDIAN_COLOUR, marker="|", s=120, zorder=3, label="median")
    ax.plot([], [], color=DATA_COLOUR, alpha=0.45, linewidth=6, label=shape)
    not_shown(ax, everything, left, right, unit)
    scaled_axis(ax, "x", unit, [lo, hi], what, log)
    ax.set_xlim(left, right)
    ax.set_yticks(positions, labels)
    ax.set_ylim(0.4, count + 0.6)
    set_title(ax, title)
    fig.legend(loc="lower center", ncol=2, frameon=False)
    ax.grid(axis="y", visible=False)
    return fig


# --- comparison heatmap ---------------------------------------------------

HEAT_LIMIT = 1.0  # |log2 ratio| at which the colour saturates (2x slower / faster)
GREY = "#d9d9d9"
RED = (0xD7, 0x30, 0x27)
GREEN = (0x1A, 0x98, 0x50)
WHITE = (0xF7, 0xF7, 0xF7)


def percent_text(change: float) -> str:
    """A change as whole percent for a heatmap cell: +12, -3, 0 (never -0)."""
    whole = round(100 * change)
    return "0" if whole == 0 else f"{whole:+d}"


def heat_colour(worse: float) -> str:
    """The cell colour for a significant change: red for worse, green for better,
    more saturated the larger the change (log scale, saturating at 2×)."""
    if not math.isfinite(worse):
        return GREY
    factor = 1.0 + worse
    strength = min(1.0, abs(math.log2(factor)) / HEAT_LIMIT) if factor > 0 else 1.0
    strength = 0.25 + 0.75 * strength  # a significant change is never near-white
    return mix(_FROM_WHITE_TO_RED if worse > 0 else _FROM_WHITE_TO_GREEN, strength)


def towards(start: tuple[int, int, int], target: tuple[int, int, int]) -> tuple[int, ...]:
    """The way from `start` to `target` as mix() takes it: each channel's start and distance."""
    return tuple(x for s, t in zip(start, target) for x in (s, t - s))


def mix(way: tuple[int, ...], weight: float) -> str:
    """The colour `weight` (0..1) of the way from its start to its target (towards()), each channel
    rounded: the same as "#{:02x}{:02x}{:02x}" of round(s + (t - s) * weight) (a heatmap has 20 000)."""
    s0, d0, s1, d1, s2, d2 = way
    return f"#{round(s0 + d0 * weight):02x}{round(s1 + d1 * weight):02x}{round(s2 + d2 * weight):02x}"


_FROM_WHITE_TO_RED, _FROM_WHITE_TO_GREEN = towards(WHITE, RED), towards(WHITE, GREEN)

ANNOTATE_CELLS = 800  # more cells than this: colour only (the numbers would be unreadable and slow)


def heatmap_figure(
    row_labels: Sequence[str],
    column_labels: Sequence[str],
    cells: Sequence[Sequence[tuple[float, float, bool] | None]],
    title: str,
    caveats: Sequence[Sequence[bool]] | None = None,
    missing_label: str = "not in that run",
) -> "Figure":
    """benchmarks × runs; each cell (change, worse, significant) or None when
    the instance is missing from that run. Colour as heat_colour, grey when
    not significant, white when missing; the change in % written in each
    cell up to ANNOTATE_CELLS cells. `caveats[i][j]`: the verdict of that cell
    carries a caveat (a flagged figure on either side): "!" after its
    number, or a small "!" alone in a cell too small for numbers. Drawn as
    one vector mesh, laid out once (no constrained layout: it measures every
    text several times)."""
    import matplotlib

    matplotlib.rcParams.update(STYLE)
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    rows, cols = len(row_labels), len(column_labels)
    label_w = 0.065 * max((len(s) for s in row_labels), default=10) + 0.3  # inches, ~7 pt per character
    label_h = 0.065 * max((len(s) for s in column_labels), default=10) * 0.87 + 0.3  # rotated 60 degrees
    cell_w, cell_h = (0.42, 0.22) if rows * cols <= ANNOTATE_CELLS else (0.2, 0.16)
    legend_w = 1.9
    width = label_w + cols * cell_w + legend_w + 0.3
    height = label_h + rows * cell_h + 0.6
    fig = Figure(figsize=(width, height))
    TRIM.add(fig)
    fig.subplots_adjust(left=label_w / width, right=1 - (legend_w + 0.2) / width,
                        bottom=label_h / height, top=1 - 0.45 / height)
    ax = fig.add_subplot()
    rgb = np.ones((rows, cols, 3))
    annotate = rows * cols <= ANNOTATE_CELLS
    for i, row in enumerate(cells):
        for j, cell in enumerate(row):
            colour = "#ffffff" if cell is None else heat_colour(cell[1]) if cell[2] else GREY
            rgb[i, j] = [int(colour[k : k + 2], 16) / 255 for k in (1, 3, 5)]
            flagged = bool(caveats and caveats[i][j]) and cell is not None
            if annotate and cell is not None and math.isfinite(cell[0]):
                ax.text(j + 0.5, i + 0.5, percent_text(cell[0]) + ("!" if flagged else ""), ha="center",
                        va="center", fontsize=7, color="#000000" if cell[2] else "#6b6b6b")
            elif flagged:
                ax.text(j + 0.5, i + 0.5, "!", ha="center", va="center", fontsize=5, color="#000000")
    ax.pcolormesh(np.arange(cols + 1), np.arange(rows + 1), rgb, edgecolors="#ffffff", linewidth=0.5)
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_xticks(np.arange(cols) + 0.5, column_labels, rotation=60, ha="right", rotation_mode="anchor")
    ax.set_yticks(np.arange(rows) + 0.5, row_labels)
    ax.tick_params(length=0)
    ax.grid(False)
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.set_title(title)
    handles = [Patch(color=heat_colour(0.5), label="slower / worse"),
               Patch(color=heat_colour(-0.33), label="faster / better"),
               Patch(color=GREY, label="no significant change"),
               Patch(facecolor="#ffffff", edgecolor="#999999", label=missing_label)]
    if caveats and any(any(row) for row in caveats):
        handles.append(Patch(facecolor="#ffffff", edgecolor="#ffffff", label="! flagged figure (caveat)"))
    ax.legend(
        handles=handles,
        loc="upper left", bbox_to_anchor=(1.01, 1.0), title="change vs baseline" + (" (%)" if annotate else ""),
    )
    return fig
