"""The report as GitHub-flavoured Markdown, for pasting into a write-up.

The same content as the HTML report without the figures (write those as
files with `osmeter plot RUN -o DIR` and link them). Pure: content in, text out.
"""

from __future__ import annotations

import re
from typing import Sequence

from .. import textsafe
from ..records import describe_instance, format_params
from .. import counters as ctr
from . import hotspots as hs
from . import facts as fc
from . import flags as fl
from . import names as nm
from . import summary as sm
from .content import RunReport, machine_rows, ratio_text, setup_rows
from .html import run_subtitle, run_title
from ..fmt import fmt_num, fmt_percent


# Characters Markdown would read as markup: code, emphasis, links and images, inline HTML,
# table cells, strikethrough, headings. Each is backslash-escaped in text from a run, but an
# underscore between two letters or digits (`touched_mib`), which CommonMark never reads as
# emphasis, stays as it is.
_SPECIAL = re.compile(r"[\\`*\[\]<>|~#_]")


def _escape_one(m: re.Match[str]) -> str:
    s, at = m.string, m.start()
    if m.group() == "_" and 0 < at < len(s) - 1 and s[at - 1].isalnum() and s[at + 1].isalnum():
        return "_"
    return "\\" + m.group()


def escape(text: object) -> str:
    """Text from a run (a label, a parameter, a machine value, a message) as Markdown that shows
    it as it is: markup characters escaped, terminal controls and bidi overrides removed
    (osmeter.textsafe); line breaks are kept."""
    return _SPECIAL.sub(_escape_one, textsafe.terminal(str(text)))


def inline(text: object) -> str:
    """escape(text) on one line (a heading, a paragraph, a list item)."""
    return " ".join(escape(text).split("\n"))


def cell(text: object) -> str:
    """A table cell: escape(text), line breaks as <br>."""
    return escape(text).replace("\n", "<br>") or " "


def code(name: str) -> str:
    """`name` as inline code when it is a plain word, else as escaped text."""
    return f"`{name}`" if re.fullmatch(r"[A-Za-z0-9_.:-]+", name) else inline(name)


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
    measured = ctr.with_counters([r for _, r in nm.labelled(report.results, report.names)])
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
        out.append("\n".join(f"- {inline(n)}" for n in notes))
    return out


def hotspots_section(report: RunReport) -> list[str]:
    """Each stored profile's top functions (report/hotspots.py); nothing without profiles."""
    if not report.profiles:
        return []
    out = [f"### {hs.HEADING}", hs.EXPLAIN]
    for t in hs.tables(report.run.id, report.profiles):
        out.append(f"**{inline(t.title)}** — flame graph: `{t.command}`")
        out.append(inline(t.note) if t.note else table(list(hs.HEADERS), t.rows, list(hs.RIGHT)))
    return out


def results_section(report: RunReport) -> list[str]:
    """The results table (ok rows with their statistics and flags, skips and errors with their
    reasons), then the footnotes: k-best, R, the legend of the flags shown."""
    names = report.names
    results = report.results
    ok = [r for r in results if r.summary is not None]
    with_r = sm.needs_r_column(results)
    with_flags = any(r.flags for r in results)
    with_cycles = any(sm.ref_cycles(r) is not None for r in results)
    headers: list[str] = []
    right: list[bool] = []
    for name, is_right, wanted in (
        ("LEBench row", False, names is not None),
        ("benchmark", False, True),
        ("params", False, True),
        ("median", True, True),
        ("95% CI of median", True, True),
        ("ref cycles", True, with_cycles),
        ("best", True, True),
        ("lebench_kbest" if names is None else "k-best", True, True),
        ("average", True, names is not None),
        ("CV %", True, True),
        ("n", True, True),
        ("R", True, with_r),
        ("unit", False, True),
        ("status", False, True),
        ("flags", False, with_flags),
    ):
        if wanted:
            headers.append(name)
            right.append(is_right)
    rows = []
    for row_name, r in nm.labelled(results, names):
        s = r.summary
        cells: list[str] = [row_name or ""] if names is not None else []
        cells += [r.bench, format_params(r.params)]
        if s is None:
            blanks = 4 + (1 if names is not None else 0) + 2 + (1 if with_r else 0) + (1 if with_cycles else 0)
            cells += [""] * blanks + [r.unit or "", f"{r.status}: {r.reason}"]
        else:
            cells += [
                fmt_num(s.median),
                f"{fmt_num(s.ci_low)} – {fmt_num(s.ci_high)}",
                *([sm.ref_cycles_text(r)] if with_cycles else []),
                fmt_num(sm.best(r)),
                fmt_num(s.lebench_kbest) + ("" if s.kbest_stable else "*"),
            ]
            if names is not None:
                cells.append(fmt_num(s.mean))
            cells += [fmt_percent(s.cv), str(s.n)]
            if with_r:
                cells.append(str(sm.repetitions(r)))
            cells += [r.unit or "", r.status]
        if with_flags:
            cells.append(fl.flags_text(r))
        rows.append(cells)
    out = ["### Results", table(headers, rows, right)]
    notes = []
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
    groups = fc.groups([r for _, r in nm.labelled(report.results, report.names)])
    if not groups:
        return []
    rows = [[g.who, "\n".join(f"{k}: {v}" for k, v in g.facts)] for g in groups]
    return [f"### {fc.TITLE}", inline(fc.EXPLAIN), table(["results", "info"], rows)]


def run_section(report: RunReport, expect_path: str = "") -> str:
    run = report.run
    status = inline(run.status + (f" ({run.status_reason})" if run.status_reason else ""))
    c = run.counts
    reps = sm.repetitions_text(report.results)
    out = [
        f"## {inline(run_title(run))}",
        f"{inline(run_subtitle(run))}. Status: {status}; {c.ok} ok, {c.skip} skipped, {c.error} failed"
        + (f"; {inline(reps)}" if reps else "") + ".",
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
            measured = "not measured" if p.measured is None else fmt_num(p.measured)
            params = format_params(p.result.params) if p.result else format_params(pred.params)
            prow.append([pred.bench, params, fmt_num(pred.stored_value) + given, measured, ratio_text(p.ratio),
                         pred.stored_unit, pred.note or ""])
        out += [
            "### Predictions" + (f" (from {inline(expect_path)})" if expect_path else ""),
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
    title = f"# osmeter report: {inline(run_title(reports[0].run))}" if len(reports) == 1 else f"# osmeter report: {len(reports)} runs"
    return "\n\n".join([title] + [run_section(r, expect_path) for r in reports]) + "\n"
