"""The HTML report (the comparison heatmap page is in html_compare): one self-contained file each.

Pure functions from gathered content (content.RunReport, compare results)
to text. Every string from a run goes through esc() (html.escape, quotes
included, controls and bidi overrides removed); the page has no script, so
no text can end one; figures are inline SVG (matplotlib escapes its text); the
CSS is in the template; nothing refers to a URL, so the page opens offline
and makes no request.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from importlib import resources
from string import Template
from typing import Any, Sequence

from ..version import __version__
from ..records import describe_instance, format_params
from ..warnings import CodedWarning
from .. import counters as ctr
from . import hotspots as hs
from . import facts as fc
from . import flags as fl
from . import names as nm
from . import plots
from . import summary as sm
from .content import RunReport, Row, machine_rows, ratio_text, setup_rows
from .escaping import esc
from .names import run_subtitle, run_title
from .counters_table import counters_table
from .headline import report_headline
from .results_table import SPREAD_NOTE, results_table
from .tables import Cell, Column, Table, to_html, value_cell
from .tables import Row as TableRow
from ..fmt import fmt_num, fmt_quantity

WIDE_FIGURE_IN = 4.5  # inches: a taller distribution figure gets the page's whole width


def _template() -> Template:
    text = (resources.files("osmeter.report") / "templates" / "report.html").read_text(encoding="utf-8")
    return Template(text)


def page(title: str, body: str) -> str:
    return _template().substitute(title=esc(title), body=body, version=esc(__version__))


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "x"


# --- pieces -----------------------------------------------------------------


def pairs_table(rows: Sequence[Row], attrs: str) -> Table:
    """key, value, what it is: the machine and the measurement set-up."""
    return Table((Column("key"), Column("value"), Column("what it is")), tuple(
        TableRow((Cell(r.key, css="key mono"), value_cell(r.value), Cell(r.help, css="help"))) for r in rows), attrs)


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


def flag_legend_html(names: Sequence[str]) -> str:
    """What each flag shown means and what to do ('' without flags)."""
    entries = fl.legend(names)
    if not entries:
        return ""
    items = "".join(f'<li><span class="flag">{esc(n)}</span> {esc(text)}.</li>' for n, text in entries)
    return (f'<p class="muted">Flags ({esc(fl.SECTION)}): what each means and what to do.</p>\n'
            f'<ul class="flags">{items}</ul>\n')


def bit_rates_html(report: RunReport) -> str:
    """The rates the probe also gives in bits (net.tcp_bw), as show lists them; '' when none."""
    items = [f'<li><span class="mono">{esc(describe_instance(r.bench, r.params))}</span>: {esc(sm.bits_text(v))}</li>'
             for _, r in nm.labelled(report.results, report.names) if (v := sm.bit_rate(r)) is not None]
    if not items:
        return ""
    heading = sm.BIT_RATE_HEADING[:1].upper() + sm.BIT_RATE_HEADING[1:]
    return f'<p class="muted">{esc(heading)}</p>\n<ul class="bit-rates">{"".join(items)}</ul>\n'


def facts_html(report: RunReport) -> str:
    """What the results recorded in words (report.facts), one row per group of results; '' when none.
    Every key and value escaped: they come from the probe and, for net, partly from a remote peer."""
    groups = fc.groups([r for _, r in nm.labelled(report.results, report.names)], params_of=report.params_of)
    if not groups:
        return ""
    rows = tuple(
        TableRow((Cell(g.who, css="mono"), Cell("", html="<br>".join(f'<span class="mono">{esc(k)}</span>: {esc(v)}'
                                                                      for k, v in g.facts), css="value")))
        for g in groups
    )
    table = Table((Column("results"), Column("info")), rows, f'id="info-{report.run.id}" class="info"')
    return f"<h3>{esc(fc.TITLE)}</h3>\n<p class=\"muted\">{esc(fc.EXPLAIN)}</p>\n" + to_html(table)


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
        table = counters_table(measured, cols, f'id="counters-{report.run.id}" class="counters"')
        parts.append(to_html(table).rstrip("\n"))
    else:
        parts.append('<p class="muted">No counter could be counted on this machine.</p>')
    notes = ctr.notes(measured)
    if notes:
        parts.append('<ul class="counter-notes">' + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    return "\n".join(parts) + "\n"


def hotspots_html(report: RunReport) -> str:
    """Each stored profile's top functions (report/hotspots.py); nothing without profiles."""
    if not report.profiles:
        return ""
    parts = [f"<h3>{esc(hs.HEADING)}</h3>", f'<p class="muted">{esc(hs.EXPLAIN)}</p>']
    for t in hs.tables(report.run.id, report.profiles):
        parts.append(f'<p><b>{esc(t.title)}</b> <span class="muted">flame graph: '
                     f'<code>{esc(t.command)}</code></span></p>')
        if t.table is None:
            parts.append(f'<p class="muted">{esc(t.note)}</p>')
            continue
        parts.append(to_html(t.table).rstrip("\n"))
    return "\n".join(parts) + "\n"


