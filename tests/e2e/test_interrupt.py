"""Interruptions: finished results are kept, the run is marked incomplete,
the exit status says what happened, and no probe process or child is left."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import threading
from pathlib import Path

import pytest

from osmeter.errors import EXIT_PROBE

from ..conftest import FakeProbe, db_rows, wait_for

DELAY = "0.4"  # seconds the fake probe waits after each benchmark


def read_progress_until(proc: subprocess.Popen[str], prefix: str, timeout: float = 20.0) -> list[str]:
    """stderr lines of `osmeter run` up to the one starting with `prefix`."""
    watchdog = threading.Timer(timeout, proc.kill)
    watchdog.start()
    seen = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            seen.append(line)
            if line.startswith(prefix):
                return seen
    finally:
        watchdog.cancel()
    raise AssertionError(f"osmeter ended before printing {prefix!r}: {''.join(seen)}")


def finish(proc: subprocess.Popen[str], timeout: float = 20.0) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def assert_kept_two_and_incomplete(store_path: Path, reason: str) -> None:
    assert db_rows(store_path, "SELECT bench, status FROM results ORDER BY seq") == [
        ("cpu.call", "ok"),
        ("syscall.null", "ok"),
    ]
    ((status, why),) = db_rows(store_path, "SELECT status, status_reason FROM runs")
    assert status == "incomplete" and reason in why


def run_row_exists(store_path: Path) -> bool:
    try:
        return db_rows(store_path, "SELECT id FROM runs") != []
    except sqlite3.OperationalError:  # the store is being created right now
        return False


def fake_probe_pid(probe: FakeProbe) -> int:
    for pid in probe.processes():
        if b"fake_probe.py" in Path(f"/proc/{pid}/cmdline").read_bytes():
            return pid
    raise AssertionError("fake probe not running")


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_to_osmeter(fake_probe: FakeProbe, osmeter_proc, store_path: Path, signum: int, code: int) -> None:
    fake_probe.set(delay=DELAY, spawn_child=1)
    proc = osmeter_proc("run")
    read_progress_until(proc, "[2/5]")
    assert len(fake_probe.processes()) == 2  # the probe and its child
    proc.send_signal(signum)
    returncode, out, err = finish(proc)
    name = signal.Signals(signum).name
    assert returncode == code, err
    assert f"osmeter: error: interrupted by {name}: 2 finished benchmark(s) kept in run 1, marked incomplete" in err
    assert_kept_two_and_incomplete(store_path, f"osmeter interrupted by {name}")
    assert "run 1: standard on testbox" in out and "incomplete" in out  # the summary of what finished
    assert fake_probe.processes() == []


def test_probe_killed(fake_probe: FakeProbe, osmeter_proc, store_path: Path) -> None:
    fake_probe.set(delay=DELAY, spawn_child=1)
    proc = osmeter_proc("run")
    read_progress_until(proc, "[2/5]")
    os.kill(fake_probe_pid(fake_probe), signal.SIGKILL)
    returncode, out, err = finish(proc)
    assert returncode == EXIT_PROBE, err
    assert "osmeter-probe stopped before the end of the run (killed by SIGKILL)" in err
    assert_kept_two_and_incomplete(store_path, "without an 'end' record (killed by SIGKILL)")
    assert fake_probe.processes() == []  # the child holding stdout was killed too


def test_probe_dies_mid_line(cli, fake_probe: FakeProbe, store_path: Path) -> None:
    fake_probe.set(die_after=2, partial=1, spawn_child=1)
    r = cli("run")
    assert r.code == EXIT_PROBE
    assert "ignored the probe's last line" in r.err and "cut off in the middle" in r.err
    assert_kept_two_and_incomplete(store_path, "killed by SIGKILL")
    wait_for(lambda: fake_probe.processes() == [], timeout=5, what="no fake probe processes")


def test_probe_writes_garbage(cli, fake_probe: FakeProbe, store_path: Path) -> None:
    fake_probe.set(bad_line_after=2, delay="0.05")
    r = cli("run")
    assert r.code == EXIT_PROBE
    assert "the probe wrote an invalid record on line 8: not valid JSON" in r.err
    assert_kept_two_and_incomplete(store_path, "invalid record on line 8")
    wait_for(lambda: fake_probe.processes() == [], timeout=5, what="no fake probe processes")


def test_osmeter_killed_takes_the_probe_with_it(fake_probe: FakeProbe, osmeter_proc, store_path: Path) -> None:
    """SIGKILL cannot be caught: --die-with-parent (PR_SET_PDEATHSIG) stops the probe."""
    fake_probe.set(delay="5")
    proc = osmeter_proc("run")
    wait_for(lambda: len(fake_probe.processes()) == 1, timeout=10, what="the fake probe")
    proc.kill()
    proc.communicate(timeout=10)
    wait_for(lambda: fake_probe.processes() == [], timeout=5, what="the probe to die with osmeter")
    # The run row stays 'running': nothing was left alive to mark it.
    assert db_rows(store_path, "SELECT status FROM runs") in ([], [("running",)])


def test_signal_before_the_run_starts_stores_nothing(fake_probe: FakeProbe, osmeter_proc, store_path: Path) -> None:
    fake_probe.set(delay="5")
    proc = osmeter_proc("run")
    wait_for(lambda: run_row_exists(store_path), timeout=10, what="the run row")
    proc.send_signal(signal.SIGINT)
    returncode, _, err = finish(proc)
    assert returncode == 130 and "0 finished benchmark(s) kept" in err
    assert db_rows(store_path, "SELECT status FROM runs") == [("incomplete",)]
    assert fake_probe.processes() == []
