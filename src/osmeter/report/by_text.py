"""compare --by for people and programs: the terminal heatmap table (rows x
columns), the JSON document and the heatmap file (HTML page, SVG/PNG/PDF
figure, or the JSON document). docs/compare.md, "By host, kernel or label".
"""

from __future__ import annotations

import json
from typing import Any

from .. import compare as cmp
from .. import compare_by as cb
from ..compare import nan_to_none
from ..fmt import terminal_width
from ..stats import BOOTSTRAP_RESAMPLES, CI_LEVEL
from . import by_cells as bc
from . import flags as fl
from . import names as nm
from .tables import to_text

BY_SCHEMA = 1


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
        "method": cmp.METHOD if outcome.bootstrap else cmp.BY_METHOD,
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
    return to_text(bc.heatmap_table(outcome, labels), width, wrap=(0,) if width else ())


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
        parts.append(to_text(bc.sysinfo_table(outcome)))
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


def file_content(outcome: cb.ByOutcome, labels: nm.InstanceLabels, fmt: str, fail_above: float | None) -> str | bytes:
    if fmt == "json":
        return json.dumps(document(outcome, labels, fail_above), indent=2, allow_nan=False) + "\n"
    if fmt in ("html", "htm"):
        from .html_by import render_page

        return render_page(outcome, labels)
    from .by_figure import heatmap_bytes

    return heatmap_bytes(outcome, labels, fmt)
