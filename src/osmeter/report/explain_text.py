"""compare --explain in words: the terminal text, the JSON document and the
HTML section of the comparison page (whose heatmap cells open it). What is
said is osmeter.explain's; this module only lays it out."""

from __future__ import annotations

import hashlib
import math
from typing import Any

from .. import compare as cmp
from ..explain import Explanation, ExplainReport, summary_line
from ..fmt import fmt_num, fmt_quantity, fold, render_table
from ..hotspots.folded import display_name
from ..records import describe_instance
from .escaping import esc
from .tables import Cell, Column, Row, Table, to_html, to_text

DIFFERENCES_SHOWN = 12
TEXT_WIDTH = 100  # prose folded to it; the tables fit it


def _signed(ns: float | None, digits: int = 3) -> str:
    if ns is None or math.isnan(ns):
        return "-"
    return ("+" if ns >= 0 else "-") + fmt_quantity(abs(ns), "ns", digits)


def _share(x: float) -> str:
    return f"{100 * x:.1f}%"


def _counter_value(v: float, unit: str) -> str:
    return fmt_quantity(v, "ns") if unit == "ns" else fmt_num(v, 4)


def counters_table(e: Explanation) -> Table:
    columns = (Column("counter per op"), Column("baseline", True), Column("run", True), Column("change", True),
               Column("significant"))
    rows = []
    for c in e.counters:
        change = "-" if c.change is None else f"{100 * c.change:+.1f}%"
        sig = "n/a (no spread known)" if c.significant is None else (f"yes (z={c.z:.1f})" if c.significant
                                                                       else f"no (z={c.z:.1f})")
        rows.append(Row(tuple(Cell(t) for t in (c.name, _counter_value(c.baseline, c.unit),
                                                 _counter_value(c.value, c.unit), change, sig))))
    return Table(columns, tuple(rows), 'class="explain-counters"')


def functions_table(e: Explanation) -> Table:
    columns = (Column("function (self time per op)"), Column("baseline", True), Column("run", True),
               Column("change", True), Column("± s.e.", True), Column("share", True))
    rows = []
    for f in e.functions:
        name = display_name(f.function) + (" [k]" if f.kernel else "") + (" (new)" if f.appeared else
                                                                            " (gone)" if f.vanished else "")
        se = "-" if f.se_ns is None else fmt_quantity(f.se_ns, "ns", 2)
        share = f"{_share(f.self_share_a)} → {_share(f.self_share_b)}"
        rows.append(Row(tuple(Cell(t) for t in (name, fmt_quantity(f.self_ns_a, "ns", 3),
                                                 fmt_quantity(f.self_ns_b, "ns", 3), _signed(f.self_delta_ns),
                                                 se, share))))
    return Table(columns, tuple(rows), 'class="explain-functions"')


def _indent(text: str, by: str = "    ") -> str:
    return "\n".join(by + line if line else line for line in text.rstrip("\n").splitlines())


def _change_line(e: Explanation) -> str:
    c = e.comparison
    line = (f"{e.name}: {c.change * 100:+.1f} % ({fmt_quantity(c.baseline_median, c.unit)} → "
            f"{fmt_quantity(c.median, c.unit)}; ratio 95 % CI {c.ci_low:.3f} .. {c.ci_high:.3f})")
    if e.delta_ns is not None and e.delta_ci is not None:
        lo, hi = e.delta_ci
        line += f"\n  {_signed(e.delta_ns)} per op (95 % CI {_signed(lo)} .. {_signed(hi)})"
    if c.caveat:
        line += f"\n  caveat: {c.caveat}"
    if c.noise:
        line += f"\n  caveat: {c.noise}"
    return line


def explanation_text(e: Explanation) -> str:
    parts = [_change_line(e)]
    if e.counters:
        parts.append("  counters:\n" + _indent(to_text(counters_table(e))))
    elif e.counters_missing:
        parts.append(f"  counters: {e.counters_missing}")
    if e.functions:
        src = e.functions_ns or ("", "")
        how = f"shares × the time per op ({src[0]}; {src[1]})" if src[0] != src[1] else f"shares × the {src[0]}"
        parts.append(f"  functions, by the change of their self time per op ({how}):\n"
                     + _indent(to_text(functions_table(e))))
    elif e.profile_missing:
        parts.append(f"  functions: {e.profile_missing}")
    if e.causes:
        by_rule: dict[str, list[Any]] = {}
        for x in e.causes:
            by_rule.setdefault(x.rule, []).append(x)
        lines = []
        for rule, facts in list(by_rule.items())[:6]:
            shown = "; ".join(f"{x.key}: {x.values[0]} → {x.values[1]}" for x in facts[:4])
            more = f" (and {len(facts) - 4} more)" if len(facts) > 4 else ""
            lines.append(f"    {rule}: {shown}{more}\n      {facts[0].why}")
        parts.append("  plausible causes (what differs, and why it touches this benchmark):\n" + "\n".join(lines))
    else:
        parts.append("  plausible causes: no differing machine fact touches this benchmark "
                     "(osmeter.causes' rules); look at what differs above")
    parts.extend(f"  pinned: {p}" for p in e.pinned)
    return "\n".join(parts)


def differences_text(report: ExplainReport) -> str:
    if not report.differences:
        return "what differs: nothing in the machine descriptions, suites or options"
    shown = report.differences[:DIFFERENCES_SHOWN]
    rows = [[d.key, d.values[0], d.values[1]] for d in shown]
    text = render_table(["what differs (plausible first)", f"run {report.baseline.id}", f"run {report.run.id}"],
                        rows, [False, False, False], width=100, wrap=(1, 2))
    more = len(report.differences) - len(shown)
    return text + (f"  ... and {more} more (osmeter compare {report.baseline.id} {report.run.id})\n" if more else "")


