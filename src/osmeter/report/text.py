"""One run as text: the summary table, skips, errors and warnings."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Sequence

from .. import counters as ctr
from ..fmt import fold
from .. import textsafe
from ..catalog import LebenchRow
from ..cgroup import describe_recorded
from ..lebench import RowNames
from ..model import BenchResult, RunInfo
from ..records import describe_instance
from ..sysinfo import KEY_HOSTNAME, KEY_KERNEL, machine_text
from ..warnings import CodedWarning
from . import facts as fc
from . import flags as fl
from . import names as nm
from . import summary as sm
from .counters_table import counters_table
from .headline import report_headline
from .params import ParamsOf, every_param
from .results_table import SPREAD_NOTE, fold_columns, results_table, shown_columns
from .tables import to_text
from .targets import render_targets, shown_keys

if TYPE_CHECKING:
    from .content import RunReport  # the report's sections; content imports the figures (matplotlib)


def summary_table(results: Sequence[BenchResult], names: RowNames | None = None, with_r: bool | None = None,
                  width: int | None = None, params_of: ParamsOf = every_param, wide: bool = False) -> str:
    """The ok results as a table: median, its CI, best, spread, tail, n, flags (report.results_table,
    the terminal's view), its params and flags folded to fit `width`; `wide`: every column, one
    line per result."""
    view = "wide" if wide else "text"
    table = results_table(results, names, view, with_r, params_of=params_of)
    if wide or width is None:
        return to_text(table)
    keys = shown_columns(results, names, view, with_r)
    text = to_text(table, width, fold_columns(keys), whole_words=True)
    if "best" in keys and max(len(line) for line in text.splitlines()) > width:
        # folded to its longest words and still too wide: best goes (--wide, the reports have it)
        keys = [k for k in keys if k != "best"]
        text = to_text(table.select([i for i, c in enumerate(table.columns) if c.header != "best"]), width,
                       fold_columns(keys), whole_words=True)
    return text


COUNTER_WIDTH = 120  # characters: counter columns beyond it go into another table below
REPORT_WIDTH = 100  # characters: the plain-text report's lines (a file: no terminal to fit)
UNLIMITED = 1 << 30  # --wide: no line is folded


def _column_chunks(fixed: int, widths: Sequence[int], limit: int) -> list[list[int]]:
    """Indices of the counter columns, split into as few tables as fit in `limit`
    (at least one column each), the columns shared out evenly between them."""
    count = 1
    used = fixed
    for i, w in enumerate(widths):
        if i and used + 2 + w > limit:
            count += 1
            used = fixed
        used += 2 + w
    while True:
        size = -(-len(widths) // count)
        chunks = [list(range(k, min(k + size, len(widths)))) for k in range(0, len(widths), size)]
        if count >= len(widths) or all(fixed + sum(2 + widths[i] for i in c) <= limit for c in chunks):
            return chunks
        count += 1


def render_counters(results: Sequence[BenchResult], width: int = COUNTER_WIDTH) -> str:
    """The counters of a run as their own table(s) under the summary, then what could not be counted.

    One row per instance with counters, one column per counter counted
    somewhere (name over its unit, per operation); a wide set of counters is
    split into several tables of at most `width` characters. Empty when
    the run holds no counters."""
    measured = ctr.with_counters(results)
    if not measured:
        return ""
    cols = ctr.columns(measured)
    parts = [f"{ctr.HEADING.lower()} (docs/methods/counters.md; task-clock is CPU time, not latency):"]
    if cols:
        table = counters_table(measured, cols)
        lead = [[c.text for c in row.cells[:2]] for row in table.rows]
        widths = [max(len(c.name), len(ctr.unit_label(c.unit)), *(len(row.cells[2 + i].text) for row in table.rows))
                  for i, c in enumerate(cols)]
        fixed = max(len("benchmark"), *(len(x[0]) for x in lead)) + 2 + max(len("params"), *(len(x[1]) for x in lead))
        for chunk in _column_chunks(fixed, widths, width):
            parts.append(to_text(table.select([0, 1, *(2 + i for i in chunk)])))
    else:
        parts.append("no counter could be counted here")
    parts.extend(ctr.notes(measured))
    return "\n".join(parts)


def run_heading(run: RunInfo, results: Sequence[BenchResult] = ()) -> str:
    label = f" '{textsafe.clip(run.label)}'" if run.label else ""
    host = machine_text(run.machine, KEY_HOSTNAME) or "unknown host"
    kernel = machine_text(run.machine, KEY_KERNEL) or "unknown kernel"
    status = run.status + (f" ({run.status_reason})" if run.status_reason else "")
    suite = run.suite or "selected benchmarks"
    reps = sm.repetitions_text(results)
    cgroup = describe_recorded(run.params.get("cgroup")) if isinstance(run.params, dict) else None
    return (
        f"run {run.id}{label}: {suite} on {host}, Linux {kernel}, started {run.start_time}, {status}\n"
        f"probe {run.probe_version}, osmeter {run.osmeter_version}; "
        f"{run.counts.ok} ok, {run.counts.skip} skipped, {run.counts.error} failed" + (f"; {reps}" if reps else "")
        + (f"\n{cgroup}" if cgroup else "")
    )


def wrap_list(text: str, width: int) -> str:
    """A line that lists names (`... pending: send, big send, ...`) wrapped after its commas only,
    so no name is split; continuation lines indented."""
    lines: list[str] = []
    for piece in re.split(r"(?<=,) ", text):
        if lines and len(lines[-1]) + 1 + len(piece) <= width:
            lines[-1] += " " + piece
        else:
            lines.append(("  " if lines else "") + piece)
    return "\n".join(lines)


def ordered_ok(ok: Sequence[BenchResult], names: RowNames | None) -> list[BenchResult]:
    """The ok results in the summary table's order."""
    return [r for _, r in nm.labelled(ok, names)]


def bit_rates(results: Sequence[BenchResult], params_of: ParamsOf = every_param) -> str:
    """The rates the probe also gives in bits (net.tcp_bw), one line each, under the table; '' when none."""
    lines = [f"  {describe_instance(r.bench, params_of(r))}: {sm.bits_text(v)}"
             for r in results if (v := sm.bit_rate(r)) is not None]
    return "\n".join([sm.BIT_RATE_HEADING, *lines]) if lines else ""


def wrap_pieces(pieces: Sequence[str], width: int, indent: str = "    ", sep: str = "; ") -> list[str]:
    """The pieces joined by `sep` on lines of `indent` and at most `width` characters, wrapped
    between pieces only (a piece is never split, so a long one makes a longer line)."""
    lines: list[str] = []
    for piece in pieces:
        if lines and len(lines[-1]) + len(sep) + len(piece) <= width:
            lines[-1] += sep + piece
        else:
            if lines:
                lines[-1] += sep.rstrip()
            lines.append(indent + piece)
    return lines


def render_facts(results: Sequence[BenchResult], width: int = COUNTER_WIDTH, params_of: ParamsOf = every_param) -> str:
    """The facts the results recorded (report.facts): each group of results on a line, its facts
    under it wrapped at `width`; what the "files measured in" block lists is left out. '' when none."""
    groups = fc.groups(results, shown_keys(results), params_of)
    if not groups:
        return ""
    lines = [fc.HEADING + ":"]
    for g in groups:
        lines.append(f"  {textsafe.line(g.who)}")
        pieces = wrap_pieces([textsafe.line(f"{k}={v}") for k, v in g.facts], width)
        lines += fold("\n".join(pieces), width).split("\n")  # a piece longer than the width: at its spaces
    return "\n".join(lines)


def render_headline(results: Sequence[BenchResult], machine: Any, warnings: Sequence[CodedWarning],
                    width: int | None) -> str:
    """The figures people quote (report.headline), the codes of the warnings below; '' without any."""
    table = report_headline(results, machine)
    if table is None:
        return ""
    flags = [len(table.columns) - 1] if table.columns[-1].header == "flags" else []
    out = ["headline (the figures people quote; all of them below):",
           to_text(table, width, [*flags, 0], whole_words=True)]  # the flags, then the figure's name fold
    if warnings:
        out.append(fold("warnings below: " + ", ".join(dict.fromkeys(w.code for w in warnings)), width))
    return "\n".join(out)


def by_reason(items: Sequence[tuple[str, str]]) -> list[str]:
    """Skipped instances, each reason said once: `  what: why` for a reason of one instance, else the
    reason and its instances under it, in the order they first came."""
    groups: dict[str, list[str]] = {}
    for what, why in items:
        groups.setdefault(why, []).append(what)
    lines = []
    for why, whats in groups.items():
        if len(whats) == 1:
            lines.append(f"  {whats[0]}: {why}")
        else:
            lines.append(f"  {why}:")
            lines += [f"    {w}" for w in whats]
    return lines


def _instance(row_name: str | None, r: BenchResult, params_of: ParamsOf = every_param) -> str:
    what = describe_instance(r.bench, params_of(r))
    return f"{row_name} ({what})" if row_name else what


def render_run(
    run: RunInfo,
    results: Sequence[BenchResult],
    warnings: Sequence[CodedWarning],
    width: int = COUNTER_WIDTH,
    names: RowNames | None = None,
    lebench_rows: Sequence[LebenchRow] = (),
    params_of: ParamsOf = every_param,
    wide: bool = False,
) -> str:
    """The summary of one run, as `osmeter run` ends and `osmeter show` prints it.

    Under the table: the k-best footnote, the legend of the flags shown,
    and for a run of the lebench suite the LEBench rows it cannot have
    (pending). Counters, when the run has them, get their own table under
    the summary (render_counters), at most `width` characters wide or as
    wide as the summary table when that is wider. `names` (--names
    lebench) labels and orders the rows as LEBench does; `params_of` the
    parameters shown (report.params); `wide` every column and no folding.
    Every line fits `width` (prose wrapped, tables folded), but with `wide`."""
    fit = (lambda text: text) if wide else (lambda text: fold(text, width))
    parts = [fit(run_heading(run, results))]
    top = render_headline(results, run.machine, warnings, None if wide else width)
    if top:
        parts.append(top)
    ok = [r for r in results if r.status == "ok"]
    if ok:
        with_r = sm.needs_r_column(results)  # as the heading says: skipped instances count too
        table = summary_table(ok, names, with_r, width, params_of, wide)
        notes = [SPREAD_NOTE]
        if sm.any_unstable_kbest(ok) and (wide or names is not None):
            notes.append(sm.KBEST_FOOTNOTE)
        if with_r:
            notes.append(sm.R_NOTE)
        notes = [fit(n) for n in notes]
        notes += fl.legend_lines(fl.present(ok), width)
        parts.append(table + ("\n" + "\n".join(notes) if notes else ""))
        ordered = ordered_ok(ok, names)
        bits = bit_rates(ordered, params_of)
        if bits:
            parts.append(fit(bits))
        # as wide as the terminal, or as the summary above it when that is wider already
        counters = render_counters(ordered, max(width, max(len(line) for line in table.splitlines())))
        if counters:
            parts.append(counters)
    others = nm.labelled([r for r in results if r.status != "ok"], names)
    skipped = by_reason([(_instance(n, r, params_of), r.reason or "") for n, r in others if r.status == "skip"])
    if skipped:
        parts.append(fit("skipped:\n" + "\n".join(skipped)))
    failed = [_instance(n, r, params_of) + f": {r.reason}" for n, r in others if r.status == "error"]
    if failed:
        parts.append(fit("errors:\n" + "\n".join(f"  {line}" for line in failed)))
    targets = render_targets(results)
    if targets:
        parts.append(fit(targets))
    facts = render_facts(results, UNLIMITED if wide else width, params_of)
    if facts:
        parts.append(facts)
    lebench_notes = nm.lebench_notes(run, results, lebench_rows, names)
    if lebench_notes:
        parts.append("\n".join(wrap_list(n, width) for n in lebench_notes))
    if warnings:
        parts.append(fit("\n".join(w.render() for w in warnings)))
    return "\n\n".join(parts) + "\n"


def render_report(reports: Sequence["RunReport"], expect_path: str = "") -> str:
    """The report as plain text: each run as `osmeter show` prints it (no escape sequence,
    control or bidi override from stored text)."""
    return textsafe.terminal("\n".join(
        render_run(r.run, r.results, r.warnings, REPORT_WIDTH, r.names, r.lebench_rows, r.params_of) for r in reports
    ))
