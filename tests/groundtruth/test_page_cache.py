"""Ground truth: the page cache's size. Inside a memory cgroup of 512 MiB
(then 1 GiB) the page cache a process fills is charged to, and capped by,
the cgroup's limit; `osmeter run file.cache_sweep --cgroup-mem SIZE` over
the sizes `osmeter study files` sweeps (1/32 of twice the limit up to twice
the limit, four per doubling) must find its knee (`osmeter page-cache`) at
that size within 25 %. The cgroup is gone afterwards, also when the test
fails (the fixture removes any it finds). The files go to /var/tmp, on the
machine's disk. Needs root and a memory cgroup controller."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from osmeter import cgroup
from osmeter.studies import files as study_files
from osmeter.errors import UsageError

from probe_helpers import find_probe, optional_tool_missing

MiB = 1 << 20
TOLERANCE = 0.25
DIR = "/var/tmp"


@pytest.fixture
def memory_cgroups(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Root and a memory controller, or skip; afterwards no osmeter cgroup made meanwhile is left."""
    if os.geteuid() != 0:
        optional_tool_missing("needs root to create a memory cgroup")
    try:
        _, parent = cgroup.check_possible(512 * MiB)
    except UsageError as e:
        optional_tool_missing(f"no usable memory cgroup controller: {e.message}")
    probe = find_probe()
    if probe is None:
        pytest.fail("osmeter-probe not found: pip install . (or set OSMETER_TEST_PROBE)")
    monkeypatch.setenv("OSMETER_PROBE", probe)
    before = set(parent.glob(f"{cgroup.PREFIX}*"))
    yield parent
    for left in set(parent.glob(f"{cgroup.PREFIX}*")) - before:  # only when osmeter itself failed to
        for pid in cgroup._procs(left):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for _ in range(100):
            try:
                os.rmdir(left)
                break
            except OSError:
                time.sleep(0.05)
        pytest.fail(f"osmeter left the memory cgroup {left} behind")


SRC = Path(__file__).resolve().parents[2] / "src"


def osmeter(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-m", "osmeter", *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


def sweep(limit_mib: int) -> tuple[list[str], tuple[int, ...]]:
    """`osmeter run` arguments for the study's sweep of this cgroup limit."""
    sizes = study_files.sweep_sizes(2 * limit_mib, 4, 5)
    blocks = max(sizes)  # 1 MiB blocks: one pass over the largest file, at most two
    return (["run", "file.cache_sweep", "--param", "size=" + ",".join(f"{s}M" for s in sizes),
             "--param", f"dir={DIR}", "--cgroup-mem", f"{limit_mib}M", "--repeat", "1",
             "--min-samples", str(blocks), "--max-samples", str(2 * blocks),
             "--min-time", "0.5", "--max-time", "600"], sizes)


@pytest.mark.slow  # about 10 s (512 MiB) and 25 s (1 GiB) here: a sweep up to twice the limit
@pytest.mark.parametrize("limit_mib", [512, 1024])
def test_the_knee_is_the_memory_cgroup_limit(memory_cgroups: Path, store_path: Path, limit_mib: int) -> None:
    args, sizes = sweep(limit_mib)
    st = os.statvfs(DIR)
    if st.f_bavail * st.f_frsize < (max(sizes) + 512) * MiB:
        pytest.skip(f"{DIR} has less than {max(sizes) + 512} MiB free")
    started = time.monotonic()
    run = osmeter(*args)
    elapsed = time.monotonic() - started
    assert run.returncode == 0, run.stderr[-3000:]
    shown = osmeter("page-cache", "latest")
    doc = json.loads(osmeter("page-cache", "latest", "--json").stdout)
    (curve,) = doc["curves"]
    knee = curve["knee"]
    report = f"{limit_mib} MiB cgroup, {len(sizes)} sizes in {elapsed:.0f} s:\n{shown.stdout}"
    print(report)
    assert knee["status"] == "knee", report
    assert curve["cgroup_limit_bytes"] == limit_mib * MiB
    assert abs(knee["size_bytes"] / (limit_mib * MiB) - 1) <= TOLERANCE, report
    # Below the knee the file was all in the cache; past it, at most the limit of it.
    for p in curve["points"]:
        if p["size_bytes"] <= knee["low_bytes"] * 0.9:
            assert p["resident"] >= 0.95, report
        assert p["resident"] * p["size_bytes"] <= limit_mib * MiB * 1.01, report
    recorded = json.loads(osmeter("show", "latest", "--json").stdout)["run"]["params"]["cgroup"]
    assert not Path(recorded["path"]).exists()
    assert not [p for p in Path(DIR).iterdir() if p.name.startswith("osmeter-probe.")]  # the work files went too
