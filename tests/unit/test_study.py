"""The fork study's plan (probe arguments) and its table, without a probe."""

from __future__ import annotations

import math

import numpy as np
import pytest

from osmeter.runner import probe_argv
from osmeter.errors import EXIT_USAGE
from osmeter.studies.common import render_csv
from osmeter.studies.fork import SIZES_MIB, fork_options, render_text, table_rows
from osmeter.model import BenchResult
from osmeter.report.figures import RunData
from osmeter.report.figures.task import by_config, config_label, study_points
from osmeter.stats import summary


def test_the_matrix_is_one_probe_run_with_fixed_fork_counts(tmp_path) -> None:
    argv = probe_argv(tmp_path / "probe", fork_options(1000, drop_caches=True, cpu=1, label=None))
    assert argv[1:4] == ["run", "--die-with-parent", "task.fork"]
    params = [argv[i + 1] for i, a in enumerate(argv) if a == "--param"]
    assert params == ["concurrency=1,0", "migrate=0,1", "touched_mib=" + ",".join(map(str, SIZES_MIB)),
                      "drop_caches=1"]
    assert argv[argv.index("--min-samples") + 1] == argv[argv.index("--max-samples") + 1] == "1000"
    assert argv[argv.index("--counters") + 1] == "all"
    assert argv[argv.index("--cpu") + 1] == "1"
    assert float(argv[argv.index("--max-time") + 1]) >= 600
    plain = probe_argv(tmp_path / "probe", fork_options(100, False, None, None, counters="none"))
    assert "--counters" not in plain and "--cpu" not in plain and "--param" in plain


def _result(seq: int, mib: int, conc: int, migrate: int, values: list[float], counters: dict | None) -> BenchResult:
    params = {"touched_mib": mib, "thp": 0, "vmas": 0, "concurrency": conc, "migrate": migrate, "drop_caches": 0}
    return BenchResult(seq=seq, bench="task.fork", params=params, status="ok", unit="ns",
                       summary=summary(np.asarray(values)), batch=1,
                       extra={"concurrency": 2 if conc == 0 else 1}, counters=counters)


def _counters(task_clock: float) -> dict:
    return {"type": "counters", "ops": 3, "counters": [
        {"name": "task-clock", "status": "ok", "unit": "ns", "value": task_clock},
        {"name": "cycles", "status": "unsupported", "unit": "count", "value": None, "reason": "no PMU"}]}


def test_points_table_and_configurations() -> None:
    results = (
        _result(0, 1, 1, 0, [1e5, 2e5, 3e5], _counters(9e4)),
        _result(1, 1024, 1, 0, [3e7, 3.2e7, 3.4e7], _counters(1.5e7)),
        _result(2, 1, 0, 1, [2e5, 2e5, 2e5], None),
        BenchResult(seq=3, bench="task.fork", params={"touched_mib": 1024, "concurrency": 0, "migrate": 1},
                    status="skip", reason="not enough memory"),
    )
    data = RunData(run=None, results=results, samples=lambda r: None)  # type: ignore[arg-type]
    points = study_points(data)
    assert [p.config for p in points] == ["single, no migration"] * 2 + ["concurrent x2, migration"]
    assert points[0].counters == {"task-clock": 9e4} and points[0].unsupported == ("cycles",)
    assert list(by_config(points)) == ["single, no migration", "concurrent x2, migration"]
    header, rows = table_rows(points)
    assert header[:7] == ["configuration", "parent_mib", "forks", "min_ms", "mean_ms", "median_ms", "max_ms"]
    assert header[7:] == ["task-clock_per_fork_ms"]  # unsupported counters get no column
    assert rows[0][:7] == ["single, no migration", "1", "3", "0.100", "0.200", "0.200", "0.300"]
    assert rows[0][7] == "0.090" and rows[2][7] == ""
    assert render_csv(header, rows).splitlines()[0].startswith("configuration,parent_mib")
    text = render_text(header, rows)
    assert "single, no migration" in text and "task-clock_per_fork_ms" in text


def test_config_labels() -> None:
    assert config_label(1, False, {}) == "single, no migration"
    assert config_label(4, True, {"thp": 1, "drop_caches": 1}) == "concurrent x4, migration, THP, caches dropped"


def test_figures_need_two_sizes() -> None:
    from osmeter.report.figures.task import figures

    one = (_result(0, 8, 1, 0, [1e5, 1e5, 1e5], None),)
    data = RunData(run=None, results=one, samples=lambda r: None)  # type: ignore[arg-type]
    assert figures(data) == []
    assert math.isfinite(study_points(data)[0].median)


@pytest.mark.parametrize("study, blockers", [
    ("fork", ("fork-study.csv", "task-fork-study-migration.svg")),
    ("net", ("net-study.csv", "net-rtt-by-size.png")),
])
def test_an_output_that_cannot_be_written_is_refused_before_the_study(cli, store_path, tmp_path, monkeypatch,
                                                                      study, blockers) -> None:
    """The table's file (or an old figure's) being a directory is found before
    the probe runs, not after the study's minutes of measuring."""
    marker = tmp_path / "probe-ran"
    probe = tmp_path / "probe"
    probe.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    probe.chmod(0o755)
    monkeypatch.setenv("OSMETER_PROBE", str(probe))
    out = tmp_path / "out"
    for blocker in blockers:
        (out / blocker).mkdir(parents=True)
        r = cli("study", study, "--quick", "-o", str(out))
        assert r.code == EXIT_USAGE and f"{blocker}: it is a directory" in r.err, r.err
        assert not marker.exists() and not store_path.exists()
        (out / blocker).rmdir()


def test_the_latency_axis_says_what_task_fork_times() -> None:
    """task.fork stops its clock when fork() returns in the parent; the
    axis said "fork + exit + wait" (task.fork_exit's region)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from osmeter.report.figures.task import figures

    results = tuple(_result(i, mib, 1, 0, [1e5 * mib, 1.1e5 * mib, 1.2e5 * mib], None)
                    for i, mib in enumerate((1, 8, 64)))
    data = RunData(run=None, results=results, samples=lambda r: None)  # type: ignore[arg-type]
    named = figures(data)[0]
    FigureCanvasAgg(named.figure).draw()
    label = named.figure.axes[0].get_ylabel()
    assert label.startswith("fork() until it returns in the parent (")
    assert "exit" not in label and "wait" not in label
