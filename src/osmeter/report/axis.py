"""Value axes people read: plain tick labels (no 10^k, no e-notation, no
offset), as many ticks as fit without one label touching the next, and the
numbers scaled to the step of their unit that the axis's range needs
(fmt.scale_of: ns to µs, ms, s; B/s to MB/s, GB/s), the step named in the
axis label: "time per operation (ms)".

The ticks are chosen when the figure is drawn (`ReadableTicks` is a
matplotlib Locator), from the axis's length then, the labels' widths in the
osmeter style's font (a little spare for a browser's font: the HTML report's
SVG keeps its text as text) and the view's range: on a logarithmic axis
from 1-1.2-1.5-2-2.5-3-4-5-6-8 down to 1-3 or 1 per decade (and fewer
decades when even those crowd), or evenly spaced round numbers when the
range is under a factor of 2.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable, Sequence

import numpy as np

from ..fmt import Scale, scale_of

SLACK = 1.12  # a label's width as drawn here, times this: a browser's fallback font runs wider
GAP_EM = 0.8  # at least this many font sizes between two labels side by side
LINEAR_STEPS = (1, 2, 2.5, 5, 10)
# A log axis's ticks in a decade, densest first: nearly evenly spaced on it.
LOG_SUBS = ((1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8), (1, 1.5, 2, 3, 4, 5, 6, 8), (1, 1.5, 2, 3, 5, 7), (1, 2, 3, 5),
            (1, 2, 5), (1, 3), (1,))


def tick_text(value: float) -> str:
    """A tick's number, plain: 0.005, 2.5, 40, 1,000, 25,000 (never an exponent;
    rounded to 6 significant digits, so 0.1 + 0.2 is 0.3)."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    rounded = float(f"{value:.6g}")
    if abs(rounded) >= 10000 and rounded == int(rounded):
        return f"{int(rounded):,}"
    return np.format_float_positional(rounded, trim="-")


def short_number(value: float, factor: float = 1.0, digits: int = 3) -> str:
    """value / factor to `digits` significant digits, without trailing zeros: '2', '1.25', '129'."""
    return tick_text(float(f"{value / factor:.{digits}g}")) if math.isfinite(value) else "-"


def short_quantity(value: float | None, unit: str | None, digits: int = 3) -> str:
    """A value of `unit` in its own step, `digits` significant digits and no
    trailing zeros, for a label on a figure: '2 ns', '1.25 µs', '129 GB/s'."""
    if value is None or not math.isfinite(value):
        return "-"
    scale = scale_of(value, unit)
    number = short_number(value, scale.factor, digits)
    return f"{number} {scale.suffix}" if scale.suffix else number


@functools.lru_cache(maxsize=4096)
def text_points(text: str, size: float) -> float:
    """How wide `text` is when drawn in the osmeter style's font at `size` points, in points."""
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties

    dpi = 200  # hinting makes text at low resolutions narrower than drawn
    width, _, _ = RendererAgg(10, 10, dpi).get_text_width_height_descent(text, FontProperties(size=size),
                                                                        ismath=False)
    return float(width) * 72 / dpi


def _log_candidates(lo: float, hi: float) -> list[list[float]]:
    """Tick sets on a log axis over [lo, hi] (scaled units), densest first."""
    k0, k1 = math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1
    out = []
    for subs in LOG_SUBS:
        out.append([s * 10.0**k for k in range(k0, k1 + 1) for s in subs])
    for every in (2, 3, 4, 5, 10):
        out.append([10.0**k for k in range(k0, k1 + 1) if k % every == 0])
    return out


def _linear_candidates(lo: float, hi: float, integer: bool = False) -> list[list[float]]:
    from matplotlib.ticker import MaxNLocator

    return [list(MaxNLocator(nbins=n, steps=list(LINEAR_STEPS), integer=integer).tick_values(lo, hi))
            for n in (12, 9, 7, 5, 4, 3, 2, 1)]


def _pow2_candidates(lo: float, hi: float) -> list[list[float]]:
    k0, k1 = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
    return [[2.0**k for k in range(k0, k1 + 1) if k % step == 0] for step in (1, 2, 3, 4, 5, 6, 8, 10)]


