"""`--names osmeter|lebench`: how results are labelled and ordered in every output.

With `lebench`, a result is labelled with its LEBench row name
(osmeter.lebench.RowNames: the label the probe recorded, else an exact
match of benchmark and parameters with a row of the probe's table), the
rows come in LEBench's table order, and results that match no row follow
under their osmeter names, in the run's order. With `osmeter` (the
default) nothing is relabelled or reordered.

A run of `--suite lebench` also says once which of LEBench's rows have no
benchmark yet (the table's pending rows), whatever the names.
"""

from __future__ import annotations

import argparse
from types import SimpleNamespace
from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar

from .. import lebench
from ..catalog import LebenchRow
from ..lebench import RowNames
from ..model import BenchResult, RunInfo
from ..records import canonical_params, describe_instance
from ..sysinfo import KEY_HOSTNAME, KEY_KERNEL, machine_text
from .params import Defaults, telling_params

LEBENCH_SUITE = "lebench"
T = TypeVar("T")


def add_names_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--names",
        choices=lebench.NAME_STYLES,
        default="osmeter",
        help="label results with osmeter's names (default) or LEBench's row names, in LEBench's order "
        "(docs/lebench.md)",
    )


def row_names(style: str | None) -> RowNames | None:
    """The mapping for `--names STYLE` (None for osmeter's own names)."""
    return lebench.row_names(style or "osmeter")


def table_rows(names: RowNames | None, runs: Sequence[RunInfo]) -> tuple[LebenchRow, ...]:
    """LEBench's table when it is needed: for --names lebench, or for a run of the lebench suite."""
    if names is not None:
        return names.rows
    if any(r.suite == LEBENCH_SUITE for r in runs):
        found = lebench.row_names("lebench")
        return found.rows if found is not None else ()
    return ()


def label(names: RowNames | None, r: BenchResult) -> str | None:
    """The result's LEBench row name under these names (None: osmeter's names, or no row)."""
    if names is None:
        return None
    return names.name(r.bench, r.params, recorded=r.lebench_row)


def export_label(names: RowNames | None, r: BenchResult) -> str | None:
    """What an export's `lebench_row` holds: the recorded label, or with --names lebench also a matched one."""
    return names.name(r.bench, r.params, recorded=r.lebench_row) if names is not None else r.lebench_row


def labelled(results: Sequence[BenchResult], names: RowNames | None) -> list[tuple[str | None, BenchResult]]:
    """(LEBench row or None, result), in LEBench's order under --names lebench, else as given."""
    pairs = [(label(names, r), r) for r in results]
    if names is None:
        return pairs
    return sorted(pairs, key=lambda p: names.order(p[0]))  # stable: the run's order within a place


class InstanceLabels:
    """LEBench row names of instances known by benchmark and parameters only (compare's
    comparisons): the label any of the runs recorded, or with --names lebench a matching row."""

    def __init__(self, names: RowNames | None, results: Iterable[BenchResult] = (),
                 defaults: Defaults | None = None) -> None:
        self.names = names
        self._recorded: dict[tuple[str, str], str] = {}
        results = list(results)
        for r in results:
            if r.lebench_row:
                self._recorded.setdefault((r.bench, canonical_params(r.params)), r.lebench_row)
        # the parameters an instance is named by (report.params): those that vary among the results
        # given or differ from `defaults`; every one without defaults
        self._telling = telling_params(results, defaults) if defaults is not None else None

    def params(self, bench: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
        """The parameters a table names the instance by (all of them without the catalogue's defaults)."""
        if self._telling is None:
            return params
        return self._telling(SimpleNamespace(bench=bench, params=params))  # type: ignore[arg-type]

    def instance(self, bench: str, params: Mapping[str, Any]) -> str:
        """`task.fork vmas=6000`: the instance by its telling parameters."""
        return describe_instance(bench, self.params(bench, params))

    def row(self, bench: str, params: Mapping[str, Any]) -> str | None:
        """What a document's `lebench_row` holds: the recorded label, or with --names lebench a matched one."""
        recorded = self._recorded.get((bench, canonical_params(params)))
        return self.names.name(bench, params, recorded=recorded) if self.names is not None else recorded

    def shown(self, bench: str, params: Mapping[str, Any]) -> str | None:
        """The label a table shows: only under --names lebench."""
        return self.row(bench, params) if self.names is not None else None

    def sort(self, items: Sequence[T], instance: Callable[[T], tuple[str, Mapping[str, Any]]]) -> list[T]:
        """In LEBench's table order under --names lebench (stable), else as given."""
        if self.names is None:
            return list(items)
        names = self.names
        return sorted(items, key=lambda x: names.order(self.row(*instance(x))))


def pending_text(rows: Sequence[LebenchRow]) -> str | None:
    """`18 of 42 LEBench rows are pending: send, recv, ... (families ipc, file, poll not built yet)`."""
    pending = [r for r in rows if not r.available]
    if not pending:
        return None
    families = list(dict.fromkeys(r.bench.split(".", 1)[0] for r in pending))
    which = f"famil{'ies' if len(families) > 1 else 'y'} {', '.join(families)} not built yet"
    return (
        f"{len(pending)} of {len(rows)} LEBench rows are pending: {', '.join(r.name for r in pending)} ({which})"
    )


def missing_text(rows: Sequence[LebenchRow], results: Sequence[BenchResult], names: RowNames | None) -> str | None:
    """The available rows a lebench run holds no result for (an older or interrupted run)."""
    mapping = names if names is not None else RowNames(rows)
    have = {mapping.name(r.bench, r.params, recorded=r.lebench_row) for r in results}
    missing = [r.name for r in rows if r.available and r.name not in have]
    if not missing:
        return None
    return f"{len(missing)} available LEBench row(s) not in this run: {', '.join(missing)}"


def lebench_notes(run: RunInfo, results: Sequence[BenchResult], rows: Sequence[LebenchRow],
                  names: RowNames | None) -> list[str]:
    """What a run of the lebench suite says once about LEBench's table (nothing for other runs)."""
    if run.suite != LEBENCH_SUITE or not rows:
        return []
    notes = [pending_text(rows), missing_text(rows, results, names)]
    return [n for n in notes if n]


# --- a run's name and one-line description, as every report titles it ----------


def run_title(run: RunInfo) -> str:
    label = f" “{run.label}”" if run.label else ""
    return f"Run {run.id}{label}"


def run_subtitle(run: RunInfo) -> str:
    host = machine_text(run.machine, KEY_HOSTNAME) or "unknown host"
    kernel = machine_text(run.machine, KEY_KERNEL) or "unknown kernel"
    suite = f"{run.suite} suite" if run.suite else "selected benchmarks"
    return f"{suite} on {host}, Linux {kernel}, started {run.start_time}"
