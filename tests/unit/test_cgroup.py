"""`--cgroup-mem` (osmeter.cgroup): sizes, the v1 and v2 code paths against a
fake cgroup tree in tmp_path, clear errors before anything runs, removal on
every way out; and, as root with a memory controller, the real thing: the
probe is in the cgroup when it starts and the cgroup is gone afterwards."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from osmeter import cgroup, errors
from osmeter.errors import UsageError

from ..conftest import FAKE_PROBE, FakeProbe, db_rows, osmeter_command, subprocess_env, wait_for

from probe_helpers import optional_tool_missing

MiB, GiB = 1 << 20, 1 << 30


@pytest.mark.parametrize(("text", "value"), [("512M", 512 * MiB), ("1G", GiB), ("1.5GiB", 3 * GiB // 2),
                                             ("524288k", 512 * MiB), ("536870912", 512 * MiB), (" 2 g ", 2 * GiB),
                                             ("64MB", 64 * MiB), ("1T", 1 << 40)])
def test_sizes(text, value):
    assert cgroup.parse_size(text) == value


@pytest.mark.parametrize("text", ["", "M", "-1M", "512X", "1.3k", "lots", "1e9", "512 M B"])
def test_bad_sizes(text):
    with pytest.raises(ValueError, match="size|whole"):
        cgroup.parse_size(text)


# --- a fake tree -------------------------------------------------------------


class FakeTree:
    """A cgroup tree in tmp_path: the mounts, /proc/self/cgroup and /proc/meminfo of a machine."""

    def __init__(self, root: Path, version: int, own: str = "/session") -> None:
        self.root = root
        self.mounts = root / "mounts"
        self.self_cgroup = root / "self-cgroup"
        self.meminfo = root / "meminfo"
        self.meminfo.write_text("MemTotal:       4194304 kB\nMemAvailable:   3000000 kB\n")
        unified, memory = root / "unified", root / "memory"
        unified.mkdir()
        (unified / "cgroup.controllers").write_text("cpu io pids\n" if version == 1 else "cpu io memory pids\n")
        lines = [f"tmpfs {root} tmpfs rw 0 0", f"cgroup2 {unified} cgroup2 rw,nosuid 0 0"]
        if version == 1:
            memory.mkdir()
            lines.append(f"cgroup {memory} cgroup rw,relatime,memory 0 0")
            self.mount = memory
            self.self_cgroup.write_text(f"4:memory:{own}\n1:cpu:/\n0::/\n")
        else:
            self.mount = unified
            (unified / "cgroup.subtree_control").write_text("memory pids\n")
            self.self_cgroup.write_text(f"0::{own}\n")
        self.own = self.mount / own.lstrip("/")
        self.own.mkdir(parents=True, exist_ok=True)
        (self.own / "cgroup.subtree_control").write_text("")  # a v2 cgroup with processes gives nothing
        self.mounts.write_text("\n".join(lines) + "\n")

    def create(self, limit: int = 512 * MiB, euid: int = 0) -> cgroup.MemoryCgroup:
        return cgroup.MemoryCgroup.create(limit, self.mounts, self.self_cgroup, self.meminfo, euid=euid)


def fake_rmdir(path: str) -> None:
    """cgroupfs: rmdir takes the control files along, and fails while a process is inside."""
    p = Path(path)
    if not p.is_dir():
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
    for pid in cgroup._procs(p):
        if os.path.exists(f"/proc/{pid}") and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z":
            raise OSError(errno.EBUSY, "Device or resource busy", path)
    shutil.rmtree(p)


def fake_mkdir(path: str) -> None:
    """cgroupfs: a new cgroup comes with its control files."""
    os.mkdir(path)
    for name in ("cgroup.procs", "memory.limit_in_bytes", "memory.max"):
        Path(path, name).write_text("")


@pytest.fixture
def cgroupfs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cgroup, "_mkdir", fake_mkdir)
    monkeypatch.setattr(cgroup, "_rmdir", fake_rmdir)


@pytest.mark.parametrize("version", [1, 2])
def test_the_hierarchy_with_the_memory_controller(tmp_path, version):
    tree = FakeTree(tmp_path, version)
    h = cgroup.find_hierarchy(tree.mounts)
    assert (h.version, h.mount) == (version, tree.mount)
    assert h.limit_file == ("memory.limit_in_bytes" if version == 1 else "memory.max")


def test_no_memory_controller_anywhere_is_a_clear_error(tmp_path):
    tree = FakeTree(tmp_path, 1)
    tree.mounts.write_text(f"cgroup2 {tmp_path / 'unified'} cgroup2 rw 0 0\n")
    with pytest.raises(UsageError, match="no memory cgroup controller.*has no memory controller"):
        cgroup.find_hierarchy(tree.mounts)
    with pytest.raises(UsageError, match="cannot read"):
        cgroup.find_hierarchy(tmp_path / "missing")


def test_v1_nests_in_osmeters_own_memory_cgroup(tmp_path, cgroupfs):
    tree = FakeTree(tmp_path, 1, own="/jobs/42")
    cg = tree.create(512 * MiB)
    try:
        assert cg.path.parent == tree.own and cg.path.name.startswith(f"osmeter-{os.getpid()}-")
        assert (cg.path / "memory.limit_in_bytes").read_text() == str(512 * MiB)
        assert (cg.path / "memory.max").read_text() == ""  # the v2 file, untouched
        assert cg.describe() == {"version": 1, "path": str(cg.path), "limit_file": "memory.limit_in_bytes",
                                 "requested_bytes": 512 * MiB, "limit_bytes": 512 * MiB}
    finally:
        assert cg.remove() is None
    assert not cg.path.exists() and tree.own.is_dir()


def test_v2_goes_to_the_nearest_cgroup_that_gives_children_the_memory_controller(tmp_path, cgroupfs):
    tree = FakeTree(tmp_path, 2, own="/user.slice/session-1.scope")
    (tree.mount / "user.slice" / "cgroup.subtree_control").write_text("cpu memory\n")
    with tree.create(GiB) as cg:
        assert cg.path.parent == tree.mount / "user.slice"
        assert (cg.path / "memory.max").read_text() == str(GiB)
    assert not cg.path.exists()
    (tree.mount / "user.slice" / "cgroup.subtree_control").write_text("cpu\n")
    with tree.create(GiB) as cg:
        assert cg.path.parent == tree.mount  # the root's
    (tree.mount / "cgroup.subtree_control").write_text("pids\n")
    with pytest.raises(UsageError, match=r"echo \+memory"):
        tree.create(GiB)
    assert [p.name for p in tree.mount.rglob("osmeter-*")] == []


def test_the_probe_side_enters_by_writing_its_pid(tmp_path, cgroupfs):
    tree = FakeTree(tmp_path, 1)
    with tree.create() as cg:
        enter = cg.enter()
        assert "memory cgroup" in enter.what
        enter()  # what Popen's preexec_fn does in the child
        assert (cg.path / "cgroup.procs").read_text() == str(os.getpid())
        (cg.path / "cgroup.procs").write_text("")


@pytest.mark.parametrize(
    ("limit", "euid", "message"),
    [(8 * MiB, 0, "below 16 MiB"), (8 * GiB, 0, "more than this machine's memory"), (GiB, 1000, "needs root")],
)
def test_refused_before_anything_changes(tmp_path, cgroupfs, limit, euid, message):
    tree = FakeTree(tmp_path, 1)
    with pytest.raises(UsageError, match=message):
        tree.create(limit, euid=euid)
    assert list(tree.own.glob("osmeter-*")) == []


def test_a_limit_the_kernel_refuses_leaves_no_cgroup(tmp_path, cgroupfs, monkeypatch):
    tree = FakeTree(tmp_path, 1)

    def refuse(self, limit):  # as cgroupfs does for a value it cannot take
        raise UsageError("--cgroup-mem: cannot set the limit: Invalid argument")

    monkeypatch.setattr(cgroup.MemoryCgroup, "_set_limit", refuse)
    with pytest.raises(UsageError, match="Invalid argument"):
        tree.create()
    assert list(tree.own.glob("osmeter-*")) == []


def test_removed_when_the_block_fails(tmp_path, cgroupfs):
    tree = FakeTree(tmp_path, 1)
    with pytest.raises(KeyboardInterrupt):
        with tree.create() as cg:
            raise KeyboardInterrupt
    assert not cg.path.exists()


def test_a_process_left_inside_is_killed_so_the_cgroup_can_go(tmp_path, cgroupfs):
    tree = FakeTree(tmp_path, 1)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with tree.create() as cg:
            (cg.path / "cgroup.procs").write_text(f"{child.pid}\n")
        assert not cg.path.exists()
        assert child.wait(timeout=10) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_a_cgroup_that_will_not_go_is_reported_with_the_command_to_remove_it(tmp_path, cgroupfs, monkeypatch):
    tree = FakeTree(tmp_path, 1)

    def never(path: str) -> None:
        raise OSError(errno.EPERM, "Operation not permitted", path)

    monkeypatch.setattr(cgroup, "_rmdir", never)
    cg = tree.create()
    problem = cg.remove(timeout_s=0.2)
    assert problem is not None and f"rmdir {cg.path}" in problem
    shutil.rmtree(cg.path)


def test_leftovers_of_a_dead_osmeter_are_removed_next_time(tmp_path, cgroupfs):
    tree = FakeTree(tmp_path, 1)
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tree.own / f"osmeter-{dead.pid}-00ff00ff"
    alive = tree.own / f"osmeter-{os.getpid()}-0000abcd"
    other = tree.own / "not-ours"
    for d in (stale, alive, other):
        d.mkdir()
        (d / "cgroup.procs").write_text("")
    with tree.create():
        pass
    assert not stale.exists() and alive.exists() and other.exists()


# --- the command line --------------------------------------------------------


@pytest.mark.parametrize(("value", "message"), [("lots", "is not a size"), ("1k", "below 16 MiB"),
                                                ("1024T", "more than this machine's memory")])
def test_run_refuses_a_bad_cgroup_size_and_stores_nothing(cli, fake_probe: FakeProbe, store_path: Path, value,
                                                           message):
    r = cli("run", "cpu.call", "--cgroup-mem", value)
    assert r.code == errors.EXIT_USAGE and message in r.err
    assert not store_path.exists()


def test_run_without_root_is_refused_before_anything_runs(cli, fake_probe: FakeProbe, store_path: Path,
                                                          monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    r = cli("run", "cpu.call", "--cgroup-mem", "512M")
    assert r.code == errors.EXIT_USAGE and "needs root" in r.err and "systemd-run" in r.err
    assert not store_path.exists()


# --- for real (root, a memory controller) --------------------------------------


@pytest.fixture
def real_cgroups() -> cgroup.Hierarchy:
    if os.geteuid() != 0:
        optional_tool_missing("needs root to create a memory cgroup")
    try:
        h, _ = cgroup.check_possible(64 * MiB)
    except UsageError as e:
        optional_tool_missing(f"no usable memory cgroup controller: {e.message}")
    return h


def wrapped_probe(tmp_path: Path, fake_probe: FakeProbe) -> Path:
    """A probe that records its /proc/self/cgroup when it starts to measure (`run`: not when the summary
    asks for its catalogue, `list`), then is the fake probe."""
    record = tmp_path / "probe-cgroup"
    wrapper = tmp_path / "probe.sh"
    wrapper.write_text(f'#!/bin/sh\n[ "$1" = list ] || cat /proc/self/cgroup > "{record}"\n'
                       f'exec "{FAKE_PROBE}" "$@"\n')
    wrapper.chmod(0o755)
    fake_probe.monkeypatch.setenv("OSMETER_PROBE", str(wrapper))
    return record


def probe_cgroup(record: Path, h: cgroup.Hierarchy) -> Path:
    for line in record.read_text().splitlines():
        idx, ctrl, path = line.split(":", 2)
        if (h.version == 2 and idx == "0") or (h.version == 1 and "memory" in ctrl.split(",")):
            return h.mount / path.lstrip("/")
    raise AssertionError(record.read_text())


def test_the_probe_runs_in_the_cgroup_which_is_gone_afterwards(cli, fake_probe, store_path, tmp_path, real_cgroups):
    record = wrapped_probe(tmp_path, fake_probe)
    r = cli("run", "cpu.call", "--cgroup-mem", "64M", "--repeat", "1")
    assert r.code == 0, r.err
    where = probe_cgroup(record, real_cgroups)
    assert where.name.startswith(f"osmeter-{os.getpid()}-")
    assert not where.exists()
    (params,) = db_rows(store_path, "SELECT params FROM runs")
    recorded = json.loads(params[0])["cgroup"]
    assert recorded["limit_bytes"] == 64 * MiB and recorded["version"] == real_cgroups.version
    assert recorded["path"] == str(where) and json.loads(params[0])["cgroup_mem"] == 64 * MiB
    assert "memory cgroup: limit 64 MiB" in r.out
    assert "memory cgroup: limit 64 MiB" in cli("show", "latest").out


# Slow-marked to keep the default run under 5 minutes (~3 s); CI runs it.
@pytest.mark.slow
def test_a_killed_probe_leaves_no_cgroup(cli, fake_probe, store_path, tmp_path, real_cgroups):
    record = wrapped_probe(tmp_path, fake_probe)
    fake_probe.set(die_after=1, spawn_child=1)  # SIGKILLed, with a child that outlives it
    r = cli("run", "cpu.call", "syscall.null", "--cgroup-mem", "64M", "--repeat", "1")
    assert r.code == errors.EXIT_PROBE
    assert not probe_cgroup(record, real_cgroups).exists()
    assert fake_probe.processes() == []


@pytest.mark.slow
def test_sigterm_to_osmeter_leaves_no_cgroup(fake_probe, store_path, tmp_path, osmeter_proc, real_cgroups):
    record = wrapped_probe(tmp_path, fake_probe)
    fake_probe.set(delay=30)
    proc = osmeter_proc("run", "cpu.call", "--cgroup-mem", "64M", "--repeat", "1")
    wait_for(lambda: record.exists() and record.stat().st_size > 0, what="the probe to start")
    where = probe_cgroup(record, real_cgroups)
    time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert not where.exists()


def test_a_probe_that_cannot_enter_is_a_clear_error(cli, fake_probe, store_path, monkeypatch, real_cgroups):
    def broken(self):
        return cgroup.EnterCgroup(Path("/nonexistent/cgroup.procs"))

    monkeypatch.setattr(cgroup.MemoryCgroup, "enter", broken)
    r = cli("run", "cpu.call", "--cgroup-mem", "64M", "--repeat", "1")
    assert r.code == errors.EXIT_PROBE and "entering the memory cgroup (/nonexistent/cgroup.procs) failed" in r.err


def test_the_command_line_goes_through_a_subprocess_too(fake_probe, store_path, tmp_path, real_cgroups):
    record = wrapped_probe(tmp_path, fake_probe)
    p = subprocess.run(osmeter_command("run", "cpu.call", "--cgroup-mem", "100M", "--repeat", "1"),
                       capture_output=True, text=True, env=subprocess_env(), timeout=120)
    assert p.returncode == 0, p.stderr
    assert not probe_cgroup(record, real_cgroups).exists()
    assert "memory cgroup: limit 100 MiB" in p.stdout
