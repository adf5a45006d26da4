"""The report as GitHub-flavoured Markdown, for pasting into a write-up.

The same content as the HTML report without the figures (write those as
files with `osmeter plot RUN -o DIR` and link them). Pure: content in, text out.
"""

from __future__ import annotations

from typing import Sequence

from ..records import format_params
from . import counters as ctr
from .content import RunReport, machine_rows, ratio_text, setup_rows
from .html import run_subtitle, run_title
from .table import fmt_num, fmt_percent


def cell(text: object) -> str:
    """A table cell: pipes and tildes (GFM strikethrough) escaped, line breaks as <br>."""
    escaped = str(text).replace("\\", "\\\\").replace("|", "\\|").replace("~", "\\~")
    return escaped.replace("\n", "<br>") or " "


LONG_VALUE = 300  # characters: longer machine values are shortened (the HTML report has them whole)


def short(text: str) -> str:
    if len(text) <= LONG_VALUE:
        return text
    return text[:200].rsplit(" ", 1)[0] + f" … ({len(text)} characters; whole in the HTML report and `osmeter export`)"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], right: Sequence[bool] = ()) -> str:
    align = ["---:" if i < len(right) and right[i] else "---" for i in range(len(headers))]
    lines = ["| " + " | ".join(cell(h) for h in headers) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def counters_section(report: RunReport) -> list[str]:
    """The counters as their own table (one column per counter, name and unit per operation), then
    what could not be counted, once; nothing when the run has no counters."""
    measured = ctr.with_counters(report.results)
    if not measured:
        return []
    cols = ctr.columns(measured)
    out = [f"### {ctr.HEADING}", ctr.EXPLAIN]
    if cols:
        rows = []
        for r in measured:
            by_name = ctr.counters_by_name(r)
            values = [ctr.value_text(by_name.get(c.name), fmt_num) for c in cols]
            rows.append([r.bench, format_params(r.params), *values])
        out.append(table(["benchmark", "params"] + [c.label for c in cols], rows, [False, False] + [True] * len(cols)))
    else:
        out.append("No counter could be counted on this machine.")
    notes = ctr.notes(measured)
    if notes:
        out.append("\n".join(f"- {n}" for n in notes))
    return out


def run_section(report: RunReport, expect_path: str = "") -> str:
    run = report.run
    status = run.status + (f" ({run.status_reason})" if run.status_reason else "")
    c = run.counts
    out = [
        f"## {run_title(run)}",
        f"{run_subtitle(run)}. Status: {status}; {c.ok} ok, {c.skip} skipped, {c.error} failed.",
        "### Warnings",
    ]
    if report.warnings:
        out.append("\n".join(f"- **{w.code}**: {w.message}. {w.advice}" for w in report.warnings))
    else:
        out.append("No warnings.")
    rows = []
    for r in report.results:
        s = r.summary
        if s is None:
            rows.append([r.bench, format_params(r.params), "", "", "", "", "", "", r.unit or "", f"{r.status}: {r.reason}"])
            continue
        rows.append(
            [
                r.bench,
                format_params(r.params),
                fmt_num(s.median),
                f"{fmt_num(s.ci_low)} – {fmt_num(s.ci_high)}",
                fmt_num(s.min),
                fmt_num(s.lebench_kbest) + ("" if s.kbest_stable else "*"),
                fmt_percent(s.cv),
                str(s.n),
                r.unit or "",
                r.status,
            ]
        )
    out += [
        "### Results",
        table(
            ["benchmark", "params", "median", "95% CI of median", "min", "lebench_kbest", "CV %", "n", "unit", "status"],
            rows,
            [False, False, True, True, True, True, True, True, False, False],
        ),
        "\\* no stable run of 5 samples within 5 %: lebench_kbest is the minimum.",
    ]
    out += counters_section(report)
    if report.predictions:
        prow = []
        for p in report.predictions:
            pred = p.prediction
            given = "" if pred.unit == pred.stored_unit else f" ({fmt_num(pred.value)} {pred.unit})"
            measured = "not measured" if p.measured is None else fmt_num(p.measured)
            params = format_params(p.result.params) if p.result else format_params(pred.params)
            prow.append([pred.bench, params, fmt_num(pred.stored_value) + given, measured, ratio_text(p.ratio),
                         pred.stored_unit, pred.note or ""])
        out += [
            "### Predictions" + (f" (from {expect_path})" if expect_path else ""),
            table(["benchmark", "params", "predicted", "measured (median)", "measured / predicted", "unit", "note"],
                  prow, [False, False, True, True, True, False, False]),
        ]
    out += [
        "### Machine",
        table(["key", "value", "what it is"], [[r.key, short(r.value), r.help] for r in machine_rows(run)]),
        "### Measurement set-up",
        table(["key", "value", "what it is"], [[r.key, r.value, r.help] for r in setup_rows(run)]),
        f"Figures: `osmeter plot {run.id} -o DIR --format svg` writes them as files.",
    ]
    return "\n\n".join(out)


def render_report(reports: Sequence[RunReport], expect_path: str = "") -> str:
    title = f"# osmeter report: {run_title(reports[0].run)}" if len(reports) == 1 else f"# osmeter report: {len(reports)} runs"
    return "\n\n".join([title] + [run_section(r, expect_path) for r in reports]) + "\n"