def fits(ticks: Sequence[float], texts: Sequence[str], lo: float, hi: float, log: bool, length: float,
         vertical: bool, size: float) -> bool:
    """Whether labels `texts` at `ticks` on an axis `length` points long over
    [lo, hi] keep GAP_EM apart (side by side on a horizontal axis; a line
    apart on a vertical one)."""
    if len(ticks) < 2:
        return True
    if log:
        a, b = math.log10(lo), math.log10(hi)
        pos = [(math.log10(t) - a) / (b - a) * length for t in ticks]
    else:
        pos = [(t - lo) / (hi - lo) * length for t in ticks]
    ext = [size * 1.3 if vertical else SLACK * text_points(s, size) for s in texts]
    gap = size * (0.25 if vertical else GAP_EM)
    return all(pos[i + 1] - pos[i] >= (ext[i] + ext[i + 1]) / 2 + gap for i in range(len(pos) - 1))


def choose_ticks(lo: float, hi: float, factor: float, kind: str, length: float, vertical: bool, size: float,
                 text: Callable[[float], str]) -> list[float]:
    """The densest candidate set of two or more ticks (raw units) whose
    labels fit (`fits`); when none does, the sparsest (one tick, if that is
    what it takes). `kind`: "linear", "integer" (whole numbers only), "log"
    or "pow2" (powers of two on a log axis)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else []
    log = kind in ("log", "pow2")
    if log and lo <= 0:
        return []
    s_lo, s_hi = lo / factor, hi / factor
    if kind == "pow2":
        candidates = _pow2_candidates(s_lo, s_hi)
    elif kind == "log":
        candidates = _log_candidates(s_lo, s_hi)
        if s_hi / s_lo < 2:  # as good as linear there: round numbers, evenly spaced
            candidates = _linear_candidates(s_lo, s_hi) + candidates
    else:
        candidates = _linear_candidates(s_lo, s_hi, integer=kind == "integer")
    tol = 1e-9 * (s_hi - s_lo)
    fallback: list[float] = []
    for cand in candidates:
        inside = [t * factor for t in cand if s_lo - tol <= t <= s_hi + tol and (t > 0 or not log)]
        if inside and (not fallback or len(inside) < len(fallback)):
            fallback = inside  # the sparsest yet: what is left when nothing fits
        if len(inside) >= 2 and fits(inside, [text(t) for t in inside], lo, hi, log, length, vertical, size):
            return inside
    return fallback


@functools.lru_cache(maxsize=1)
def _readable_ticks_class() -> type:
    from matplotlib.ticker import Locator

    class ReadableTicks(Locator):
        """Ticks whose labels (`text` of a raw value) fit the axis as drawn (choose_ticks)."""

        def __init__(self, factor: float, kind: str, text: Callable[[float], str]) -> None:
            self.factor, self.kind, self.text = factor, kind, text

        def __call__(self) -> Sequence[float]:
            lo, hi = sorted(self.axis.get_view_interval())
            return self.tick_values(lo, hi)

        def tick_values(self, vmin: float, vmax: float) -> Sequence[float]:
            import matplotlib

            lo, hi = sorted((vmin, vmax))
            vertical = self.axis.axis_name == "y"
            box = self.axis.axes.bbox
            dpi = self.axis.axes.figure.dpi
            length = (box.height if vertical else box.width) * 72 / dpi
            key = "ytick.labelsize" if vertical else "xtick.labelsize"
            from matplotlib.font_manager import FontProperties

            size = FontProperties(size=matplotlib.rcParams[key]).get_size_in_points()
            return choose_ticks(lo, hi, self.factor, self.kind, length, vertical, size, self.text)

    return ReadableTicks


def readable_ticks(axis: Any, kind: str, factor: float = 1.0, text: Callable[[float], str] | None = None) -> None:
    """Put ReadableTicks on `axis` (ax.xaxis or ax.yaxis; call after setting its
    scale, which resets them): labels `text(raw value)`, by default the value
    divided by `factor` as tick_text; no labels on minor ticks."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    shown = text if text is not None else (lambda v: tick_text(v / factor))
    axis.set_major_locator(_readable_ticks_class()(factor, kind, shown))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: shown(v)))
    axis.set_minor_formatter(NullFormatter())


def scaled_axis(ax: Any, which: str, unit: str | None, values: Sequence[float] | np.ndarray, what: str,
                log: bool = False) -> Scale:
    """Label the `which` ("x" or "y") axis of `ax` "`what` (step)" with its
    ticks in the step of `unit` that the largest of `values` (the data the
    axis shows, raw) needs, logarithmic when `log`; returns that step."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    scale = scale_of(float(np.max(np.abs(x))) if x.size else None, unit)
    axis = ax.xaxis if which == "x" else ax.yaxis
    if log:
        (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    readable_ticks(axis, "log" if log else "linear", scale.factor)
    suffix = scale.suffix or "value"
    label = f"{what} ({suffix}, log scale)" if log else f"{what} ({suffix})"
    (ax.set_xlabel if which == "x" else ax.set_ylabel)(label)
    return scale
