"""`osmeter study fork` end to end with the real probe, a few forks per point
(the matrix, the store, the figures and the table; `--quick` is the same
with more forks), and `osmeter run --counters` passed through to the probe."""

from __future__ import annotations

import csv
import json
import os
import subprocess
from pathlib import Path

import pytest

from ..conftest import db_rows, osmeter_command, subprocess_env

pytest.importorskip("matplotlib")


def osmeter(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(osmeter_command(*args), capture_output=True, text=True, env=subprocess_env(),
                          timeout=timeout)


@pytest.mark.slow  # ~35 s: the quick fork study, measured for real
def test_fork_study_is_one_run_with_figures_and_a_table(real_probe: str, store_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "study"
    p = osmeter("study", "fork", "--forks", "3", "-o", str(out))
    assert p.returncode == 0, p.stderr[-3000:]
    # One run, 36 points: 9 sizes x {single, every CPU} x {no migration, migration}.
    assert db_rows(store_path, "SELECT label, status FROM runs") == [("fork study", "complete")]
    rows = db_rows(store_path, "SELECT bench, params, status, counters FROM results ORDER BY seq")
    assert len(rows) == 36 and all(b == "task.fork" for b, *_ in rows)
    ok = [r for r in rows if r[2] == "ok"]
    assert ok and all(json.loads(r[3])["type"] == "counters" for r in ok)
    sizes = sorted({json.loads(r[1])["touched_mib"] for r in rows})
    assert sizes == [1, 8, 16, 32, 64, 128, 256, 512, 1024]

    for name in ("task-fork-study", "task-fork-study-task-clock", "task-fork-study-page-faults"):
        assert (out / f"{name}.svg").read_text().lstrip().startswith(("<?xml", "<svg"))
        assert (out / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Hardware counters are figures only where counted.
    table = list(csv.DictReader((out / "fork-study.csv").open()))
    assert len(table) == len(ok)
    assert {"configuration", "parent_mib", "forks", "min_ms", "mean_ms", "median_ms", "max_ms"} <= set(table[0])
    for row in table:
        assert row["forks"] == "3"
        assert float(row["min_ms"]) <= float(row["median_ms"]) <= float(row["max_ms"])
    single = {int(r["parent_mib"]): float(r["median_ms"]) for r in table
              if r["configuration"] == "single, no migration"}
    if 1 in single and 1024 in single:
        assert single[1024] > 10 * single[1]  # the curve rises with memory
    assert "parent_mib" in p.stdout and "fork-study.csv" in p.stdout


def test_drop_caches_needs_root(real_probe: str, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root may drop caches")
    p = osmeter("study", "fork", "--drop-caches", "-o", str(tmp_path / "x"))
    assert p.returncode == 2 and "needs root" in p.stderr


@pytest.mark.slow
def test_run_passes_counters_to_the_probe(real_probe: str, store_path: Path) -> None:
    p = osmeter("run", "syscall.null", "--counters", "sw,cycles", "--min-time", "0.01", "--max-time", "0.2")
    assert p.returncode == 0, p.stderr
    (counters,) = db_rows(store_path, "SELECT counters FROM results")
    rec = json.loads(counters[0])
    assert [c["name"] for c in rec["counters"]][:2] == ["task-clock", "page-faults"]
    assert "cycles" in [c["name"] for c in rec["counters"]]
    p = osmeter("run", "syscall.null", "--counters", "bogus")
    assert p.returncode == 2 and "unknown counter 'bogus'" in p.stderr
