"""The report's formats: one renderer per dialect (HTML, Markdown, plain
text) behind one registry, the runs' sections built once for all of them,
and the fleet run's report (report.fleet) by the same registry's names.
docs/report.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from .params import Defaults, catalog_defaults
from ..errors import UsageError
from ..model import BenchResult
from ..store.base import Store
from . import fleet as fleet_report
from . import html, markdown, text
from . import names as nm
from .content import RunReport, build_run_report
from .expect import Prediction, match

Renderer = Callable[[Sequence[RunReport], str], str]
FleetRenderer = Callable[[fleet_report.FleetReport, str], str]


@dataclass(frozen=True)
class Format:
    """One dialect's renderers: of runs, and of a fleet run (its hosts, their comparison, then its runs)."""

    runs: Renderer
    fleet: FleetRenderer


FORMATS: dict[str, Format] = {
    "html": Format(html.render_report, fleet_report.render_html),
    "md": Format(markdown.render_report, fleet_report.render_md),
    "txt": Format(text.render_report, fleet_report.render_txt),
}
RENDERERS: dict[str, Renderer] = {name: f.runs for name, f in FORMATS.items()}
SUFFIXES = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".txt": "txt"}
REFUSED = {".pdf": "osmeter has no PDF renderer (print the HTML report to PDF from a browser)"}
DEFAULT_FORMAT = "html"


def build_reports(
    store: Store,
    refs: Sequence[str],
    predictions: Sequence[Prediction],
    expect_path: str,
    with_figures: bool,
    names: str = "osmeter",
    read: Mapping[int, Sequence[BenchResult]] | None = None,
    progress: Callable[[str], None] | None = None,
    defaults: Defaults | None = None,
) -> list[RunReport]:
    """Each run's report. `read`: results already read, by run id (not read
    again); `progress` is told of each run whose figures are drawn, when
    there are several."""
    read = read or {}
    runs = []
    for ref in refs:
        info = store.run(ref)
        if any(info.id == r.id for r in runs):
            raise UsageError(f"run {info.id} is given twice")
        runs.append(info)
    if predictions:  # every unit checked before any figure is drawn
        for info in runs:
            match(predictions, read[info.id] if info.id in read else store.results(info.id), expect_path)
    row_names = nm.row_names(names)
    rows = nm.table_rows(row_names, runs)
    reports = []
    for i, info in enumerate(runs, 1):
        if progress is not None and with_figures and len(runs) > 1:
            progress(f"drawing the figures of run {info.id} ({i} of {len(runs)})")
        reports.append(build_run_report(store, info, predictions, expect_path, with_figures, row_names, rows,
                                        results=read.get(info.id), defaults=defaults))
    return reports


def draws_figures(fmt: str, fleet: str | None, run_figures: bool) -> bool:
    """Whether the report draws figures (matplotlib): the runs' in HTML; a fleet run's only with
    `run_figures`."""
    return fmt == "html" and (fleet is None or run_figures)


def render(
    store: Store,
    refs: Sequence[str],
    fmt: str,
    predictions: Sequence[Prediction] = (),
    expect_path: str = "",
    names: str = "osmeter",
    fleet: str | None = None,
    run_figures: bool = False,
    progress: Callable[[str], None] | None = None,
    all_runs: bool = False,
    wide: bool = False,
) -> str:
    """The report of the runs `refs` as text in format `fmt`; `names`: osmeter or lebench.
    A fleet run's report draws its runs' figures only when `run_figures` (HTML); it has every run's
    section when `all_runs`, `run_figures` or `predictions`, else when it has few runs (fleet.INLINE_RUNS)."""
    if fleet is not None:  # the fleet run's report: hosts, comparison by host, then its runs
        report = fleet_report.build(store, fleet, names, lambda s, runs, read: build_reports(
            s, runs, predictions, expect_path, with_figures=draws_figures(fmt, fleet, run_figures), names=names,
            read=read, progress=progress), all_runs=all_runs or run_figures or bool(predictions))
        return FORMATS[fmt].fleet(report, expect_path)
    reports = build_reports(store, refs, predictions, expect_path, with_figures=draws_figures(fmt, None, False),
                            names=names, defaults=None if wide else catalog_defaults())
    return FORMATS[fmt].runs(reports, expect_path)
