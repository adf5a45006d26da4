"""benchmarks/tests_under_load.py with a stand-in stress-ng (a shell loop
that prints a metrics line on SIGINT) and a two-test file: it reports the
failures and the bogo-ops, exits 1 on a failure, skips without stress-ng,
and stops its stress-ng on SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..conftest import ROOT, wait_for

SCRIPT = ROOT / "benchmarks" / "tests_under_load.py"
STAND_IN = """#!/bin/sh
echo $$ >> "$STAND_IN_PIDS"
trap 'echo "stress-ng: metrc: [$$] cpu 1234 2.00 3.90 0.00 617.00 316.41"; exit 0' INT
while :; do sleep 0.05; done
"""
TESTS = """import os, time
def test_passes():
    time.sleep(float(os.environ.get("STAND_IN_SLEEP", "0")))
def test_fails():
    assert os.environ.get("STAND_IN_FAIL") != "1"
"""


def setup(tmp_path: Path, **env: str) -> tuple[list[str], dict[str, str], Path]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "stress-ng").write_text(STAND_IN)
    (bin_dir / "stress-ng").chmod(0o755)
    (tmp_path / "test_two.py").write_text(TESTS)
    pids = tmp_path / "pids"
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", STAND_IN_PIDS=str(pids), **env)
    return [sys.executable, str(SCRIPT), "-k", "passes or fails", str(tmp_path / "test_two.py")], env, pids


def alive(pids: Path) -> list[int]:
    left = []
    for pid in map(int, pids.read_text().split()):
        try:
            os.kill(pid, 0)
            left.append(pid)
        except ProcessLookupError:
            pass
    return left


@pytest.mark.slow  # two pytest runs under the script: about 3 s; CI runs it
def test_failures_and_bogo_ops_are_reported(tmp_path: Path) -> None:
    cmd, env, pids = setup(tmp_path)
    ok = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "0 failed or errored" in ok.stdout
    assert "stress-ng --cpu 2: 1234 bogo ops in 2 s (617/s), its workers busy 98% of 2 CPU(s)" in ok.stdout
    env["STAND_IN_FAIL"] = "1"
    bad = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and "1 failed or errored" in bad.stdout, bad.stdout
    assert "  FAILED " in bad.stdout and "test_two.py::test_fails" in bad.stdout
    assert alive(pids) == []


def test_without_stress_ng_it_skips(tmp_path: Path) -> None:
    env = dict(os.environ, PATH=str(tmp_path))  # no stress-ng there
    r = subprocess.run([sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout) == (0, "skipped: install stress-ng (apt-get install stress-ng)\n")


@pytest.mark.slow  # about 2 s; CI runs it
def test_sigterm_stops_stress_ng_and_the_tests(tmp_path: Path) -> None:
    cmd, env, pids = setup(tmp_path, STAND_IN_SLEEP="60")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: pids.exists() and pids.read_text().strip() != "", timeout=30, what="the stand-in")
        time.sleep(1.5)  # the tests started (the script waits 1 s for stress-ng's workers)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 143 and "interrupted by SIGTERM" in err, err
    assert alive(pids) == []
    marker = str(tmp_path / "test_two.py").encode()
    assert not [p for p in Path("/proc").iterdir() if p.name.isdigit() and marker in cmdline(p)], "pytest left"


def cmdline(proc_dir: Path) -> bytes:
    try:
        return (proc_dir / "cmdline").read_bytes()
    except OSError:
        return b""
