"""`osmeter compare --by ... -o FILE.svg|png|pdf`: the heatmap of columns
(hosts, kernels, labels) against the baseline column as a figure, and under
it the machine facts that differ between the columns.

Rows: benchmark instances; columns: the columns in their order, the
baseline's holding its medians. Each cell: the change of the median in
whole percent, coloured as compare colours it (report.by_cells.look);
hatched and muted when not significant; the state's word (skip, error,
missing, ...) on white when there is no comparison. Laid out in inches,
once (no constrained layout), so 50 rows × 10 columns stay legible.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from .. import compare_by as cb
from . import by_cells as bc
from . import names as nm
from . import plots

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

CELL_W, CELL_H = 0.62, 0.24  # inches
CHAR_W = 0.068  # inches per character at 9 pt
VALUE_CHARS = 34  # a machine value longer than this is cut (…) in the figure; the HTML page has it whole
LINE_H = 0.2


def _cut(text: str, limit: int = VALUE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cells(ax: "Axes", outcome: cb.ByOutcome, rows: Sequence[cb.Row]) -> None:
    """Colours (one mesh), numbers and words, the hatching of the non-significant cells."""
    import numpy as np
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    n_rows, n_cols = len(rows), len(outcome.columns)
    rgb = np.ones((n_rows, n_cols, 3))
    hatched = []
    for i, row in enumerate(rows):
        for j, cell in enumerate(row.cells):
            lk = bc.look(cell)
            rgb[i, j] = [int(lk.colour[k : k + 2], 16) / 255 for k in (1, 3, 5)]
            if cell.comparison is not None and not cell.comparison.significant:
                hatched.append(Rectangle((j, i), 1, 1))
            colour = "#6b6b6b" if lk.muted else "#1f3b5c" if cell.state == cb.BASELINE else "#000000"
            weight = "bold" if lk.caveat else "normal"
            ax.text(j + 0.5, i + 0.5, lk.text, ha="center", va="center", fontsize=7, color=colour, fontweight=weight)
    ax.pcolormesh(np.arange(n_cols + 1), np.arange(n_rows + 1), rgb, edgecolors="#ffffff", linewidth=0.8)
    if hatched:
        ax.add_collection(PatchCollection(hatched, facecolor="none", edgecolor="#ffffff", linewidth=0, hatch="////"))


def _legend(ax: "Axes", outcome: cb.ByOutcome) -> None:
    from matplotlib.patches import Patch

    handles = [Patch(color=plots.heat_colour(0.5), label="slower / worse"),
               Patch(color=plots.heat_colour(-0.33), label="faster / better"),
               Patch(facecolor=bc.muted_colour(0.25), hatch="////",
                     edgecolor="#ffffff", label="no significant change"),
               Patch(color=bc.BASE_COLOUR, label="baseline: its median")]
    states = {c.state for r in outcome.rows for c in r.cells} - {cb.COMPARED, cb.BASELINE}
    handles += [Patch(facecolor="#ffffff", edgecolor="#999999", label=f"{bc.STATE_WORDS[s]}: no comparison")
                for s in cb.STATES if s in states]
    if bc.caveat_flags(outcome):
        handles.append(Patch(facecolor="#ffffff", edgecolor="#ffffff", label="! flagged figure (caveat)"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7,
              title=f"change vs {_cut(outcome.columns[outcome.baseline].name, 20)} (%)", title_fontsize=8)


def _sysinfo(fig: "Figure", outcome: cb.ByOutcome, left: float, top: float, width: float, height: float) -> None:
    """The machine facts that differ, as a text table starting `top` inches from the figure's top."""
    if not outcome.differences:
        fig.text(left / width, 1 - top / height, "sysinfo: the columns' machine descriptions are the same",
                 fontsize=8, va="top")
        return
    key_w, val_w = _widths(outcome)
    fig.text(left / width, 1 - top / height, "sysinfo that differs between the columns", fontsize=9,
             fontweight="bold", va="top")
    header = ["key", *(bc.column_title(outcome, j) for j in range(len(outcome.columns)))]
    lines = [header, *([d.key, *(_cut(v) for v in d.values)] for d in outcome.differences)]
    for i, line in enumerate(lines):
        y = 1 - (top + (i + 1.4) * LINE_H) / height
        x = left
        for k, text in enumerate(line):
            fig.text(x / width, y, _cut(text) if k else text, fontsize=7.5, va="top", family="monospace",
                     fontweight="bold" if i == 0 else "normal")
            x += key_w if k == 0 else val_w[k - 1]


