"""Interruptions: finished results are kept, the run is marked incomplete,
the exit status says what happened, and no probe process or child is left."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

from osmeter import probe as probe_module
from osmeter.errors import EXIT_BENCH_ERRORS, EXIT_PROBE

from ..conftest import FakeProbe, db_rows, wait_for

# The tests that act at "[2/5]" hold the fake probe after its second
# benchmark until they do. With a 0.4 s delay after each benchmark instead,
# a busy machine (stress-ng --cpu 2) let 0.8 s pass between the progress
# line and the signal, and 4 benchmarks had finished.
HOLD = {"delay": "0.05", "hold_after": 2}


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


# SIGTERM is slow-marked to keep the default run under 5 minutes (~3 s); CI runs it.
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), pytest.param(signal.SIGTERM, 143, marks=pytest.mark.slow)])
def test_signal_to_osmeter(fake_probe: FakeProbe, osmeter_proc, store_path: Path, signum: int, code: int) -> None:
    fake_probe.set(**HOLD, spawn_child=1)
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


# Slow-marked to keep the default run under 5 minutes (~4 s; the SIGINT one runs by default); CI runs it.
@pytest.mark.slow
def test_probe_killed(fake_probe: FakeProbe, osmeter_proc, store_path: Path) -> None:
    fake_probe.set(**HOLD, spawn_child=1)
    proc = osmeter_proc("run")
    read_progress_until(proc, "[2/5]")
    os.kill(fake_probe_pid(fake_probe), signal.SIGKILL)
    returncode, out, err = finish(proc)
    assert returncode == EXIT_PROBE, err
    assert "osmeter-probe stopped before the end of the run (killed by SIGKILL)" in err
    assert_kept_two_and_incomplete(store_path, "without an 'end' record (killed by SIGKILL)")
    assert fake_probe.processes() == []  # the child holding stdout was killed too


# Slow-marked to keep the default run under 5 minutes (~3 s); CI runs it.
@pytest.mark.slow
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


@pytest.mark.slow
def test_osmeter_killed_takes_the_probe_with_it(fake_probe: FakeProbe, osmeter_proc, store_path: Path,
                                                tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGKILL cannot be caught: --die-with-parent (PR_SET_PDEATHSIG) stops the probe."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # osmeter's work directory stays behind (next test)
    fake_probe.set(delay="5")
    proc = osmeter_proc("run")
    wait_for(lambda: len(fake_probe.processes()) == 1, timeout=10, what="the fake probe")
    proc.kill()
    proc.communicate(timeout=10)
    wait_for(lambda: fake_probe.processes() == [], timeout=5, what="the probe to die with osmeter")
    # The run row stays 'running': nothing was left alive to mark it.
    assert db_rows(store_path, "SELECT status FROM runs") in ([], [("running",)])


@pytest.mark.slow
def test_work_directory_of_a_killed_osmeter_goes_with_the_next_run(cli, fake_probe: FakeProbe, osmeter_proc,
                                                                    tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGKILL to osmeter leaves its probe directory (`osmeter-run.*`): the
    next osmeter that starts a probe removes it, and never one in use."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read $TMPDIR in this process too
    fake_probe.set(delay="5")
    first = osmeter_proc("run")
    wait_for(lambda: len(fake_probe.processes()) == 1, timeout=10, what="the fake probe")
    second = osmeter_proc("run")  # a living osmeter's directory is left alone
    wait_for(lambda: len(fake_probe.processes()) == 2, timeout=10, what="the second fake probe")
    assert len(list(tmp.glob("osmeter-run.*"))) == 2
    first.kill()
    first.communicate(timeout=10)
    wait_for(lambda: len(fake_probe.processes()) == 1, timeout=5, what="the first probe to die with osmeter")
    assert len(list(tmp.glob("osmeter-run.*"))) == 2  # left behind by SIGKILL
    both = set(tmp.glob("osmeter-run.*"))
    fake_probe.set(delay="0")
    assert cli("run", "cpu.call").code == 0  # the next run removes the dead one's directory
    left = set(tmp.glob("osmeter-run.*"))
    assert len(left) == 1 and left < both  # the living one's stays
    second.kill()
    second.communicate(timeout=10)
    wait_for(lambda: fake_probe.processes() == [], timeout=5, what="the second probe")
    probe_module.remove_stale_tmpdirs(str(tmp))
    assert list(tmp.iterdir()) == []


@pytest.mark.slow
def test_signal_before_the_run_starts_stores_nothing(fake_probe: FakeProbe, osmeter_proc, store_path: Path) -> None:
    fake_probe.set(delay="5")
    proc = osmeter_proc("run")
    wait_for(lambda: run_row_exists(store_path), timeout=10, what="the run row")
    proc.send_signal(signal.SIGINT)
    returncode, _, err = finish(proc)
    assert returncode == 130 and "0 finished benchmark(s) kept" in err
    assert db_rows(store_path, "SELECT status FROM runs") == [("incomplete",)]
    assert fake_probe.processes() == []


# --- the probe's stream breaking mid-way, and its leftovers (issue 10) ------


def samples_line(value: str) -> str:
    return ('{"type":"samples","bench":"cpu.call","params":{"args":9},"unit":"ns","batch":1,"values":[1.5,'
            + value + "]}")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (samples_line("1e308"), "'values[1]': the number 1e+308 is out of range"),
        (samples_line("1e309"), "'values[1]': a number too large for a double"),
        (samples_line("9" * 5000), "'values[1]': the integer 9999"),
        ('{"type":"skip","bench":"x","params":' + "[" * 5000 + "]" * 5000 + ',"reason":"r"}', "nested more than"),
        ('{"type":"skip","bench":"x","params":{},"reason":"\\udfff"}',
         "'reason': a string holds a lone UTF-16 surrogate"),
    ],
    ids=["1e308", "1e309", "5000-digits", "deep", "surrogate"],
)
@pytest.mark.slow
def test_out_of_range_record_mid_stream_ends_incomplete(cli, fake_probe: FakeProbe, store_path: Path, line: str,
                                                        message: str) -> None:
    fake_probe.set(bad_line_after=2, bad_line=line)
    r = cli("run", "--repeat", "1")
    assert r.code == EXIT_PROBE, r.err
    assert f"the probe wrote an invalid record on line 8: {message}" in r.err and "Traceback" not in r.err
    assert_kept_two_and_incomplete(store_path, "invalid record on line 8")


def test_unknown_record_type_mid_stream_is_skipped(cli, fake_probe: FakeProbe, store_path: Path) -> None:
    fake_probe.set(bad_line_after=2, bad_line='{"type":"telemetry","temperature_c":70}')
    r = cli("run", "--repeat", "1")
    assert r.code == EXIT_BENCH_ERRORS, r.err  # the script has one benchmark that fails
    assert 'osmeter: warning: skipped a record of unknown type "telemetry"' in r.err
    assert db_rows(store_path, "SELECT status FROM runs") == [("complete",)]


def test_non_utf8_line_mid_stream_ends_incomplete(cli, fake_probe: FakeProbe, store_path: Path) -> None:
    fake_probe.set(bad_line_after=2, bad_line="\udcff")  # written as the byte 0xff (surrogateescape)
    r = cli("run", "--repeat", "1")
    assert r.code == EXIT_PROBE and "line 8: it is not UTF-8 text" in r.err
    assert_kept_two_and_incomplete(store_path, "invalid record on line 8")


def test_over_long_line_mid_stream_ends_incomplete(cli, fake_probe: FakeProbe, store_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probe_module, "MAX_LINE_BYTES", 2000)
    fake_probe.set(bad_line_after=2, bad_line='{"type":"skip","bench":"' + "x" * 5000 + '","params":{},"reason":"r"}')
    r = cli("run", "--repeat", "1")
    assert r.code == EXIT_PROBE and "line 8: the line is longer than" in r.err
    assert_kept_two_and_incomplete(store_path, "invalid record on line 8")


def test_osmeter_failure_mid_run_never_leaves_it_running(cli, fake_probe: FakeProbe, store_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from osmeter.recorder import RunRecorder

    original = RunRecorder._record

    def fail_third(self, *args, **kwargs):  # a bug in osmeter on the third result
        if len(self.results) == 2:
            raise RuntimeError("a bug")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(RunRecorder, "_record", fail_third)
    with pytest.raises(RuntimeError):  # a bug stays a traceback (exit 1) ...
        cli("run", "--repeat", "1")
    # ... but the run is not left 'running'.
    assert_kept_two_and_incomplete(store_path, "osmeter failed: RuntimeError")
    wait_for(lambda: fake_probe.processes() == [], timeout=5, what="no fake probe processes")


def test_killed_probe_leaves_no_work_directory(cli, fake_probe: FakeProbe, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch, store_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read $TMPDIR
    fake_probe.set(tmpfile=1, die_after=2)
    r = cli("run", "--repeat", "1")
    assert r.code == EXIT_PROBE and "killed by SIGKILL" in r.err
    workdir = next(line.split(" ", 1)[1] for line in r.err.splitlines() if line.startswith("workdir "))
    assert workdir.startswith(str(tmp) + "/osmeter-run.")  # the probe's $TMPDIR was osmeter's directory
    assert list(tmp.iterdir()) == []  # ... and it is gone, with the probe's 1 MiB file
    assert_kept_two_and_incomplete(store_path, "killed by SIGKILL")


@pytest.mark.slow
def test_signal_before_meta_stores_nothing_and_leaves_nothing(fake_probe: FakeProbe, osmeter_proc, tmp_path: Path,
                                                              store_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C before the first result, even before the probe said anything:
    exit 130, no run stored, no traceback, no process or directory left."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    fake_probe.set(start_delay="5", tmpfile=1)
    proc = osmeter_proc("run")
    wait_for(
        lambda: any(p.name.startswith("osmeter-run.") and any(q.name.startswith("osmeter-probe.") for q in p.iterdir())
                    for p in tmp.iterdir()), timeout=10,
        what="the probe's work directory")
    proc.send_signal(signal.SIGINT)
    returncode, out, err = finish(proc)
    assert returncode == 130, err
    assert "interrupted by SIGINT before the run started; nothing stored" in err and "Traceback" not in err
    assert db_rows(store_path, "SELECT id FROM runs") == []
    assert list(tmp.iterdir()) == []
    assert fake_probe.processes() == []
