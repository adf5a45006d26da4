"""osmeter compare --by host|kernel|label [--fleet ID] [RUN...]: the
LEBench-style heatmap of a fleet run, or of any runs: one column per host,
kernel or label, one row per benchmark instance, each cell the change of the
median against the baseline column with its significance, by the same
statistics as the pairwise compare (osmeter.compare_by; docs/compare.md,
"By host, kernel or label"). Then the machine facts that differ between the
columns.

Outputs: a table on stdout (default), JSON (`--json` or `--format json`,
on stdout, or into `-o FILE.json`), and with `-o` the heatmap as an HTML
page (.html), or a figure (.svg, .png, .pdf).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .. import compare as cmp
from .. import compare_by as cb
from .. import outfile, textsafe
from ..compare import nan_to_none
from ..errors import UsageError
from ..report import by_cells as bc
from ..report import flags as fl
from ..report import names as nm
from ..report.table import render_table, terminal_width
from ..stats import BOOTSTRAP_RESAMPLES, CI_LEVEL
from ..store import open_store, resolve_location

BY_SCHEMA = 1
SUFFIXES = {".html": "html", ".htm": "html", ".svg": "svg", ".png": "png", ".pdf": "pdf", ".json": "json"}


def add_options(p: argparse.ArgumentParser) -> None:
    """--by and --fleet on `osmeter compare` (the other options are compare's own)."""
    p.add_argument(
        "--by",
        choices=cb.BY_CHOICES,
        help="one column per host, kernel or label of the runs (a heatmap against the --baseline column; "
        "docs/compare.md)",
    )
    p.add_argument("--fleet", metavar="ID", help="with --by: every run of the fleet run ID ('latest': the newest)")


def check_args(args: argparse.Namespace) -> None:
    """What --by cannot take, refused before any work."""
    if args.by is None:
        if args.fleet is not None:
            raise UsageError("--fleet selects the runs of a --by comparison: give --by host, kernel or label")
        return
    if args.stat is not None:
        raise UsageError("--stat (maximum, variance) is compared run against run: osmeter compare RUN RUN --stat; "
                         "--by compares medians")
    if args.format == "json" and args.json:
        raise UsageError("--json and --format json say the same: give one")


def _cell_json(cell: cb.Cell) -> dict[str, Any]:
    out: dict[str, Any] = {"state": cell.state, "run_id": cell.run_id, "median": cell.median}
    c = cell.comparison
    if c is not None:
        out.update(
            ratio=nan_to_none(c.ratio), ci_low=nan_to_none(c.ci_low), ci_high=nan_to_none(c.ci_high), change=nan_to_none(c.change),
            worse=nan_to_none(c.worse), significant=c.significant, verdict=c.verdict, method=c.method,
            flags=list(c.flags), caveat=c.caveat,
        )
    if cell.reason:
        out["reason"] = cell.reason
    return out


def document(outcome: cb.ByOutcome, labels: nm.InstanceLabels, fail_above: float | None) -> dict[str, Any]:
    names = [c.name for c in outcome.columns]
    sig = [c for c in outcome.comparisons if c.significant]
    doc: dict[str, Any] = {
        "osmeter_compare_by": BY_SCHEMA,
        "by": outcome.by,
        "fleet": outcome.fleet,
        "baseline": names[outcome.baseline],
        "method": cmp.METHOD,
        "level": CI_LEVEL,
        "resamples": BOOTSTRAP_RESAMPLES,
        "threshold": outcome.threshold,
        "significant": len(sig),
        "significant_with_caveat": sum(1 for c in sig if c.caveat),
        "columns": [
            {"name": c.name, "run_id": c.run.id, "runs": [r.id for r in c.runs], "status": c.run.status,
             "host": cb.host_of(c.run), "label": c.run.label, "notes": c.notes()}
            for c in outcome.columns
        ],
        "rows": [
            {"bench": row.bench, "params": row.params, "occurrence": row.key[2],
             "lebench_row": labels.row(row.bench, row.params), "unit": row.unit,
             "cells": {name: _cell_json(cell) for name, cell in zip(names, row.cells)}}
            for row in bc.ordered_rows(outcome, labels)
        ],
        "sysinfo_diff": [{"key": d.key, "values": dict(zip(names, d.values))} for d in outcome.differences],
        "flag_legend": dict(fl.legend(bc.caveat_flags(outcome))),
    }
    if fail_above is not None:
        doc["fail_above"] = fail_above
        doc["regressions_above"] = len(cmp.regressions_above(outcome.comparisons, fail_above))
    return doc


def heatmap_table(outcome: cb.ByOutcome, labels: nm.InstanceLabels, width: int | None = None) -> str:
    """Rows × columns: each cell's change and verdict mark (bc.cell_text)."""
    headers, rows = bc.heatmap_rows(outcome, labels)
    right = [False, False, *([True] * len(outcome.columns))]
    return render_table(headers, rows, right, width=width, wrap=(0,) if width else ())


def _named(c: cb.Column) -> str:
    return c.name if c.name == f"run {c.run.id}" else f"{c.name} (run {c.run.id})"


def render_text(outcome: cb.ByOutcome, labels: nm.InstanceLabels) -> str:
    base = outcome.columns[outcome.baseline]
    head = f"compare --by {outcome.by}" + (f" of fleet run {outcome.fleet}" if outcome.fleet else "")
    parts = [
        f"{head}: baseline {_named(base)}; compared: "
        + ", ".join(_named(c) for i, c in enumerate(outcome.columns) if i != outcome.baseline),
        heatmap_table(outcome, labels, terminal_width()),
        "\n".join(bc.legend_lines(outcome)),
        bc.counts_line(outcome),
    ]
    if outcome.differences:
        headers = ["sysinfo that differs", *(bc.column_title(outcome, i) for i in range(len(outcome.columns)))]
        parts.append(render_table(headers, bc.sysinfo_rows(outcome)))
    else:
        parts.append("sysinfo that differs: nothing: the columns' machine descriptions are the same")
    parts.append("columns (docs/compare.md, \"How a column picks its run\"):\n"
                 + "\n".join(f"  {n}" for n in bc.columns_used(outcome)))
    why = bc.reasons(outcome, labels)
    if why:
        shown = why[:30]
        more = f"\n  ... and {len(why) - 30} more (--json lists every cell)" if len(why) > 30 else ""
        parts.append("not compared:\n" + "\n".join(f"  {n}" for n in shown) + more)
    return "\n\n".join(parts) + "\n"


def _outputs(args: argparse.Namespace) -> tuple[Path | None, str | None]:
    """The -o file and its format (html, svg, png, pdf, json), checked before any work."""
    if args.output == "-":
        raise UsageError("compare prints its table on stdout: -o takes a file (.html, .svg, .png, .pdf, .json)")
    output = Path(args.output) if args.output else None
    if output is None:
        if args.format not in (None, "json"):
            raise UsageError(f"--format {args.format} is the format of the heatmap file: give it with -o FILE")
        return None, None
    fmt = outfile.choose_format(args.format, args.output, SUFFIXES, "html")
    outfile.check(output)
    return output, fmt


def run(args: argparse.Namespace) -> int:
    """`osmeter compare --by ...` (commands.compare.run hands over when --by is given)."""
    check_args(args)
    threshold = args.threshold / 100
    fail_above = args.fail_above / 100 if args.fail_above is not None else None
    output, fmt = _outputs(args)
    store = open_store(resolve_location(args.store), create=False)
    try:
        fleet, runs = cb.select_runs(store, args.runs, args.fleet)
        outcome = cb.compare_by(store, runs, args.by, args.baseline, threshold, fleet)
        labels = nm.InstanceLabels(nm.row_names(args.names), [x for r in runs for x in store.results(r.id)])
    finally:
        store.close()
    as_json = args.json or (args.format == "json" and output is None)
    if output is not None:
        assert fmt is not None
        outfile.write(output, file_content(outcome, labels, fmt, fail_above))
    if as_json:
        sys.stdout.write(json.dumps(document(outcome, labels, fail_above), indent=2, allow_nan=False) + "\n")
    else:
        sys.stdout.write(textsafe.terminal(render_text(outcome, labels)))
    if output is not None:
        print(f"wrote {output}", file=sys.stderr)
    if fail_above is not None:
        from .compare import raise_regressions  # noqa: PLC0415 (commands.compare imports this module)

        names = {r.id: col.name for col in outcome.columns for r in col.runs}
        raise_regressions(outcome.comparisons, args.fail_above, lambda c: f"on {names.get(c.run_id, c.run_id)}")
    return 0


def file_content(outcome: cb.ByOutcome, labels: nm.InstanceLabels, fmt: str, fail_above: float | None) -> str | bytes:
    if fmt == "json":
        return json.dumps(document(outcome, labels, fail_above), indent=2, allow_nan=False) + "\n"
    if fmt in ("html", "htm"):
        from ..report.html_by import render_page

        return render_page(outcome, labels)
    from ..report.by_figure import heatmap_bytes

    return heatmap_bytes(outcome, labels, fmt)
