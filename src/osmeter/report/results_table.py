"""The results table of a run, defined once for `osmeter show`/`run`, the
Markdown report and the HTML report: every column's header, alignment and
cell in one place (report.tables renders them).

A column appears when it has something to say: the LEBench row name and
average under --names lebench, R when the instances had different numbers
of repetitions, ref cycles when a clock counted them, flags when a result is
flagged. Which columns each dialect shows, in which order, is the VIEWS
table below: the terminal's is the narrowest (`wide` is --wide's).

Every figure of a row is in its median's unit step (fmt.scale_of: 2.563 ms,
its interval 2.143 .. 3.064 ms, its best 1.562 ms), so no unit column; the
raw numbers and their unit are the exports'. The spread is the IQR over the
median and the tail p99 over the median (stats.iqr_ratio, tail_ratio); the
coefficient of variation only in the wide view. The parameters shown are
`params_of`'s (report.params: those that vary or differ from the default).
A skipped or failed result (Markdown, HTML) keeps its name and status; its statistics columns
become one cell holding its reason in HTML, empty cells in Markdown, whose
status cell carries the reason.
"""

from __future__ import annotations

from typing import Sequence

from ..fmt import MISSING, Scale, fmt_count, fmt_interval, fmt_num, fmt_percent, scale_of
from ..lebench import RowNames
from ..model import BenchResult
from ..records import describe_instance, format_params
from . import flags as fl
from . import names as nm
from . import summary as sm
from ..stats import iqr_ratio, tail_ratio
from .params import ParamsOf, every_param
from .escaping import esc
from .tables import Cell, Column, Row, Table

Item = tuple[str | None, BenchResult]  # (LEBench row name or None, result)

# Columns that hold a statistic: a result without one (skip, error) shows its reason across them.
STATISTICS = ("median", "ci", "ci_bare", "ref_cycles", "best", "kbest", "lebench_kbest", "average", "spread", "tail",
              "n", "r", "outliers")

# The terminal's view is the narrowest: it fits 100 columns (COLUMNS) by folding the params and flags
# columns; `wide` is every column on one line per result (--wide).
VIEWS = {
    "text": ("lebench_row", "instance", "median", "ci_bare", "best", "kbest", "spread", "tail", "n", "r", "flags"),
    "wide": ("lebench_row", "benchmark", "params", "median", "ci", "best", "kbest", "average", "spread", "tail", "n",
             "r", "lebench_kbest", "cv", "outliers", "unit", "flags"),
    "md": ("lebench_row", "benchmark", "params", "median", "ci", "ref_cycles", "best", "lebench_kbest", "kbest",
           "average", "spread", "tail", "n", "r", "status", "flags"),
    # the page's fits 1400 px: ref cycles on the median's hover, the outliers on the IQR's, status only
    # when a result is not ok
    "html": ("lebench_row", "benchmark", "params", "median", "ci", "best", "lebench_kbest", "kbest",
             "average", "spread", "tail", "n", "r", "status", "flags"),
}
FOLDED = ("flags", "lebench_row", "instance")  # the text view's columns that wrap to fit the width

HEADERS = {
    "lebench_row": ("LEBench row", False), "benchmark": ("benchmark", False), "params": ("params", False),
    "instance": ("benchmark", False), "median": ("median", True), "ci": ("95% CI of median", True),
    "ci_bare": ("95% CI\n(its unit)", True), "ref_cycles": ("ref cycles", True),
    "best": ("best", True), "kbest": ("k-best", True), "lebench_kbest": ("lebench_kbest", True),
    "average": ("average", True), "spread": ("IQR\n%", True), "tail": ("p99/\nmed", True), "cv": ("CV %", True),
    "n": ("n", True), "r": ("R", True), "outliers": ("outliers", True), "unit": ("unit", False),
    "status": ("status", False), "flags": ("flags", False),
}
ONE_LINE = {"spread": "IQR %", "tail": "p99/med", "ci_bare": "95% CI"}  # headers of two lines, in Markdown and HTML
TITLES = {  # HTML: what a header means, on hover
    "spread": "the interquartile range relative to the median (p75 - p25) / median: the spread of the samples, "
              "robust to a few interrupted ones (docs/statistics.md)",
    "tail": "the 99th percentile over the median: how far the slow tail reaches",
    "ci": "95 % confidence interval of the median, in the median's unit",
}
SPREAD_NOTE = ("IQR %: the interquartile range over the median, the samples' spread (a few interrupted samples "
               "barely move it); p99/med: the 99th percentile over the median, the tail")


def shown_columns(results: Sequence[BenchResult], names: RowNames | None, view: str,
                  with_r: bool | None = None) -> list[str]:
    """The keys of the columns `view` shows for these results, in its order."""
    wanted = {
        "lebench_row": names is not None,
        "kbest": names is not None,
        "lebench_kbest": names is None,
        "average": names is not None,
        "best": names is None or view != "text",  # the terminal's LEBench view has k-best in its place
        "ref_cycles": any(sm.ref_cycles(r) is not None for r in results),
        "r": sm.needs_r_column(results) if with_r is None else with_r,
        "flags": any(r.flags for r in results),
        "status": view != "html" or any(r.summary is None for r in results),
    }
    return [k for k in VIEWS[view] if wanted.get(k, True)]


def fold_columns(keys: Sequence[str]) -> list[int]:
    """The indices of the text view's columns that wrap to fit a width, in the order they narrow."""
    return [keys.index(k) for k in FOLDED if k in keys]


def status_badge(status: str) -> str:
    return f'<span class="badge {esc(status)}">{esc(status)}</span>'


def params_html(params: dict) -> str:
    """key=value pairs that wrap between pairs, never inside one."""
    return " ".join(f'<span class="p">{esc(format_params({k: params[k]}))}</span>' for k in sorted(params))


