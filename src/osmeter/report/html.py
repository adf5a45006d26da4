"""The HTML report and the HTML comparison heatmap: one self-contained file each.

Pure functions from gathered content (content.RunReport, compare results)
to text. Every string from a run goes through esc() (html.escape, quotes
included, controls and bidi overrides removed); the page has no script, so
no text can end one; figures are inline SVG (matplotlib escapes its text); the
CSS is in the template; nothing refers to a URL, so the page opens offline
and makes no request.
"""

from __future__ import annotations

import html
import math
import re
from datetime import datetime, timezone
from importlib import resources
from string import Template
from typing import Any, Callable, Sequence

from .. import __version__, textsafe
from ..compare import Comparison, Difference
from ..compare import sort_by_change as cmp_sorted
from ..lebench import RowNames
from ..model import BenchResult, RunInfo
from ..records import describe_instance, format_params
from ..sysinfo import KEY_HOSTNAME, KEY_KERNEL, machine_text
from ..warnings import CodedWarning
from . import counters as ctr
from . import flags as fl
from . import names as nm
from . import plots
from . import summary as sm
from .content import RunReport, Row, machine_rows, ratio_text, setup_rows
from .table import fmt_num, fmt_percent

WIDE_FIGURE_IN = 4.5  # inches: a taller distribution figure gets the page's whole width
LONG_VALUE = 240  # characters: a longer machine value is folded into <details>
HIGH_CV = 0.05
NUM_ATTR = ' class="num"'


def esc(value: Any) -> str:
    """Any text in the page, attributes included: HTML-escaped (quotes too), without the controls
    and bidi overrides that have no place in a page and could make it lie (osmeter.textsafe)."""
    return html.escape(textsafe.terminal(str(value)), quote=True)


def _template() -> Template:
    text = (resources.files("osmeter.report") / "templates" / "report.html").read_text(encoding="utf-8")
    return Template(text)


def page(title: str, body: str) -> str:
    return _template().substitute(title=esc(title), body=body, version=esc(__version__))


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "x"


def run_title(run: RunInfo) -> str:
    label = f" “{run.label}”" if run.label else ""
    return f"Run {run.id}{label}"


def run_subtitle(run: RunInfo) -> str:
    host = machine_text(run.machine, KEY_HOSTNAME) or "unknown host"
    kernel = machine_text(run.machine, KEY_KERNEL) or "unknown kernel"
    suite = f"{run.suite} suite" if run.suite else "selected benchmarks"
    return f"{suite} on {host}, Linux {kernel}, started {run.start_time}"


# --- pieces -----------------------------------------------------------------


def _table(headers: Sequence[tuple[str, bool]], rows: Sequence[str], attrs: str = "") -> str:
    head = "".join(f"<th{NUM_ATTR if num else ''}>{esc(h)}</th>" for h, num in headers)
    return (
        f'<div class="scroll"><table {attrs}><thead><tr>{head}</tr></thead>'
        f"<tbody>\n{''.join(rows)}</tbody></table></div>\n"
    )


def _value_cell(text: str) -> str:
    if len(text) <= LONG_VALUE:
        return f'<td class="value">{esc(text)}</td>'
    first = text.splitlines()[0] if "\n" in text else text
    short = first[:90].rstrip() + " …"
    return f'<td class="value"><details><summary>{esc(short)}</summary>{esc(text)}</details></td>'


def _pair_rows(rows: Sequence[Row]) -> list[str]:
    return [
        f'<tr><td class="key mono">{esc(r.key)}</td>{_value_cell(r.value)}<td class="help">{esc(r.help)}</td></tr>\n'
        for r in rows
    ]


