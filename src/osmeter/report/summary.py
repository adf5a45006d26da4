"""What every summary table (show, Markdown, HTML) says the same way.

`best` is the best sample (stats.best_value: the minimum for times and
counts, the maximum for rates); n counts the samples of every repetition
pooled; the number of repetitions goes into the heading when every
instance has the same, else into a column `R`.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from ..model import BenchResult
from ..stats import best_value
from ..fmt import fmt_num

KBEST_FOOTNOTE = (
    "* no run of 5 samples within 5 % completed: lebench_kbest is LEBench's fallback (the first value of its "
    "partial run; the minimum, or maximum for rates, where LEBench has none)"
)
REF_CYCLES_NOTE = (
    "ref cycles: the median in reference cycles, TSC ticks at the TSC's constant rate (not core cycles: "
    "a core at another frequency runs more or fewer)"
)
R_NOTE = "R: repetitions (fresh probe processes) of the instance; n counts the samples of all of them"


def best(r: BenchResult) -> float:
    assert r.summary is not None
    return best_value(r.summary, r.unit)


def repetitions(r: BenchResult) -> int:
    """Probe processes that measured the instance (a result stored before --repeat existed: 1)."""
    return max(1, len(r.repetitions))


def repetition_counts(results: Sequence[BenchResult]) -> list[int]:
    return sorted({repetitions(r) for r in results})


def needs_r_column(results: Sequence[BenchResult]) -> bool:
    """A column R only when the instances had different numbers of repetitions."""
    return len(repetition_counts(results)) > 1


def repetitions_text(results: Sequence[BenchResult]) -> str:
    """`3 repetitions per instance, n pooled over them` or `1 to 3 repetitions per instance (column R)`."""
    counts = repetition_counts(results)
    if not counts:
        return ""
    if len(counts) == 1:
        k = counts[0]
        if k == 1:
            return "1 repetition per instance (one probe process)"
        return f"{k} repetitions per instance (fresh probe processes; n counts the samples of all {k})"
    return f"{counts[0]} to {counts[-1]} repetitions per instance (column R; n counts the samples of all)"


def any_unstable_kbest(results: Sequence[BenchResult]) -> bool:
    return any(r.summary is not None and not r.summary.kbest_stable for r in results)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def ref_cycles(r: BenchResult) -> float | None:
    """The median in reference cycles: TSC ticks at the TSC's constant rate, not core cycles.

    The probe's `ref_cycles` (x86 timed with the TSC, results in ns) is the
    median of its own process; rescaled here to the pooled median. None
    where the probe has none."""
    cycles, probe_median = _number(r.record.get("ref_cycles")), _number(r.record.get("median"))
    if r.summary is None or cycles is None or not probe_median or math.isnan(r.summary.median):
        return None
    return cycles * r.summary.median / probe_median


def ref_cycles_text(r: BenchResult) -> str:
    """One decimal (`134.8`), with an exponent from a million on as the other figures (`1.833e+07`); '' without."""
    value = ref_cycles(r)
    if value is None:
        return ""
    return f"{value:.1f}" if abs(value) < 1e6 else fmt_num(value)


BIT_RATE_HEADING = "in bits/s (median x 8; the net family's goodput, as iperf3 states it):"


def bit_rate(r: BenchResult) -> float | None:
    """The median in bits/s for a result the probe gives in bits too (`extra.bits_per_s`: net.tcp_bw); else None.

    8 x the pooled median, so it is the table's median, not one probe process's."""
    if r.unit != "bytes_per_s" or r.summary is None or "bits_per_s" not in (r.extra or {}):
        return None
    return None if math.isnan(r.summary.median) else 8 * r.summary.median


def bits_text(value: float) -> str:
    """A bit rate in SI units, 4 significant digits: 7.54e9 -> '7.54 Gbit/s'."""
    for unit, scale in (("Tbit/s", 1e12), ("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.4g} {unit}"
    return f"{value:.4g} bit/s"
