"""Cache levels read off a `mem.latency` curve, and checked against sysfs.

A load-to-use latency curve (working-set size -> ns per dependent load) is a
staircase: level (flat, or climbing slowly) while the working set fits a
cache level, rising steeply when it outgrows it. This module finds the
levels and reports each one's effective size and latency, plus main-memory
latency; then, as a
separate step, compares the boundaries with the cache sizes the kernel
reports (the run's ``machine["caches"]``, from /sys/devices/system/cpu).
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
``last_bytes`` (a lower bound). A size *agrees* with sysfs when it lies
within a factor of two of the sysfs size of the same level; otherwise both
sizes are stated.

Pure functions: no I/O. ``analyse_results`` takes stored results.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

BENCH = "mem.latency"
TOL = 0.25
LEVEL_GAP = 1.5
STEP_SLOPE = 0.5  # ln(latency) per doubling (x1.65): faster is a step between levels
MAX_SLOPE = 0.25  # ln(latency) per doubling (x1.28): the most a level may climb
MIN_POINTS = 2
MIN_SPAN = 0.5  # doublings
NAMED_START_BYTES = 16 * 1024
AGREE_FACTOR = 2.0


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


@dataclass(frozen=True)
class SysfsCheck:
    """One cache level: what the curve shows against what sysfs says."""

    level: int  # cache level number (1, 2, 3 ...)
    detected: Level | None
    sysfs_bytes: int | None
    sysfs_type: str | None
    ratio: float | None  # detected boundary / sysfs size
    agree: bool | None  # None when one side is missing
    text: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "detected_bytes": self.detected.size_bytes if self.detected else None,
            "sysfs_bytes": self.sysfs_bytes,
            "sysfs_type": self.sysfs_type,
            "ratio": self.ratio,
            "agree": self.agree,
            "text": self.text,
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


def _prepare(points: Iterable[CurvePoint]) -> list[CurvePoint]:
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
    pts = _prepare(points)
    n = len(pts)
    if n == 0:
        return Detection((), (), None, ("no points",))
    lx = [math.log2(p.size_bytes) for p in pts]
    ly = [math.log(p.ns) for p in pts]
    smooth = _median3(ly)

    def med(a: int, b: int) -> float:
        return statistics.median(ly[a:b])

    def long_enough(a: int, b: int) -> bool:
        return b - a >= min_points and lx[b - 1] - lx[a] >= min_span - 1e-9

    # Stretches between steps; each one's flat pieces; then pieces of one
    # level that a false step (noise) or a short spike split are joined again.
    pieces = [piece for a, b in _stretches(lx, smooth, step_slope)
              for piece in _flat_pieces(a, b, lx, ly, smooth, max_slope, long_enough)]
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

    notes: list[str] = []
    memory_idx = None
    if len(flat) >= 2 and flat[-1][1] == n:
        memory_idx = len(flat) - 1
    elif flat and flat[-1][1] < n:
        notes.append(
            f"latency still rises at the largest size measured ({_fmt_bytes(pts[-1].size_bytes)}, "
            f"{pts[-1].ns:.3g} ns): main-memory latency is not reached, or TLB misses keep adding"
        )
    if len(flat) == 1 and flat[0][1] == n:
        notes.append("one plateau only: the curve does not show a second level")
    named = pts[0].size_bytes <= NAMED_START_BYTES
    if not named:
        notes.append(
            f"the curve starts at {_fmt_bytes(pts[0].size_bytes)}, above any first-level cache: "
            "levels are numbered, not named"
        )

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
    if not flat:
        notes.append("no plateau: latency never stays level (within "
                     f"{math.expm1(max_slope):.0%} per doubling) over {min_points} sizes "
                     "(a smooth rise, or too few points)")

    # Rises: the points between levels and after the last one.
    rises: list[Rise] = []
    bounds = [(0, 0)] + flat + [(n, n)]
    for (_, pb), (a, _) in zip(bounds, bounds[1:]):
        if a > pb:
            seg = pts[pb:a]
            rises.append(Rise(seg[0].size_bytes, seg[-1].size_bytes,
                              min(p.ns for p in seg), max(p.ns for p in seg)))
    memory = levels[memory_idx] if memory_idx is not None else None
    return Detection(tuple(levels), tuple(rises), memory, tuple(notes), pts[0].size_bytes, pts[-1].size_bytes)


# --------------------------------------------------------------------------
# Comparison with sysfs


def _sysfs_by_level(caches: Sequence[Mapping[str, Any]] | None) -> dict[int, tuple[int, str]]:
    out: dict[int, tuple[int, str]] = {}
    for c in caches or ():
        level, ctype, size = c.get("level"), c.get("type"), c.get("size_bytes")
        if not isinstance(level, int) or not isinstance(size, int) or ctype == "Instruction":
            continue
        if level not in out or size > out[level][0]:
            out[level] = (size, str(ctype))
    return out


def compare_with_sysfs(detection: Detection, caches: Sequence[Mapping[str, Any]] | None) -> tuple[SysfsCheck, ...]:
    """Each cache level: the detected boundary against the sysfs size.

    Only curves whose levels are named (start at 16 KiB or below) can be
    matched level by level; otherwise nothing is compared."""
    sysfs = _sysfs_by_level(caches)
    if any(lv.name.startswith("level ") for lv in detection.levels):
        return ()
    found = {int(lv.name[1:]): lv for lv in detection.caches}
    checks = []
    for level in sorted(set(sysfs) | set(found)):
        lv = found.get(level)
        size, ctype = sysfs.get(level, (None, None))
        if lv and size:
            ratio = lv.size_bytes / size
            agree = 1 / AGREE_FACTOR <= ratio <= AGREE_FACTOR
            text = (
                f"L{level}: effective size {_size_text(lv)}, {lv.ns:.3g} ns ({_level_text(lv)}); "
                f"sysfs says {_fmt_bytes(size)} ({ctype}): "
                + (f"agrees (x{ratio:.2g})" if agree else
                   f"DISAGREES (x{ratio:.2g}): the curve leaves this level "
                   f"{'at' if lv.edge_bytes else 'past'} {_fmt_bytes(lv.size_bytes)}, not at {_fmt_bytes(size)}")
            )
        elif size and size < detection.first_bytes:
            ratio, agree = None, None
            text = (f"L{level}: sysfs says {_fmt_bytes(size)} ({ctype}); the curve starts at "
                    f"{_fmt_bytes(detection.first_bytes)}, above it: not compared")
        elif size:
            ratio, agree = None, False
            text = f"L{level}: sysfs says {_fmt_bytes(size)} ({ctype}); the curve shows no plateau for it"
            rise = _rise_after(detection, level)
            if rise:
                text += f": past {rise[0]}, latency {_rise_text(rise[1])}"
                if detection.memory and detection.memory.first_bytes > rise[1].last_bytes:
                    text += f", then memory latency from {_fmt_bytes(detection.memory.first_bytes)}"
        else:
            assert lv is not None
            ratio, agree = None, None
            text = (f"L{level}: effective size {_size_text(lv)}, {lv.ns:.3g} ns ({_level_text(lv)}); "
                    "sysfs reports no such cache")
        checks.append(SysfsCheck(level, lv, size, ctype, ratio, agree, text))
    return tuple(checks)


def _size_text(lv: Level) -> str:
    """The level's size as the curve shows it: the half-way point of the climb
    after it (with the sizes measured around it when they are more than a
    doubling apart), or, when the curve ends before the next level, a lower bound."""
    if not lv.edge_bytes:
        return f"at least {_fmt_bytes(lv.last_bytes)}"
    text = _fmt_bytes(lv.edge_bytes)
    if lv.edge_between and lv.edge_between[1] > 2 * lv.edge_between[0]:
        low, high = lv.edge_between
        text += f" (between {_fmt_bytes(low)} and {_fmt_bytes(high)}, the sizes measured around it)"
    return text


def _level_text(lv: Level) -> str:
    """Extent of a level, and how its latency climbs when it does."""
    text = f"level from {_fmt_bytes(lv.first_bytes)} to {_fmt_bytes(lv.last_bytes)}"
    if lv.ns_high > 1.1 * lv.ns_low:
        text += f", {lv.ns_low:.3g} .. {lv.ns_high:.3g} ns"
    if lv.slope > 0.05:
        text += f", climbing {math.expm1(lv.slope):.0%} per doubling"
    return text


def _rise_text(r: Rise) -> str:
    if r.first_bytes == r.last_bytes:
        return f"is {r.ns_low:.3g} ns at {_fmt_bytes(r.first_bytes)}"
    return (f"climbs from {r.ns_low:.3g} to {r.ns_high:.3g} ns "
            f"between {_fmt_bytes(r.first_bytes)} and {_fmt_bytes(r.last_bytes)}")


def _rise_after(detection: Detection, level: int) -> tuple[str, Rise] | None:
    """The climb that follows the cache level below `level`, with its name."""
    below = next((lv for lv in detection.caches if lv.name == f"L{level - 1}"), None)
    if below is None:
        return None
    for r in detection.rises:
        if r.first_bytes > below.last_bytes:
            return (f"L{level - 1} ({_fmt_bytes(below.last_bytes)})", r)
    return None


# --------------------------------------------------------------------------
# From stored results


@dataclass(frozen=True)
class CurveAnalysis:
    """One curve of a run: its parameters, points, levels and the sysfs check."""

    pattern: str
    stride: int
    thp: int
    points: tuple[CurvePoint, ...]
    detection: Detection
    checks: tuple[SysfsCheck, ...] = field(default=())

    @property
    def label(self) -> str:
        pages = "huge pages" if self.thp else "base pages"
        return f"pattern={self.pattern} stride={self.stride} ({pages})"

    def as_dict(self) -> dict[str, Any]:
        return {
            "pattern": self.pattern,
            "stride": self.stride,
            "thp": self.thp,
            "points": [{"size_bytes": p.size_bytes, "ns": p.ns, "cycles": p.cycles} for p in self.points],
            "levels": self.detection.as_dict(),
            "sysfs": [c.as_dict() for c in self.checks],
        }


def curves_from_results(results: Iterable[Any]) -> dict[tuple[str, int, int], list[CurvePoint]]:
    """ok `mem.latency` results grouped by (pattern, stride, thp).

    Each result needs ``bench``, ``status``, ``params``, ``extra`` and either
    ``summary.median`` or ``record["median"]`` (a stored BenchResult has all)."""
    curves: dict[tuple[str, int, int], list[CurvePoint]] = {}
    for r in results:
        if getattr(r, "bench", None) != BENCH or getattr(r, "status", None) != "ok":
            continue
        params = r.params or {}
        key = (str(params.get("pattern", "random")), int(params.get("stride", 64)), int(params.get("thp", 0)))
        summary = getattr(r, "summary", None)
        record = getattr(r, "record", {}) or {}
        ns = summary.median if summary is not None else record.get("median")
        if not isinstance(ns, (int, float)) or not ns > 0:
            continue
        size = (r.extra or {}).get("size_bytes", params.get("size"))
        cycles = record.get("ref_cycles")
        if cycles is not None and summary is not None and record.get("median"):
            # ref_cycles is the probe's median in TSC ticks: rescale to the
            # front end's median, which may differ slightly.
            cycles = cycles * ns / record["median"]
        curves.setdefault(key, []).append(
            CurvePoint(int(size), float(ns), float(cycles) if isinstance(cycles, (int, float)) else None)
        )
    return curves


def name_like(detection: Detection, reference: Detection) -> Detection:
    """A curve that starts above L1 (its levels numbered) named after a
    reference curve of the same run: each numbered level takes the name of
    the reference level whose size range overlaps it most (in log2 size).
    Levels that overlap nothing keep their numbers."""
    named = [lv for lv in reference.levels if not lv.name.startswith("level ")]
    if not named or not any(lv.name.startswith("level ") for lv in detection.levels):
        return detection

    def overlap(a: Level, b: Level) -> float:
        lo = max(math.log2(a.first_bytes), math.log2(b.first_bytes))
        hi = min(math.log2(a.last_bytes), math.log2(b.last_bytes))
        return hi - lo

    levels = []
    used: set[str] = set()
    for lv in detection.levels:
        if lv.name.startswith("level "):
            best = max(named, key=lambda r: overlap(lv, r))
            if overlap(lv, best) >= 0 and best.name not in used:
                lv = replace(lv, name=best.name)
        used.add(lv.name)
        levels.append(lv)
    memory = next((lv for lv in levels if lv.name == "memory"), None)
    notes = tuple(n for n in detection.notes if "numbered, not named" not in n)
    if any(lv.name.startswith("level ") for lv in levels):
        notes += ("some levels overlap no level of the reference curve and stay numbered",)
    return Detection(tuple(levels), detection.rises, memory, notes, detection.first_bytes, detection.last_bytes)


def analyse_results(results: Iterable[Any], machine: Mapping[str, Any] | None) -> list[CurveAnalysis]:
    """Every mem.latency curve of a run, base pages first. A curve that
    starts above 16 KiB (e.g. the huge-page points of the standard suite) is
    named after the random base-page curve, when the run has one."""
    caches = (machine or {}).get("caches")
    caches = caches if isinstance(caches, list) else None
    curves = sorted(curves_from_results(results).items(), key=lambda kv: (kv[0][2], kv[0]))
    detections = {key: detect_levels(pts) for key, pts in curves}
    ref = next((d for (pattern, _, thp), d in detections.items() if pattern == "random" and thp == 0), None)
    out = []
    for key, pts in curves:
        det = detections[key]
        if ref is not None and det is not ref:
            det = name_like(det, ref)
        out.append(CurveAnalysis(key[0], key[1], key[2], tuple(_prepare(pts)), det, compare_with_sysfs(det, caches)))
    return out


def tlb_penalty(base: Sequence[CurvePoint], huge: Sequence[CurvePoint]) -> list[tuple[int, float, float]]:
    """(size, ns with base pages, ns with huge pages) at the sizes both curves measured."""
    h = {p.size_bytes: p.ns for p in _prepare(huge)}
    return [(p.size_bytes, p.ns, h[p.size_bytes]) for p in _prepare(base) if p.size_bytes in h]


# --------------------------------------------------------------------------
# Text


def _fmt_bytes(b: int | None) -> str:
    if b is None:
        return "-"
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift:
            v = b / (1 << shift)
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.3g} {unit}"
    return f"{b} B"


def render_text(analyses: Sequence[CurveAnalysis]) -> str:
    """The levels of every curve, and the sysfs comparison, for a terminal."""
    if not analyses:
        return "no mem.latency results in this run (run: osmeter run mem.latency --sweep)\n"
    lines: list[str] = []
    base = next((a for a in analyses if a.thp == 0 and a.pattern == "random"), None)
    huge = next((a for a in analyses if a.thp == 1 and a.pattern == "random"), None)
    for a in analyses:
        lines.append(f"mem.latency, {a.label}: {len(a.points)} sizes, "
                     f"{_fmt_bytes(a.points[0].size_bytes)} .. {_fmt_bytes(a.points[-1].size_bytes)}")
        for lv in a.detection.levels:
            # TSC ticks: reference cycles at the TSC's rate, not core cycles
            cyc = f", {lv.cycles:.1f} ref cycles" if lv.cycles is not None else ""
            if lv is a.detection.memory:
                spread = (f", {lv.ns_low:.3g} .. {lv.ns_high:.3g} ns over the plateau"
                          if lv.ns_high > 1.1 * lv.ns_low else "")
                lines.append(f"  memory  {lv.ns:8.3g} ns{cyc} (from {_fmt_bytes(lv.first_bytes)}{spread})")
            else:
                lines.append(f"  {lv.name:<7} {lv.ns:8.3g} ns{cyc}, effective size {_size_text(lv)}; {_level_text(lv)}")
        for r in a.detection.rises:
            lines.append(f"  (between levels: latency {_rise_text(r)})")
        for note in a.detection.notes:
            lines.append(f"  note: {note}")
        for c in a.checks:
            lines.append(f"  sysfs {c.text}")
        lines.append("")
    if base and huge:
        pen = tlb_penalty(base.points, huge.points)
        if pen:
            lines.append("TLB misses (base pages minus huge pages, same size):")
            for size, b, h in pen:
                lines.append(f"  {_fmt_bytes(size):>9}: {b:7.3g} ns vs {h:7.3g} ns ({b - h:+.3g} ns)")
            lines.append("")
    return "\n".join(lines)
