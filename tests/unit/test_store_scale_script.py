"""benchmarks/store_scale.py at a tiny size, on SQLite only: it builds its
store, times every command, prints the table (its shape, not the timings),
and leaves nothing behind, also when it is stopped half-way."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..conftest import ROOT

SCRIPT = ROOT / "benchmarks" / "store_scale.py"
COMMANDS = ("osmeter runs", "osmeter runs --all", "osmeter show N", "osmeter compare A B",
            "osmeter compare --by host --fleet F", "osmeter report --fleet F", "osmeter report --fleet F --format txt",
            "osmeter report --fleet F --all-runs --format txt")


def _env(tmp: Path) -> dict[str, str]:
    tmp.mkdir()
    return dict(os.environ, TMPDIR=str(tmp))


@pytest.mark.slow  # eight commands, a report with figures: half a minute; CI runs it
def test_the_table_has_a_row_per_command_and_a_time_per_backend(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    r = subprocess.run([sys.executable, str(SCRIPT), "--runs", "20", "--results", "5", "--backends", "sqlite",
                        "--repeat", "2"], env=_env(tmp), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    table = [line for line in r.stdout.splitlines() if " | " in line]
    assert [c.strip() for c in table[0].split(" | ")] == ["command", "SQLite", "PostgreSQL"]
    rows = [[c.strip() for c in line.split(" | ")] for line in table[1:]]
    assert [row[0] for row in rows] == list(COMMANDS)
    for name, sqlite_s, pg_s in rows:
        best, median = (float(x) for x in sqlite_s.split(" / "))  # times, not 'failed'
        assert 0 < best <= median, name
        assert pg_s == "-"  # not measured
    assert "20 runs x 5 results" in r.stdout and "best / median of 2 rounds" in r.stdout
    assert "the speed reference" in r.stdout
    # every command once a round: the untimed round and two timed ones
    assert [line for line in r.stderr.splitlines() if line.startswith("round ")] == [
        "round 0 of 2 done (untimed)", "round 1 of 2 done", "round 2 of 2 done"]
    assert list(tmp.iterdir()) == []  # the store and everything else removed


@pytest.mark.slow  # 2.9 s; CI runs it
def test_stopped_half_way_it_leaves_nothing(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    # a store large enough that the script is still building or timing it when the signal comes
    p = subprocess.Popen([sys.executable, str(SCRIPT), "--runs", "5000", "--results", "50", "--backends", "sqlite"],
                         env=_env(tmp), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while (p.poll() is None and time.monotonic() < deadline
               and not (tmp.is_dir() and any(d.glob("store.db") for d in tmp.iterdir()))):
            time.sleep(0.05)
        assert p.poll() is None, "the script ended before it could be stopped"
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=60) == 128 + signal.SIGTERM
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        assert p.stderr is not None
        p.stderr.close()
    assert list(tmp.iterdir()) == []
