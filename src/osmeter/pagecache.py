"""The page cache's effective size, read off a run's `file.cache_sweep` curve.

Each ok `file.cache_sweep` result is one point: a file of `size` bytes
re-read block by block, start to end, again and again (docs/methods/file.md).
While the file fits in the page cache every block comes from memory; once
it does not, a share of the blocks comes from the device and the time per
block climbs. The **knee** is where that starts: the effective page-cache
size for one file on this machine, in this memory cgroup.

The curve's value at a size is the **mean** time per block over the sampled
blocks, not the median: beyond the knee the cache still holds part of the
file, so the blocks are a mix of memory-speed and device-speed reads and
their median stays on the fast mode until half of them miss; the mean is
the re-read cost of the whole file and rises as soon as blocks miss.

The method, on the points sorted by size (one curve per block size and
directory; points of the same size merged by the median):

1. At least MIN_POINTS (3) points, else "too few points".
2. **Plateau**: the median of the means of the three smallest sizes (the
   sweep must start well inside the cache: osmeter's sweeps start at 1/32
   of the largest size). The **threshold** is the plateau x (1 + TOL),
   TOL = 0.5: a point is slow when its mean is more than 1.5 x the plateau
   (on a disk whose block read costs 10 x a cached one, about 5 % of the
   blocks missing).
3. **The rise** starts at the first slow point whose next point is slow
   too (or that is the last point): one isolated slow point inside the
   plateau (a disturbed measurement) is noted and ignored, never taken for
   the knee. A slow point whose file was wholly in the cache at its end
   (`resident_fraction` >= WHOLE, 0.99) missed no block and cannot start
   the rise either: its time rose for another reason, typically the CPU's
   caches no longer holding the file (seen on a Xeon guest: x1.8 from
   64 MiB on, every page still cached); such a run of sizes is noted. The **knee** lies between the last size before the rise (the
   largest size still on the plateau: `low`) and the first size of the
   rise (`high`).
4. **Refined** between them by what the page cache held: the probe
   reports the share of each file in the cache at the end of the
   measurement (mincore: `resident_fraction`), and past the knee
   resident_fraction x size is the part of the file the cache could keep,
   its effective size. The estimate is the median of that product over
   the points of the rise, kept inside the bracket the times give, from
   what the cache held of the `low` file (resident_fraction x low: all of
   it, or nearly) to `high` (method "resident"); without residency the
   geometric midpoint of low and high ("midpoint").
5. A curve that never rises has **no knee**: "no knee up to LARGEST" (the
   cache held every size measured); none is ever invented. A curve whose
   rise begins at its first point has "no plateau".

Next to the knee: what /proc/meminfo suggested at run time, MemAvailable
(the kernel's estimate of the memory that can be given to a new use
without swapping, reclaimable page cache included: the most the page cache
could hold for this file) read by the probe when the smallest size started
(`mem_available_bytes`), and the memory cgroup's limit when the run had one
(`osmeter run --cgroup-mem`, recorded in the run's params) or else the
headroom the probe saw in its own cgroup when the smallest size started
(`cgroup_headroom_bytes`: limit - usage, e.g. under `systemd-run -p
MemoryMax=`). The knee is compared with the smaller of MemAvailable and
that limit (or headroom).

Points whose samples cover less than one pass over the file (`passes` < 1)
are flagged: their mean may leave out part of the file.

Pure functions: no I/O.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

BENCH = "file.cache_sweep"
MIN_POINTS = 3
PLATEAU_POINTS = 3
TOL = 0.5


def fmt_bytes(n: float) -> str:
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.4g} {unit}"
    return f"{n:.0f} B"


@dataclass(frozen=True)
class SweepPoint:
    size_bytes: int
    ns: float  # mean ns per block
    median_ns: float | None = None
    resident: float | None = None  # share of the file in the page cache at the end, 0..1
    passes: float | None = None  # passes over the file the samples made
    mem_available: int | None = None  # MemAvailable when the point started
    cgroup_headroom: int | None = None  # limit - usage of the probe's memory cgroup then


@dataclass(frozen=True)
class Knee:
    status: str  # "knee", "no-knee", "no-plateau", "too-few-points"
    size_bytes: int | None = None  # the effective page-cache size
    low_bytes: int | None = None  # the largest size still on the plateau
    high_bytes: int | None = None  # the first size of the rise
    method: str | None = None  # "resident" or "midpoint"
    plateau_ns: float | None = None
    threshold_ns: float | None = None
    largest_bytes: int | None = None
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


def _merge(points: Iterable[SweepPoint]) -> list[SweepPoint]:
    """Sorted by size; points of one size merged (median of their figures)."""
    by_size: dict[int, list[SweepPoint]] = {}
    for p in points:
        if p.size_bytes > 0 and math.isfinite(p.ns) and p.ns > 0:
            by_size.setdefault(p.size_bytes, []).append(p)
    out = []
    for size in sorted(by_size):
        ps = by_size[size]

        def med(attr: str) -> Any:
            vals = [getattr(p, attr) for p in ps if getattr(p, attr) is not None]
            return statistics.median(vals) if vals else None

        passes = [p.passes for p in ps if p.passes is not None]
        out.append(SweepPoint(size, med("ns"), med("median_ns"), med("resident"), min(passes) if passes else None,
                              ps[0].mem_available, ps[0].cgroup_headroom))
    return out


# A file at least this much in the page cache at the end of its point had
# no misses that could slow it (mincore's count, rounded).
WHOLE = 0.99


def _whole(p: SweepPoint) -> bool:
    return p.resident is not None and p.resident >= WHOLE


def _rise_start(slow: Sequence[bool]) -> int | None:
    for i, s in enumerate(slow):
        if s and (i == len(slow) - 1 or slow[i + 1]):
            return i
    return None


def _estimate(pts: Sequence[SweepPoint], j: int) -> tuple[int, str, list[str]]:
    before, low, high = pts[j - 1], pts[j - 1].size_bytes, pts[j].size_bytes
    held = [p.resident * p.size_bytes for p in pts[j:] if p.resident is not None and 0 < p.resident <= 1]
    if not held:
        return int(round(math.sqrt(low * high))), "midpoint", []
    est = statistics.median(held)
    # The cache demonstrably held what it kept of the last plateau file (all of it, or nearly).
    floor = before.resident * low if before.resident is not None and 0 < before.resident < 1 else low
    notes = []
    if est < floor or est > high:
        notes.append(f"the cache held {fmt_bytes(est)} of the larger files, outside the bracket "
                     f"{fmt_bytes(floor)} .. {fmt_bytes(high)} the times give: kept inside it")
    return int(round(min(max(est, floor), high))), "resident", notes


def detect_knee(points: Iterable[SweepPoint], tol: float = TOL) -> Knee:
    """The knee of one curve (the module docstring states the method)."""
    pts = _merge(points)
    if len(pts) < MIN_POINTS:
        return Knee("too-few-points", largest_bytes=pts[-1].size_bytes if pts else None,
                    notes=(f"{len(pts)} size(s) measured; a knee needs at least {MIN_POINTS}",))
    plateau = statistics.median(p.ns for p in pts[:PLATEAU_POINTS])
    threshold = plateau * (1 + tol)
    slow_time = [p.ns > threshold for p in pts]
    # A slow point whose file was wholly in the cache missed no block: its
    # time rose for another reason (the CPU's caches no longer holding the
    # file, a disturbed measurement), so it cannot start the rise.
    slow = [t and not _whole(p) for t, p in zip(slow_time, pts)]
    j = _rise_start(slow)
    notes = [f"{fmt_bytes(p.size_bytes)} covers {p.passes:.2g} of a pass over its file: its mean may leave out "
             "part of the file (give more --max-time or --min-samples)"
             for p in pts if p.passes is not None and p.passes < 1]
    end = len(pts) if j is None else j

    def isolated(i: int) -> bool:
        return not (i > 0 and slow_time[i - 1]) and not (i + 1 < len(pts) and slow_time[i + 1])

    notes += [f"{fmt_bytes(p.size_bytes)}: an isolated slow point ({p.ns / plateau:.2g} x the plateau) ignored"
              for i, p in enumerate(pts[:end]) if slow_time[i] and isolated(i)]
    whole = [p for i, p in enumerate(pts[:end]) if slow_time[i] and not isolated(i)]
    if whole:
        notes.append(f"{fmt_bytes(whole[0].size_bytes)} .. {fmt_bytes(whole[-1].size_bytes)}: up to "
                     f"{max(p.ns for p in whole) / plateau:.2g} x the plateau with the whole file in the page cache: "
                     "no block missed, so not the knee (the CPU's caches or memory were slower for these sizes)")
    common = dict(plateau_ns=plateau, threshold_ns=threshold, largest_bytes=pts[-1].size_bytes)
    if j is None:
        return Knee("no-knee", notes=tuple(notes), **common)  # type: ignore[arg-type]
    if j == 0:
        return Knee("no-plateau", notes=tuple(notes + ["the smallest size is already slow: start the sweep smaller"]),
                    **common)  # type: ignore[arg-type]
    est, method, more = _estimate(pts, j)
    before = pts[j - 1]
    if before.resident is not None and before.resident < 0.95:
        more.append(f"at {fmt_bytes(before.size_bytes)}, still on the plateau, only {before.resident:.0%} of the "
                    "file was in the cache at the end")
    return Knee("knee", est, before.size_bytes, pts[j].size_bytes, method, notes=tuple(notes + more),
                **common)  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# From stored results


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _bytes(v: Any) -> int | None:
    x = _num(v)
    return int(x) if x is not None and x >= 0 else None


def point_of(r: Any) -> SweepPoint | None:
    """One ok file.cache_sweep result (a stored BenchResult) as a point."""
    summary = getattr(r, "summary", None)
    record = getattr(r, "record", {}) or {}
    mean = summary.mean if summary is not None else record.get("mean")
    extra = getattr(r, "extra", {}) or {}
    size = _bytes(extra.get("size_bytes", (r.params or {}).get("size")))
    if _num(mean) is None or not size:
        return None
    resident = _num(extra.get("resident_fraction"))
    return SweepPoint(
        size_bytes=size,
        ns=float(mean),
        median_ns=summary.median if summary is not None else _num(record.get("median")),
        resident=resident if resident is not None and 0 <= resident <= 1 else None,
        passes=_num(extra.get("passes")),
        mem_available=_bytes(extra.get("mem_available_bytes")),
        cgroup_headroom=_bytes(extra.get("cgroup_headroom_bytes")),
    )


def curves_from_results(results: Iterable[Any]) -> dict[tuple[int, str], list[SweepPoint]]:
    """ok file.cache_sweep results grouped by (block, dir), in run order."""
    curves: dict[tuple[int, str], list[SweepPoint]] = {}
    for r in results:
        if getattr(r, "bench", None) != BENCH or getattr(r, "status", None) != "ok":
            continue
        p = point_of(r)
        if p is not None:
            params = r.params or {}
            block = params.get("block")
            key = (int(block) if isinstance(block, int) else 0, str(params.get("dir") or ""))
            curves.setdefault(key, []).append(p)
    return curves


@dataclass(frozen=True)
class CacheAnalysis:
    """One curve of a run, its knee, and what the machine suggested."""

    block: int
    dir: str
    points: tuple[SweepPoint, ...]
    knee: Knee
    mem_available: int | None  # MemAvailable at the smallest size's start
    cgroup_limit: int | None  # the run's memory cgroup limit (osmeter run --cgroup-mem)
    cgroup_headroom: int | None  # headroom in the probe's own cgroup at the smallest size's start
    notes: tuple[str, ...] = field(default=())

    @property
    def label(self) -> str:
        where = self.dir or "the probe's default directory"
        return f"block {fmt_bytes(self.block)}, {where}"

    @property
    def expected(self) -> int | None:
        """What the machine suggested: the smaller of MemAvailable and the cgroup limit (the
        headroom the probe saw in its own cgroup when osmeter recorded no limit)."""
        vals = [v for v in (self.mem_available, self.cgroup_limit or self.cgroup_headroom) if v]
        return min(vals) if vals else None

    @property
    def ratio(self) -> float | None:
        if self.knee.status != "knee" or not self.knee.size_bytes or not self.expected:
            return None
        return self.knee.size_bytes / self.expected

    def as_dict(self) -> dict[str, Any]:
        return {
            "block": self.block,
            "dir": self.dir,
            "points": [p.__dict__ for p in self.points],
            "knee": self.knee.as_dict(),
            "meminfo_available_bytes": self.mem_available,
            "cgroup_limit_bytes": self.cgroup_limit,
            "cgroup_headroom_bytes": self.cgroup_headroom,
            "expected_bytes": self.expected,
            "knee_over_expected": self.ratio,
            "text": knee_text(self),
        }


def recorded_cgroup_limit(run_params: Mapping[str, Any] | None) -> int | None:
    cg = (run_params or {}).get("cgroup")
    limit = cg.get("limit_bytes") if isinstance(cg, dict) else None
    return limit if isinstance(limit, int) and limit > 0 else None


def analyse(results: Iterable[Any], run_params: Mapping[str, Any] | None = None,
            tol: float = TOL) -> list[CacheAnalysis]:
    """Every file.cache_sweep curve of a run with its knee."""
    out = []
    limit = recorded_cgroup_limit(run_params)
    for (block, directory), pts in curves_from_results(results).items():
        merged = _merge(pts)
        first = merged[0] if merged else None
        out.append(CacheAnalysis(block, directory, tuple(merged), detect_knee(pts, tol),
                                 first.mem_available if first else None, limit,
                                 first.cgroup_headroom if first else None))
    return out


# --------------------------------------------------------------------------
# Text


def knee_text(a: CacheAnalysis) -> str:
    """The knee in one or two sentences, with what the machine suggested."""
    k = a.knee
    if k.status == "knee":
        how = ("from the share of the larger files the cache kept" if k.method == "resident"
               else "the geometric midpoint")
        text = (f"effective page cache {fmt_bytes(k.size_bytes or 0)}: the re-read time leaves the plateau "
                f"({k.plateau_ns / 1e3:.3g} us per block) between {fmt_bytes(k.low_bytes or 0)} and "
                f"{fmt_bytes(k.high_bytes or 0)} ({how})")
    elif k.status == "no-knee":
        text = (f"no knee up to {fmt_bytes(k.largest_bytes or 0)}: every size was re-read within "
                f"x{1 + TOL:g} of the plateau ({(k.plateau_ns or 0) / 1e3:.3g} us per block), so the page cache "
                f"held at least {fmt_bytes(k.largest_bytes or 0)} of the file")
    elif k.status == "no-plateau":
        text = "no knee: the curve has no plateau (its smallest sizes are already slow)"
    else:
        text = "no knee: too few sizes measured"
    parts = []
    if a.mem_available:
        parts.append(f"/proc/meminfo MemAvailable at the start: {fmt_bytes(a.mem_available)}")
    if a.cgroup_limit:
        parts.append(f"memory cgroup limit: {fmt_bytes(a.cgroup_limit)}")
    elif a.cgroup_headroom:
        parts.append(f"the probe's memory cgroup had {fmt_bytes(a.cgroup_headroom)} of headroom at the start")
    if a.ratio is not None and a.expected:
        parts.append(f"the knee is {a.ratio:.2f} x {fmt_bytes(a.expected)}")
    return text + ("; " + "; ".join(parts) if parts else "")


def render_text(analyses: Sequence[CacheAnalysis]) -> str:
    if not analyses:
        return (f"no {BENCH} results in this run (run: osmeter study files, or osmeter run {BENCH} "
                "--param size=64M,128M,... --cgroup-mem 512M)\n")
    lines: list[str] = []
    for a in analyses:
        lines.append(f"{BENCH}, {a.label}: {len(a.points)} sizes, "
                     f"{fmt_bytes(a.points[0].size_bytes)} .. {fmt_bytes(a.points[-1].size_bytes)}")
        lines.append("       size   mean us/block  median us/block  in cache  passes")
        for p in a.points:
            med = f"{p.median_ns / 1e3:15.4g}" if p.median_ns is not None else f"{'-':>15}"
            res = f"{p.resident:8.0%}" if p.resident is not None else f"{'-':>8}"
            passes = f"{p.passes:6.3g}" if p.passes is not None else f"{'-':>6}"
            lines.append(f"  {fmt_bytes(p.size_bytes):>9}  {p.ns / 1e3:14.4g}  {med}  {res}  {passes}")
        lines.append("  " + knee_text(a))
        for note in a.knee.notes + a.notes:
            lines.append(f"  note: {note}")
        lines.append("")
    return "\n".join(lines)
