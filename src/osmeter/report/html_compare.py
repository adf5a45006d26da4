"""The HTML comparison page: the LEBench-style heatmap (instances × runs,
colour = change against the baseline), what differs between the runs, the
significant changes and the counters behind them. One self-contained file,
built with the same pieces and the same escaping as the report (html.py).
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

from ..compare import Comparison, Difference
from ..compare import sort_by_change as cmp_sorted
from ..model import RunInfo
from ..records import describe_instance, format_params
from ..sysinfo import KEY_KERNEL, machine_text
from .. import counters as ctr
from . import flags as fl
from . import names as nm
from . import plots
from .html import _table, _value_cell, esc, flag_legend_html, page, params_html, run_subtitle, run_title
from ..fmt import fmt_num

def run_column_label(run: RunInfo) -> str:
    label = run.label or machine_text(run.machine, KEY_KERNEL) or ""
    return f"#{run.id} {label}".strip()


CountersOf = Callable[[Comparison], Sequence[ctr.CounterDelta]]


def _no_counters(c: Comparison) -> Sequence[ctr.CounterDelta]:
    return ()


def counter_delta_text(d: ctr.CounterDelta) -> str:
    """`task-clock ns/op 147.5 → 160.2 (+8.6%)`: baseline first."""
    mark = "~" if d.multiplexed else ""
    return f"{d.label} {mark}{fmt_num(d.baseline)} → {mark}{fmt_num(d.value)} ({ctr.change_text(d)})"


def _cell_title(c: Comparison, deltas: Sequence[ctr.CounterDelta] = ()) -> str:
    text = (
        f"{describe_instance(c.bench, c.params)}\nrun {c.run_id} vs baseline {c.baseline_id}\n"
        f"median {fmt_num(c.median)} vs {fmt_num(c.baseline_median)} {c.unit or ''}\n"
        f"ratio {c.ratio:.4f}, 95% CI {c.ci_low:.4f} .. {c.ci_high:.4f} ({c.method})\n{c.verdict}"
    )
    if c.stats:
        from .compare_stats import stat_line

        text += "".join(f"\n{stat_line(st)}" for st in c.stats)
    if c.caveat:
        text += f"\ncaveat: {c.caveat}\n" + "\n".join(
            f"{name}: {meaning}" for name, meaning in fl.legend(c.caveat.split(", "))
        )
    if deltas:
        text += "\ncounters (baseline → run):\n" + "\n".join(counter_delta_text(d) for d in deltas)
    return text


def change_text(c: Comparison) -> str:
    return "n/a" if math.isnan(c.ratio) else f"{100 * c.change:+.1f}%"


CAVEAT_MARK = "!"  # after a heatmap cell's change: a figure behind it carries a flag


def _heat_cell(c: Comparison | None, counters_of: CountersOf = _no_counters) -> str:
    if c is None:
        return '<td class="cell missing" title="not in this run">–</td>'
    title = esc(_cell_title(c, counters_of(c)))
    if math.isnan(c.ratio):
        return f'<td class="cell missing" title="{title}">n/a</td>'
    colour = plots.heat_colour(c.worse) if c.significant else plots.GREY
    cls = "cell" if c.significant else "cell ns"
    mark = ""
    if c.caveat:  # a figure behind the verdict is flagged: marked, and named in the title
        cls += " caveat"
        mark = f'<span class="mark">{CAVEAT_MARK}</span>'
    return f'<td class="{cls}" style="background:{colour}" title="{title}">{plots.percent_text(c.change)}{mark}</td>'


def counter_deltas_html(comparisons: Sequence[Comparison], counters_of: CountersOf, notes: Sequence[str]) -> str:
    """Every counter counted in both runs of a comparison, next to the change of the time."""
    rows = []
    for c in comparisons:
        for d in counters_of(c):
            mark = "~" if d.multiplexed else ""
            rows.append(
                f'<tr><td class="mono">{esc(c.bench)}</td><td class="mono params">{params_html(dict(c.params))}</td>'
                f'<td class="num">{c.run_id}</td><td class="num">{change_text(c)}</td>'
                f'<td class="mono">{esc(d.name)}</td><td>{esc(ctr.unit_label(d.unit))}</td>'
                f'<td class="num">{mark}{fmt_num(d.baseline)}</td><td class="num">{mark}{fmt_num(d.value)}</td>'
                f'<td class="num">{ctr.ratio_text(d)}</td><td class="num">{ctr.change_text(d)}</td></tr>\n'
            )
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
            _table(
                (("benchmark", False), ("params", False), ("run", True), ("time change", True), ("counter", False),
                 ("unit", False), ("baseline", True), ("run value", True), ("ratio", True), ("change", True)),
                rows,
                'id="counter-deltas" class="counter-deltas"',
            )
        )
    if notes:
        parts.append('<ul class="counter-notes">' + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    return "\n".join(parts)


def differences_html(runs: Sequence[RunInfo], differences: Sequence[Difference], max_columns: int = 8) -> str:
    if not differences:
        return '<p class="muted">The runs\' machine descriptions, suites and options are identical.</p>\n'
    if len(runs) <= max_columns:
        headers = [("", False)] + [(run_column_label(r) + (" (baseline)" if i == 0 else ""), False) for i, r in enumerate(runs)]
        rows = [
            f'<tr><td class="key mono">{esc(d.key)}</td>'
            + "".join(_value_cell(v) for v in d.values)
            + "</tr>\n"
            for d in differences
        ]
        return _table(headers, rows, 'class="differences"')
    rows = []
    for d in differences:
        groups: dict[str, list[str]] = {}
        for r, v in zip(runs, d.values):
            groups.setdefault(v, []).append(str(r.id))
        lines = [f"{v}  (run{'s' if len(ids) > 1 else ''} {', '.join(ids)})" for v, ids in groups.items()]
        if len(lines) <= 12:
            cell = f'<td class="value">{esc(chr(10).join(lines))}</td>'
        else:
            cell = (f'<td class="value"><details><summary>{len(lines)} different values</summary>'
                    f"{esc(chr(10).join(lines))}</details></td>")
        rows.append(f'<tr><td class="key mono">{esc(d.key)}</td>{cell}</tr>\n')
    return _table((("", False), ("values (runs)", False)), rows, 'class="differences"')


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
            names[key] = labels.shown(c.bench, c.params) or describe_instance(key[0], {}) + (
                f" {key[1]}" if key[1] else ""
            )
        by_key[key][c.run_id] = c
    return order, by_key, names


def _heatmap_html(comparisons: Sequence[Comparison], others: Sequence[RunInfo], counters: CountersOf,
                  labels: nm.InstanceLabels) -> str:
    """The heatmap table: a row per instance, a column per run compared with the baseline."""
    order, by_key, names = _instances(comparisons, labels)
    head = "".join(f'<th class="run" title="{esc(run_subtitle(r))}">{esc(run_column_label(r))}</th>' for r in others)
    rows = []
    for key in order:
        shown = names[key]
        full = describe_instance(key[0], {}) + (f" {key[1]}" if key[1] else "")
        hover = f' title="{esc(full)}"' if shown != full else ""
        cells = "".join(_heat_cell(by_key[key].get(r.id), counters) for r in others)
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


def _change_row(c: Comparison, counters: CountersOf, with_counters: bool, labels: nm.InstanceLabels) -> str:
    """One significant change: the medians, the change, its interval, the verdict (and counters)."""
    verdict = c.verdict
    counter_cell = (
        f'<td class="counters">{esc(chr(10).join(counter_delta_text(d) for d in counters(c)))}</td>'
        if with_counters
        else ""
    )
    caveat = "".join(
        f' <span class="flag" title="{esc(fl.describe(f))}">{esc(f)}</span>' for f in c.caveat.split(", ") if f
    )
    lead_cell = f"<td>{esc(labels.shown(c.bench, c.params) or '')}</td>" if labels.names is not None else ""
    return (
        f'<tr>{lead_cell}<td class="mono">{esc(c.bench)}</td><td class="mono">{esc(format_params(c.params))}</td>'
        f'<td class="num">{c.run_id}</td><td class="num">{fmt_num(c.baseline_median)}</td>'
        f'<td class="num">{fmt_num(c.median)}</td><td>{esc(c.unit or "")}</td>'
        f'<td class="num">{change_text(c)}</td><td class="num">{c.ci_low:.3f} – {c.ci_high:.3f}</td>'
        f'<td><span class="badge {esc(verdict)}">{esc(verdict)}</span>{caveat}</td>{counter_cell}</tr>\n'
    )


def _changes_html(significant: Sequence[Comparison], counters: CountersOf, labels: nm.InstanceLabels) -> str:
    """The significant changes, worst first, as a table (or a sentence when there are none)."""
    with_counters = any(counters(c) for c in significant)  # a column for them only when there are some
    table_rows = [_change_row(c, counters, with_counters, labels)
                  for c in sorted(significant, key=lambda c: -c.worse)]
    if not table_rows:
        return '<p class="muted">None: no benchmark changed by more than the noise threshold with an interval excluding 1.</p>'
    change_headers: tuple[tuple[str, bool], ...] = (("LEBench row", False),) if labels.names is not None else ()
    change_headers += (("benchmark", False), ("params", False), ("run", True), ("baseline median", True),
                       ("median", True), ("unit", False), ("change", True), ("95% CI of ratio", True),
                       ("verdict", False))
    if with_counters:
        change_headers += (("counters per operation (baseline → run)", False),)
    return _table(change_headers, table_rows, 'class="changes"')


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
    counters: CountersOf = _no_counters,
    counter_notes: Sequence[str] = (),
    labels: nm.InstanceLabels | None = None,
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
        _heatmap_html(comparisons, others, counters, labels),
        flag_legend_html(caveat_names),
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
