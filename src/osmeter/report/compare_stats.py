"""How `osmeter compare` shows the maximum and the variance (osmeter.compare's
StatChange): the indented rows of the terminal table, the JSON, the count
lines under the table, and the HTML page's heatmaps and table of them."""

from __future__ import annotations

import math
from typing import Any, Sequence

from ..compare import EXTRA_STATS, STAT_METHODS, STAT_VARIANCE, Comparison, StatChange, nan_to_none
from ..model import RunInfo
from ..records import describe_instance, format_params
from ..stats import CI_LEVEL
from . import names as nm
from . import plots
from .escaping import esc
from .names import run_subtitle
from .tables import Cell, Column, Row, Table, to_html
from ..fmt import fmt_num, fmt_p, scale_of

STAT_TITLES = {"max": "Change of the maximum", "variance": "Change of the variance"}


def stat_unit(st: StatChange) -> str:
    return f"{st.unit}^2" if st.stat == STAT_VARIANCE and st.unit else st.unit or ""


def stat_values(st: StatChange) -> tuple[str, str]:
    """The baseline's and the run's value, scaled in the baseline's step: a maximum as its unit
    ('1.204 ms'), a variance as that unit squared ('3.1 ms^2', the step of its square root)."""
    if st.stat == STAT_VARIANCE and st.unit:
        root = math.sqrt(st.baseline) if st.baseline == st.baseline and st.baseline > 0 else math.nan
        scale = scale_of(root, st.unit)
        return tuple(f"{fmt_num(v / scale.factor ** 2)} {scale.suffix}^2" if v == v else "-"  # type: ignore[return-value]
                     for v in (st.baseline, st.value))
    scale = scale_of(st.baseline, st.unit)
    return scale(st.baseline), scale(st.value)


def stat_rows(c: Comparison) -> list[list[str]]:
    """The maximum and the variance of one comparison as indented rows under it, in the table's columns."""
    return [
        [
            f"  {st.stat}",
            "",
            "",
            *stat_values(st),
            "-" if math.isnan(st.ratio) else f"{st.ratio:.3f}",
            "-" if math.isnan(st.p_value) else f"p={fmt_p(st.p_value)}".replace("p=<", "p<"),
            "-" if math.isnan(st.ratio) else f"{100 * st.change:+.1f}%",
            st.verdict,
        ]
        for st in c.stats
    ]


def stats_json(c: Comparison) -> list[dict[str, Any]]:
    return [
        {
            "stat": st.stat,
            "baseline": nan_to_none(st.baseline),
            "value": nan_to_none(st.value),
            "ratio": nan_to_none(st.ratio),
            "change": nan_to_none(st.change),
            "worse": nan_to_none(st.worse),
            "p_value": nan_to_none(st.p_value),
            "significant": st.significant,
            "verdict": st.verdict,
            "test": st.test,
        }
        for st in c.stats
    ]


def summary_lines(comparisons: Sequence[Comparison], threshold: float) -> list[str]:
    """Per statistic compared: how many, how many significant each way, the test and the rule."""
    out = []
    for name in EXTRA_STATS:
        tested = [st for c in comparisons if (st := c.stat(name)) is not None]
        if tested:
            up = sum(1 for st in tested if st.significant and st.change > 0)
            down = sum(1 for st in tested if st.significant and st.change < 0)
            out.append(f"{name}: {len(tested)} compared, {up + down} significant ({up} higher, {down} lower); "
                       f"{STAT_METHODS[name]}; significant = p < {1 - CI_LEVEL:.2g} and |change| > "
                       f"{100 * threshold:g}%")
    return out


def stat_line(st: StatChange) -> str:
    """`max 120.0 → 310.0 (+158.3%, higher): 7 of the run's ... ; p=0.001`."""
    change = "n/a" if math.isnan(st.ratio) else f"{100 * st.change:+.1f}%"
    baseline, value = stat_values(st)
    return f"{st.stat} {baseline} → {value} ({change}, {st.verdict}): {st.test}"


def _stat_cell(c: Comparison | None, name: str) -> str:
    st = c.stat(name) if c is not None else None
    if c is None or st is None:
        return '<td class="cell missing" title="not compared">–</td>'
    title = esc(f"{describe_instance(c.bench, c.params)}\nrun {c.run_id} vs baseline {c.baseline_id}\n{stat_line(st)}")
    if math.isnan(st.ratio):
        return f'<td class="cell missing" title="{title}">n/a</td>'
    colour = plots.heat_colour(st.worse) if st.significant else plots.GREY
    cls = "cell" if st.significant else "cell ns"
    return f'<td class="{cls}" style="background:{colour}" title="{title}">{plots.percent_text(st.change)}</td>'


SIGNIFICANT_COLUMNS = (Column("benchmark"), Column("params"), Column("run", True), Column("statistic"),
                       Column("baseline", True), Column("run value", True), Column("change", True), Column("p", True),
                       Column("verdict"), Column("test"))


def _significant_table(significant: Sequence[tuple[Comparison, StatChange]]) -> str:
    rows = tuple(
        Row((Cell(c.bench, css="mono"), Cell(format_params(c.params), css="mono"), Cell(str(c.run_id)), Cell(st.stat),
             *(Cell(v) for v in stat_values(st)), Cell(f"{100 * st.change:+.1f}%"),
             Cell(fmt_p(st.p_value)), Cell(st.verdict, html=f'<span class="badge">{esc(st.verdict)}</span>'),
             Cell(st.test)))
        for c, st in sorted(significant, key=lambda x: -x[1].worse)
    )
    return to_html(Table(SIGNIFICANT_COLUMNS, rows, 'class="stat-changes"'))


def stat_sections_html(comparisons: Sequence[Comparison], others: Sequence[RunInfo], labels: nm.InstanceLabels,
                       threshold: float, instances: Any, column_label: Any) -> str:
    """A heatmap per extra statistic (max, variance) over the instances that
    compared it, and the table of their significant changes. `instances`
    orders and names the rows (html_compare._instances), `column_label`
    names a run's column (html_compare.run_column_label)."""
    parts = []
    significant: list[tuple[Comparison, StatChange]] = []
    for name in EXTRA_STATS:
        with_stat = [c for c in comparisons if c.stat(name) is not None]
        if not with_stat:
            continue
        order, by_key, names = instances(with_stat, labels)
        head = "".join(f'<th class="run" title="{esc(run_subtitle(r))}">{esc(column_label(r))}</th>' for r in others)
        rows = [f'<tr><th class="bench mono">{esc(names[key])}</th>'
                + "".join(_stat_cell(by_key[key].get(r.id), name) for r in others) + "</tr>\n" for key in order]
        parts += [
            f"<h2>{esc(STAT_TITLES[name])}</h2>",
            f'<p class="muted">Each cell: the change of the {esc(name)} in %, coloured when significant: '
            f"{esc(STAT_METHODS[name])}; significant when p &lt; 0.05 and the change exceeds the noise threshold "
            f"({100 * threshold:g} %). Hover a cell for the values and the test.</p>",
            f'<div class="scroll"><table class="heatmap" id="heatmap-{esc(name)}"><thead><tr><th class="corner"></th>'
            f"{head}</tr></thead><tbody>\n{''.join(rows)}</tbody></table></div>",
        ]
        significant += [(c, st) for c in with_stat if (st := c.stat(name)) is not None and st.significant]
    if not parts:
        return ""
    parts.append("<h2>Significant changes of the maximum and the variance</h2>")
    parts.append(_significant_table(significant) if significant else '<p class="muted">None.</p>')
    return "\n".join(parts)
