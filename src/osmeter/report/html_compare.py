"""The HTML comparison page: the LEBench-style heatmap (instances × runs,
colour = change against the baseline), what differs between the runs, the
significant changes and the counters behind them. One self-contained file,
built with the same pieces and the same escaping as the report (html.py).
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

from ..compare import Comparison
from ..differences import Difference
from ..compare import sort_by_change as cmp_sorted
from ..model import RunInfo
from ..records import describe_instance, format_params
from ..sysinfo import KEY_KERNEL, machine_text
from .. import counters as ctr
from . import flags as fl
from . import names as nm
from . import plots
from .compare_narrow import narrow_heatmap_html
from .compare_table import CAVEAT_MARK, CountersOf, cell_title, change_text, changes_table, no_counters
from .html import esc, flag_legend_html, page, value_cell
from .names import run_subtitle, run_title
from .results_table import params_html
from .tables import Cell, Column, Row, Table, to_html
from ..fmt import fmt_num

def run_column_label(run: RunInfo) -> str:
    label = run.label or machine_text(run.machine, KEY_KERNEL) or ""
    return f"#{run.id} {label}".strip()


def _no_link(c: Comparison) -> str | None:
    return None


def _heat_cell(c: Comparison | None, counters_of: CountersOf = no_counters,
               link_of: Callable[[Comparison], str | None] = _no_link) -> str:
    if c is None:
        return '<td class="cell missing" title="not in this run">–</td>'
    title = esc(cell_title(c, counters_of(c)))
    if math.isnan(c.ratio):
        return f'<td class="cell missing" title="{title}">n/a</td>'
    colour = plots.heat_colour(c.worse) if c.significant else plots.GREY
    cls = "cell" if c.significant else "cell ns"
    mark = ""
    if c.caveat or c.noise:  # a flagged figure behind the verdict, or below the noise: marked, named in the title
        cls += " caveat"
        mark = f'<span class="mark">{CAVEAT_MARK}</span>'
    text = plots.percent_text(c.change)
    target = link_of(c) if c.significant else None
    if target:  # compare --explain: the cell links into its explanation, whose <details> the browser opens
        text = f'<a href="#{target}">{text}</a>'
    return f'<td class="{cls}" style="background:{colour}" title="{title}">{text}{mark}</td>'


COUNTER_DELTA_COLUMNS = (("benchmark", False), ("params", False), ("run", True), ("time change", True),
                         ("counter", False), ("unit", False), ("baseline", True), ("run value", True), ("ratio", True),
                         ("change", True))


def counter_deltas_html(comparisons: Sequence[Comparison], counters_of: CountersOf, notes: Sequence[str]) -> str:
    """Every counter counted in both runs of a comparison, next to the change of the time."""
    rows = []
    for c in comparisons:
        for d in counters_of(c):
            mark = "~" if d.multiplexed else ""
            rows.append(Row((Cell(c.bench, css="mono"), Cell(format_params(c.params), html=params_html(dict(c.params)),
                                                           css="mono params"),
                             Cell(str(c.run_id)), Cell(change_text(c)), Cell(d.name, css="mono"),
                             Cell(ctr.unit_label(d.unit)), Cell(mark + fmt_num(d.baseline)),
                             Cell(mark + fmt_num(d.value)), Cell(ctr.ratio_text(d)), Cell(ctr.change_text(d)))))
    if not rows and not notes:
        return ""
    parts = [
        "<h2>Performance counters</h2>",
        '<p class="muted">For each compared instance, every counter both runs counted (osmeter run --counters), '
        "per operation: baseline, run, ratio and change, next to the change of the median time. "
        "A counter is one total per run, so it has no interval. task-clock is CPU time per operation, "
        "not latency; ~ marks a multiplexed, scaled value.</p>",
    ]
    if rows:
        parts.append(
            to_html(Table(tuple(Column(h, r) for h, r in COUNTER_DELTA_COLUMNS), tuple(rows),
                          'id="counter-deltas" class="counter-deltas"'))
        )
    if notes:
        parts.append('<ul class="counter-notes">' + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    return "\n".join(parts)


def differences_html(runs: Sequence[RunInfo], differences: Sequence[Difference], max_columns: int = 8) -> str:
    if not differences:
        return '<p class="muted">The runs\' machine descriptions, suites and options are identical.</p>\n'
    if len(runs) <= max_columns:
        columns = (Column(""),) + tuple(Column(run_column_label(r) + (" (baseline)" if i == 0 else ""))
                                         for i, r in enumerate(runs))
        rows = tuple(Row((Cell(d.key, css="key mono"), *(value_cell(v) for v in d.values))) for d in differences)
        return to_html(Table(columns, rows, 'class="differences"'))
    grouped = []
    for d in differences:
        groups: dict[str, list[str]] = {}
        for r, v in zip(runs, d.values):
            groups.setdefault(v, []).append(str(r.id))
        lines = [f"{v}  (run{'s' if len(ids) > 1 else ''} {', '.join(ids)})" for v, ids in groups.items()]
        text = "\n".join(lines)
        folded = (f"<details><summary>{len(lines)} different values</summary>{esc(text)}</details>"
                  if len(lines) > 12 else None)
        grouped.append(Row((Cell(d.key, css="key mono"), Cell(text, html=folded, css="value"))))
    return to_html(Table((Column(""), Column("values (runs)")), tuple(grouped), 'class="differences"'))


InstanceKey = tuple[str, str]  # (bench, params as text)


def _instances(comparisons: Sequence[Comparison], labels: nm.InstanceLabels
               ) -> tuple[list[InstanceKey], dict[InstanceKey, dict[int, Comparison]], dict[InstanceKey, str]]:
    """The heatmap's rows in order, each one's comparisons by run, and the name each row shows."""
    by_key: dict[InstanceKey, dict[int, Comparison]] = {}
    order: list[InstanceKey] = []
    names: dict[InstanceKey, str] = {}
    for c in labels.sort(comparisons, lambda c: (c.bench, c.params)):
        key = (c.bench, format_params(c.params))
        if key not in by_key:
            by_key[key] = {}
            order.append(key)
            names[key] = labels.shown(c.bench, c.params) or labels.instance(c.bench, c.params)
        by_key[key][c.run_id] = c
    return order, by_key, names


def _heatmap_html(comparisons: Sequence[Comparison], others: Sequence[RunInfo], counters: CountersOf,
                  labels: nm.InstanceLabels, link_of: Callable[[Comparison], str | None] = _no_link) -> str:
    """The heatmap table: a row per instance, a column per run compared with the baseline
    (one run: compare_narrow's table, its medians and a bar beside the change)."""
    order, by_key, names = _instances(comparisons, labels)
    if len(others) == 1:
        full = {key: describe_instance(key[0], {}) + (f" {key[1]}" if key[1] else "") for key in order}
        narrow = [(names[key], full[key] if full[key] != names[key] else "", by_key[key].get(others[0].id))
                  for key in order]
        return narrow_heatmap_html(narrow, others[0], run_column_label(others[0]),
                                   lambda c: _heat_cell(c, counters, link_of))
    head = "".join(f'<th class="run" title="{esc(run_subtitle(r))}">{esc(run_column_label(r))}</th>' for r in others)
    rows = []
    for key in order:
        shown = names[key]
        full = describe_instance(key[0], {}) + (f" {key[1]}" if key[1] else "")
        hover = f' title="{esc(full)}"' if shown != full else ""
        cells = "".join(_heat_cell(by_key[key].get(r.id), counters, link_of) for r in others)
        rows.append(f'<tr><th class="bench mono"{hover}>{esc(shown)}</th>{cells}</tr>\n')
    return (f'<div class="scroll"><table class="heatmap" id="heatmap"><thead><tr><th class="corner"></th>{head}</tr></thead>'
            f"<tbody>\n{''.join(rows)}</tbody></table></div>")


def _legend_html(caveat_names: Sequence[str]) -> str:
    return (
        '<div class="legend"><span>faster / better</span><span class="bar"></span><span>slower / worse</span>'
        f'<span><span class="swatch" style="background:{plots.GREY}"></span>no significant change</span>'
        '<span><span class="swatch" style="background:#fff;border:1px solid #ccc"></span>– not in that run</span>'
        + (f'<span><span class="mark">{CAVEAT_MARK}</span> dashed: a flagged figure behind the cell (hover)</span>'
           if caveat_names else "")
        + "</div>"
    )


def _changes_html(significant: Sequence[Comparison], counters: CountersOf, labels: nm.InstanceLabels) -> str:
    """The significant changes, worst first, as a table (or a sentence when there are none)."""
    if not significant:
        return '<p class="muted">None: no benchmark changed by more than the noise threshold with an interval excluding 1.</p>'
    worst_first = sorted(significant, key=lambda c: -c.worse)
    return to_html(changes_table(worst_first, labels, counters, indented=False, attrs='class="changes"'))


def _counts_html(comparisons: Sequence[Comparison], threshold: float, method: str) -> str:
    """The line under the title: how many comparisons, how many significant, and how they were made."""
    significant = [c for c in comparisons if c.significant]
    slower = sum(1 for c in significant if c.worse > 0)
    with_caveat = sum(1 for c in significant if c.caveat)
    by_reps = sum(1 for c in comparisons if c.method == "repetitions")
    method_note = (
        f" The intervals of {by_reps} of them come from the runs' repetitions (the spread between probe "
        "processes), the others from each run's samples."
        if by_reps
        else ""
    )
    return (
        f'<p class="sub">{len(comparisons)} comparisons; {len(significant)} significant '
        f"({slower} worse, {len(significant) - slower} better; {with_caveat} with a caveat). Method: {esc(method)}; "
        f"noise threshold {100 * threshold:g} %.{esc(method_note)}</p>"
    )


def render_comparison(
    runs: Sequence[RunInfo],
    comparisons: Sequence[Comparison],
    differences: Sequence[Difference],
    threshold: float,
    method: str,
    not_compared: Sequence[str] = (),
    counters: CountersOf = no_counters,
    counter_notes: Sequence[str] = (),
    labels: nm.InstanceLabels | None = None,
    explanations: str = "",
    link_of: Callable[[Comparison], str | None] = _no_link,
) -> str:
    """The LEBench-style heatmap page: instances × runs, colour = change against the baseline.

    `counters(c)` gives the counter deltas of a comparison: they show when
    hovering its cell, next to each significant change, and in their own table.
    A cell whose verdict carries a caveat (a flagged figure on either side) is
    marked and says why when hovered; `labels` (--names lebench) names and
    orders the rows as LEBench's table."""
    labels = labels or nm.InstanceLabels(None)
    baseline, others = runs[0], runs[1:]
    title = f"osmeter compare: {len(others)} run(s) against run {baseline.id}"
    caveat_names = fl.ordered(f for c in comparisons for f in c.caveat.split(", ") if f)
    parts = [
        f"<h1>{esc(title)}</h1>",
        f'<p class="sub">Baseline: {esc(run_title(baseline))}, {esc(run_subtitle(baseline))}.</p>',
        _counts_html(comparisons, threshold, method),
        "<h2>What differs between the runs</h2>",
        differences_html(runs, differences),
        "<h2>Change against the baseline</h2>",
        '<p class="muted">Each cell: the change of the median in % (for a rate such as bytes/s a rise is better). '
        "Red: worse, green: better, deeper for larger changes (full colour at 2×); grey: the 95 % interval "
        "includes no change or the change is within the noise threshold. Hover a cell for the interval.</p>",
        _legend_html(caveat_names),
        _heatmap_html(comparisons, others, counters, labels, link_of),
        flag_legend_html(caveat_names),
        explanations,
        "<h2>Significant changes</h2>",
        _changes_html([c for c in comparisons if c.significant], counters, labels),
    ]
    from .compare_stats import stat_sections_html

    extra = stat_sections_html(comparisons, others, labels, threshold, _instances, run_column_label)
    if extra:
        parts.append(extra)
    deltas = counter_deltas_html(cmp_sorted(comparisons), counters, counter_notes)
    if deltas:
        parts.append(deltas)
    if not_compared:
        items = "".join(f"<li>{esc(n)}</li>" for n in not_compared)
        parts.append(f"<h2>Not compared</h2>\n<ul>{items}</ul>")
    return page(title, "\n".join(parts))
