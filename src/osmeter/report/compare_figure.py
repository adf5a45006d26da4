"""`osmeter compare -o FILE.svg|png|pdf`: the comparison heatmap as a figure
for a paper. Rows: benchmark instances; columns: per run the change of the
median, and of the maximum and the variance where they were compared
(osmeter.compare's EXTRA_STATS; docs/compare.md)."""

from __future__ import annotations

from typing import Sequence

from ..compare import EXTRA_STATS, Comparison
from ..model import RunInfo
from ..records import format_params
from . import names as nm
from . import plots
from .html_compare import run_column_label

Cell = tuple[float, float, bool]  # change, worse, significant


def heatmap_bytes(runs: Sequence[RunInfo], comparisons: Sequence[Comparison], fmt: str,
                  labels: nm.InstanceLabels) -> bytes:
    """The heatmap of `comparisons` against runs[0] as svg, png or pdf bytes."""
    keys: list[tuple[str, str]] = []
    row_labels: list[str] = []
    cells: dict[tuple[tuple[str, str], int], Comparison] = {}
    for c in labels.sort(comparisons, lambda c: (c.bench, c.params)):
        k = (c.bench, format_params(c.params))
        if k not in keys:
            keys.append(k)
            row_labels.append(labels.shown(c.bench, c.params) or f"{k[0]} {k[1]}".strip())
        cells[(k, c.run_id)] = c
    # A column per run for the median, and per run and extra statistic (max, variance) where any was compared.
    columns: list[tuple[RunInfo, str]] = []
    for r in runs[1:]:
        columns.append((r, "median"))
        columns += [(r, name) for name in EXTRA_STATS if any(c.run_id == r.id and c.stat(name) for c in comparisons)]
    with_stats = len(columns) > len(runs) - 1

    def cell(k: tuple[str, str], r: RunInfo, name: str) -> Cell | None:
        c = cells.get((k, r.id))
        if c is None:
            return None
        if name == "median":
            return (c.change, c.worse, c.significant)
        st = c.stat(name)
        return None if st is None else (st.change, st.worse, st.significant)

    grid = [[cell(k, r, name) for r, name in columns] for k in keys]
    caveats = [[name == "median" and (k, r.id) in cells and bool(cells[(k, r.id)].caveat) for r, name in columns]
               for k in keys]
    fig = plots.heatmap_figure(
        row_labels,
        [run_column_label(r) + (f": {name}" if with_stats else "") for r, name in columns],
        grid,
        f"change of the median{', maximum and variance' if with_stats else ''} against run {runs[0].id} (%)",
        caveats=caveats,
        missing_label="not in that run, or not tested" if with_stats else "not in that run",
    )
    try:
        return plots.render(fig, fmt)
    finally:
        plots.close(fig)