def warnings_html(warnings: Sequence[CodedWarning], failures: Sequence[Any] = ()) -> str:
    if not warnings and not failures:
        return '<p class="muted">No warnings: nothing osmeter checks for looked wrong.</p>\n'
    items = [
        f'<li><span class="code">{esc(w.code)}</span>{esc(w.message)}.'
        f'<span class="advice">{esc(w.advice)}</span></li>'
        for w in warnings
    ]
    items += [
        f'<li class="failure"><span class="code">figure-failed</span>the {esc(f.family)} figures could not be drawn: '
        f'{esc(f.message)}<span class="advice">This is a bug in osmeter; the numbers above are unaffected.</span></li>'
        for f in failures
    ]
    return '<ul class="warnings">\n' + "\n".join(items) + "\n</ul>\n"


def _status_badge(status: str) -> str:
    return f'<span class="badge {esc(status)}">{esc(status)}</span>'


def params_html(params: dict[str, Any]) -> str:
    """key=value pairs that wrap between pairs, never inside one."""
    return " ".join(f'<span class="p">{esc(format_params({k: params[k]}))}</span>' for k in sorted(params))


def _flag_badges(r: BenchResult) -> str:
    """The result's flags as badges, each with what it means as its title."""
    out = []
    for f, word in zip(fl.ordered(r.flags), fl.flag_words(r)):
        out.append(f'<span class="flag" title="{esc(fl.describe(f))}">{esc(word)}</span>')
    return " ".join(out)


def summary_headers(results: Sequence[BenchResult], names: RowNames | None = None) -> list[tuple[str, bool]]:
    """The summary table's columns: LEBench row (--names lebench), R (when the instances had
    different numbers of repetitions) and flags (when any result is flagged) only when needed."""
    wanted = (
        ("LEBench row", False, names is not None),
        ("benchmark", False, True),
        ("params", False, True),
        ("median", True, True),
        ("95% CI of median", True, True),
        ("ref cycles", True, any(sm.ref_cycles(r) is not None for r in results)),
        ("best", True, True),
        ("lebench_kbest" if names is None else "k-best", True, True),
        ("average", True, names is not None),
        ("CV %", True, True),
        ("n", True, True),
        ("R", True, sm.needs_r_column(results)),
        ("outliers", True, True),
        ("unit", False, True),
        ("status", False, True),
        ("flags", False, any(r.flags for r in results)),
    )
    return [(h, num) for h, num, keep in wanted if keep]


def summary_rows(results: Sequence[BenchResult], anchors: dict[str, str], names: RowNames | None = None) -> list[str]:
    with_r = sm.needs_r_column(results)
    with_flags = any(r.flags for r in results)
    with_cycles = any(sm.ref_cycles(r) is not None for r in results)
    rows = []
    for row_name, r in nm.labelled(results, names):
        name = esc(r.bench)
        if r.bench in anchors:
            name = f'<a href="#{anchors[r.bench]}">{name}</a>'
        lead = f"<td>{esc(row_name or '')}</td>" if names is not None else ""
        params = params_html(r.params)
        flags = f"<td>{_flag_badges(r)}</td>" if with_flags else ""
        cls = ' class="flagged"' if r.flags else ""
        s = r.summary
        if s is None:
            span = 7 + (1 if names is not None else 0) + (1 if with_r else 0) + (1 if with_cycles else 0)
            rows.append(
                f'<tr{cls}>{lead}<td class="mono">{name}</td><td class="mono params">{params}</td>'
                f'<td class="reason" colspan="{span}">{esc(r.reason or "")}</td>'
                f"<td>{esc(r.unit or '')}</td><td>{_status_badge(r.status)}</td>{flags}</tr>\n"
            )
            continue
        kbest = fmt_num(s.lebench_kbest) + ("" if s.kbest_stable else "*")
        cv_class = "num hot" if s.cv > HIGH_CV else "num"
        average = f'<td class="num">{fmt_num(s.mean)}</td>' if names is not None else ""
        reps = f'<td class="num">{sm.repetitions(r)}</td>' if with_r else ""
        rows.append(
            f'<tr{cls}>{lead}<td class="mono">{name}</td><td class="mono params">{params}</td>'
            f'<td class="num">{fmt_num(s.median)}</td>'
            f'<td class="num">{fmt_num(s.ci_low)} – {fmt_num(s.ci_high)}</td>'
            + (f'<td class="num">{sm.ref_cycles_text(r)}</td>' if with_cycles else "")
            + f'<td class="num">{fmt_num(sm.best(r))}</td>'
            f'<td class="num">{kbest}</td>{average}'
            f'<td class="{cv_class}">{fmt_percent(s.cv)}</td>'
            f'<td class="num">{s.n}</td>{reps}'
            f'<td class="num">{s.outliers}</td>'
            f"<td>{esc(r.unit or '')}</td><td>{_status_badge(r.status)}</td>{flags}</tr>\n"
        )
    return rows


