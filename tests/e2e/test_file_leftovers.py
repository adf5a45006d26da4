"""A probe killed with SIGKILL in the middle of a file benchmark cannot
remove its work directory `osmeter-probe.<pid>.XXXXXX`; once `osmeter run`
returns, osmeter has removed it, from the `dir=` directory or, with the
default directory, from $TMPDIR and /var/tmp, and said the probe was
killed."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from osmeter.errors import EXIT_PROBE
from probe_helpers import optional_tool_missing

from ..conftest import osmeter_command, subprocess_env, wait_for

# file.read of a 4 MiB file asked to sample for a minute: it is in its
# timed loop, its work file written, long before the test kills it.
RUNS_A_WHILE = ["file.read", "--param", "size=4M", "--min-time", "60", "--max-time", "60",
                "--max-samples", "10000000"]
WORKDIR = re.compile(r"osmeter-probe\.(\d+)\.[A-Za-z0-9]{6}")
SHARED = Path("/var/tmp")


def work_dirs(root: Path, pid: int | str = "*") -> list[Path]:
    """`osmeter-probe.<pid>.*` in root and in osmeter's private directories
    `osmeter-run.*` there (the probe's $TMPDIR, where the default file
    directory is a work directory inside the probe's own work directory)."""
    return [*root.glob(f"osmeter-probe.{pid}.*"), *root.glob(f"osmeter-run.*/osmeter-probe.{pid}.*"),
            *root.glob(f"osmeter-run.*/osmeter-probe.{pid}.*/osmeter-probe.{pid}.*")]


def child_probe_workdir(roots: list[Path], osmeter_pid: int, probe: str) -> tuple[int, Path] | None:
    """A work directory holding a file, made by the probe that `osmeter_pid`
    started (other osmeter runs on this machine may have their own)."""
    for root in roots:
        for d in work_dirs(root):
            m = WORKDIR.fullmatch(d.name)
            if not m or not d.is_dir() or d.is_symlink():
                continue
            pid = int(m.group(1))
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
                exe = os.path.realpath(f"/proc/{pid}/exe")
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) != osmeter_pid or exe != os.path.realpath(probe):
                continue
            if any(f.is_file() for f in d.iterdir()):  # the innermost: the file benchmark's
                return pid, d
    return None


def kill_the_probe_mid_benchmark(probe: str, roots: list[Path], *args: str) -> tuple[int, str, int, Path]:
    """`osmeter run` a file benchmark; SIGKILL its probe (not osmeter) once
    the work file exists; returns osmeter's exit code and stderr, the
    probe's pid and its work directory."""
    proc = subprocess.Popen(osmeter_command("run", *RUNS_A_WHILE, *args), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=subprocess_env())
    try:
        found: list[tuple[int, Path]] = []

        def work_file_written() -> bool:
            hit = child_probe_workdir(roots, proc.pid, probe)
            if hit is None and proc.poll() is not None:
                raise AssertionError(f"osmeter ended before the probe wrote its file: {proc.communicate()}")
            found[:] = [hit] if hit else []
            return bool(found)

        wait_for(work_file_written, timeout=60, what="the probe's work file")
        pid, workdir = found[0]
        os.kill(pid, signal.SIGKILL)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, err, pid, workdir


def assert_death_reported(rc: int, err: str) -> None:
    assert rc == EXIT_PROBE, err
    assert "osmeter-probe stopped before the end of the run (killed by SIGKILL)" in err, err
    assert "kept in run 1, marked incomplete" in err, err


def left_by(pid: int, *roots: Path) -> list[Path]:
    return [d for root in roots for d in work_dirs(root, pid)]


@pytest.mark.slow
def test_sigkill_leaves_nothing_in_the_dir(real_probe: str, tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    rc, err, pid, workdir = kill_the_probe_mid_benchmark(real_probe, [target], "--param", f"dir={target}")
    assert workdir.parent == target
    assert_death_reported(rc, err)
    assert list(target.iterdir()) == []
    assert f"removed the work directory the stopped probe left: {workdir}" in err, err


@pytest.fixture(params=["disk", "tmpfs"])
def probe_tmpdir(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """osmeter's $TMPDIR (where it makes each probe's private $TMPDIR): on
    disk the default file directory is in there; on tmpfs the file
    benchmarks go to /var/tmp instead."""
    if request.param == "disk":
        d = tmp_path / "tmp"
        d.mkdir()
        monkeypatch.setenv("TMPDIR", str(d))
        yield d
        return
    if os.geteuid() != 0:
        optional_tool_missing("the tmpfs variant mounts a tmpfs: it needs root")
    d = tmp_path / "tmpfs"
    d.mkdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m,mode=0700", "osmeter-test", str(d)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        optional_tool_missing(f"cannot mount a tmpfs: {p.stderr.strip()}")
    try:
        monkeypatch.setenv("TMPDIR", str(d))
        yield d
    finally:
        subprocess.run(["umount", str(d)], capture_output=True)
        if os.path.ismount(d):
            subprocess.run(["umount", "-l", str(d)], capture_output=True)


@pytest.mark.slow
def test_sigkill_leaves_nothing_in_the_default_directory(real_probe: str, probe_tmpdir: Path) -> None:
    rc, err, pid, workdir = kill_the_probe_mid_benchmark(real_probe, [probe_tmpdir, SHARED])
    on_tmpfs = probe_tmpdir.name == "tmpfs"
    assert (workdir.parent == SHARED) == on_tmpfs, workdir
    assert on_tmpfs or workdir.is_relative_to(probe_tmpdir), workdir
    assert_death_reported(rc, err)
    assert left_by(pid, probe_tmpdir, SHARED) == []
    assert list(probe_tmpdir.iterdir()) == []  # osmeter's private osmeter-run.* went too