def flag_badges(r: BenchResult) -> str:
    """The result's flags as badges, each with what it means as its title."""
    return " ".join(f'<span class="flag" title="{esc(fl.describe(f))}">{esc(word)}</span>'
                    for f, word in zip(fl.ordered(r.flags), fl.flag_words(r)))


def _scale(r: BenchResult) -> Scale:
    """The row's step: its median's (every figure of the row in it, so they read side by side)."""
    s = r.summary
    assert s is not None
    return scale_of(s.median, r.unit)


def _kbest(r: BenchResult) -> str:
    s = r.summary
    assert s is not None
    return _scale(r)(s.lebench_kbest) + ("" if s.kbest_stable else "*")


def _ratio_pct(v: float) -> str:
    """A spread as a percentage: '3.2', '12', '240' ('-' when unknown)."""
    if v != v:
        return MISSING
    return f"{100 * v:.1f}" if 100 * v < 10 else f"{100 * v:.0f}"


def _times(v: float) -> str:
    """A ratio such as p99/median: '1.04x', '12.3x', '240x'."""
    if v != v:
        return MISSING
    return f"{fmt_num(v, 3)}x"


_STATISTIC_TEXT = {  # key -> its text, from the result and its summary (one table, not rebuilt per cell)
    "ref_cycles": lambda r, s: sm.ref_cycles_text(r),
    "best": lambda r, s: _scale(r)(sm.best(r)),
    "kbest": lambda r, s: _kbest(r),
    "lebench_kbest": lambda r, s: _kbest(r),
    "average": lambda r, s: _scale(r)(s.mean),
    "tail": lambda r, s: _times(tail_ratio(s)),
    "cv": lambda r, s: fmt_percent(s.cv),
    "n": lambda r, s: fmt_count(s.n),
    "r": lambda r, s: str(sm.repetitions(r)),
    "outliers": lambda r, s: fmt_count(s.outliers),
}


def _statistic(key: str, r: BenchResult) -> Cell:
    s = r.summary
    assert s is not None
    if key == "ci":
        return Cell(fmt_interval(s.ci_low, s.ci_high, r.unit, s.median),
                    md=fmt_interval(s.ci_low, s.ci_high, r.unit, s.median, " – "))
    if key == "ci_bare":  # the terminal's: in the median's step, its suffix the median's
        scale = _scale(r)
        return Cell(f"{scale.number(s.ci_low)} .. {scale.number(s.ci_high)}")
    if key == "tail":
        text = _times(tail_ratio(s))
        return Cell(text, md=text.replace("x", "×"))
    if key == "median":  # the page's hover: the reference cycles, which its table leaves out
        cycles = sm.ref_cycles_text(r)
        return Cell(_scale(r)(s.median), title=f"{cycles} reference cycles (TSC ticks)" if cycles else "")
    if key == "spread":
        return Cell(_ratio_pct(iqr_ratio(s)),
                    title=f"{fmt_count(s.outliers)} of {fmt_count(s.n)} samples outside Tukey's fences")
    return Cell(_STATISTIC_TEXT[key](r, s))


def _cell(key: str, item: Item, anchors: dict[str, str], html: bool, params_of: ParamsOf) -> Cell:
    row_name, r = item
    if key == "lebench_row":
        return Cell(row_name or "")
    if key == "benchmark":
        link = f'<a href="#{anchors[r.bench]}">{esc(r.bench)}</a>' if html and r.bench in anchors else None
        return Cell(r.bench, html=link, css="mono")
    if key == "instance":
        return Cell(describe_instance(r.bench, params_of(r)))
    if key == "params":
        shown = params_of(r)
        text = format_params(shown)
        return Cell(text or MISSING, md=text, html=params_html(shown) if html else None, css="mono params")
    if key == "unit":
        return Cell(r.unit or MISSING, md=r.unit or "")
    if key == "status":
        said = r.status if r.summary is not None else f"{r.status}: {r.reason}"
        return Cell(said, html=status_badge(r.status) if html else None)
    if key == "flags":
        return Cell(fl.flags_text(r), html=flag_badges(r) if html else None)
    return _statistic(key, r)


def _row(item: Item, keys: Sequence[str], anchors: dict[str, str], html: bool, params_of: ParamsOf) -> Row:
    r = item[1]
    if r.summary is not None:
        cells = tuple(_cell(k, item, anchors, html, params_of) for k in keys)
    else:  # skip or error: its reason across the statistics columns
        stats = [k for k in keys if k in STATISTICS]
        out: list[Cell] = []
        for k in keys:
            if k not in STATISTICS:
                out.append(_cell(k, item, anchors, html, params_of))
            elif k == stats[0]:
                out.append(Cell("", html=esc(r.reason or ""), css="reason", span=len(stats)))
        cells = tuple(out)
    return Row(cells, "flagged" if r.flags else "")


def results_table(results: Sequence[BenchResult], names: RowNames | None, view: str,
                  with_r: bool | None = None, anchors: dict[str, str] | None = None, attrs: str = "",
                  params_of: ParamsOf = every_param) -> Table:
    """The results as `view` (text, wide, md, html) shows them; `anchors`: bench -> the id its
    figures have in the HTML page (its name links there); `params_of`: the parameters each row
    shows (report.params.telling_params; every one by default)."""
    keys = shown_columns(results, names, view, with_r)
    columns = tuple(Column(*HEADERS[k], title=TITLES.get(k, ""), md=ONE_LINE.get(k)) for k in keys)
    html = view == "html"  # the other views show no HTML forms: not made (a fleet report has 20 000 rows)
    rows = tuple(_row(item, keys, anchors or {}, html, params_of) for item in nm.labelled(results, names))
    return Table(columns, rows, attrs)