def flag_legend_html(names: Sequence[str]) -> str:
    """What each flag shown means and what to do ('' without flags)."""
    entries = fl.legend(names)
    if not entries:
        return ""
    items = "".join(f'<li><span class="flag">{esc(n)}</span> {esc(text)}.</li>' for n, text in entries)
    return (f'<p class="muted">Flags ({esc(fl.SECTION)}): what each means and what to do.</p>\n'
            f'<ul class="flags">{items}</ul>\n')


def _counter_title(c: ctr.CounterValue, ops: int | None) -> str:
    """Hover text of a counter cell: where the value per operation comes from."""
    text = f"{c.name}: {fmt_num(c.value)} {ctr.unit_label(c.unit)}"
    if c.total is not None and ops:
        total = f"{c.total:.0f}" if c.total.is_integer() else fmt_num(c.total)
        text += f" = {total} over {ops} operations"
    if c.multiplexed and c.running is not None:
        text += f"; counted {100 * c.running:.0f} % of the time and scaled"
    return text


def counters_html(report: RunReport) -> str:
    """The counters of the run's results as their own table, then what could not be counted (once)."""
    measured = ctr.with_counters([r for _, r in nm.labelled(report.results, report.names)])
    if not measured:
        return ""
    cols = ctr.columns(measured)
    parts = [
        f"<h3>{esc(ctr.HEADING)}</h3>",
        f'<p class="muted">{esc(ctr.EXPLAIN)} Hover a value for the total it comes from.</p>',
    ]
    if cols:
        head = "<th>benchmark</th><th>params</th>" + "".join(
            f'<th class="num">{esc(c.name)}<br><span class="unit">{esc(ctr.unit_label(c.unit))}</span></th>'
            for c in cols
        )
        rows = []
        for r in measured:
            by_name = ctr.counters_by_name(r)
            cells = []
            for col in cols:
                v = by_name.get(col.name)
                if v is None or not v.ok:
                    cells.append('<td class="num muted">-</td>')
                else:
                    title = esc(_counter_title(v, ctr.ops(r)))
                    cells.append(f'<td class="num" title="{title}">{esc(ctr.value_text(v, fmt_num))}</td>')
            rows.append(
                f'<tr><td class="mono">{esc(r.bench)}</td><td class="mono params">{params_html(r.params)}</td>'
                + "".join(cells)
                + "</tr>\n"
            )
        parts.append(
            f'<div class="scroll"><table id="counters-{report.run.id}" class="counters"><thead><tr>{head}</tr></thead>'
            f"<tbody>\n{''.join(rows)}</tbody></table></div>"
        )
    else:
        parts.append('<p class="muted">No counter could be counted on this machine.</p>')
    notes = ctr.notes(measured)
    if notes:
        parts.append('<ul class="counter-notes">' + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    return "\n".join(parts) + "\n"


def predictions_html(report: RunReport, path: str) -> str:
    if not report.predictions:
        return ""
    rows = []
    for c in report.predictions:
        p = c.prediction
        measured = c.measured
        shown_unit = c.result.unit if c.result is not None else p.stored_unit
        predicted = f"{fmt_num(p.stored_value)}"
        as_given = "" if p.unit == p.stored_unit else f' <span class="muted">({fmt_num(p.value)} {esc(p.unit)})</span>'
        if measured is None:
            measured_cell = '<td class="reason" colspan="2">not measured in this run</td>'
        else:
            measured_cell = f'<td class="num">{fmt_num(measured)}</td><td class="num">{ratio_text(c.ratio)}</td>'
        rows.append(
            f'<tr><td class="mono">{esc(p.bench)}</td><td class="mono">{esc(format_params(c.result.params) if c.result else format_params(p.params))}</td>'
            f'<td class="num">{predicted}{as_given}</td>{measured_cell}<td>{esc(shown_unit)}</td>'
            f'<td class="help">{esc(p.note or "")}</td></tr>\n'
        )
    headers = (
        ("benchmark", False),
        ("params", False),
        ("predicted", True),
        ("measured (median)", True),
        ("measured / predicted", True),
        ("unit", False),
        ("how it was predicted", False),
    )
    intro = (
        f'<p class="muted">From {esc(path)}. A ratio of 1.00× is a prediction spot on; '
        "above 1 the operation costs more than predicted (for a rate: delivers more).</p>\n"
        if path
        else ""
    )
    return "<h3>Predictions</h3>\n" + intro + _table(headers, rows, f'id="predictions-{report.run.id}" class="predictions"')


def figures_html(report: RunReport, prefix: str) -> tuple[str, dict[str, str]]:
    """The figures as <figure> elements, and bench -> anchor for the distributions."""
    anchors: dict[str, str] = {}
    family, dist = [], []
    for i, nf in enumerate(report.figures):
        anchor = f"{prefix}-{_slug(nf.name)}"
        svg = plots.inline_svg(nf.figure, f"{prefix}f{i}")
        wide = ' class="wide"' if nf.figure.get_figheight() > WIDE_FIGURE_IN else ""
        plots.close(nf.figure)
        block = f'<figure id="{anchor}"{wide}>{svg}<figcaption>{esc(nf.title)}</figcaption></figure>\n'
        if nf.name.startswith("dist-"):
            anchors[nf.name[len("dist-") :]] = anchor
            dist.append(block)
        else:
            family.append(block)
    out = ""
    if family:
        out += "<h3>Figures</h3>\n" + "".join(family)
    if dist:
        out += (
            "<h3>Distributions of the samples</h3>\n"
            '<p class="muted">Each sample is one timed operation or the mean of one batch '
            "(the batch size is in the export). Histograms for one parameter set, violins or boxes for "
            "several; the value axis is logarithmic when the samples span more than "
            f"{plots.WIDE_SPREAD:.0f}×.</p>\n" + '<div class="figure-grid">' + "".join(dist) + "</div>\n"
        )
    return out, anchors


def run_section(report: RunReport, expect_path: str = "") -> str:
    run = report.run
    prefix = f"r{run.id}"
    status = esc(run.status)
    if run.status != "complete":
        reason = f" ({esc(run.status_reason)})" if run.status_reason else ""
        status = f'<span class="status-incomplete">{status}{reason}</span>'
    counts = run.counts
    figures, anchors = figures_html(report, prefix)
    results = report.results
    reps = sm.repetitions_text(results)
    notes = [
        "Statistics of the raw samples (docs/statistics.md): best is the best sample (the minimum, "
        "the maximum for rates); n counts the samples of every repetition. CV above 5 % in red."
        + (" " + sm.REF_CYCLES_NOTE + "."
           if any(sm.ref_cycles(r) is not None for r in results) else "")
    ]
    if sm.any_unstable_kbest(results):
        notes.append(sm.KBEST_FOOTNOTE + ".")
    if sm.needs_r_column(results):
        notes.append(sm.R_NOTE + ".")
    lebench_notes = "".join(
        f'<p class="lebench-note">{esc(n)}.</p>\n' for n in nm.lebench_notes(run, results, report.lebench_rows,
                                                                             report.names)
    )
    parts = [
        f'<section id="run-{run.id}">',
        f"<h2>{esc(run_title(run))}</h2>",
        f'<p class="sub">{esc(run_subtitle(run))}. Status: {status}; '
        f"{counts.ok} ok, {counts.skip} skipped, {counts.error} failed{esc('; ' + reps if reps else '')}.</p>",
        "<h3>Warnings</h3>",
        warnings_html(report.warnings, report.failures),
        "<h3>Results</h3>",
        '<p class="muted">' + "<br>".join(esc(n) for n in notes) + "</p>",
        _table(summary_headers(results, report.names), summary_rows(results, anchors, report.names),
               f'id="summary-{run.id}" class="summary"'),
        flag_legend_html(fl.present(results)),
        lebench_notes,
        counters_html(report),
        predictions_html(report, expect_path),
        "<h3>Machine</h3>",
        _table(
            (("key", False), ("value", False), ("what it is", False)),
            _pair_rows(machine_rows(run)),
            f'id="machine-{run.id}" class="machine"',
        ),
        "<h3>Measurement set-up</h3>",
        _table(
            (("key", False), ("value", False), ("what it is", False)),
            _pair_rows(setup_rows(run)),
            f'id="setup-{run.id}" class="setup"',
        ),
        figures,
        "</section>",
    ]
    return "\n".join(p for p in parts if p)


def render_report(reports: Sequence[RunReport], expect_path: str = "") -> str:
    """The HTML report: one section per run."""
    if len(reports) == 1:
        title = f"osmeter report: {run_title(reports[0].run)}"
    else:
        title = f"osmeter report: {len(reports)} runs"
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    head = [f"<h1>{esc(title)}</h1>", f'<p class="sub">Generated {generated} by osmeter {esc(__version__)}.</p>']
    if len(reports) > 1:
        links = "".join(f'<a href="#run-{r.run.id}">{esc(run_title(r.run))}</a>' for r in reports)
        head.append(f'<nav class="toc">{links}</nav>')
    body = "\n".join(head + [run_section(r, expect_path) for r in reports])
    return page(title, body)


# --- comparison ---------------------------------------------------------------


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
    by_key: dict[tuple[str, str], dict[int, Comparison]] = {}
    order: list[tuple[str, str]] = []
    names: dict[tuple[str, str], str] = {}
    for c in labels.sort(comparisons, lambda c: (c.bench, c.params)):
        key = (c.bench, format_params(c.params))
        if key not in by_key:
            by_key[key] = {}
            order.append(key)
            names[key] = labels.shown(c.bench, c.params) or describe_instance(key[0], {}) + (
                f" {key[1]}" if key[1] else ""
            )
        by_key[key][c.run_id] = c
    head = "".join(f'<th class="run" title="{esc(run_subtitle(r))}">{esc(run_column_label(r))}</th>' for r in others)
    rows = []
    for key in order:
        shown = names[key]
        full = describe_instance(key[0], {}) + (f" {key[1]}" if key[1] else "")
        hover = f' title="{esc(full)}"' if shown != full else ""
        cells = "".join(_heat_cell(by_key[key].get(r.id), counters) for r in others)
        rows.append(f'<tr><th class="bench mono"{hover}>{esc(shown)}</th>{cells}</tr>\n')
    significant = [c for c in comparisons if c.significant]
    slower = sum(1 for c in significant if c.worse > 0)
    with_caveat = sum(1 for c in significant if c.caveat)
    by_reps = sum(1 for c in comparisons if c.method == "repetitions")
    title = f"osmeter compare: {len(others)} run(s) against run {baseline.id}"
    caveat_names = fl.ordered(f for c in comparisons for f in c.caveat.split(", ") if f)
    legend = (
        '<div class="legend"><span>faster / better</span><span class="bar"></span><span>slower / worse</span>'
        f'<span><span class="swatch" style="background:{plots.GREY}"></span>no significant change</span>'
        '<span><span class="swatch" style="background:#fff;border:1px solid #ccc"></span>– not in that run</span>'
        + (f'<span><span class="mark">{CAVEAT_MARK}</span> dashed: a flagged figure behind the cell (hover)</span>'
           if caveat_names else "")
        + "</div>"
    )
    table_rows = []
    with_counters = any(counters(c) for c in significant)  # a column for them only when there are some
    lead = labels.names is not None
    for c in sorted(significant, key=lambda c: -c.worse):
        verdict = c.verdict
        counter_cell = (
            f'<td class="counters">{esc(chr(10).join(counter_delta_text(d) for d in counters(c)))}</td>'
            if with_counters
            else ""
        )
        caveat = "".join(
            f' <span class="flag" title="{esc(fl.describe(f))}">{esc(f)}</span>' for f in c.caveat.split(", ") if f
        )
        lead_cell = f"<td>{esc(labels.shown(c.bench, c.params) or '')}</td>" if lead else ""
        table_rows.append(
            f'<tr>{lead_cell}<td class="mono">{esc(c.bench)}</td><td class="mono">{esc(format_params(c.params))}</td>'
            f'<td class="num">{c.run_id}</td><td class="num">{fmt_num(c.baseline_median)}</td>'
            f'<td class="num">{fmt_num(c.median)}</td><td>{esc(c.unit or "")}</td>'
            f'<td class="num">{change_text(c)}</td><td class="num">{c.ci_low:.3f} – {c.ci_high:.3f}</td>'
            f'<td><span class="badge {esc(verdict)}">{esc(verdict)}</span>{caveat}</td>{counter_cell}</tr>\n'
        )
    change_headers = (("LEBench row", False),) if lead else ()
    change_headers += (("benchmark", False), ("params", False), ("run", True), ("baseline median", True),
                       ("median", True), ("unit", False), ("change", True), ("95% CI of ratio", True),
                       ("verdict", False))
    if with_counters:
        change_headers += (("counters per operation (baseline → run)", False),)
    method_note = (
        f" The intervals of {by_reps} of them come from the runs' repetitions (the spread between probe "
        "processes), the others from each run's samples."
        if by_reps
        else ""
    )
    parts = [
        f"<h1>{esc(title)}</h1>",
        f'<p class="sub">Baseline: {esc(run_title(baseline))}, {esc(run_subtitle(baseline))}.</p>',
        f'<p class="sub">{len(comparisons)} comparisons; {len(significant)} significant '
        f"({slower} worse, {len(significant) - slower} better; {with_caveat} with a caveat). Method: {esc(method)}; "
        f"noise threshold {100 * threshold:g} %.{esc(method_note)}</p>",
        "<h2>What differs between the runs</h2>",
        differences_html(runs, differences),
        "<h2>Change against the baseline</h2>",
        '<p class="muted">Each cell: the change of the median in % (for a rate such as bytes/s a rise is better). '
        "Red: worse, green: better, deeper for larger changes (full colour at 2×); grey: the 95 % interval "
        "includes no change or the change is within the noise threshold. Hover a cell for the interval.</p>",
        legend,
        f'<div class="scroll"><table class="heatmap" id="heatmap"><thead><tr><th class="corner"></th>{head}</tr></thead>'
        f"<tbody>\n{''.join(rows)}</tbody></table></div>",
        flag_legend_html(caveat_names),
        "<h2>Significant changes</h2>",
        _table(change_headers, table_rows, 'class="changes"')
        if table_rows
        else '<p class="muted">None: no benchmark changed by more than the noise threshold with an interval excluding 1.</p>',
    ]
    deltas = counter_deltas_html(cmp_sorted(comparisons), counters, counter_notes)
    if deltas:
        parts.append(deltas)
    if not_compared:
        items = "".join(f"<li>{esc(n)}</li>" for n in not_compared)
        parts.append(f"<h2>Not compared</h2>\n<ul>{items}</ul>")
    return page(title, "\n".join(parts))
