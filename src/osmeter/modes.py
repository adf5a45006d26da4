"""Two modes in one benchmark's samples: the figure is then two figures.

`syscall.open_close` can measure 1.6 µs for one stretch of samples and
1.9 µs for another (a cache or a lock taken one way or the other): its
median is then one of them, or between, and neither the median nor a spread
says so. `two_modes` finds such a sample and names its two modes; a heavy
tail (a few interrupted samples), a skew, or the steps of a coarse clock do
not count. docs/statistics.md, "Two modes", gives the reasoning.

The method, on the logarithm of the samples (a mode 20 % above another is
the same shape at 20 ns as at 20 ms):

1. the core: the samples between the 1st and 99th percentiles;
2. a histogram of the core, bins of the Freedman-Diaconis width (2 IQR /
   n^(1/3)), never narrower than twice the samples' own step (a clock's
   resolution: the median gap between distinct values), at most MAX_BINS
   bins; fewer than MIN_BINS such bins (a clock too coarse to tell two
   modes apart) is one mode;
3. the counts smoothed by a Gaussian of SMOOTH_BINS bins;
4. the two highest peaks of the smoothed counts, and the lowest point
   between them: two modes when that valley is at most VALLEY of the lower
   peak and DIP_Z Poisson standard deviations under it (not a dip that
   counting noise makes in a small sample), each side of the valley holds at least MIN_SHARE of the samples,
   and the modes (each side's median) differ by more than MIN_GAP.

Pure: samples in, numbers out; `None` for fewer than MIN_SAMPLES samples
or one mode.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import numpy.typing as npt

MIN_SAMPLES = 100
MIN_SHARE = 0.10  # each mode holds at least this fraction of the samples
MIN_GAP = 0.05  # the modes differ by more than this (compare's default noise threshold)
VALLEY = 0.5  # the smoothed count between them at most this fraction of the lower peak
MIN_BINS, MAX_BINS = 12, 120
DIP_Z = 3.0  # the valley lies this many Poisson standard deviations under the lower peak
SMOOTH_BINS = 1.0  # sigma of the Gaussian the counts are smoothed with, in bins


@dataclass(frozen=True)
class Modes:
    low: float  # the lower mode: the median of the samples below the valley
    high: float  # the higher mode: the median of the samples above it
    low_share: float  # the fraction of the samples below the valley


def _smoothed(counts: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    half = int(np.ceil(3 * SMOOTH_BINS))
    k = np.exp(-0.5 * (np.arange(-half, half + 1) / SMOOTH_BINS) ** 2)
    return np.convolve(counts, k / k.sum(), mode="same")


def _peaks(y: npt.NDArray[np.float64]) -> list[int]:
    """Indices of the local maxima of y (a plateau counted once, at its first bin), highest first."""
    padded = np.concatenate(([-1.0], y, [-1.0]))
    found = [i for i in range(len(y)) if padded[i + 1] > padded[i] and padded[i + 1] >= padded[i + 2]]
    return sorted(found, key=lambda i: -y[i])


def _bins(core: npt.NDArray[np.float64], step: float) -> int:
    """Bins of the Freedman-Diaconis width, MIN_BINS to MAX_BINS of them, but
    none narrower than two of the samples' own steps: 0 when that leaves
    fewer than MIN_BINS (the steps are too coarse to show two modes)."""
    q1, q3 = np.percentile(core, [25, 75])
    span = float(core[-1] - core[0])
    if span <= 0:
        return 0
    fd = 2 * float(q3 - q1) / core.size ** (1 / 3)
    bins = int(np.ceil(span / fd)) if fd > 0 else MAX_BINS
    bins = min(MAX_BINS, max(MIN_BINS, bins))
    if step > 0:
        bins = min(bins, int(span // (2 * step)))
    return bins if bins >= MIN_BINS else 0


def two_modes(samples: Sequence[float] | npt.NDArray[np.float64]) -> Modes | None:
    """The two modes of the samples, or None (one mode, too few samples, or not all positive)."""
    x = np.sort(np.asarray(samples, dtype=np.float64))
    if x.size < MIN_SAMPLES or not np.all(np.isfinite(x)) or x[0] <= 0:
        return None
    lo, hi = np.percentile(x, [1, 99])
    core = x[(x >= lo) & (x <= hi)]
    distinct = np.unique(core)
    if distinct.size < 3:
        return None
    logs = np.log(core)
    step = float(np.median(np.diff(np.log(distinct))))
    bins = _bins(logs, step)
    if bins < MIN_BINS:
        return None
    counts, edges = np.histogram(logs, bins=bins)
    y = _smoothed(counts.astype(np.float64))
    peaks = _peaks(y)
    if len(peaks) < 2:
        return None
    a, b = sorted(peaks[:2])
    valley = a + int(np.argmin(y[a : b + 1]))
    lower = min(y[a], y[b])
    # a dip that counting noise could make (the counts are Poisson: sd = sqrt(count)) is not a valley
    if y[valley] > VALLEY * lower or lower - y[valley] < DIP_Z * np.sqrt(lower):
        return None
    cut = float(np.exp(edges[valley + 1]))  # the valley bin's upper edge
    below, above = x[x < cut], x[x >= cut]
    share = below.size / x.size
    if min(share, 1 - share) < MIN_SHARE:
        return None
    low, high = float(np.median(below)), float(np.median(above))
    return Modes(low, high, share) if high > low * (1 + MIN_GAP) else None
