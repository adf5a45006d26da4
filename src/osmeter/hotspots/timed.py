"""Hotspot diffs in time: each function's share of a profile scaled by the
time one operation takes, so that two profiles are compared in ns per
operation rather than in shares.

A share says where a profile's time went relative to the rest of it: when
one function's time grows, every other function's share falls although its
time has not moved (three audit rules made syscall.null 3x slower and its
diff's strongest bar was do_syscall_64, -24 pp, while its time rose from
about 41 to 50 ns). A share times the side's ns per operation is the
function's time per operation; their difference ranks what made B slower.
docs/methods/hotspots.md ("Diff") defines every figure here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .folded import Stacks, diff_table, total_weight

if TYPE_CHECKING:
    from . import sources

MEDIAN = "median"
WINDOW = "profile window"
SAMPLED = "profile's sampled CPU time"


@dataclass(frozen=True)
class TimedRow:
    function: str  # as in the stacks (kernel functions with "_[k]")
    kernel: bool
    self_share_a: float  # shares of all weight (0..1)
    self_share_b: float
    total_share_a: float
    total_share_b: float
    self_ns_a: float  # share x ns per op of that side
    self_ns_b: float
    total_ns_a: float
    total_ns_b: float
    se_ns: float | None  # standard error of (self_ns_b - self_ns_a) from sampling (binomial shares x ns/op;
    #                      None for function-mode weights in ns)
    appeared: bool  # no weight in A, some in B ("new")
    vanished: bool  # weight in A, none in B

    @property
    def self_delta_ns(self) -> float:
        return self.self_ns_b - self.self_ns_a

    @property
    def total_delta_ns(self) -> float:
        return self.total_ns_b - self.total_ns_a


def _positive(x: Any) -> float | None:
    """x when it is a finite number above 0 (a probe file is anyone's text)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x <= 0:
        return None
    return float(x)


def ns_per_op(profile: "sources.Profile", median: float | None, unit: str | None) -> tuple[float | None, str]:
    """The time per operation the shares are scaled by, and where it came from: the result's median when its unit is
    ns ('median'), else the CPU time the profile sampled (cpu-clock: samples / frequency / ops), else the profile
    record's window (meta['window']['enabled_s'] * 1e9 / meta['ops'], 'profile window'),
    else (None, reason)."""
    if unit == "ns" and _positive(median) is not None:
        return float(median), MEDIAN  # type: ignore[arg-type]
    meta = profile.meta if isinstance(profile.meta, dict) else {}
    window = meta.get("window") if isinstance(meta.get("window"), dict) else {}
    enabled, ops = _positive(window.get("enabled_s")), meta.get("ops")
    freq, samples = _positive(meta.get("frequency_hz")), _positive(meta.get("samples"))
    if (meta.get("event") == "cpu-clock" and freq is not None and samples is not None and isinstance(ops, int)
            and not isinstance(ops, bool) and ops > 0):
        # cpu-clock samples once per 1/frequency s of the thread's CPU time: the samples kept are its on-CPU
        # time in the timed batches, which the window's wall time overstates when the thread waited
        return (samples + (_positive(meta.get("lost")) or 0)) / freq * 1e9 / ops, SAMPLED
    if enabled is not None and isinstance(ops, int) and not isinstance(ops, bool) and ops > 0:
        return enabled * 1e9 / ops, WINDOW
    if median is None:
        why = "no result's median"
    elif unit != "ns":
        why = f"its result's median is in {str(unit)[:20]}, not ns"
    else:
        why = "its result's median is not a positive number"
    return None, f"{why}, and no profile window (a folded-stacks file holds neither)"


def timed_diff(a: Stacks, b: Stacks, ns_a: float, ns_b: float, weight_unit: str = "samples") -> list[TimedRow]:
    """Ranked by |self_delta_ns| descending, then |total_delta_ns|, then name."""
    na, nb = total_weight(a), total_weight(b)
    rows = []
    for r in diff_table(a, b, weight_unit=weight_unit):
        se = None
        if weight_unit == "samples" and na and nb:
            se = math.sqrt(ns_a ** 2 * r.self_a * (1 - r.self_a) / na + ns_b ** 2 * r.self_b * (1 - r.self_b) / nb)
        rows.append(TimedRow(r.function, r.kernel, r.self_a, r.self_b, r.total_a, r.total_b,
                             r.self_a * ns_a, r.self_b * ns_b, r.total_a * ns_a, r.total_b * ns_b, se,
                             appeared=r.total_weight_a == 0 and r.total_weight_b > 0,
                             vanished=r.total_weight_a > 0 and r.total_weight_b == 0))
    return sorted(rows, key=lambda r: (-abs(r.self_delta_ns), -abs(r.total_delta_ns), r.function))
