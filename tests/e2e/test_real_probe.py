"""End to end with the real probe: run -> store -> show -> export, a board
file imported equals a run, and interruptions with real processes (SIGINT and
SIGTERM to osmeter, SIGKILL of the probe mid-benchmark)."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from ..conftest import db_rows, osmeter_command, subprocess_env, wait_for

from probe_helpers import TINY

NAMES = ["cpu.loop_overhead", "syscall.null", "syscall.getuid"]


def osmeter(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(osmeter_command(*args), capture_output=True, text=True, env=subprocess_env(), timeout=120)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def probe_pids(probe: str) -> list[int]:
    """Live processes running this probe binary."""
    target = os.path.realpath(probe)
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.path.realpath(entry / "exe") == target:
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def test_run_store_show_export(real_probe: str, store_path: Path) -> None:
    osmeter("run", *NAMES, "--label", "e2e", "--min-time", "0.01", "--max-time", "0.3")
    runs = json.loads(osmeter("runs", "--json").stdout)
    runs = runs["runs"] if isinstance(runs, dict) else runs
    assert len(runs) == 1
    shown = osmeter("show", "latest").stdout
    for n in NAMES:
        assert n in shown
    exported = json.loads(osmeter("export", "latest", "--format", "json").stdout)
    text = json.dumps(exported)
    for n in NAMES:
        assert n in text
    rows = list(csv.DictReader(io.StringIO(osmeter("export", "latest", "--format", "csv").stdout)))
    assert sorted(r["bench"] for r in rows) == sorted(NAMES)
    medians = {r["bench"]: float(r["median"]) for r in rows}
    assert 10 < medians["syscall.null"] < 100_000
    assert db_rows(store_path, "SELECT status FROM runs") == [("complete",)]


# Slow-marked to keep the default run under 5 minutes (~2.5 s); CI runs it.
@pytest.mark.slow
def test_board_file_imports_as_a_run(real_probe: str, store_path: Path, tmp_path: Path) -> None:
    board = tmp_path / "board.jsonl"
    p = subprocess.run([real_probe, "run", *NAMES, *TINY, "-o", str(board)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    osmeter("import", str(board), "--label", "board")
    rows = db_rows(store_path, "SELECT bench, status FROM results ORDER BY seq")
    assert rows == [(n, "ok") for n in NAMES]
    (status,) = db_rows(store_path, "SELECT status FROM runs")[0]
    assert status == "complete"
    # The stored statistics come from the file's raw samples.
    recs = [json.loads(x) for x in board.read_text().splitlines()]
    file_median = next(r["median"] for r in recs if r["type"] == "result" and r["bench"] == "syscall.null")
    rows = list(csv.DictReader(io.StringIO(osmeter("export", "latest", "--format", "csv").stdout)))
    stored = next(float(r["median"]) for r in rows if r["bench"] == "syscall.null")
    assert stored == pytest.approx(file_median, rel=1e-9)
    # A cut-short copy of the same file is refused and stores nothing more.
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(board.read_text().splitlines(keepends=True)[:-1]))
    p = osmeter("import", str(cut), check=False)
    assert p.returncode != 0 and "--allow-incomplete" in p.stderr
    assert len(db_rows(store_path, "SELECT id FROM runs")) == 1


def start_run(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(osmeter_command("run", *args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=subprocess_env())


def wait_for_results(store_path: Path, n: int) -> None:
    def enough() -> bool:
        try:
            return len(db_rows(store_path, "SELECT seq FROM results")) >= n
        except Exception:
            return False

    wait_for(enough, timeout=30, what=f"{n} stored results")


# Two cheap benchmarks finish at once; the hidden test.spin (100 ms an
# operation, 1000 samples wanted) is still running when the blow lands.
LONG = ["cpu.loop_overhead", "syscall.null", "test.spin", "--param", "ns=100000000", "--min-samples", "1000",
        "--min-time", "0.01", "--max-time", "120"]


def interrupt_after_two(store_path: Path, real_probe: str, blow) -> tuple[int, str]:
    proc = start_run(*LONG)
    try:
        wait_for_results(store_path, 2)
        time.sleep(0.5)
        assert probe_pids(real_probe), "the probe should still be running test.spin"
        blow(proc)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, err


def assert_two_kept_and_incomplete(store_path: Path) -> None:
    assert db_rows(store_path, "SELECT bench, status FROM results ORDER BY seq") == [
        ("cpu.loop_overhead", "ok"),
        ("syscall.null", "ok"),
    ]
    assert db_rows(store_path, "SELECT status FROM runs") == [("incomplete",)]


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.slow
def test_signal_to_osmeter_keeps_finished_results(real_probe: str, store_path: Path, sig: int, code: int) -> None:
    rc, err = interrupt_after_two(store_path, real_probe, lambda proc: proc.send_signal(sig))
    assert rc == code, err
    assert_two_kept_and_incomplete(store_path)
    assert probe_pids(real_probe) == []


@pytest.mark.slow
def test_sigkill_of_the_probe_mid_benchmark(real_probe: str, store_path: Path) -> None:
    def kill_probe(proc: subprocess.Popen[str]) -> None:
        for pid in probe_pids(real_probe):
            os.kill(pid, signal.SIGKILL)

    rc, err = interrupt_after_two(store_path, real_probe, kill_probe)
    assert rc != 0
    assert "probe" in err.lower()
    assert_two_kept_and_incomplete(store_path)
    assert probe_pids(real_probe) == []


@pytest.mark.slow  # ~5 s, nine osmeter processes; unit/test_flags_shown.py checks every view by default
def test_a_run_stopped_early_is_flagged_everywhere(real_probe: str, store_path: Path, tmp_path: Path) -> None:
    """Issue 9: a benchmark forced to stop before its target precision
    (--max-time 0.01 on a noisy one, --target-rse far below what 10 ms
    give) is flagged precision-unmet in show, the report and compare."""
    early = ("syscall.open_close", "--max-time", "0.01", "--min-time", "0.001", "--target-rse", "0.0001",
             "--repeat", "2")
    osmeter("run", *early, "--label", "early 1")
    osmeter("run", *early, "--label", "early 2")
    runs = json.loads(osmeter("runs", "--json").stdout)["runs"]
    assert [r["id"] for r in runs] == [1, 2]
    exported = json.loads(osmeter("export", "1", "--format", "json").stdout)
    res = exported["results"][0]
    assert "precision-unmet" in res["flags"]
    assert "precision-unmet" in osmeter("show", "1").stdout
    assert "precision-unmet" in osmeter("report", "1", "--format", "md").stdout
    html = tmp_path / "r.html"
    osmeter("report", "1", "-o", str(html))
    assert "precision-unmet" in html.read_text()
    compared = osmeter("compare", "1", "2")
    assert "precision-unmet" in compared.stdout
    doc = json.loads(osmeter("compare", "1", "2", "--json").stdout)
    assert "precision-unmet" in doc["comparisons"][0]["caveat"]


@pytest.mark.slow
def test_param_lists_ranges_and_repeats_reach_the_probe(real_probe: str, store_path: Path) -> None:
    """`osmeter run --param` passes lists, ranges and repeated keys to the
    probe, which measures each value once (issue 10, item 2)."""
    osmeter("run", "cpu.call", "--param", "args=0..1", "--param", "args=3,1", "--repeat", "1",
            "--min-time", "0.001", "--max-time", "0.05")
    rows = db_rows(store_path, "SELECT params FROM results ORDER BY seq")
    assert sorted(json.loads(p)["args"] for (p,) in rows) == [0, 1, 3]
    bad = osmeter("run", "cpu.call", "--param", "args=0..99", check=False)
    assert bad.returncode == 2 and "0..7" in bad.stderr and "Traceback" not in bad.stderr
