"""The counters of a run's results as one table model (report.tables) for
the terminal, Markdown and HTML: a row per instance with counters, a column
per counter counted somewhere (its name over its unit, per operation); a
value the counter could not count is '-'. docs/methods/counters.md."""

from __future__ import annotations

from typing import Sequence

from .. import counters as ctr
from ..fmt import MISSING, fmt_num
from ..model import BenchResult
from ..records import format_params
from .escaping import esc
from .results_table import params_html
from .tables import Cell, Column, Row, Table


def counter_title(c: ctr.CounterValue, ops: int | None) -> str:
    """Hover text of a counter cell: where the value per operation comes from."""
    text = f"{c.name}: {fmt_num(c.value)} {ctr.unit_label(c.unit)}"
    if c.total is not None and ops:
        total = f"{c.total:.0f}" if c.total.is_integer() else fmt_num(c.total)
        text += f" = {total} over {ops} operations"
    if c.multiplexed and c.running is not None:
        text += f"; counted {100 * c.running:.0f} % of the time and scaled"
    return text


def _value(v: ctr.CounterValue | None, ops: int | None) -> Cell:
    text = ctr.value_text(v, fmt_num)
    if v is None or not v.ok:
        return Cell(text, css="num muted")
    return Cell(text, title=counter_title(v, ops))


def counters_table(measured: Sequence[BenchResult], cols: Sequence[ctr.Column], attrs: str = "") -> Table:
    """`measured`: the results with counters (ctr.with_counters); `cols`: ctr.columns(measured)."""
    columns = (Column("benchmark"), Column("params")) + tuple(
        Column(f"{c.name}\n{ctr.unit_label(c.unit)}", True, md=c.label,
               html=f'{esc(c.name)}<br><span class="unit">{esc(ctr.unit_label(c.unit))}</span>')
        for c in cols)
    rows = []
    for r in measured:
        by_name = ctr.counters_by_name(r)
        params = format_params(r.params)
        rows.append(Row((Cell(r.bench, css="mono"), Cell(params or MISSING, md=params, html=params_html(r.params),
                                                          css="mono params"),
                         *(_value(by_name.get(c.name), ctr.ops(r)) for c in cols))))
    return Table(columns, tuple(rows), attrs)
