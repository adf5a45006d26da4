#!/usr/bin/env python3
"""The README's test command while a busy neighbour loads every CPU (issue 30).

Runs `python -m pytest` of this checkout (the default selection: slow tests
skip unless OSMETER_TEST_SLOW=1 is set) while `stress-ng --cpu N` (default 2,
one busy loop per vCPU of the 2-core guest the tests are sized for) runs in a
process group of its own. stress-ng is stopped on every exit path: the end of
the run, a failure, Ctrl-C and SIGTERM (SIGINT to its group, then SIGKILL).

Reports the failed tests (pytest's own summary lines), the wall time, and
stress-ng's bogo-ops with the CPU time its workers got: the proof that the
machine really was loaded. Exit status 1 on any test failure (or when
stress-ng died early), 0 otherwise; `skipped: install stress-ng` (status 0)
where stress-ng is missing.

Usage: benchmarks/tests_under_load.py [--cpu 2] [--extra-args '--cpu-method fft']
                                      [-k EXPR] [PATH ...]
  PATH / -k: a subset for a quick check (pytest's own selection), e.g.
  benchmarks/tests_under_load.py tests/probe/test_lebench.py -k fdiv
  (after --, any pytest arguments: benchmarks/tests_under_load.py -- -x tests/unit)
Not part of the default test run or of .ci/run: the whole default run
under load takes about ten minutes and keeps both CPUs busy.
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
METRIC = re.compile(r"metrc: \[\d+\] (\S+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)")
SUMMARY = re.compile(r"^(FAILED|ERROR) ", re.M)


class Interrupted(Exception):
    """SIGINT or SIGTERM, turned into an exception so that the clean-up runs."""


def on_signal(signum, frame):  # noqa: ARG001 (signal handler signature)
    # Later signals are ignored: a second one (timeout(1) signals its whole
    # group, an impatient Ctrl-C) must not cut the clean-up short.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Interrupted(signal.Signals(signum).name)


def python() -> str:
    venv = ROOT / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def stop(proc: subprocess.Popen | None, grace: float = 10) -> None:
    """SIGINT to the whole group (stress-ng prints its metrics; pytest runs
    its finalizers, which stop the probes it started), SIGKILL after `grace`
    seconds; reaped either way."""
    if proc is None or proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGINT, grace), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue


def bogo_report(text: str, workers: int) -> str:
    m = METRIC.search(text)
    if not m:
        return "stress-ng: no metrics line (did it run?)"
    name, ops, real, usr, sys_, rate = m.groups()
    busy = (float(usr) + float(sys_)) / (float(real) * workers) if float(real) > 0 else 0.0
    return (f"stress-ng --{name} {workers}: {int(ops)} bogo ops in {float(real):.0f} s ({float(rate):.0f}/s), "
            f"its workers busy {busy:.0%} of {workers} CPU(s)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cpu", type=int, default=2, help="stress-ng --cpu N (default 2)")
    ap.add_argument("--extra-args", default="", help="more stress-ng arguments, one string")
    ap.add_argument("-k", dest="keyword", help="pytest -k EXPR (a subset)")
    ap.add_argument("paths", nargs="*", help="test paths (default: pytest's default selection)")
    a = ap.parse_args()
    if a.cpu < 1:
        ap.error("--cpu must be 1 or more")
    stress_ng = shutil.which("stress-ng")
    if not stress_ng:
        print("skipped: install stress-ng (apt-get install stress-ng)")
        return 0
    cmd = [python(), "-m", "pytest", *a.paths] + (["-k", a.keyword] if a.keyword else [])
    stress_cmd = [stress_ng, "--cpu", str(a.cpu), "--metrics-brief", "--timeout", "3600s", *shlex.split(a.extra_args)]
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    stress = tests = None
    try:
        stress = subprocess.Popen(stress_cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  start_new_session=True)
        time.sleep(1)  # its workers started before the first test
        if stress.poll() is not None:
            print(f"stress-ng exited at once:\n{stress.stdout.read()}", file=sys.stderr)
            return 1
        print(f"under {shlex.join(stress_cmd)}: {shlex.join(cmd)}", flush=True)
        t0 = time.monotonic()
        tests = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 start_new_session=True)  # signalled by us, as a group
        out = []
        for line in tests.stdout:
            sys.stdout.write(line)
            out.append(line)
        rc = tests.wait()
        wall = time.monotonic() - t0
        died = stress.poll() is not None
        stop(stress)
        metrics = stress.stdout.read()
    except Interrupted as e:
        print(f"interrupted by {e}: the tests and stress-ng stopped", file=sys.stderr)
        return 130 if str(e) == "SIGINT" else 143
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stop(tests, grace=30)
        stop(stress)
    failed = SUMMARY.findall("".join(out))
    print()
    print(f"wall time: {wall:.0f} s; pytest exit status {rc}; {len(failed)} failed or errored")
    for line in "".join(out).splitlines():
        if SUMMARY.match(line):
            print(f"  {line}")
    print(bogo_report(metrics, a.cpu))
    if died:
        print("stress-ng died during the run: the load was not there throughout", file=sys.stderr)
    return 1 if rc != 0 or died else 0


if __name__ == "__main__":
    sys.exit(main())
