"""Finding and running the real osmeter-probe from tests.

The real probe is looked up, in order: $OSMETER_TEST_PROBE, the copy installed
next to the osmeter package (pip install .), the one in the running
interpreter's scripts directory, osmeter-probe on PATH, and a
CMake build in ./build. A missing probe FAILS the tests that need it: a test
run that silently skipped every measurement would prove nothing.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")

REPO = Path(__file__).resolve().parent.parent

# Optional tools (Chromium, cross compilers, qemu-user): a test that needs one
# skips with the Debian package to install where it is missing, so the
# README's test command passes on a fresh machine. Each kind has a variable
# that turns its skip into a failure, and OSMETER_TEST_REQUIRE_OPTIONAL=1
# does it for all of them; CI installs everything and sets them (.ci/run).
REQUIRE_OPTIONAL = "OSMETER_TEST_REQUIRE_OPTIONAL"
REQUIRE = {
    "browser": "OSMETER_REQUIRE_BROWSER",  # headless Chromium (the report's browser test)
    "cross": "OSMETER_REQUIRE_CROSS",  # aarch64/armv7/riscv64 cross compilers
    "qemu": "OSMETER_REQUIRE_QEMU",  # qemu-user, to run the cross-built probes
    "qemu-system": "OSMETER_REQUIRE_QEMU_SYSTEM",  # qemu-system-x86_64 and apt's Debian kernels (kernels run)
    "postgresql": "OSMETER_REQUIRE_POSTGRESQL",  # a PostgreSQL server (initdb, pg_ctl) for the store tests
}


def optional_tool_missing(message: str, kind: str | None = None) -> None:
    """Skip for a missing optional tool of `kind` (a key of REQUIRE), or fail
    when its variable or OSMETER_TEST_REQUIRE_OPTIONAL is 1 (without a kind,
    only the latter)."""
    import pytest  # noqa: PLC0415 (this module is also used outside pytest)

    names = ([REQUIRE[kind]] if kind else []) + [REQUIRE_OPTIONAL]
    for name in names:
        if os.environ.get(name) == "1":
            pytest.fail(f"{message} ({name}=1: the test must run here)")
    pytest.skip(f"{message}; set {names[0]}=1 to make this a failure")


# Tiny budgets for per-benchmark tests: plausibility, not precision.
TINY = ["--min-time", "0.01", "--max-time", "0.3", "--min-samples", "5", "--quiet"]


def find_probe() -> str | None:
    env = os.environ.get("OSMETER_TEST_PROBE")
    if env:
        return env
    try:
        import osmeter  # noqa: PLC0415

        cand = Path(osmeter.__file__).resolve().parent / "bin" / "osmeter-probe"
        if cand.exists():
            return str(cand)
    except ImportError:
        pass
    # The scripts directory of the running interpreter's environment: where
    # `pip install .` put it, even when that venv is not on PATH.
    cand = Path(sys.executable).parent / "osmeter-probe"
    if cand.exists():
        return str(cand)
    found = shutil.which("osmeter-probe")
    if found:
        return found
    cand = REPO / "build" / "probe" / "osmeter-probe"
    return str(cand) if cand.exists() else None


@dataclass
class ProbeRun:
    rc: int
    records: list[dict]
    stdout: str
    stderr: str

    def of_type(self, t: str) -> list[dict]:
        return [r for r in self.records if r["type"] == t]

    def result(self, bench: str, **params) -> dict:
        for r in self.of_type("result"):
            if r["bench"] == bench and all(r["params"].get(k) == v for k, v in params.items()):
                return r
        raise AssertionError(
            f"no result for {bench} {params}; records: "
            + ", ".join(f"{r['type']}:{r.get('bench', '')}" for r in self.records)
            + f"\nstderr: {self.stderr}"
        )


def run_probe(probe: str, *args: str, timeout: float = 120, jsonl: bool = True, **kw) -> ProbeRun:
    """Run the probe; with jsonl, every stdout line must be a JSON object."""
    p = subprocess.run([probe, *args], capture_output=True, text=True, timeout=timeout, **kw)
    records = []
    if jsonl and args and args[0] in ("run", "hotspots"):
        for line in p.stdout.splitlines():
            records.append(json.loads(line))
    return ProbeRun(p.returncode, records, p.stdout, p.stderr)


@contextmanager
def probe_started(probe: str, *args: str, **kw) -> Iterator[subprocess.Popen[str]]:
    """The probe running in the background (text pipes) while the test acts
    on it. However the block ends (a failed assertion, a timeout), a probe
    still running is killed and reaped: none outlives its test."""
    p = subprocess.Popen([probe, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    try:
        yield p
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()


def probe_finished(p: subprocess.Popen[str], timeout: float = 30) -> ProbeRun:
    """Waits for a probe from probe_started: its exit code, records and output."""
    out, err = p.communicate(timeout=timeout)
    return ProbeRun(p.returncode, [json.loads(line) for line in out.splitlines()], out, err)


# Retry once under load. A test comparing two figures timed at different
# moments (fork against fork + exit, huge pages against small) can be split
# by a busy neighbour that ran during one of them only. Margins cover a
# steady load (tests must pass under `stress-ng --cpu 2`, see
# benchmarks/tests_under_load.py); this covers a burst.
BUSY_SHARE = 0.10  # CPU pressure: some task waited for a CPU this share of the attempt


def _cpu_pressure_us() -> int | None:
    """/proc/pressure/cpu's `some total` (µs some task waited for a CPU), or
    None without PSI."""
    try:
        with open("/proc/pressure/cpu") as f:
            for line in f:
                if line.startswith("some "):
                    return int(line.split("total=")[1])
    except (OSError, IndexError, ValueError):
        pass
    return None


def machine_was_busy(since: tuple[float, int | None]) -> bool:
    """Whether the CPUs were contended since `since` (time.monotonic() and
    _cpu_pressure_us() taken then): CPU pressure above BUSY_SHARE of the
    time, or without PSI a 1-minute load average of at least the CPU count."""
    t0, p0 = since
    p1 = _cpu_pressure_us()
    if p0 is not None and p1 is not None:
        return (p1 - p0) / 1e6 > BUSY_SHARE * max(time.monotonic() - t0, 1e-3)
    return os.getloadavg()[0] >= (os.cpu_count() or 1)


def retried_under_load(check: Callable[[], T]) -> T:
    """Run `check` (it measures and asserts); when it fails while the machine
    was busy, run it once more and let that attempt decide. A real defect
    fails both; a failure on a quiet machine is never retried."""
    since = (time.monotonic(), _cpu_pressure_us())
    try:
        return check()
    except AssertionError as first:
        if not machine_was_busy(since):
            raise
        print(f"retried under load: {str(first).splitlines()[0] if str(first) else 'assertion failed'}",
              file=sys.stderr)
    return check()
