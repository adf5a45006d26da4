"""How a cell of `osmeter compare --by` looks, in every output: its text in
the terminal and Markdown tables, its colour, mark and number in the
heatmap figure and the HTML page, and the legend that says so.

Colours are compare's (plots.heat_colour: red for worse, green for better,
deeper for larger changes on a log scale, full at 2x); a change that is not
significant keeps a muted tint of its direction and is hatched, so its sign
shows and nobody mistakes it for a finding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .. import compare_by as cb
from ..compare import Comparison
from ..records import describe_instance
from . import flags as fl
from . import names as nm
from . import plots
from .compare_table import CAVEAT_MARK, cell_title  # one mark for both heatmaps
from .escaping import esc
from .compare_narrow import narrow_heatmap_html
from .tables import Cell, Column, Row, Table, html_cell, html_frame, html_td, quick_cell, value_cell
from ..fmt import fmt_num, fmt_quantity
from ..frozen import built

WHITE = "#ffffff"
BASE_COLOUR = "#eef2f7"  # the baseline column: its own medians
STATE_WORDS = {
    cb.MISSING: "missing",
    cb.SKIP: "skip",
    cb.ERROR: "error",
    cb.NO_BASELINE: "no baseline",
    cb.OTHER_UNIT: "other unit",
    cb.NO_SAMPLES: "no samples",
}
STATE_MEANINGS = {
    cb.MISSING: "the column's runs do not hold the instance",
    cb.SKIP: "skipped in the column's run (reason under the table)",
    cb.ERROR: "failed in the column's run (reason under the table)",
    cb.NO_BASELINE: "the baseline column has no ok result of the instance, so nothing to compare with",
    cb.OTHER_UNIT: "measured in another unit than in the baseline",
    cb.NO_SAMPLES: "no stored samples to compare",
}
MUTE = 0.6  # a non-significant cell's tint goes at most 1 - MUTE of the way from grey to its colour


def _rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


# where muted_colour starts and goes, worked out once (a heatmap has 20 000 cells)
_GREY_TO_RED = plots.towards(_rgb(plots.GREY), plots.RED)
_GREY_TO_GREEN = plots.towards(_rgb(plots.GREY), plots.GREEN)


def muted_colour(worse: float) -> str:
    """A change that is not significant: grey, tinted towards its direction in proportion to its size
    (on heat_colour's log scale), at most 1 - MUTE of the way."""
    if not math.isfinite(worse) or 1.0 + worse <= 0:
        return plots.GREY
    strength = min(1.0, abs(math.log2(1.0 + worse)) / plots.HEAT_LIMIT)
    return plots.mix(_GREY_TO_RED if worse > 0 else _GREY_TO_GREEN, (1 - MUTE) * strength)


@dataclass(frozen=True)
class Look:
    colour: str
    text: str  # the heatmap's number or word
    muted: bool  # not significant (hatched) or no figure: grey text
    caveat: bool  # a flagged figure behind it


def _compared_look(c: Comparison, caveat: str) -> tuple[str, str]:
    """A compared cell's colour and text (`caveat`: c.caveat, read once)."""
    if math.isnan(c.ratio):
        return WHITE, "n/a"
    worse = c.worse
    return (plots.heat_colour(worse) if c.significant else muted_colour(worse),
            plots.percent_text(c.change) + (CAVEAT_MARK if caveat else ""))


def look(cell: cb.Cell, unit: str | None = None) -> Look:
    """A heatmap cell: colour, the change in whole percent (or the state's word: the baseline's median,
    scaled in `unit`'s steps), and its marks."""
    c = cell.comparison
    if c is not None:
        caveat = c.caveat
        colour, text = _compared_look(c, caveat)
        return built(Look, {"colour": colour, "text": text, "muted": math.isnan(c.ratio) or not c.significant,
                            "caveat": bool(caveat)})
    if cell.state == cb.BASELINE:
        return Look(BASE_COLOUR, fmt_quantity(cell.median, unit, 3) if unit else fmt_num(cell.median, 3), False, False)
    return Look(WHITE, STATE_WORDS.get(cell.state, cell.state), True, False)


_VERDICT_MARKS = {"slower": " slower", "faster": " faster"}


def change_text(c: Comparison) -> str:
    """`+12.3% slower`, `-20.1% faster!`, `+1.2% ~`: the change with its verdict mark (terminal, Markdown)."""
    if math.isnan(c.ratio):
        return "n/a"
    mark = _VERDICT_MARKS.get(c.verdict, " ~")
    return f"{100 * c.change:+.1f}%{mark}" + (f" {CAVEAT_MARK}" if c.caveat else "")


def cell_text(cell: cb.Cell, unit: str | None = None) -> str:
    if cell.comparison is not None:
        return change_text(cell.comparison)
    if cell.state == cb.BASELINE:
        return fmt_quantity(cell.median, unit)
    return STATE_WORDS.get(cell.state, cell.state)


def row_name(row: cb.Row, labels: nm.InstanceLabels) -> str:
    """The row's label: LEBench's row name under --names lebench, else `bench params`."""
    shown = labels.shown(row.bench, row.params)
    if shown:
        return shown
    name = labels.instance(row.bench, row.params)
    return name + (f" (#{row.key[2] + 1})" if row.key[2] else "")


def ordered_rows(outcome: cb.ByOutcome, labels: nm.InstanceLabels) -> list[cb.Row]:
    """The baseline's order (its suite's), or LEBench's table under --names lebench."""
    return labels.sort(outcome.rows, lambda r: (r.bench, r.params))


def column_title(outcome: cb.ByOutcome, i: int) -> str:
    col = outcome.columns[i]
    return col.name + (" (baseline)" if i == outcome.baseline else "")


def _from_other_run(cell: cb.Cell, column: cb.Column) -> str:
    """The hover's last line when the cell comes from another run of the column than its own."""
    if cell.run_id is not None and cell.run_id != column.run.id:
        return f"\nfrom run {cell.run_id} (the column's run {column.run.id} does not hold it ok)"
    return ""


def _compared_td(cell: cb.Cell, column: cb.Column, instance: str) -> str:
    """A compared cell of the page (most of a heatmap's 20 000): coloured, hatched when not
    significant, the hover says all. Its text needs no escaping: digits, a sign, the mark, or n/a."""
    c = cell.comparison
    assert c is not None
    caveat = c.caveat
    colour, text = _compared_look(c, caveat)
    css = "cell" if c.significant else "cell ns hatch"
    if caveat:
        css += " caveat"
        if text.endswith(CAVEAT_MARK):
            text = text[: -len(CAVEAT_MARK)] + f'<span class="mark">{CAVEAT_MARK}</span>'
    return html_td(text, css, cell_title(c, instance=instance) + _from_other_run(cell, column),
                   f"background:{colour}" if colour != WHITE else "")


def _state_cell(cell: cb.Cell, column: cb.Column, row: cb.Row, instance: str) -> Cell:
    """A cell of the page that is not compared: the baseline's median, or the state's word."""
    lk = look(cell, row.unit)
    if cell.state == cb.BASELINE:
        css = "cell base"
        title = f"{instance}\nbaseline: run {cell.run_id}, median {fmt_quantity(cell.median, row.unit)}"
    else:
        css = "cell missing"
        title = f"{instance}\n{column.name}: {STATE_MEANINGS[cell.state]}" + (
            f"\n{cell.reason}" if cell.reason else "")
    return Cell(cell_text(cell, row.unit), html=esc(lk.text), css=css, title=title + _from_other_run(cell, column),
                style=f"background:{lk.colour}" if lk.colour != WHITE else "")


def _columns(outcome: cb.ByOutcome, subtitle: Any = None) -> tuple[Column, ...]:
    """The benchmark, its unit (terminal and Markdown; HTML shows it in the row header), a column per
    column of the comparison. `subtitle(run)`: a column header's hover in HTML."""
    return (Column("benchmark", css="corner", html=""), Column("unit", dialects=("text", "md"))) + tuple(
        Column(column_title(outcome, i), True, css="run",
               title=f"run {c.run.id}: " + subtitle(c.run) if subtitle else "")
        for i, c in enumerate(outcome.columns))


def heatmap_table(outcome: cb.ByOutcome, labels: nm.InstanceLabels) -> Table:
    """Rows x columns for the terminal and Markdown: a row per instance (its name and unit), a cell per
    column: the change and verdict mark (cell_text), the baseline's median, or the state's word. The
    page's is heatmap_html."""
    rows = [Row((Cell(row_name(row, labels)), Cell(row.unit or "-"),
                 *(quick_cell(text=cell_text(c, row.unit)) for c in row.cells))) for row in ordered_rows(outcome, labels)]
    return Table(_columns(outcome), tuple(rows))


_HEATMAP_ATTRS = 'class="heatmap" id="heatmap-by"'


def heatmap_html(outcome: cb.ByOutcome, labels: nm.InstanceLabels, subtitle: Any = None) -> str:
    """heatmap_table for the page: the row header names the instance and its unit; each cell is
    coloured, hatched when not significant, and its hover says all. Written straight to HTML
    (tables.html_td): a hundred hosts make 20 000 cells. Two columns (one compared): compare_narrow's
    table instead, each row read left to right (the medians, the change, the ratio's bar)."""
    if len(outcome.columns) == 2:
        return _narrow_html(outcome, labels)
    columns = _columns(outcome, subtitle)
    body = []
    for row in ordered_rows(outcome, labels):
        name = row_name(row, labels)
        unit = f' <span class="muted">{esc(row.unit)}</span>' if row.unit else ""
        instance = describe_instance(row.bench, row.params)
        head = html_cell(Cell(name, html=esc(name) + unit, css="bench mono", head=True), columns[0])
        cells = "".join(_compared_td(cell, col, instance) if cell.comparison is not None
                        else html_cell(_state_cell(cell, col, row, instance), shown)
                        for cell, col, shown in zip(row.cells, outcome.columns, columns[2:]))
        body.append(f"<tr>{head}{cells}</tr>\n")
    return html_frame(columns, _HEATMAP_ATTRS, "".join(body))


def _narrow_html(outcome: cb.ByOutcome, labels: nm.InstanceLabels) -> str:
    """The page's heatmap of two columns: a row per compared instance (the others are under "Not
    compared"), its cell the heatmap's own."""
    other = 1 - outcome.baseline
    column = outcome.columns[other]
    found: dict[int, tuple[cb.Cell, str]] = {}
    rows = []
    for row in ordered_rows(outcome, labels):
        cell = row.cells[other]
        if cell.comparison is None:
            continue
        instance = describe_instance(row.bench, row.params)
        found[id(cell.comparison)] = (cell, instance)
        name = row_name(row, labels)
        rows.append((name, instance if instance != name else "", cell.comparison))

    def cell_html(c: Comparison | None) -> str:
        if c is None:
            return '<td class="cell missing"></td>'
        cell, instance = found[id(c)]
        return _compared_td(cell, column, instance)

    return narrow_heatmap_html(rows, column.run, column_title(outcome, other), cell_html)


def caveat_flags(outcome: cb.ByOutcome) -> list[str]:
    return fl.ordered(f for c in outcome.comparisons for f in c.caveat.split(", ") if f)


def counts_line(outcome: cb.ByOutcome) -> str:
    """`12 cells compared, 3 significant (2 slower, 1 faster; 1 with a caveat); 2 skip, 1 missing`."""
    comps = outcome.comparisons
    sig = [c for c in comps if c.significant]
    slower = sum(1 for c in sig if c.worse > 0)
    others: dict[str, int] = {}
    for row in outcome.rows:
        for i, cell in enumerate(row.cells):
            if i != outcome.baseline and cell.state != cb.COMPARED:
                word = STATE_WORDS.get(cell.state, cell.state)
                others[word] = others.get(word, 0) + 1
    rest = "; " + ", ".join(f"{n} {w}" for w, n in others.items()) if others else ""
    cells = f"{len(comps)} cell{'' if len(comps) == 1 else 's'}"
    return (f"{cells} compared, {len(sig)} significant ({slower} slower, {len(sig) - slower} faster; "
            f"{sum(1 for c in sig if c.caveat)} with a caveat){rest}")


def legend_lines(outcome: cb.ByOutcome) -> list[str]:
    """What the marks of the table mean (terminal and Markdown)."""
    base = outcome.columns[outcome.baseline].name
    lines = [
        f"cells: the change of the median against the baseline column {base} (its column: its medians, in the "
        "row's unit)",
        f"  slower / faster: significant: the 95% interval of the ratio excludes 1 and |change| > "
        f"{100 * outcome.threshold:g}% (--threshold); for a rate (bytes_per_s) a rise is faster",
        "  ~: no significant change",
        "  the interval: " + ("as compare RUN RUN makes it (--bootstrap)" if outcome.bootstrap else
                              "from the two results' stored intervals (--bootstrap: as compare RUN RUN makes it)"),
    ]
    states = {cell.state for row in outcome.rows for cell in row.cells} - {cb.COMPARED, cb.BASELINE}
    lines += [f"  {STATE_WORDS[s]}: {STATE_MEANINGS[s]}" for s in cb.STATES if s in states]
    flags = caveat_flags(outcome)
    if flags:
        lines += [f"  {CAVEAT_MARK}: a flagged figure behind the cell (either side), which the verdict cannot vouch for:"]
        lines += [f"    {name}: {text}" for name, text in fl.legend(flags)]
    return lines


def reasons(outcome: cb.ByOutcome, labels: nm.InstanceLabels) -> list[str]:
    """Why cells have no comparison, one line per reason and instance: `syscall.null: needs root (host-b, host-c)`."""
    seen: dict[str, list[str]] = {}
    for row in ordered_rows(outcome, labels):
        for col, cell in zip(outcome.columns, row.cells):
            if cell.state not in (cb.COMPARED, cb.BASELINE, cb.MISSING):
                seen.setdefault(f"{row_name(row, labels)}: {STATE_WORDS[cell.state]}: {cell.reason}", []).append(
                    col.name)
    return [f"{why} ({', '.join(cols)})" for why, cols in seen.items()]


def sysinfo_table(outcome: cb.ByOutcome) -> Table:
    """The machine facts that differ between the columns: a row per key, a value per column."""
    columns = (Column("sysinfo that differs", md="key"),) + tuple(
        Column(column_title(outcome, i)) for i in range(len(outcome.columns)))
    rows = tuple(Row((Cell(d.key, css="key mono"), *(value_cell(v) for v in d.values))) for d in outcome.differences)
    return Table(columns, rows, 'class="differences" id="sysinfo-diff"')


def columns_used(outcome: cb.ByOutcome) -> list[str]:
    """`host-a: run 3 (complete)` per column; for a column of several runs, each of them and its use."""
    out = []
    for c in outcome.columns:
        out += c.notes() or [f"{c.name}: run {c.run.id} ({c.run.status})"]
    return out
