"""osmeter's side of benchmarks/lebench_vs_osmeter.py: its LEBench table and
its stored lebench-suite runs, through its Python API."""
from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any, Mapping

from _lebench_parse import LebenchFigure, OsmeterFigure, RowSpec


def osmeter_rows(lebench: Mapping[str, LebenchFigure], results: Mapping[str, OsmeterFigure]) -> list[RowSpec]:
    """osmeter's LEBench table, from the installed probe; without a usable
    probe, LEBench's CSV order with the rows osmeter has results for."""
    from osmeter.errors import OsmeterError
    from osmeter.lebench import probe_rows

    try:
        return [RowSpec(r.name, r.available, r.note, r.pending) for r in probe_rows()]
    except OsmeterError as e:
        print(f"note: no osmeter-probe to read the LEBench table from ({e}); rows follow LEBench's CSV",
              file=sys.stderr)
    names = list(dict.fromkeys([*lebench, *results]))
    return [RowSpec(n, n in results, None, None if n in results else "no osmeter result") for n in names]


def stored_figures(store_path: Path, run_ref: str) -> tuple[Any, dict[str, OsmeterFigure]]:
    """(RunInfo, {LEBench row: figure}) of one stored run."""
    from osmeter.store import open_store

    store = open_store(str(store_path), create=False)
    try:
        run = store.run(run_ref)
        out = {}
        for res in store.results(run.id):
            row = res.lebench_row
            if row is None:
                continue
            s = res.summary
            out[row] = OsmeterFigure(
                status=res.status,
                median=s.median if s else math.nan, ci_low=s.ci_low if s else math.nan,
                ci_high=s.ci_high if s else math.nan, kbest=s.lebench_kbest if s else math.nan,
                mean=s.mean if s else math.nan, n=s.n if s else 0,
                unit=res.unit, flags=tuple(res.flags), reason=res.reason,
            )
        return run, out
    finally:
        store.close()


def is_exact(run: Any) -> bool:
    return bool(run.meta.get("lebench_exact") or run.params.get("lebench_exact"))


def latest_lebench_runs(store_path: Path) -> tuple[str | None, str | None]:
    """Ids of the latest lebench-suite runs of the store: (default, --lebench-exact)."""
    from osmeter.store import open_store

    store = open_store(str(store_path), create=False)
    try:
        runs = [r for r in store.runs() if r.suite == "lebench"]
    finally:
        store.close()
    default = [r.id for r in runs if not is_exact(r)]
    exact = [r.id for r in runs if is_exact(r)]
    return (str(max(default)) if default else None), (str(max(exact)) if exact else None)


def run_wall_seconds(run: Any) -> float | None:
    """A stored run's wall time from its start and end stamps (whole seconds)."""
    from datetime import datetime

    if not run.end_time:
        return None
    try:
        start = datetime.fromisoformat(run.start_time.replace("Z", "+00:00"))
        end = datetime.fromisoformat(run.end_time.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (end - start).total_seconds()


def check_units(*figures: Mapping[str, OsmeterFigure]) -> None:
    for figs in figures:
        for row, f in figs.items():
            if f.status == "ok" and f.unit not in (None, "ns"):
                sys.exit(f"osmeter row {row!r} is in {f.unit}, not ns: this script compares times only")


def latest_run_id(store: Path, label: str) -> str:
    from osmeter.store import open_store

    s = open_store(str(store), create=False)
    try:
        ids = [r.id for r in s.runs() if r.label == label]
    finally:
        s.close()
    if not ids:
        sys.exit(f"no run labelled {label!r} in {store}")
    return str(max(ids))

