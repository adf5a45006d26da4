"""Cache levels read off a `mem.latency` curve: the detection. osmeter.memlevels
checks the levels against sysfs, reads the curves from stored results and
renders them.

A load-to-use latency curve (working-set size -> ns per dependent load) is a
staircase: level (flat, or climbing slowly) while the working set fits a
cache level, rising steeply when it outgrows it. This module finds the
levels and reports each one's effective size and latency, plus main-memory
latency; osmeter.memlevels then, as a separate step, compares the
boundaries with the cache sizes the kernel reports (the run's ``machine["caches"]``, from /sys/devices/system/cpu).
Detection never looks at sysfs, so a machine whose effective cache differs
from what sysfs says (a virtual machine given a slice of a shared LLC) is
reported as a disagreement, not bent into agreement.

The method, on ln(latency) against log2(size), points sorted by size:

1. **Smooth** with a running median of three points (an isolated spike does
   not split a level; a step edge stays where it is).
2. **Steps** are the gaps between neighbouring sizes where the smoothed
   latency climbs faster than ``step_slope`` (default 0.5 in ln(latency)
   per doubling, x1.65 per doubling); they cut the curve into stretches.
   A step between cache levels climbs x2 or more within about a doubling.
3. **Levels are not required to be flat.** A stretch is a level when its
   least-squares slope is at most ``max_slope`` (default 0.25 per doubling,
   +28 % per doubling): a level may climb slowly, as one does when TLB
   misses add a little per doubling, or in a virtual machine's slice of a
   shared last-level cache. A stretch that climbs faster is split at its
   steepest gap, again and again, until its pieces are that flat or too
   short; a curve that rises evenly everywhere has no level.
4. A level needs at least ``min_points`` points spanning at least
   ``min_span`` doublings (default half a doubling: two similar points
   inside a transition are not a level). Two levels that touch, or that are
   separated by at most two points (a disturbed pair of sizes), are one
   level when their median latencies differ by less than ``level_gap``
   (x1.5; x(1 + ``tol``) across points) and together they are still no
   steeper than ``max_slope``.
5. The levels are numbered smallest first. The last one is main memory when
   it reaches the largest size measured and there are at least two levels;
   the others are caches L1, L2, ... (named only when the curve starts at
   16 KiB or below; else "level 1", "level 2", ...).

A level's **latency** is the median over its points, in ns and, when the
probe ran on the TSC, in reference cycles; its range (``ns_low`` ..
``ns_high``) and slope say how much it climbs. Its **effective size** is
where the climb right after it crosses half-way, in ln(latency), from this
level to the next (interpolated in log-log between the two sizes measured
around the crossing): the working set at which a good share of the loads
miss, the curve's estimate of the capacity. "The next" is the next level's
median latency, or the top of the first climb when the curve pauses below
it, so the size is always where this level ends, never a size further up
the curve. The largest working set on the level (``last_bytes``) is
reported too. The last level has no next level, so its size is
``last_bytes`` (a lower bound), the size osmeter.memlevels compares with
sysfs.

Pure functions: no I/O.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Sequence

TOL = 0.25
LEVEL_GAP = 1.5
STEP_SLOPE = 0.5  # ln(latency) per doubling (x1.65): faster is a step between levels
MAX_SLOPE = 0.25  # ln(latency) per doubling (x1.28): the most a level may climb
MIN_POINTS = 2
MIN_SPAN = 0.5  # doublings
NAMED_START_BYTES = 16 * 1024


@dataclass(frozen=True)
class CurvePoint:
    size_bytes: int
    ns: float
    cycles: float | None = None

    def __post_init__(self) -> None:
        if self.size_bytes <= 0:
            raise ValueError(f"size must be positive, not {self.size_bytes}")
        if not (math.isfinite(self.ns) and self.ns > 0):
            raise ValueError(f"latency must be a positive finite number, not {self.ns}")


@dataclass(frozen=True)
class Level:
    name: str  # "L1", "L2", ... or "level 1", ...; "memory" for main memory
    first_bytes: int  # smallest working set on the plateau
    last_bytes: int  # largest working set still on it (first misses beyond)
    next_bytes: int | None  # the next size measured (None: the curve ends here)
    ns: float  # median latency over the plateau
    cycles: float | None  # median reference cycles (TSC ticks, not core cycles), when every point has them
    points: int
    slope: float  # least-squares d ln(ns) / d log2(size)
    ns_low: float = math.nan  # smallest and largest latency on the plateau
    ns_high: float = math.nan
    # Where the climb after the level crosses half-way (in ln latency) to the
    # next level (interpolated in log-log): the capacity estimate, "effective
    # size". None for the last level. edge_between: the two sizes measured
    # around that crossing.
    edge_bytes: int | None = None
    edge_between: tuple[int, int] | None = None

    @property
    def size_bytes(self) -> int:
        """The level's size: the half-way edge when known, else the plateau's end."""
        return self.edge_bytes if self.edge_bytes is not None else self.last_bytes

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "first_bytes": self.first_bytes,
            "last_bytes": self.last_bytes,
            "next_bytes": self.next_bytes,
            "ns": self.ns,
            "cycles": self.cycles,
            "points": self.points,
            "slope_per_doubling": self.slope,
            "ns_low": self.ns_low,
            "ns_high": self.ns_high,
            "edge_bytes": self.edge_bytes,
            "edge_between_bytes": list(self.edge_between) if self.edge_between else None,
            "size_bytes": self.size_bytes,
        }


@dataclass(frozen=True)
class Rise:
    """Sizes between two levels (or after the last) where latency climbs."""

    first_bytes: int
    last_bytes: int
    ns_low: float
    ns_high: float

    def as_dict(self) -> dict[str, Any]:
        return {"first_bytes": self.first_bytes, "last_bytes": self.last_bytes,
                "ns_low": self.ns_low, "ns_high": self.ns_high}


@dataclass(frozen=True)
class Detection:
    levels: tuple[Level, ...]  # smallest first; memory (if found) last
    rises: tuple[Rise, ...]
    memory: Level | None
    notes: tuple[str, ...] = ()
    first_bytes: int = 0  # the curve's smallest and largest size
    last_bytes: int = 0

    @property
    def caches(self) -> tuple[Level, ...]:
        return tuple(lv for lv in self.levels if lv is not self.memory)

    def as_dict(self) -> dict[str, Any]:
        return {
            "caches": [lv.as_dict() for lv in self.caches],
            "memory": self.memory.as_dict() if self.memory else None,
            "rises": [r.as_dict() for r in self.rises],
            "notes": list(self.notes),
        }


# --------------------------------------------------------------------------
# Detection


def _median3(v: Sequence[float]) -> list[float]:
    if len(v) < 3:
        return list(v)
    return [v[0]] + [sorted(v[i - 1 : i + 2])[1] for i in range(1, len(v) - 1)] + [v[-1]]


def _slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    if len(xs) < 2:
        return 0.0
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return 0.0
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def prepare_points(points: Iterable[CurvePoint]) -> list[CurvePoint]:
    """Sorted by size; repeated sizes collapsed to their median."""
    by_size: dict[int, list[CurvePoint]] = {}
    for p in points:
        by_size.setdefault(p.size_bytes, []).append(p)
    out = []
    for size in sorted(by_size):
        ps = by_size[size]
        ns = statistics.median(p.ns for p in ps)
        cyc = [p.cycles for p in ps if p.cycles is not None]
        out.append(CurvePoint(size, ns, statistics.median(cyc) if len(cyc) == len(ps) else None))
    return out


def _stretches(lx: Sequence[float], sm: Sequence[float], step_slope: float) -> list[tuple[int, int]]:
    """[start, end) runs of sizes with no step between neighbours: a step is a
    gap where the smoothed latency climbs faster than `step_slope` per doubling."""
    out, a = [], 0
    for i in range(len(sm) - 1):
        if sm[i + 1] - sm[i] > step_slope * (lx[i + 1] - lx[i]):
            out.append((a, i + 1))
            a = i + 1
    out.append((a, len(sm)))
    return out


def _flat_pieces(a: int, b: int, lx: Sequence[float], ly: Sequence[float], sm: Sequence[float],
                 max_slope: float, long_enough: Callable[[int, int], bool]) -> list[tuple[int, int]]:
    """The stretch [a, b) if it is flat enough; else the flat pieces left when it
    is split, recursively, at its steepest gap. A uniform climb has none."""
    if not long_enough(a, b):
        return []
    if _slope(lx[a:b], ly[a:b]) <= max_slope:
        return [(a, b)]
    k = max(range(a, b - 1), key=lambda i: (sm[i + 1] - sm[i]) / (lx[i + 1] - lx[i]))
    return (_flat_pieces(a, k + 1, lx, ly, sm, max_slope, long_enough)
            + _flat_pieces(k + 1, b, lx, ly, sm, max_slope, long_enough))


def _edge(k: int, flat: Sequence[tuple[int, int]], levels: Sequence[Level], lx: Sequence[float],
          sm: Sequence[float], max_slope: float) -> tuple[int, int, int] | None:
    """Level k's capacity: where the climb right after it crosses half-way (in
    ln latency) from the level to the next one. "The next one" is the next
    level's median, or the top of that first climb when the curve pauses
    lower on its way (a stretch too short or too steep to be a level): the
    size is always where *this* level ends, never further up the curve.
    Returns (edge, size measured below it, size measured above it)."""
    _, b = flat[k]
    a2, _ = flat[k + 1]
    e = b - 1
    c = e  # the climb: gaps from the level's end that rise faster than a level may
    while c < a2 and sm[c + 1] - sm[c] > max_slope * (lx[c + 1] - lx[c]):
        c += 1
    if c == e:
        c = a2  # no steep gap (the level ended at a split): the whole rise
    top = min(math.log(levels[k + 1].ns), sm[c])
    mid = 0.5 * (math.log(levels[k].ns) + top)
    for i in range(e + 1, c + 1):
        if sm[i] >= mid:
            x0, y0, x1, y1 = lx[i - 1], sm[i - 1], lx[i], sm[i]
            x = x1 if y1 <= y0 else x0 + (mid - y0) * (x1 - x0) / (y1 - y0)
            return int(round(2 ** min(max(x, x0), x1))), int(round(2**x0)), int(round(2**x1))
    return None


def _join(pieces: Sequence[tuple[int, int]], lx: Sequence[float], ly: Sequence[float], tol: float,
          level_gap: float, max_slope: float) -> list[tuple[int, int]]:
    """Flat pieces of one level that a false step (noise) or a short spike split, joined again."""

    def med(a: int, b: int) -> float:
        return statistics.median(ly[a:b])

    flat: list[tuple[int, int]] = []
    for a, b in pieces:
        if flat:
            pa, pb = flat[-1]
            gap = a - pb
            close = abs(med(pa, pb) - med(a, b))
            if ((gap == 0 and close < math.log(level_gap)) or (0 < gap <= 2 and close <= math.log1p(tol))) \
                    and _slope(lx[pa:b], ly[pa:b]) <= max_slope:
                flat[-1] = (pa, b)
                continue
        flat.append((a, b))
    return flat


def _memory_and_notes(flat: Sequence[tuple[int, int]], pts: Sequence[CurvePoint], max_slope: float,
                      min_points: int) -> tuple[int | None, list[str]]:
    """Which level is main memory (its index, or None), and what to note about the curve."""
    n = len(pts)
    notes: list[str] = []
    memory_idx = None
    if len(flat) >= 2 and flat[-1][1] == n:
        memory_idx = len(flat) - 1
    elif flat and flat[-1][1] < n:
        notes.append(
            f"latency still rises at the largest size measured ({fmt_bytes(pts[-1].size_bytes)}, "
            f"{pts[-1].ns:.3g} ns): main-memory latency is not reached, or TLB misses keep adding"
        )
    if len(flat) == 1 and flat[0][1] == n:
        notes.append("one plateau only: the curve does not show a second level")
    if pts[0].size_bytes > NAMED_START_BYTES:
        notes.append(
            f"the curve starts at {fmt_bytes(pts[0].size_bytes)}, above any first-level cache: "
            "levels are numbered, not named"
        )
    if not flat:
        notes.append("no plateau: latency never stays level (within "
                     f"{math.expm1(max_slope):.0%} per doubling) over {min_points} sizes "
                     "(a smooth rise, or too few points)")
    return memory_idx, notes


def _levels(flat: Sequence[tuple[int, int]], pts: Sequence[CurvePoint], lx: Sequence[float], ly: Sequence[float],
            smooth: Sequence[float], memory_idx: int | None, max_slope: float) -> list[Level]:
    """Each flat piece as a Level, named, with its effective size (the edge after it)."""
    n = len(pts)
    named = pts[0].size_bytes <= NAMED_START_BYTES
    levels: list[Level] = []
    for k, (a, b) in enumerate(flat):
        if k == memory_idx:
            name = "memory"
        else:
            name = f"L{k + 1}" if named else f"level {k + 1}"
        cyc = [p.cycles for p in pts[a:b]]
        levels.append(
            Level(
                name=name,
                first_bytes=pts[a].size_bytes,
                last_bytes=pts[b - 1].size_bytes,
                next_bytes=pts[b].size_bytes if b < n else None,
                ns=statistics.median(p.ns for p in pts[a:b]),
                cycles=statistics.median(cyc) if all(c is not None for c in cyc) else None,  # type: ignore[type-var]
                points=b - a,
                slope=_slope(lx[a:b], ly[a:b]),
                ns_low=min(p.ns for p in pts[a:b]),
                ns_high=max(p.ns for p in pts[a:b]),
            )
        )
    for k in range(len(levels) - 1):
        edge = _edge(k, flat, levels, lx, smooth, max_slope)
        if edge:
            levels[k] = replace(levels[k], edge_bytes=edge[0], edge_between=(edge[1], edge[2]))
    return levels


def _rises(flat: Sequence[tuple[int, int]], pts: Sequence[CurvePoint]) -> list[Rise]:
    """The points between levels and after the last one."""
    rises: list[Rise] = []
    bounds = [(0, 0)] + list(flat) + [(len(pts), len(pts))]
    for (_, pb), (a, _) in zip(bounds, bounds[1:]):
        if a > pb:
            seg = pts[pb:a]
            rises.append(Rise(seg[0].size_bytes, seg[-1].size_bytes,
                              min(p.ns for p in seg), max(p.ns for p in seg)))
    return rises


def detect_levels(
    points: Iterable[CurvePoint],
    *,
    tol: float = TOL,
    level_gap: float = LEVEL_GAP,
    step_slope: float = STEP_SLOPE,
    max_slope: float = MAX_SLOPE,
    min_points: int = MIN_POINTS,
    min_span: float = MIN_SPAN,
) -> Detection:
    """The levels of one latency curve (see the module docstring)."""
    pts = prepare_points(points)
    if not pts:
        return Detection((), (), None, ("no points",))
    lx = [math.log2(p.size_bytes) for p in pts]
    ly = [math.log(p.ns) for p in pts]
    smooth = _median3(ly)

    def long_enough(a: int, b: int) -> bool:
        return b - a >= min_points and lx[b - 1] - lx[a] >= min_span - 1e-9

    # Stretches between steps; each one's flat pieces; then pieces of one
    # level that a false step (noise) or a short spike split are joined again.
    pieces = [piece for a, b in _stretches(lx, smooth, step_slope)
              for piece in _flat_pieces(a, b, lx, ly, smooth, max_slope, long_enough)]
    flat = _join(pieces, lx, ly, tol, level_gap, max_slope)
    memory_idx, notes = _memory_and_notes(flat, pts, max_slope, min_points)
    levels = _levels(flat, pts, lx, ly, smooth, memory_idx, max_slope)
    memory = levels[memory_idx] if memory_idx is not None else None
    return Detection(tuple(levels), tuple(_rises(flat, pts)), memory, tuple(notes),
                     pts[0].size_bytes, pts[-1].size_bytes)


# --------------------------------------------------------------------------
# Sizes as text (in notes here, and everywhere in osmeter.memlevels)


def fmt_bytes(b: int | None) -> str:
    if b is None:
        return "-"
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift:
            v = b / (1 << shift)
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.3g} {unit}"
    return f"{b} B"
