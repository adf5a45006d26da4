"""run -> store -> runs -> show -> export, through `python -m osmeter` and the fake probe."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

import pytest

from osmeter.errors import EXIT_BENCH_ERRORS

from ..conftest import FakeProbe, StoreAt, osmeter_command, subprocess_env


def osmeter(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(osmeter_command(*args), capture_output=True, text=True, env=subprocess_env(), timeout=60)


def test_standard_run_end_to_end(fake_probe: FakeProbe, store_at: StoreAt, tmp_path: Path) -> None:
    fake_probe.set(stderr="probe: note from the probe")
    r = osmeter("run", "--label", "first", "--repeat", "1")
    # One benchmark reported `error`: the run is complete, the exit status says so.
    assert r.returncode == EXIT_BENCH_ERRORS, r.stderr
    progress = [l for l in r.stderr.splitlines() if l.startswith("[")]
    assert progress == [
        "[1/5] cpu.call args=0 ... 1.250 ns",
        "[2/5] syscall.null ... 45.06 ns",
        "[3/5] file.read_cold size=4096 ... skipped: needs root: cannot drop the page cache "
        "(run as root, or skip file.read_cold)",
        "[4/5] task.fork touched_mib=1 ... 90.49 µs",
        "[5/5] ctxsw.pipe placement=same_cpu ... error: fork: Resource temporarily unavailable",
    ]
    assert "probe: note from the probe" in r.stderr  # the probe's stderr is passed through
    assert "1 benchmark(s) reported an error" in r.stderr

    out = r.stdout
    assert "run 1 'first': standard on testbox, Linux 6.8.0-test" in out
    header = next(l for l in out.splitlines() if l.startswith("benchmark"))
    assert header.split() == ["benchmark", "median", "(its", "unit)", "best", "%", "med", "n"]  # under "95% CI", "IQR", "p99/"
    assert "headline (the figures people quote" in out and "null system call  45.06 ns  44.78 .. 45.33 ns" in out
    row = next(l for l in out.splitlines() if l.startswith("syscall.null"))
    assert row.split()[:7] == ["syscall.null", "45.06", "ns", "44.78", "..", "45.33", "43.57"]
    # the parameters that differ from the catalogue's defaults: none here (size=4096, placement=same_cpu are)
    assert "skipped:\n  file.read_cold: needs root" in out
    assert "errors:\n  ctxsw.pipe: fork: Resource temporarily unavailable" in out
    assert "warning [" not in out  # a calm fake run: nothing that changes a figure's meaning

    assert store_at.rows("SELECT id, label, status, suite, source FROM runs") == [
        (1, "first", "complete", "standard", "run")
    ]
    assert store_at.rows("SELECT seq, bench, status FROM results ORDER BY seq") == [
        (0, "cpu.call", "ok"), (1, "syscall.null", "ok"), (2, "file.read_cold", "skip"),
        (3, "task.fork", "ok"), (4, "ctxsw.pipe", "error"),
    ]

    runs = osmeter("runs")
    assert runs.returncode == 0
    line = runs.stdout.splitlines()[2].split()
    assert line == ["1", "first", "2026-11-22T07:40:00Z", "complete", "standard", "3", "1", "1", "testbox", "6.8.0-test"]
    listed = json.loads(osmeter("runs", "--json").stdout)
    assert listed["runs"][0]["counts"] == {"ok": 3, "skip": 1, "error": 1}

    show = osmeter("show", "latest")
    assert show.returncode == 0 and show.stdout == out

    shown = json.loads(osmeter("show", "1", "--json").stdout)
    exported = tmp_path / "run.json"
    assert osmeter("export", "1", "--format", "json", "-o", str(exported)).returncode == 0
    assert json.loads(exported.read_text()) == shown
    assert shown["run"]["argv"][1:] == ["run", "--die-with-parent", "--suite", "standard"]

    csv_lines = osmeter("export", "latest", "--format", "csv").stdout.splitlines()
    assert csv_lines[0].startswith("run_id,run_label,seq,bench,params,status")
    table = list(csv.DictReader(csv_lines))
    assert [row["bench"] for row in table] == [r["bench"] for r in shown["results"]]


def test_named_benchmarks_and_json(fake_probe: FakeProbe, store_at: StoreAt) -> None:
    r = osmeter("run", "syscall.null", "cpu.call", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["run"]["suite"] is None and doc["run"]["status"] == "complete"
    assert [x["bench"] for x in doc["results"]] == ["cpu.call", "syscall.null"]
    assert doc["results"][1]["median"] == pytest.approx(45.0639)
    assert "[2/2] syscall.null" in r.stderr


@pytest.mark.slow
def test_two_runs_accumulate(fake_probe: FakeProbe, store_at: StoreAt) -> None:
    assert osmeter("run", "syscall.null").returncode == 0
    assert osmeter("run", "cpu.call", "--label", "second").returncode == 0
    assert store_at.rows("SELECT id, label FROM runs") == [(1, None), (2, "second")]
    assert "run 2 'second'" in osmeter("show", "latest").stdout