def _widths(outcome: cb.ByOutcome) -> tuple[float, list[float]]:
    """The sysinfo table's key column and value columns, in inches."""
    key_w = CHAR_W * max([3] + [len(d.key) for d in outcome.differences]) + 0.25
    val_w = [CHAR_W * min(VALUE_CHARS, max([len(bc.column_title(outcome, j))]
                                           + [len(_cut(d.values[j])) for d in outcome.differences])) + 0.25
             for j in range(len(outcome.columns))]
    return key_w, val_w


def sysinfo_width(outcome: cb.ByOutcome) -> float:
    if not outcome.differences:
        return 4.0
    key_w, val_w = _widths(outcome)
    return key_w + sum(val_w)


def heatmap_figure(outcome: cb.ByOutcome, labels: nm.InstanceLabels) -> "Figure":
    import matplotlib

    matplotlib.rcParams.update(plots.STYLE)
    from matplotlib.figure import Figure

    rows = bc.ordered_rows(outcome, labels)
    names = [bc.row_name(r, labels) for r in rows]
    cols = [bc.column_title(outcome, j) for j in range(len(outcome.columns))]
    label_w = plots.label_inches(names, 8) + 0.3
    head_h = 0.72 * plots.label_inches(cols, 8) + 0.12  # column names rotated 45 degrees, on top
    legend_w = 2.3
    grid_w, grid_h = CELL_W * len(cols), CELL_H * max(len(rows), 1)
    info_h = (len(outcome.differences) + 2.4) * LINE_H + 0.3
    width = max(label_w + grid_w + legend_w, sysinfo_width(outcome) + 0.6)
    title_h = 0.55
    height = title_h + head_h + grid_h + 0.35 + info_h
    fig = Figure(figsize=(width, height))
    plots.TRIM.add(fig)  # trimmed to its content when saved: the legend and the table's widths are estimates
    ax = fig.add_axes((label_w / width, 1 - (title_h + head_h + grid_h) / height, grid_w / width, grid_h / height))
    _cells(ax, outcome, rows)
    ax.set_xlim(0, len(cols))
    ax.set_ylim(len(rows), 0)
    ax.xaxis.tick_top()
    ax.set_xticks([j + 0.5 for j in range(len(cols))], cols, rotation=45, ha="left", rotation_mode="anchor",
                  fontsize=8)
    ax.set_yticks([i + 0.5 for i in range(len(rows))], names, fontsize=8)
    ax.tick_params(length=0)
    ax.grid(False)
    for spine in ax.spines.values():
        spine.set_visible(False)
    fleet = f" (fleet run {outcome.fleet})" if outcome.fleet else ""
    fig.suptitle(f"Change of the median by {outcome.by}{fleet}, against "
                 f"{_cut(outcome.columns[outcome.baseline].name, 40)}", x=0.02, y=1 - 0.12 / height,
                 ha="left", va="top", fontsize=10)
    _legend(ax, outcome)
    _sysinfo(fig, outcome, 0.3, title_h + head_h + grid_h + 0.35, width, height)
    return fig


def heatmap_bytes(outcome: cb.ByOutcome, labels: nm.InstanceLabels, fmt: str) -> bytes:
    fig = heatmap_figure(outcome, labels)
    try:
        return plots.render(fig, fmt.lstrip("."))
    finally:
        plots.close(fig)
