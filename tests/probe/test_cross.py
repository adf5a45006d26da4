"""The probe cross-built for aarch64, armv7 and riscv64 and run under
qemu-user: it builds with -Werror using nothing but a compiler prefix, its C
unit tests pass under emulation, and its output is correct.

Timings mean nothing under qemu; these tests check correctness only (valid
JSON Lines, the right architecture, every benchmark measured or skipped with
a reason, positive finite medians). Each architecture is built once per
session. A missing cross compiler or qemu skips with the Debian package to
install, or fails with OSMETER_REQUIRE_CROSS=1 / OSMETER_REQUIRE_QEMU=1.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import pytest

from cross_helpers import TARGETS, CrossBuild, cross_build

pytestmark = [pytest.mark.cross, pytest.mark.slow]  # ~35 s: three cross builds

# The cpu and syscall families, by name (a named run uses each default).
BENCHES = [
    "cpu.timer_overhead", "cpu.loop_overhead", "cpu.call", "syscall.null", "syscall.getuid",
    "syscall.read", "syscall.write", "syscall.open_close", "syscall.stat",
]
BUDGET = ["--max-time", "0.3", "--min-time", "0.01"]


@pytest.fixture(scope="session", params=TARGETS, ids=[t.name for t in TARGETS])
def cross(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> CrossBuild:
    return cross_build(request.param, tmp_path_factory)


def test_cross_unit_tests_pass_under_qemu(cross: CrossBuild) -> None:
    p = subprocess.run(["ctest", "--output-on-failure", "-j2"], cwd=cross.build_dir,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-6000:] + p.stderr[-2000:]
    assert "No tests were found" not in p.stdout
    assert "100% tests passed" in p.stdout, p.stdout[-2000:]
    # CTest ran them through the emulator, not natively.
    q = subprocess.run(["ctest", "-N", "-V"], cwd=cross.build_dir, capture_output=True, text=True)
    assert cross.target.qemu in q.stdout


def test_cross_binary_is_for_the_target(cross: CrossBuild) -> None:
    head = cross.probe.read_bytes()[:20]
    assert head[:4] == b"\x7fELF"
    machine = int.from_bytes(head[18:20], "little")
    assert machine == {"aarch64": 183, "armv7": 40, "riscv64": 243}[cross.target.name]


def test_cross_list_json(cross: CrossBuild) -> None:
    p = subprocess.run(cross.command("list", "--json"), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["schema"] == 1
    names = {b["name"] for b in doc["benchmarks"]}
    assert any(n.startswith("cpu.") for n in names), names
    assert any(n.startswith("syscall.") for n in names), names
    assert set(BENCHES) <= names, set(BENCHES) - names
    assert "monotonic_raw" in doc["clocks"]


def test_cross_run_cpu_and_syscall(cross: CrossBuild, tmp_path: Path) -> None:
    workdirs = tmp_path / "tmpdir"
    workdirs.mkdir()
    env = dict(os.environ, TMPDIR=str(workdirs))
    p = subprocess.run(cross.command("run", *BENCHES, *BUDGET), capture_output=True, text=True,
                       timeout=300, env=env)
    assert p.returncode == 0, p.stderr[-4000:]
    assert p.stdout.endswith("\n")
    recs = [json.loads(line) for line in p.stdout.splitlines()]
    assert all(isinstance(r, dict) for r in recs)

    meta, end = recs[0], recs[-1]
    assert meta["type"] == "meta" and meta["schema"] == 1
    assert meta["build"]["arch"] == cross.target.probe_arch, meta["build"]
    assert end["type"] == "end" and end["status"] == "complete", end
    assert end["counts"]["error"] == 0, p.stderr[-4000:]

    outcomes = {}
    for r in recs[1:-1]:
        if r["type"] in ("result", "skip", "error"):
            assert r["bench"] not in outcomes, f"two outcomes for {r['bench']}"
            outcomes[r["bench"]] = r
    assert set(outcomes) == set(BENCHES), set(BENCHES) ^ set(outcomes)
    for name, r in outcomes.items():
        assert r["type"] != "error", r
        if r["type"] == "skip":
            assert isinstance(r["reason"], str) and r["reason"].strip(), r
            continue
        assert r["unit"] == "ns", r
        med = r["median"]
        assert isinstance(med, (int, float)) and math.isfinite(med) and med > 0, (name, r)
        assert r["n"] >= 1
    # The probe's private work directory (open_close/stat files) is gone.
    assert not any(workdirs.iterdir()), list(workdirs.iterdir())


def test_cross_rt_kernels_checksums_and_rt_benchmarks(cross: CrossBuild) -> None:
    """Every workload kernel's job, run by the cross-built probe under qemu,
    returns the checksum the independent Python reference computes (the
    probe checks it after every job: a mismatch is an error record); rt.cyclic
    and rt.osnoise run there too (timings under emulation mean nothing)."""
    from rt_kernels_ref import checksum
    names = [n for n in json.loads(subprocess.run(cross.command("list", "--json"), capture_output=True,
                                                   text=True, check=True).stdout)["benchmarks"]
             if n["name"] == "rt.workload"][0]["params"][0]["choices"]
    assert len(names) == 19
    p = subprocess.run(cross.command("run", "rt.workload", "--param", "kernel=" + ",".join(names), "--param",
                                     "period_us=1", "--param", "priority=0", "--min-samples", "2",
                                     "--max-samples", "2", "--min-time", "0", "--quiet"),
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-4000:]
    recs = [json.loads(line) for line in p.stdout.splitlines()]
    results = {r["params"]["kernel"]: r for r in recs if r["type"] == "result"}
    assert set(results) == set(names), [r for r in recs if r["type"] in ("skip", "error")]
    for name, r in results.items():
        assert r["info"]["checksum"] == f"0x{checksum(name):08x}", name
    p = subprocess.run(cross.command("run", "rt.cyclic", "rt.osnoise", "--param", "loops=20", "--param",
                                     "priority=0", "--min-samples", "5", "--max-samples", "5", "--quiet"),
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-4000:]
    got = {r["bench"]: r for r in map(json.loads, p.stdout.splitlines()) if r["type"] == "result"}
    assert got["rt.cyclic"]["n"] == 20 and got["rt.osnoise"]["n"] == 5
