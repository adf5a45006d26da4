"""file.contention with tiny budgets and files of a few MiB: plausible
values with 1 and 2 readers, own files and one shared file; the reader
processes exist while it runs and none is left after it, nor any file;
drop_caches and tmpfs skip with their reasons; bad parameters exit 2."""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from probe_helpers import TINY, probe_finished, probe_started, run_probe
from task_helpers import wait_children, wait_gone

INFO = {"o_direct", "fadvise_dontneed"}


def fs_type(path: Path) -> str:
    return subprocess.run(["stat", "-f", "-c", "%T", str(path)], capture_output=True, text=True).stdout.strip()


@pytest.fixture
def disk_dir(tmp_path: Path):
    """A directory on a disk file system (tmp_path/files, or one under
    /var/tmp when tmp_path is on tmpfs); removed afterwards."""
    if fs_type(tmp_path) not in ("tmpfs", "ramfs"):
        d = tmp_path / "files"
        d.mkdir()
        yield d
        return
    d = Path(tempfile.mkdtemp(prefix="osmeter-test-", dir="/var/tmp"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def args_for(d, *params) -> list[str]:
    out = ["run", "file.contention", "--param", f"dir={d}"]
    for p in params:
        out += ["--param", p]
    return out


@pytest.mark.parametrize("shared", [0, 1])
@pytest.mark.parametrize("procs", [1, 2])
def test_readers_measure_and_leave_nothing_behind(probe, disk_dir, procs, shared):
    # Long enough (0.5 s of sampling) to see the reader processes.
    argv = [*args_for(disk_dir, f"procs={procs}", f"shared={shared}", "file_size=4M", "block=64K"),
            "--min-time", "0.5", "--max-time", "1", "--min-samples", "5", "--quiet"]
    kids = []
    with probe_started(probe, *argv) as p:
        if procs > 1:
            kids = wait_children(p.pid, procs - 1)
            assert len(kids) == procs - 1, "the reader processes never showed up"
        r = probe_finished(p, timeout=60)
    assert r.rc == 0, r.stderr
    assert wait_gone(kids) == [], "a reader process outlived the probe"
    assert list(disk_dir.iterdir()) == [], "a file or work directory was left behind"
    res = r.result("file.contention")
    assert res["unit"] == "ns"
    # One cold 64 KiB read each, procs at once: tens of microseconds to
    # milliseconds on any disk, never a page-cache copy.
    assert 5_000 < res["median"] < 500_000_000, res["median"]
    ex = res["extra"]
    assert ex["procs"] == procs and ex["block_bytes"] == 64 * 1024 and 1 <= ex["cpus"] <= procs
    # All bytes / wall time: at most what procs readers could move if each
    # read took the median, with room for the spread; and not nothing.
    per_reader = 64 * 1024 / res["median"] * 1e3
    assert 0.05 * per_reader < ex["mb_per_s_total"] < 5 * procs * per_reader, (ex, res["median"])
    assert res["info"]["cache_bypass"] in INFO


def test_fadvise_on_one_shared_file(probe, disk_dir):
    r = run_probe(probe, *args_for(disk_dir, "procs=2", "shared=1", "method=fadvise", "pattern=rand",
                                   "file_size=2M", "block=4K"), *TINY)
    assert r.rc == 0, r.stderr
    res = r.result("file.contention")
    assert res["info"]["cache_bypass"] == "fadvise_dontneed" and 2_000 < res["median"] < 500_000_000
    assert list(disk_dir.iterdir()) == []


def test_drop_caches_is_a_skip_with_the_reason(probe, disk_dir):
    r = run_probe(probe, *args_for(disk_dir, "procs=2", "method=drop_caches"), *TINY)
    assert r.rc == 0, r.stderr
    skip = r.of_type("skip")[0]
    assert "would disturb the other readers" in skip["reason"] and "method=direct" in skip["reason"]
    assert list(disk_dir.iterdir()) == []


def test_a_file_in_memory_is_a_skip(probe):
    if fs_type(Path("/dev/shm")) != "tmpfs":
        pytest.skip("/dev/shm is not tmpfs here")
    r = run_probe(probe, *args_for("/dev/shm", "procs=2"), *TINY)
    assert r.rc == 0, r.stderr
    assert "lives in memory" in r.of_type("skip")[0]["reason"]


def test_shared_file_too_small_for_the_readers_is_an_error(probe, disk_dir):
    r = run_probe(probe, *args_for(disk_dir, "procs=32", "shared=1", "file_size=1M", "block=64K"), *TINY)
    assert r.rc == 1
    msg = r.of_type("error")[0]["message"]
    assert "cannot hold procs=32 ranges" in msg and "file_size" in msg
    assert list(disk_dir.iterdir()) == []


def test_block_larger_than_the_file_is_an_error(probe, disk_dir):
    r = run_probe(probe, *args_for(disk_dir, "file_size=1M", "block=2M"), *TINY)
    assert r.rc == 1 and "larger than file_size" in r.of_type("error")[0]["message"]


@pytest.mark.parametrize("param", ["procs=0", "procs=65", "shared=2", "pattern=zigzag", "method=all", "block=100"])
def test_bad_parameters_exit_2(probe, param):
    r = run_probe(probe, "run", "file.contention", "--param", param, *TINY)
    assert r.rc == 2 and r.stdout == ""
    assert param.split("=")[0] in r.stderr