def render_text(report: ExplainReport) -> str:
    head = (f"compare --explain: run {report.run.id} against the baseline, run {report.baseline.id} "
            f"(noise threshold {100 * report.threshold:g} %)")
    parts = [head]
    if report.explanations:
        parts.append("summary:\n" + "\n".join(f"  {summary_line(e)}" for e in report.explanations))
    else:
        parts.append("summary: no significant change")
    parts.append(differences_text(report).rstrip("\n"))
    parts.extend(explanation_text(e) for e in report.explanations)
    if report.pinned:
        parts.append("unchanged, and pinned by their own parameters against what differs:\n"
                     + "\n".join(f"  {s}" for s in report.pinned))
    if report.skipped:
        parts.append("skipped on a side, where a difference may be why:\n"
                     + "\n".join(f"  {s}" for s in report.skipped))
    return fold("\n\n".join(parts), TEXT_WIDTH) + "\n"


def _finite(x: Any) -> Any:
    """JSON has no NaN or infinity: null instead (a float); anything else as it is."""
    return x if not isinstance(x, float) or math.isfinite(x) else None


def _fn_json(f: Any) -> dict[str, Any]:
    return {"function": f.function.removesuffix("_[k]"), "kernel": f.kernel,
            "self_ns": [_finite(f.self_ns_a), _finite(f.self_ns_b)], "self_delta_ns": _finite(f.self_delta_ns),
            "se_ns": _finite(f.se_ns), "total_ns": [_finite(f.total_ns_a), _finite(f.total_ns_b)],
            "self_share": [f.self_share_a, f.self_share_b], "total_share": [f.total_share_a, f.total_share_b],
            "appeared": f.appeared, "vanished": f.vanished}


def explanation_json(e: Explanation) -> dict[str, Any]:
    c = e.comparison
    return {
        "bench": c.bench, "params": dict(c.params), "unit": c.unit, "summary": summary_line(e),
        "baseline_median": _finite(c.baseline_median), "median": _finite(c.median), "ratio": _finite(c.ratio),
        "ratio_ci": [_finite(c.ci_low), _finite(c.ci_high)], "caveat": c.caveat or None,
        "delta_ns": _finite(e.delta_ns), "delta_ns_ci": [_finite(x) for x in e.delta_ci] if e.delta_ci else None,
        "counters": [{"name": x.name, "unit": x.unit, "baseline": _finite(x.baseline), "run": _finite(x.value),
                      "change": _finite(x.change), "z": _finite(x.z), "significant": x.significant}
                     for x in e.counters],
        "counters_missing": e.counters_missing,
        "functions": [_fn_json(f) for f in e.functions],
        "ns_per_op_from": list(e.functions_ns) if e.functions_ns else None,
        "profile_missing": e.profile_missing,
        "causes": [{"key": x.key, "baseline": x.values[0], "run": x.values[1], "rule": x.rule, "why": x.why}
                   for x in e.causes],
        "pinned": e.pinned,
    }


def document(report: ExplainReport) -> dict[str, Any]:
    return {
        "baseline": report.baseline.id, "run": report.run.id, "threshold": report.threshold,
        "summary": [summary_line(e) for e in report.explanations],
        "differences": [{"key": d.key, "baseline": d.values[0], "run": d.values[1]} for d in report.differences],
        "explanations": [explanation_json(e) for e in report.explanations],
        "skipped": report.skipped,
        "pinned": report.pinned,
    }


def anchor(c: cmp.Comparison) -> str:
    """The id of a comparison's explanation on the page (the heatmap's cell links to it)."""
    digest = hashlib.sha1(f"{c.run_id} {describe_instance(c.bench, c.params)}".encode()).hexdigest()[:10]
    return f"explain-{digest}"


def section_html(report: ExplainReport) -> str:
    """The page's "Explanations" section: the summary, then each change in a <details> the heatmap opens."""
    tail = "".join(f"<p class=\"warn\">{esc(x)}</p>" for x in report.pinned + report.skipped)
    if not report.explanations:
        return "<h2>Explanations</h2>\n<p class=\"muted\">No significant change to explain.</p>" + tail
    items = "".join(f"<li>{esc(summary_line(e))}</li>" for e in report.explanations)
    parts = ["<h2>Explanations</h2>", f'<ul class="explain-summary mono">{items}</ul>']
    for e in report.explanations:
        body = [f"<pre>{esc(_change_line(e))}</pre>"]
        body.append(to_html(counters_table(e)) if e.counters else f"<p>{esc(e.counters_missing or '')}</p>")
        body.append(to_html(functions_table(e)) if e.functions else f"<p>{esc(e.profile_missing or '')}</p>")
        if e.causes:
            body.append("<ul>" + "".join(f"<li><b>{esc(x.key)}</b>: {esc(x.values[0])} → {esc(x.values[1])} "
                                         f"<span class=\"muted\">({esc(x.rule)}: {esc(x.why)})</span></li>"
                                         for x in e.causes) + "</ul>")
        body.extend(f'<p class="warn">pinned: {esc(p)}</p>' for p in e.pinned)
        # the id is inside the <details>: following a link to it opens it (no script: the page allows none)
        parts.append(f'<details class="explain"><summary>{esc(summary_line(e))}</summary>'
                     f'<div id="{anchor(e.comparison)}">{"".join(body)}</div></details>')
    return "\n".join(parts) + tail
