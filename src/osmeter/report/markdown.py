"""The report as GitHub-flavoured Markdown, for pasting into a write-up.

The same content as the HTML report without the figures (write those as
files with `osmeter plot RUN -o DIR` and link them). Pure: content in, text out.
"""

from __future__ import annotations

from typing import Sequence

from ..records import describe_instance, format_params
from .. import counters as ctr
from . import hotspots as hs
from . import facts as fc
from . import flags as fl
from . import names as nm
from . import summary as sm
from .content import RunReport, machine_rows, ratio_text, setup_rows
from .escaping import code, inline
from .counters_table import counters_table
from .headline import report_headline
from .results_table import SPREAD_NOTE, results_table
from .tables import simple, to_markdown
from .names import run_subtitle, run_title
from ..fmt import fmt_num, fmt_quantity


LONG_VALUE = 300  # characters: longer machine values are shortened (the HTML report has them whole)


def short(text: str) -> str:
    if len(text) <= LONG_VALUE:
        return text
    return text[:200].rsplit(" ", 1)[0] + f" … ({len(text)} characters; whole in the HTML report and `osmeter export`)"


def md_table(headers: Sequence[str], rows: Sequence[Sequence[object]], right: Sequence[bool] = ()) -> str:
    """A Markdown table of plain cells (report.tables)."""
    return to_markdown(simple(headers, [[str(c) for c in row] for row in rows], right))


def counters_section(report: RunReport) -> list[str]:
    """The counters as their own table (one column per counter, name and unit per operation), then
    what could not be counted, once; nothing when the run has no counters."""
    measured = ctr.with_counters([r for _, r in nm.labelled(report.results, report.names)])
    if not measured:
        return []
    cols = ctr.columns(measured)
    out = [f"### {ctr.HEADING}", ctr.EXPLAIN]
    if cols:
        out.append(to_markdown(counters_table(measured, cols)))
    else:
        out.append("No counter could be counted on this machine.")
    notes = ctr.notes(measured)
    if notes:
        out.append("\n".join(f"- {inline(n)}" for n in notes))
    return out


def hotspots_section(report: RunReport) -> list[str]:
    """Each stored profile's top functions (report/hotspots.py); nothing without profiles."""
    if not report.profiles:
        return []
    out = [f"### {hs.HEADING}", hs.EXPLAIN]
    for t in hs.tables(report.run.id, report.profiles):
        out.append(f"**{inline(t.title)}** — flame graph: `{t.command}`")
        out.append(inline(t.note) if t.table is None else to_markdown(t.table))
    return out


def results_section(report: RunReport) -> list[str]:
    """The results table (ok rows with their statistics and flags, skips and errors with their
    reasons), then the footnotes: k-best, R, the legend of the flags shown."""
    names = report.names
    results = report.results
    ok = [r for r in results if r.summary is not None]
    with_r = sm.needs_r_column(results)
    with_cycles = any(sm.ref_cycles(r) is not None for r in results)
    out = ["### Results", to_markdown(results_table(results, names, "md", params_of=report.params_of))]
    notes = [SPREAD_NOTE + "."]
    if sm.any_unstable_kbest(ok):
        notes.append("\\" + sm.KBEST_FOOTNOTE + ".")
    if with_r:
        notes.append(sm.R_NOTE + ".")
    if with_cycles:
        notes.append(sm.REF_CYCLES_NOTE + ".")
    if notes:
        out.append("\n".join(notes) if len(notes) == 1 else "<br>\n".join(notes))
    bits = [f"- {inline(describe_instance(r.bench, r.params))}: {sm.bits_text(v)}"
            for _, r in nm.labelled(ok, names) if (v := sm.bit_rate(r)) is not None]
    if bits:
        out.append(inline(sm.BIT_RATE_HEADING[:1].upper() + sm.BIT_RATE_HEADING[1:]) + "\n\n" + "\n".join(bits))
    legend = fl.legend(fl.present(results))
    if legend:
        out.append(f"Flags ({fl.SECTION}):\n\n" + "\n".join(f"- {code(n)}: {inline(text)}." for n, text in legend))
    lebench_notes = nm.lebench_notes(report.run, results, report.lebench_rows, names)
    if lebench_notes:
        out.append("\n\n".join(f"{inline(n)}." for n in lebench_notes))
    return out


def facts_section(report: RunReport) -> list[str]:
    """What the results recorded in words (report.facts: net's peer, file systems, descriptors),
    one row per group of results; nothing when none did."""
    groups = fc.groups([r for _, r in nm.labelled(report.results, report.names)], params_of=report.params_of)
    if not groups:
        return []
    rows = [[g.who, "\n".join(f"{k}: {v}" for k, v in g.facts)] for g in groups]
    return [f"### {fc.TITLE}", inline(fc.EXPLAIN), md_table(["results", "info"], rows)]


def run_section(report: RunReport, expect_path: str = "") -> str:
    run = report.run
    status = inline(run.status + (f" ({run.status_reason})" if run.status_reason else ""))
    c = run.counts
    reps = sm.repetitions_text(report.results)
    out = [
        f"## {inline(run_title(run))}",
        f"{inline(run_subtitle(run))}. Status: {status}; {c.ok} ok, {c.skip} skipped, {c.error} failed"
        + (f"; {inline(reps)}" if reps else "") + ".",
    ]
    top = report_headline(report.results, run.machine, report.predictions)
    if top is not None:
        out += ["### Headline", "The figures people quote (every figure is in the results below).",
                to_markdown(top)]
    out += [
        "### Warnings",
    ]
    if report.warnings:
        out.append("\n".join(f"- **{inline(w.code)}**: {inline(w.message)}. {inline(w.advice)}"
                              for w in report.warnings))
    else:
        out.append("No warnings.")
    out += results_section(report)
    out += facts_section(report)
    out += counters_section(report)
    out += hotspots_section(report)
    if report.predictions:
        prow = []
        for p in report.predictions:
            pred = p.prediction
            given = "" if pred.unit == pred.stored_unit else f" ({fmt_num(pred.value)} {pred.unit})"
            measured = "not measured" if p.measured is None else fmt_quantity(p.measured, pred.stored_unit)
            params = format_params(p.result.params) if p.result else format_params(pred.params)
            prow.append([pred.bench, params, fmt_quantity(pred.stored_value, pred.stored_unit) + given, measured,
                         ratio_text(p.ratio), pred.note or ""])
        out += [
            "### Predictions" + (f" (from {inline(expect_path)})" if expect_path else ""),
            md_table(["benchmark", "params", "predicted", "measured (median)", "measured / predicted", "note"],
                  prow, [False, False, True, True, True, False, False]),
        ]
    out += [
        "### Machine",
        md_table(["key", "value", "what it is"], [[r.key, short(r.value), r.help] for r in machine_rows(run)]),
        "### Measurement set-up",
        md_table(["key", "value", "what it is"], [[r.key, r.value, r.help] for r in setup_rows(run)]),
        f"Figures: `osmeter plot {run.id} -o DIR --format svg` writes them as files.",
    ]
    return "\n\n".join(out)


def render_report(reports: Sequence[RunReport], expect_path: str = "") -> str:
    title = f"# osmeter report: {inline(run_title(reports[0].run))}" if len(reports) == 1 else f"# osmeter report: {len(reports)} runs"
    return "\n\n".join([title] + [run_section(r, expect_path) for r in reports]) + "\n"
