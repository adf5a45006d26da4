"""The results table of a run, defined once for `osmeter show`/`run`, the
Markdown report and the HTML report: every column's header, alignment and
cell in one place (report.tables renders them).

A column appears when it has something to say: the LEBench row name and
average under --names lebench, R when the instances had different numbers
of repetitions, ref cycles when a clock counted them, flags when a result is
flagged. Which columns each dialect shows, in which order, is the VIEWS
table below: the terminal's is the narrowest. A skipped or failed result
(Markdown, HTML) keeps its name, unit and status; its statistics columns
become one cell holding its reason in HTML, empty cells in Markdown, whose
status cell carries the reason.
"""

from __future__ import annotations

from typing import Sequence

from ..fmt import MISSING, fmt_num, fmt_percent
from ..lebench import RowNames
from ..model import BenchResult
from ..records import format_params
from . import flags as fl
from . import names as nm
from . import summary as sm
from ..warnings import HIGH_CV  # the HTML marks the CV the high-cv warning names
from .escaping import esc
from .tables import Cell, Column, Row, Table

Item = tuple[str | None, BenchResult]  # (LEBench row name or None, result)

# Columns that hold a statistic: a result without one (skip, error) shows its reason across them.
STATISTICS = ("median", "ci", "ref_cycles", "best", "kbest", "lebench_kbest", "average", "cv", "n", "r", "outliers")

VIEWS = {
    "text": ("lebench_row", "benchmark", "params", "median", "ci", "best", "kbest", "average", "cv", "n", "r",
             "unit", "lebench_kbest", "flags"),
    "md": ("lebench_row", "benchmark", "params", "median", "ci", "ref_cycles", "best", "lebench_kbest", "kbest",
           "average", "cv", "n", "r", "unit", "status", "flags"),
    "html": ("lebench_row", "benchmark", "params", "median", "ci", "ref_cycles", "best", "lebench_kbest", "kbest",
             "average", "cv", "n", "r", "outliers", "unit", "status", "flags"),
}

HEADERS = {
    "lebench_row": ("LEBench row", False), "benchmark": ("benchmark", False), "params": ("params", False),
    "median": ("median", True), "ci": ("95% CI of median", True), "ref_cycles": ("ref cycles", True),
    "best": ("best", True), "kbest": ("k-best", True), "lebench_kbest": ("lebench_kbest", True),
    "average": ("average", True), "cv": ("CV %", True), "n": ("n", True), "r": ("R", True),
    "outliers": ("outliers", True), "unit": ("unit", False), "status": ("status", False), "flags": ("flags", False),
}


def shown_columns(results: Sequence[BenchResult], names: RowNames | None, view: str,
                  with_r: bool | None = None) -> list[str]:
    """The keys of the columns `view` shows for these results, in its order."""
    wanted = {
        "lebench_row": names is not None,
        "kbest": names is not None,
        "lebench_kbest": names is None,
        "average": names is not None,
        "ref_cycles": any(sm.ref_cycles(r) is not None for r in results),
        "r": sm.needs_r_column(results) if with_r is None else with_r,
        "flags": any(r.flags for r in results),
    }
    return [k for k in VIEWS[view] if wanted.get(k, True)]


def status_badge(status: str) -> str:
    return f'<span class="badge {esc(status)}">{esc(status)}</span>'


def params_html(params: dict) -> str:
    """key=value pairs that wrap between pairs, never inside one."""
    return " ".join(f'<span class="p">{esc(format_params({k: params[k]}))}</span>' for k in sorted(params))


def flag_badges(r: BenchResult) -> str:
    """The result's flags as badges, each with what it means as its title."""
    return " ".join(f'<span class="flag" title="{esc(fl.describe(f))}">{esc(word)}</span>'
                    for f, word in zip(fl.ordered(r.flags), fl.flag_words(r)))


def _kbest(r: BenchResult) -> str:
    s = r.summary
    assert s is not None
    return fmt_num(s.lebench_kbest) + ("" if s.kbest_stable else "*")


_STATISTIC_TEXT = {  # key -> its text, from the result and its summary (one table, not rebuilt per cell)
    "median": lambda r, s: fmt_num(s.median),
    "ref_cycles": lambda r, s: sm.ref_cycles_text(r),
    "best": lambda r, s: fmt_num(sm.best(r)),
    "kbest": lambda r, s: _kbest(r),
    "lebench_kbest": lambda r, s: _kbest(r),
    "average": lambda r, s: fmt_num(s.mean),
    "n": lambda r, s: str(s.n),
    "r": lambda r, s: str(sm.repetitions(r)),
    "outliers": lambda r, s: str(s.outliers),
}


def _statistic(key: str, r: BenchResult) -> Cell:
    s = r.summary
    assert s is not None
    if key == "ci":
        return Cell(f"{fmt_num(s.ci_low)} .. {fmt_num(s.ci_high)}", md=f"{fmt_num(s.ci_low)} – {fmt_num(s.ci_high)}")
    if key == "cv":
        return Cell(fmt_percent(s.cv), css="num hot" if s.cv > HIGH_CV else "num")
    return Cell(_STATISTIC_TEXT[key](r, s))


def _cell(key: str, item: Item, anchors: dict[str, str], html: bool) -> Cell:
    row_name, r = item
    if key == "lebench_row":
        return Cell(row_name or "")
    if key == "benchmark":
        link = f'<a href="#{anchors[r.bench]}">{esc(r.bench)}</a>' if html and r.bench in anchors else None
        return Cell(r.bench, html=link, css="mono")
    if key == "params":
        text = format_params(r.params)
        return Cell(text or MISSING, md=text, html=params_html(r.params) if html else None, css="mono params")
    if key == "unit":
        return Cell(r.unit or MISSING, md=r.unit or "")
    if key == "status":
        said = r.status if r.summary is not None else f"{r.status}: {r.reason}"
        return Cell(said, html=status_badge(r.status) if html else None)
    if key == "flags":
        return Cell(fl.flags_text(r), html=flag_badges(r) if html else None)
    return _statistic(key, r)


def _row(item: Item, keys: Sequence[str], anchors: dict[str, str], html: bool) -> Row:
    r = item[1]
    if r.summary is not None:
        cells = tuple(_cell(k, item, anchors, html) for k in keys)
    else:  # skip or error: its reason across the statistics columns
        stats = [k for k in keys if k in STATISTICS]
        out: list[Cell] = []
        for k in keys:
            if k not in STATISTICS:
                out.append(_cell(k, item, anchors, html))
            elif k == stats[0]:
                out.append(Cell("", html=esc(r.reason or ""), css="reason", span=len(stats)))
        cells = tuple(out)
    return Row(cells, "flagged" if r.flags else "")


def results_table(results: Sequence[BenchResult], names: RowNames | None, view: str,
                  with_r: bool | None = None, anchors: dict[str, str] | None = None, attrs: str = "") -> Table:
    """The results as `view` (text, md, html) shows them; `anchors`: bench -> the id its
    figures have in the HTML page (its name links there)."""
    keys = shown_columns(results, names, view, with_r)
    columns = tuple(Column(*HEADERS[k]) for k in keys)
    html = view == "html"  # the other views show no HTML forms: not made (a fleet report has 20 000 rows)
    rows = tuple(_row(item, keys, anchors or {}, html) for item in nm.labelled(results, names))
    return Table(columns, rows, attrs)
