"""The HTML report (the comparison heatmap page is in html_compare): one self-contained file each.

Pure functions from gathered content (content.RunReport, compare results)
to text. Every string from a run goes through esc() (html.escape, quotes
included, controls and bidi overrides removed); the page has no script, so
no text can end one; figures are inline SVG (matplotlib escapes its text); the
CSS is in the template; nothing refers to a URL, so the page opens offline
and makes no request.
"""

from __future__ import annotations

import html
import re
from datetime import datetime, timezone
from importlib import resources
from string import Template
from typing import Any, Sequence

from .. import textsafe
from ..version import __version__
from ..lebench import RowNames
from ..model import BenchResult, RunInfo
from ..records import describe_instance, format_params
from ..sysinfo import KEY_HOSTNAME, KEY_KERNEL, machine_text
from ..warnings import CodedWarning
from .. import counters as ctr
from . import hotspots as hs
from . import facts as fc
from . import flags as fl
from . import names as nm
from . import plots
from . import summary as sm
from .content import RunReport, Row, machine_rows, ratio_text, setup_rows
from ..fmt import fmt_num, fmt_percent

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
    groups = fc.groups([r for _, r in nm.labelled(report.results, report.names)])
    if not groups:
        return ""
    rows = [
        f'<tr><td class="mono">{esc(g.who)}</td><td class="value">'
        + "<br>".join(f'<span class="mono">{esc(k)}</span>: {esc(v)}' for k, v in g.facts)
        + "</td></tr>\n"
        for g in groups
    ]
    return (f"<h3>{esc(fc.TITLE)}</h3>\n<p class=\"muted\">{esc(fc.EXPLAIN)}</p>\n"
            + _table((("results", False), ("info", False)), rows, f'id="info-{report.run.id}" class="info"'))


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


def hotspots_html(report: RunReport) -> str:
    """Each stored profile's top functions (report/hotspots.py); nothing without profiles."""
    if not report.profiles:
        return ""
    parts = [f"<h3>{esc(hs.HEADING)}</h3>", f'<p class="muted">{esc(hs.EXPLAIN)}</p>']
    head = "".join(f'<th{" class=num" if r else ""}>{esc(h)}</th>' for h, r in zip(hs.HEADERS, hs.RIGHT))
    for t in hs.tables(report.run.id, report.profiles):
        parts.append(f'<p><b>{esc(t.title)}</b> <span class="muted">flame graph: '
                     f'<code>{esc(t.command)}</code></span></p>')
        if t.note:
            parts.append(f'<p class="muted">{esc(t.note)}</p>')
            continue
        rows = "".join("<tr>" + "".join(f'<td class="{"num" if r else "mono"}">{esc(c)}</td>'
                                        for c, r in zip(row, hs.RIGHT)) + "</tr>\n" for row in t.rows)
        parts.append(f'<div class="scroll"><table class="hotspots"><thead><tr>{head}</tr></thead>'
                     f"<tbody>\n{rows}</tbody></table></div>")
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
        bit_rates_html(report),
        flag_legend_html(fl.present(results)),
        lebench_notes,
        facts_html(report),
        counters_html(report),
        hotspots_html(report),
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
