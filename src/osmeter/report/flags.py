"""Flags: what a figure cannot vouch for, shown next to it, with a legend.

A result's flags (model.BenchResult.flags) come from the probe
(`precision-unmet`, `calibration-timeout`, `not-pinned`, `tsc-unstable`)
and from osmeter (`unstable`, `repetition-failed`, `cache-edge`, `emulated`); docs/report.md,
"Flags", lists them (docs/statistics.md says how they are set). Every
output that shows a result or a comparison shows its flags (show, the
reports, compare, the exports) and, under the table, a legend of the flags
present: what each means and what to do. One text per flag, here, for all
of them. A flag's name as people read it (a cell, a badge, the legend) is cut
when long (textsafe.clip: a flag this osmeter does not know may be anything);
the exports keep it whole.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from typing import Iterable, Sequence

from .. import textsafe
from ..memlevels import CACHE_EDGE
from ..model import BenchResult
from ..records import EMULATED
from ..fmt import scale_of
from ..repeats import BIMODAL, UNSTABLE, UNSTABLE_SPREAD


@dataclass(frozen=True)
class Flag:
    name: str
    meaning: str  # what it says about the figure
    advice: str  # what to do about it


FLAGS: tuple[Flag, ...] = (
    Flag(
        "precision-unmet",
        "sampling stopped at its time or sample limit before the median reached its target precision "
        "(--target-rse), so its interval is wider than asked",
        "raise --max-time (or --max-samples), or quiet the machine",
    ),
    Flag(
        "calibration-timeout",
        "the batch size could not be calibrated within the time budget; the figure comes from uncalibrated batches",
        "raise --max-time",
    ),
    Flag(
        UNSTABLE,
        f"the repetitions' medians (fresh probe processes) differ by more than {UNSTABLE_SPREAD:.0%} "
        "(the % shown: largest / smallest - 1), more than a change compare would call significant",
        "close other programs, pin to an idle CPU with --cpu, and run again with more --repeat",
    ),
    Flag(
        BIMODAL,
        "the samples have two modes (the two values shown; docs/statistics.md, \"Two modes\"): the machine "
        "took one of two paths from one sample to the next, so the median is one of them or between",
        "look at the distribution (osmeter plot), and at what could switch (CPU placement, a cache, THP, "
        "frequency) before quoting one figure",
    ),
    Flag(
        "repetition-failed",
        "a repetition skipped or failed where another did not; the figures come from the others",
        "see the run's errors, then run it again",
    ),
    Flag(
        "not-pinned",
        "the probe could not pin itself to its CPU, so the scheduler may have moved it while timing",
        "give --cpu with a CPU this process may use (taskset, cpusets)",
    ),
    Flag(
        CACHE_EDGE,
        "a mem.latency size between the end of the last cache's plateau and memory, read off the run's own "
        "curve (docs/methods/mem.md, \"The last cache's edge\"): its latency depends on how much of a shared "
        "cache this run got (a virtual machine's slice of the L3, the neighbours' use of it), so it moves "
        "between identical runs, up to several times",
        "compare the plateaus (osmeter mem-levels) or the sizes outside the band, not one size inside it",
    ),
    Flag(
        "tsc-unstable",
        "timed with the TSC after the kernel marked it unstable: ticks may not be equal or in step across CPUs",
        "do not trust short timings; use --clock monotonic_raw, or fix the TSC (host, BIOS, clocksource)",
    ),
    Flag(
        EMULATED,
        "measured in a VM under TCG (qemu's emulator, no KVM): the figure is the emulator's cost of the operation, "
        "not the kernel's; it may rank kernels, never quote it as a kernel cost (docs/kernels.md)",
        "run osmeter kernels run where KVM works, or the kernel on bare metal (osmeter fleet run)",
    ),
)
BY_NAME = {f.name: f for f in FLAGS}
ORDER = {f.name: i for i, f in enumerate(FLAGS)}
SECTION = 'docs/report.md, "Flags"'


def spread_text(spread: float) -> str:
    """`13%`, `5.4%`: the repetitions' spread ('' when unknown)."""
    if spread is None or math.isnan(spread):
        return ""
    return f"{100 * spread:.1f}%" if spread < 0.1 else f"{100 * spread:.0f}%"


def ordered(flags: Iterable[str]) -> list[str]:
    """Known flags in the legend's order, then any other, once each."""
    unique = list(dict.fromkeys(flags))
    return sorted(unique, key=lambda f: ORDER.get(f, len(ORDER)))


def modes_text(r: BenchResult) -> str:
    """`1.6/1.9 µs`: a bimodal result's two modes in one step ('' without)."""
    s = r.summary
    if s is None or not s.bimodal:
        return ""
    scale = scale_of(s.mode_high, r.unit)
    low, high = scale.number(s.mode_low, 2), scale.number(s.mode_high, 2)
    if low == high:
        low, high = scale.number(s.mode_low, 3), scale.number(s.mode_high, 3)
    return f"{low}/{high} {scale.suffix}".rstrip()


def flag_words(r: BenchResult) -> list[str]:
    """The result's flags for a table cell: `unstable 13%` carries its spread, `bimodal 1.6/1.9 µs` its modes."""
    words = []
    for f in ordered(r.flags):
        said = spread_text(r.spread) if f == UNSTABLE else modes_text(r) if f == BIMODAL else ""
        words.append(f"{f} {said}" if said else textsafe.clip(f))
    return words


def flags_text(r: BenchResult) -> str:
    """`precision-unmet, unstable 13%`, or '' for a result without flags."""
    return ", ".join(flag_words(r))


def present(results: Iterable[BenchResult]) -> list[str]:
    """Every flag any of the results carries, in the legend's order."""
    return ordered(f for r in results for f in r.flags)


def describe(name: str) -> str:
    """`meaning; what to do` of one flag (an unknown flag is named as it is)."""
    f = BY_NAME.get(name)
    return f"{f.meaning}: {f.advice}" if f is not None else "a flag this osmeter does not know"


def legend(names: Sequence[str]) -> list[tuple[str, str]]:
    """(flag, `meaning: what to do`) for each flag named, in the legend's order (a long name cut)."""
    return [(textsafe.clip(n), describe(n)) for n in ordered(names)]


def legend_lines(names: Sequence[str], width: int = 120, indent: str = "  ", title: str = "flags") -> list[str]:
    """The legend as text lines, wrapped at `width` under the text column (empty without flags)."""
    entries = legend(names)
    if not entries:
        return []
    key = max(len(n) for n, _ in entries)
    hang = " " * (len(indent) + key + 2)
    lines = [f"{title} ({SECTION}):"]
    for n, text in entries:
        lines += textwrap.wrap(text, max(40, width), initial_indent=f"{indent}{n.ljust(key)}  ",
                               subsequent_indent=hang, break_on_hyphens=False)
    return lines
