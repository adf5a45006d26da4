"""The pairwise comparison's table, defined once (report.tables) for the
terminal (`osmeter compare`) and the comparison page (its table of
significant changes), and the words its cells and hovers share with the
heatmaps: a change, a verdict with its caveat, a counter's delta.

A row is one compared instance: its benchmark and parameters, the run, the
baseline's and the run's medians (both in the baseline's unit step: 2.664 ms
and 2.620 ms, fmt.scale_of), the ratio of medians with its 95 %
interval, the change and the verdict (with the flags that qualify it). The
terminal puts the maximum/variance tests and the counters as indented rows
under their instance; the page has those in sections of their own, and the
counters in a last column.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

from .. import counters as ctr
from ..compare import Comparison
from ..fmt import fmt_num, scale_of
from ..records import describe_instance, format_params
from . import compare_stats as cs
from . import flags as fl
from . import names as nm
from .escaping import esc
from .tables import Cell, Column, Row, Table

HEADERS = ("benchmark", "params", "run", "baseline", "median", "ratio", "95% CI", "change", "verdict")
RIGHT = (False, False, True, True, True, True, True, True, False)
LEAD = "LEBench row"
COUNTERS = "counters per operation (baseline → run)"
CAVEAT_MARK = "!"  # after a heatmap cell's change: a figure behind it carries a flag

NOISE_TITLE = ("a significant change smaller than the smallest change this machine resolved for the instance in "
               "its A/A test (osmeter noise; docs/compare.md, 'What this machine can resolve')")

CountersOf = Callable[[Comparison], Sequence[ctr.CounterDelta]]


def no_counters(c: Comparison) -> Sequence[ctr.CounterDelta]:
    return ()


def change_text(c: Comparison) -> str:
    return "n/a" if math.isnan(c.ratio) else f"{100 * c.change:+.1f}%"


def verdict_text(c: Comparison) -> str:
    """`slower [precision-unmet, unstable]`: the verdict with the flags that qualify it, then the
    noise caveat (osmeter noise) when it has one: `slower [below this machine's noise (...)]`."""
    text = f"{c.verdict} [{c.caveat}]" if c.caveat else c.verdict
    return f"{text} [{c.noise}]" if c.noise else text


def counter_delta_text(d: ctr.CounterDelta) -> str:
    """`task-clock ns/op 147.5 → 160.2 (+8.6%)`: baseline first."""
    mark = "~" if d.multiplexed else ""
    return f"{d.label} {mark}{fmt_num(d.baseline)} → {mark}{fmt_num(d.value)} ({ctr.change_text(d)})"


def cell_title(c: Comparison, deltas: Sequence[ctr.CounterDelta] = (), instance: str | None = None) -> str:
    """A heatmap cell's hover text: the instance (`instance`: its description, when the caller has it),
    both medians, the ratio and its interval, the verdict."""
    text = (
        f"{instance if instance is not None else describe_instance(c.bench, c.params)}\n"
        f"run {c.run_id} vs baseline {c.baseline_id}\n"
        f"median {_medians(c)[1]} vs {_medians(c)[0]}\n"
        f"ratio {c.ratio:.4f}, 95% CI {c.ci_low:.4f} .. {c.ci_high:.4f} ({c.method})\n{c.verdict}"
    )
    if c.stats:
        text += "".join(f"\n{cs.stat_line(st)}" for st in c.stats)
    caveat = c.caveat
    if caveat:
        text += f"\ncaveat: {caveat}\n" + "\n".join(
            f"{name}: {meaning}" for name, meaning in fl.legend(caveat.split(", "))
        )
    if c.noise:
        text += f"\ncaveat: {c.noise}"
    if deltas:
        text += "\ncounters (baseline → run):\n" + "\n".join(counter_delta_text(d) for d in deltas)
    return text


def _verdict_html(c: Comparison) -> str:
    caveat = "".join(
        f' <span class="flag" title="{esc(fl.describe(f))}">{esc(f)}</span>' for f in c.caveat.split(", ") if f
    )
    if c.noise:
        caveat += f' <span class="flag noise" title="{esc(NOISE_TITLE)}">{esc(c.noise)}</span>'
    return f'<span class="badge {esc(c.verdict)}">{esc(c.verdict)}</span>{caveat}'


def _medians(c: Comparison) -> tuple[str, str]:
    """The baseline's and the run's medians, both in the baseline's unit step: ('2.664 ms', '2.620 ms')."""
    scale = scale_of(c.baseline_median, c.unit)
    return scale(c.baseline_median), scale(c.median)


def comparison_cells(c: Comparison, labels: nm.InstanceLabels | None = None) -> tuple[Cell, ...]:
    """One compared instance in HEADERS' columns (its parameters: `labels`' telling ones)."""
    nan = math.isnan(c.ratio)
    ci = "-" if math.isnan(c.ci_low) else f"{c.ci_low:.3f}..{c.ci_high:.3f}"
    baseline, median = _medians(c)
    return (
        Cell(c.bench, css="mono"),
        Cell(format_params(labels.params(c.bench, c.params) if labels is not None else c.params), css="mono"),
        Cell(str(c.run_id)),
        Cell(baseline),
        Cell(median),
        Cell("-" if nan else f"{c.ratio:.3f}"),
        Cell(ci, md=f"{c.ci_low:.3f} – {c.ci_high:.3f}"),
        Cell("-" if nan else f"{100 * c.change:+.1f}%", md=change_text(c)),
        Cell(verdict_text(c), html=_verdict_html(c)),
    )


def _plain(texts: Sequence[str], lead: bool) -> Row:
    return Row(tuple(Cell(t) for t in ([""] if lead else []) + list(texts)))


def counter_rows(deltas: Sequence[ctr.CounterDelta]) -> list[list[str]]:
    """The counters of one comparison as indented rows under it, in HEADERS' columns."""
    rows = []
    for d in deltas:
        mark, unit = "~" if d.multiplexed else "", ctr.unit_label(d.unit)
        rows.append([f"  {d.name}", "", "", f"{mark}{fmt_num(d.baseline)} {unit}".rstrip(),
                     f"{mark}{fmt_num(d.value)} {unit}".rstrip(), ctr.ratio_text(d), "", ctr.change_text(d), ""])
    return rows


def changes_table(comparisons: Sequence[Comparison], labels: nm.InstanceLabels, counters: CountersOf = no_counters,
                  indented: bool = True, attrs: str = "") -> Table:
    """A row per comparison, in the order given. `indented` (the terminal): each one's max/variance
    tests and counters as rows under it; else (the page) its counters in a last column, when any."""
    lead = labels.names is not None
    column = not indented and any(counters(c) for c in comparisons)
    rows: list[Row] = []
    for c in comparisons:
        cells = ((Cell(labels.shown(c.bench, c.params) or ""),) if lead else ()) + comparison_cells(c, labels)
        if column:
            cells += (Cell("\n".join(counter_delta_text(d) for d in counters(c)), css="counters"),)
        rows.append(Row(cells))
        if indented:
            rows += [_plain(r, lead) for r in cs.stat_rows(c)]
            rows += [_plain(r, lead) for r in counter_rows(counters(c))]
    columns = ((Column(LEAD),) if lead else ()) + tuple(Column(h, r) for h, r in zip(HEADERS, RIGHT))
    if column:
        columns += (Column(COUNTERS),)
    return Table(columns, tuple(rows), attrs)
