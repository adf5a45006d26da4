"""Finding the probe, and the process-group guarantees of ProbeProcess."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from osmeter import probe
from osmeter.errors import ProbeError

from ..conftest import marked_processes


def executable(path: Path) -> Path:
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


@pytest.fixture(autouse=True)
def no_bundled_probe(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An installed osmeter has a probe in its bin/; these tests decide for themselves."""
    monkeypatch.setattr(probe, "BUNDLED_PROBE", tmp_path / "no-bundled-probe")


def test_env_wins_then_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("OSMETER_PROBE", raising=False)  # isolated_env names the real probe
    on_path = executable(tmp_path / "osmeter-probe")
    chosen = executable(tmp_path / "my-probe")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert probe.locate_probe() == on_path
    monkeypatch.setenv("OSMETER_PROBE", str(chosen))
    assert probe.locate_probe() == chosen


def test_bundled_probe_comes_before_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("OSMETER_PROBE", raising=False)
    executable(tmp_path / "osmeter-probe")
    monkeypatch.setenv("PATH", str(tmp_path))
    (tmp_path / "pkg" / "bin").mkdir(parents=True)
    bundled = executable(tmp_path / "pkg" / "bin" / "osmeter-probe")
    assert probe.locate_probe(bundled=bundled) == bundled
    assert probe.locate_probe() == tmp_path / "osmeter-probe"  # no bundled probe: PATH


def test_missing_probe(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("OSMETER_PROBE", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ProbeError, match="osmeter-probe not found"):
        probe.locate_probe()
    monkeypatch.setenv("OSMETER_PROBE", str(tmp_path / "nope"))
    with pytest.raises(ProbeError, match="OSMETER_PROBE=.*nope is not an executable file"):
        probe.locate_probe()


def test_describe_exit() -> None:
    assert probe.describe_exit(0) == "exit status 0"
    assert probe.describe_exit(-9) == "killed by SIGKILL"
    assert probe.describe_exit(None) == "still running"


@pytest.mark.slow
def test_leftover_child_holding_stdout_neither_hangs_nor_survives(monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe exits but its child keeps stdout open: osmeter must not wait for EOF forever."""
    marker = f"OSM_TEST_MARKER={os.getpid()}-{time.monotonic_ns()}"
    monkeypatch.setenv(*marker.split("=", 1))
    script = (
        "import subprocess, sys\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
        "print('{\"type\": \"x\"}', flush=True)\n"
    )
    start = time.monotonic()
    with probe.ProbeProcess.start([sys.executable, "-c", script]) as proc:
        lines = [line.text for line in proc.lines()]
        returncode = proc.close()
    assert lines == ['{"type": "x"}\n'] and returncode == 0
    assert time.monotonic() - start < probe.EXIT_DRAIN_S + 5
    assert marked_processes(marker) == []


def test_partial_last_line_is_flagged() -> None:
    with probe.ProbeProcess.start([sys.executable, "-c", "import sys; sys.stdout.write('a\\nb')"]) as proc:
        lines = list(proc.lines())
    assert [(l.text, l.complete) for l in lines] == [("a\n", True), ("b", False)]


def test_close_stops_a_probe_still_running() -> None:
    with probe.ProbeProcess.start([sys.executable, "-c", "import time; time.sleep(300)"]) as proc:
        pass
    assert proc.returncode is not None and proc.returncode < 0


def test_a_directory_being_made_is_never_taken_for_a_dead_ones(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    """Two osmeters starting at once: the other one's remove_stale_tmpdirs()
    runs just before this one locks its new directory. The lock file it
    looks for must not exist unlocked in that moment, or it takes the lock,
    calls the directory dead and removes it (seen as a flaky e2e test)."""
    import fcntl
    import tempfile

    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    real_flock = fcntl.flock
    rival: list[list[str]] = []

    def flock_after_a_rival(fd: int, op: int) -> None:
        if not rival:
            rival.append([])  # first: the rival's own flock calls pass straight through
            rival[0] = probe.remove_stale_tmpdirs(str(root))
        real_flock(fd, op)

    monkeypatch.setattr(probe.fcntl, "flock", flock_after_a_rival)
    tmpdir, fd = probe.make_locked_tmpdir()
    try:
        assert rival == [[]], "the rival removed a directory in use"
        assert os.path.isdir(tmpdir)
        assert probe.remove_stale_tmpdirs(str(root)) == []  # held: alive
    finally:
        probe._remove_locked_tmpdir(tmpdir, fd)
    assert list(root.iterdir()) == []
