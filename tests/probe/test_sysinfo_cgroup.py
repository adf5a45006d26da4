"""The cgroup limits of the run in the machine description: on cgroup v1
and v2, as the test reads them itself (the hierarchies from
/proc/self/mountinfo, the smallest limit over the process's cgroup and its
parents), and, where the test may make a child cgroup (root, v1), limits it
sets there: memory, tasks, CPU bandwidth and the cpuset. The child cgroups
are removed afterwards, however the test ends."""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

CONTROLLERS = ("memory", "pids", "cpu", "cpuset")


def hierarchies() -> dict[str | None, tuple[str, str]]:
    """{controller: (mount point, root)} of the v1 hierarchies, and None: the v2 one."""
    out: dict[str | None, tuple[str, str]] = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, rfields = left.split(), right.split()
        if len(fields) < 5 or len(rfields) < 3:
            continue
        root, point = (f.replace("\\040", " ") for f in fields[3:5])
        if rfields[0] == "cgroup2":
            out.setdefault(None, (point, root))
        elif rfields[0] == "cgroup":
            for c in rfields[2].split(","):
                out.setdefault(c, (point, root))
    return out


def own_cgroup(controller: str | None) -> str | None:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, ctrls, path = line.split(":", 2)
        if (controller is None and not ctrls and line.startswith("0:")) or controller in ctrls.split(","):
            return path
    return None


def where(controller: str) -> tuple[Path, Path, bool] | None:
    """(hierarchy's mount point, this process's cgroup directory, v2) for a controller."""
    h = hierarchies()
    for key, v2 in ((controller, False), (None, True)):
        cg = own_cgroup(key)
        if key in h and cg is not None:
            point, root = h[key]
            if root != "/" and (cg == root or cg.startswith(root + "/")):
                cg = cg[len(root):] or "/"
            return Path(point), Path(point + (cg if cg != "/" else "")), v2
    return None


def chain(point: Path, d: Path) -> list[Path]:
    out = [d]
    while d != point and point in d.parents:
        d = d.parent
        out.append(d)
    return out


def read(p: Path) -> str | None:
    try:
        return p.read_text().strip()
    except OSError:
        return None


def limit(controller: str, d: Path, v2: bool) -> float | None:
    """One cgroup's limit as the kernel files say, None for none."""
    if controller == "cpu":
        if v2:
            text = read(d / "cpu.max")
            quota, period = text.split() if text else ("max", "1")
        else:
            quota, period = read(d / "cpu.cfs_quota_us") or "-1", read(d / "cpu.cfs_period_us") or "0"
        return int(quota) / int(period) if quota not in ("max", "-1") and int(period) > 0 else None
    name = {"memory": "memory.max" if v2 else "memory.limit_in_bytes", "pids": "pids.max"}[controller]
    text = read(d / name)
    if text is None or text == "max" or (controller == "memory" and not v2 and int(text) >= 1 << 62):
        return None
    return float(text)


def expected(controller: str) -> object:
    w = where(controller)
    if w is None:
        return None
    point, d, v2 = w
    if controller == "cpuset":
        names = ["cpuset.cpus.effective"] if v2 else ["cpuset.effective_cpus", "cpuset.cpus"]
        for c in chain(point, d):
            for n in names:
                if read(c / n) is not None:
                    return read(c / n)
        return None
    found = [v for v in (limit(controller, c, v2) for c in chain(point, d)) if v is not None]
    return min(found) if found else None


KEYS = {"memory": "cgroup_memory_limit_bytes", "pids": "cgroup_pids_limit", "cpu": "cgroup_cpu_limit",
        "cpuset": "cgroup_cpuset_cpus"}


def machine(probe: str, argv_prefix: list[str] | None = None) -> dict:
    p = subprocess.run([*(argv_prefix or []), probe, "sysinfo", "--json"], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    return {f["key"]: f["value"] for f in json.loads(p.stdout)["fields"]}


def test_limits_are_the_smallest_over_the_cgroup_and_its_parents(probe):
    values = machine(probe)
    for controller, key in KEYS.items():
        want = expected(controller)
        if isinstance(want, float) and controller != "cpu":
            want = int(want)
        assert values[key] == want, (key, values[key], want)
        if want is None:
            assert values["null_reasons"].get(key), f"{key} is null without a reason"


@pytest.fixture
def child_cgroups():
    """A child of this process's cgroup in each v1 hierarchy of CONTROLLERS
    the test may write (root): {controller: directory}; removed afterwards."""
    if os.geteuid() != 0:
        pytest.skip("making a child cgroup needs root")
    made: dict[str, Path] = {}
    try:
        for c in CONTROLLERS:
            w = where(c)
            if w is None or w[2]:
                continue  # v2: a child would need the controller in our cgroup's subtree_control
            d = w[1] / f"osmeter-test-{os.getpid()}"
            try:
                d.mkdir()
            except OSError:
                continue
            made[c] = d
        if not made:
            pytest.skip("no cgroup v1 hierarchy to make a child cgroup in")
        yield made
    finally:
        for d in made.values():
            for _ in range(50):  # the probe's exit may take a moment to leave the cgroup
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def test_limits_set_in_a_child_cgroup_are_reported(probe, child_cgroups):
    want = {}
    for c, d in child_cgroups.items():
        before = expected(c)
        if c == "memory":
            (d / "memory.limit_in_bytes").write_text(str(512 << 20))
            want[c] = min(512 << 20, int(before)) if before is not None else 512 << 20
        elif c == "pids":
            (d / "pids.max").write_text("1000")
            want[c] = min(1000, int(before)) if before is not None else 1000
        elif c == "cpu":
            period = int(read(d / "cpu.cfs_period_us") or 100000)
            (d / "cpu.cfs_quota_us").write_text(str(period // 2))
            want[c] = min(0.5, before) if before is not None else 0.5
        elif c == "cpuset":
            parent = d.parent
            cpus = read(parent / "cpuset.effective_cpus") or read(parent / "cpuset.cpus") or ""
            mems = read(parent / "cpuset.effective_mems") or read(parent / "cpuset.mems") or ""
            first = cpus.split(",")[0].split("-")[0]
            (d / "cpuset.cpus").write_text(first)
            (d / "cpuset.mems").write_text(mems)
            want[c] = first
    join = 'p=$1; shift; for d; do echo $$ > "$d/cgroup.procs" || exit 9; done; exec "$p" sysinfo --json'
    p = subprocess.run(["sh", "-c", join, "sh", probe, *map(str, child_cgroups.values())],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    values = {f["key"]: f["value"] for f in json.loads(p.stdout)["fields"]}
    for c, w in want.items():
        got = values[KEYS[c]]
        assert (abs(got - w) < 1e-9 if c == "cpu" else got == w), (KEYS[c], got, w)
