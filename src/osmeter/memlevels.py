"""Cache levels read off a `mem.latency` curve, and checked against sysfs.

The levels are found by osmeter.memlevels_detect (its docstring states the
method); this module, as a separate step, compares their boundaries with
the cache sizes the kernel reports (the run's ``machine["caches"]``, from
/sys/devices/system/cpu), reads the curves from stored results and renders
them as text. Detection never looks at sysfs, so a machine whose effective
cache differs from what sysfs says (a virtual machine given a slice of a
shared LLC) is reported as a disagreement, not bent into agreement.

A size *agrees* with sysfs when it lies within a factor of two of the sysfs
size of the same level; otherwise both sizes are stated.

Pure functions: no I/O. ``analyse_results`` takes stored results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence

from .memlevels_detect import (  # noqa: F401  (the detection's names are part of this module's interface)
    LEVEL_GAP,
    MAX_SLOPE,
    MIN_POINTS,
    MIN_SPAN,
    NAMED_START_BYTES,
    STEP_SLOPE,
    TOL,
    CurvePoint,
    Detection,
    Level,
    Rise,
    fmt_bytes,
    prepare_points,
    detect_levels,
)

BENCH = "mem.latency"
AGREE_FACTOR = 2.0


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
                f"sysfs says {fmt_bytes(size)} ({ctype}): "
                + (f"agrees (x{ratio:.2g})" if agree else
                   f"DISAGREES (x{ratio:.2g}): the curve leaves this level "
                   f"{'at' if lv.edge_bytes else 'past'} {fmt_bytes(lv.size_bytes)}, not at {fmt_bytes(size)}")
            )
        elif size and size < detection.first_bytes:
            ratio, agree = None, None
            text = (f"L{level}: sysfs says {fmt_bytes(size)} ({ctype}); the curve starts at "
                    f"{fmt_bytes(detection.first_bytes)}, above it: not compared")
        elif size:
            ratio, agree = None, False
            text = f"L{level}: sysfs says {fmt_bytes(size)} ({ctype}); the curve shows no plateau for it"
            rise = _rise_after(detection, level)
            if rise:
                text += f": past {rise[0]}, latency {_rise_text(rise[1])}"
                if detection.memory and detection.memory.first_bytes > rise[1].last_bytes:
                    text += f", then memory latency from {fmt_bytes(detection.memory.first_bytes)}"
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
        return f"at least {fmt_bytes(lv.last_bytes)}"
    text = fmt_bytes(lv.edge_bytes)
    if lv.edge_between and lv.edge_between[1] > 2 * lv.edge_between[0]:
        low, high = lv.edge_between
        text += f" (between {fmt_bytes(low)} and {fmt_bytes(high)}, the sizes measured around it)"
    return text


def _level_text(lv: Level) -> str:
    """Extent of a level, and how its latency climbs when it does."""
    text = f"level from {fmt_bytes(lv.first_bytes)} to {fmt_bytes(lv.last_bytes)}"
    if lv.ns_high > 1.1 * lv.ns_low:
        text += f", {lv.ns_low:.3g} .. {lv.ns_high:.3g} ns"
    if lv.slope > 0.05:
        text += f", climbing {math.expm1(lv.slope):.0%} per doubling"
    return text


def _rise_text(r: Rise) -> str:
    if r.first_bytes == r.last_bytes:
        return f"is {r.ns_low:.3g} ns at {fmt_bytes(r.first_bytes)}"
    return (f"climbs from {r.ns_low:.3g} to {r.ns_high:.3g} ns "
            f"between {fmt_bytes(r.first_bytes)} and {fmt_bytes(r.last_bytes)}")


def _rise_after(detection: Detection, level: int) -> tuple[str, Rise] | None:
    """The climb that follows the cache level below `level`, with its name."""
    below = next((lv for lv in detection.caches if lv.name == f"L{level - 1}"), None)
    if below is None:
        return None
    for r in detection.rises:
        if r.first_bytes > below.last_bytes:
            return (f"L{level - 1} ({fmt_bytes(below.last_bytes)})", r)
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
        out.append(CurveAnalysis(key[0], key[1], key[2], tuple(prepare_points(pts)), det, compare_with_sysfs(det, caches)))
    return out


# --------------------------------------------------------------------------
# The last cache's edge: sizes whose latency one run cannot vouch for

CACHE_EDGE = "cache-edge"  # the flag of a mem.latency result whose size lies in the band (issue 30)


@dataclass(frozen=True)
class EdgeBand:
    """Working-set sizes between the last cache level and memory: low < size < high.

    low is half the largest size still on the plateau of the last-level
    cache (the level numbered as sysfs's largest cache): the plateau's last
    doubling is in the band, where a shared cache's plateau already climbs
    (19 % per doubling on the recorded EPYC guest) and a run with a smaller
    share ends it earlier. When the curve shows no plateau for that cache,
    low is the end of the curve's last cache level's plateau. high is the larger
    of the last-level cache's sysfs size (inside, <=) and the first size on
    the memory plateau (outside). In between, a size's latency depends on how
    much of a shared cache the process gets from one run to the next (a
    virtual machine's slice of the L3, the other tenants' use of it):
    measured 5-8x apart between identical runs at 6.6-10.5 MiB on a 2-vCPU
    EPYC guest whose sysfs L3 is 32 MiB."""

    low: int
    high: int
    high_inclusive: bool
    level: str  # the cache level the band follows ("L3")
    doubling: bool = True  # low is a doubling below the plateau's end (False: the plateau's end)

    def holds(self, size: int) -> bool:
        return self.low < size and (size <= self.high if self.high_inclusive else size < self.high)

    @property
    def text(self) -> str:
        where = f"a doubling below the end of {self.level}'s plateau" if self.doubling else \
            f"the end of {self.level}'s plateau"
        return (f"{CACHE_EDGE}: above {fmt_bytes(self.low)} ({where}) up to {fmt_bytes(self.high)} "
                f"(where the curve reaches memory, or the cache's sysfs size)")


def edge_band(detection: Detection, caches: Sequence[Mapping[str, Any]] | None) -> EdgeBand | None:
    """The band after the last cache level of a curve (EdgeBand), or None
    when the curve shows no cache level, or the band would be empty."""
    found = detection.caches
    if not found:
        return None
    sysfs = _sysfs_by_level(caches)
    top = max(sysfs) if sysfs else None
    last = next((lv for lv in found if top is not None and lv.name == f"L{top}"), found[-1])
    llc = sysfs[top][0] if top is not None else None
    memory = detection.memory.first_bytes if detection.memory is not None else None
    # The plateau's last doubling only for the shared last-level cache (or,
    # without sysfs, the curve's last cache): a private L2 that the curve
    # goes on from to memory (no L3 plateau) keeps its whole plateau.
    doubling = top is None or last.name == f"L{top}"
    low = last.last_bytes // 2 if doubling else last.last_bytes
    if llc is not None and (memory is None or llc >= memory):
        band = EdgeBand(low, llc, True, last.name, doubling)
    elif memory is not None:
        band = EdgeBand(low, memory, False, last.name, doubling)
    else:
        return None
    return band if band.high > band.low else None


def run_edge_band(results: Iterable[Any], machine: Mapping[str, Any] | None) -> EdgeBand | None:
    """The band of a run: from its random base-page mem.latency curve (the
    standard suite's sweep), None without one."""
    curve = curves_from_results(results).get(("random", 64, 0))
    if not curve or len(curve) < 2 * MIN_POINTS:
        return None
    caches = (machine or {}).get("caches")
    return edge_band(detect_levels(curve), caches if isinstance(caches, list) else None)


def in_edge_band(result: Any, band: EdgeBand | None) -> bool:
    """An ok mem.latency result whose working set lies in the band."""
    if band is None or getattr(result, "bench", None) != BENCH or getattr(result, "status", None) != "ok":
        return False
    size = (result.extra or {}).get("size_bytes", (result.params or {}).get("size"))
    return isinstance(size, (int, float)) and band.holds(int(size))


def tlb_penalty(base: Sequence[CurvePoint], huge: Sequence[CurvePoint]) -> list[tuple[int, float, float]]:
    """(size, ns with base pages, ns with huge pages) at the sizes both curves measured."""
    h = {p.size_bytes: p.ns for p in prepare_points(huge)}
    return [(p.size_bytes, p.ns, h[p.size_bytes]) for p in prepare_points(base) if p.size_bytes in h]


# --------------------------------------------------------------------------
# Text


def render_text(analyses: Sequence[CurveAnalysis]) -> str:
    """The levels of every curve, and the sysfs comparison, for a terminal."""
    if not analyses:
        return "no mem.latency results in this run (run: osmeter run mem.latency --sweep)\n"
    lines: list[str] = []
    base = next((a for a in analyses if a.thp == 0 and a.pattern == "random"), None)
    huge = next((a for a in analyses if a.thp == 1 and a.pattern == "random"), None)
    for a in analyses:
        lines.append(f"mem.latency, {a.label}: {len(a.points)} sizes, "
                     f"{fmt_bytes(a.points[0].size_bytes)} .. {fmt_bytes(a.points[-1].size_bytes)}")
        for lv in a.detection.levels:
            # TSC ticks: reference cycles at the TSC's rate, not core cycles
            cyc = f", {lv.cycles:.1f} ref cycles" if lv.cycles is not None else ""
            if lv is a.detection.memory:
                spread = (f", {lv.ns_low:.3g} .. {lv.ns_high:.3g} ns over the plateau"
                          if lv.ns_high > 1.1 * lv.ns_low else "")
                lines.append(f"  memory  {lv.ns:8.3g} ns{cyc} (from {fmt_bytes(lv.first_bytes)}{spread})")
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
                lines.append(f"  {fmt_bytes(size):>9}: {b:7.3g} ns vs {h:7.3g} ns ({b - h:+.3g} ns)")
            lines.append("")
    return "\n".join(lines)