def predictions_html(report: RunReport, path: str) -> str:
    if not report.predictions:
        return ""
    rows = []
    for c in report.predictions:
        p = c.prediction
        measured = c.measured
        shown_unit = c.result.unit if c.result is not None else p.stored_unit
        as_given = "" if p.unit == p.stored_unit else f' <span class="muted">({fmt_num(p.value)} {esc(p.unit)})</span>'
        if measured is None:
            measured_cells: tuple[Cell, ...] = (Cell("not measured in this run", css="reason", span=2),)
        else:
            measured_cells = (Cell(fmt_quantity(measured, shown_unit)), Cell(ratio_text(c.ratio)))
        params = format_params(c.result.params) if c.result else format_params(p.params)
        predicted = fmt_quantity(p.stored_value, p.stored_unit)
        rows.append(TableRow((Cell(p.bench, css="mono"), Cell(params, css="mono"),
                              Cell(predicted, html=esc(predicted) + as_given),
                              *measured_cells, Cell(p.note or "", css="help"))))
    columns = (Column("benchmark"), Column("params"), Column("predicted", True), Column("measured (median)", True),
               Column("measured / predicted", True), Column("how it was predicted"))
    intro = (
        f'<p class="muted">From {esc(path)}. A ratio of 1.00× is a prediction spot on; '
        "above 1 the operation costs more than predicted (for a rate: delivers more).</p>\n"
        if path
        else ""
    )
    table = Table(columns, tuple(rows), f'id="predictions-{report.run.id}" class="predictions"')
    return "<h3>Predictions</h3>\n" + intro + to_html(table)


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
            "several; the value axis spans each set's 0.5th to 99.5th percentile where a long tail lies beyond "
            "(the legend counts what it leaves out) and is logarithmic when that range spans more than "
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
    top = report_headline(results, run.machine, report.predictions)
    notes = [
        "Statistics of the raw samples (docs/statistics.md): best is the best sample (the minimum, "
        "the maximum for rates); n counts the samples of every repetition; every figure of a row in its "
        "median's unit. " + SPREAD_NOTE + ". Hover a median for its reference cycles (TSC ticks at the TSC's "
        "constant rate, not core cycles), an IQR for the outliers (outside Tukey's fences)."
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
        *(["<h3>Headline</h3>", '<p class="muted">The figures people quote; every figure is in the results below.</p>',
            to_html(top)] if top is not None else []),
        "<h3>Warnings</h3>",
        warnings_html(report.warnings, report.failures),
        "<h3>Results</h3>",
        '<p class="muted">' + "<br>".join(esc(n) for n in notes) + "</p>",
        to_html(results_table(results, report.names, "html", anchors=anchors,
                              attrs=f'id="summary-{run.id}" class="summary"', params_of=report.params_of)),
        bit_rates_html(report),
        flag_legend_html(fl.present(results)),
        lebench_notes,
        facts_html(report),
        counters_html(report),
        hotspots_html(report),
        predictions_html(report, expect_path),
        "<h3>Machine</h3>",
        to_html(pairs_table(machine_rows(run), f'id="machine-{run.id}" class="machine"')),
        "<h3>Measurement set-up</h3>",
        to_html(pairs_table(setup_rows(run), f'id="setup-{run.id}" class="setup"')),
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
