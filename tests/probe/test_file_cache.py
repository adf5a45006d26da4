"""file.cache_sweep with tiny budgets and small files: a plausible value and
unit, its extras, the file kept across instances, bad parameters, the skip
and error paths, and nothing left behind. The knee itself (sizes beyond a
memory cgroup's limit) is tests/groundtruth/test_page_cache.py."""
import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from probe_helpers import TINY, probe_started, run_probe

KiB, MiB, TiB = 1024, 1024**2, 1024**4
BENCH = "file.cache_sweep"


def one(probe, tmp_path, *params, budget=TINY):
    args = []
    for p in (*params, f"dir={tmp_path}"):
        args += ["--param", p]
    return run_probe(probe, "run", BENCH, *args, *budget)


def leftovers(d: Path) -> list[str]:
    return [p.name for p in d.iterdir() if p.name.startswith("osmeter-probe.")]


def test_reread_of_a_cached_file_is_plausible(probe, tmp_path):
    r = one(probe, tmp_path, "size=4M")
    assert r.rc == 0, r.stderr
    res = r.result(BENCH)
    assert res["unit"] == "ns"
    # One 1 MiB block copied out of the page cache: tens of us at memory
    # speed (a few GB/s to tens of GB/s), never under 10 us or over 100 ms.
    assert 10e3 < res["median"] < 100e6, res["median"]
    ex = res["extra"]
    assert ex["size_bytes"] == 4 * MiB and ex["block_bytes"] == MiB
    assert ex["resident_fraction"] == 1.0  # 4 MiB just read: all of it in the page cache
    assert ex["passes"] > 0
    # mb_per_s is the sampled blocks' own rate: 1 MiB over about the mean time per block.
    assert 0.5 < ex["mb_per_s"] * res["mean"] / (MiB * 1e3) < 2.0
    assert ex["mem_available_bytes"] > 0
    assert ex["cgroup_headroom_bytes"] == -1 or ex["cgroup_headroom_bytes"] >= 0
    info = res["info"]
    assert info["dir"] == str(tmp_path.resolve()) and info["remote"] == "no"
    assert leftovers(tmp_path) == []


def test_small_blocks_are_batched(probe, tmp_path):
    res = one(probe, tmp_path, "size=1M", "block=4K").result(BENCH)
    assert res["batch"] > 1  # a cached 4 KiB read is about a microsecond: timed in batches
    assert 100 < res["median"] < 1e6, res["median"]
    assert res["extra"]["block_bytes"] == 4 * KiB


def test_one_file_serves_every_size_of_a_run(probe, tmp_path):
    # Grown for 4M, then only its first 2M read again: every instance measures.
    r = one(probe, tmp_path, "size=2M,4M,2M")
    assert r.rc == 0, r.stderr
    results = r.of_type("result")
    assert [x["extra"]["size_bytes"] for x in results] == [2 * MiB, 4 * MiB]  # 2M given twice: measured once
    assert all(x["extra"]["resident_fraction"] == 1.0 for x in results)
    r = one(probe, tmp_path, "size=4M,2M")
    assert [x["extra"]["size_bytes"] for x in r.of_type("result")] == [4 * MiB, 2 * MiB]
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (("size=1M", "block=2M"), "larger than size"),
        (("size=3M", "block=2M"), "not a multiple of block"),
        (("size=1M", "block=1000"), "not a multiple of 512"),
    ],
)
def test_blocks_that_do_not_tile_the_file_are_errors(probe, tmp_path, params, message):
    r = one(probe, tmp_path, *params)
    assert r.rc == 1, r.stderr
    (err,) = r.of_type("error")
    assert message in err["message"]
    assert not r.of_type("result")


@pytest.mark.parametrize("bad", ["size=0", "size=512K", "size=2048G", "size=lots", "block=256", "block=128M"])
def test_bad_params_are_refused_before_running(probe, tmp_path, bad):
    r = one(probe, tmp_path, bad)
    assert r.rc == 2 and r.stdout == ""
    assert "size" in r.stderr or "block" in r.stderr


def test_a_directory_in_memory_is_a_skip(probe):
    shm = Path("/dev/shm")
    if not shm.is_dir() or not os.access(shm, os.W_OK):
        pytest.skip("no writable /dev/shm (tmpfs) here")
    r = run_probe(probe, "run", BENCH, "--param", "size=1M", "--param", "dir=/dev/shm", *TINY)
    assert r.rc == 0, r.stderr
    (skip,) = r.of_type("skip")
    assert "tmpfs" in skip["reason"] and "lives in memory" in skip["reason"]
    assert skip["info"]["fs_type"] == "tmpfs"
    assert leftovers(shm) == []


def test_a_size_the_disk_cannot_hold_is_refused_with_a_message(probe, tmp_path):
    st = os.statvfs(tmp_path)
    if st.f_bavail * st.f_frsize >= TiB:
        pytest.skip("this file system has a TiB free: a 1 TiB file would fit")
    r = one(probe, tmp_path, "size=1024G")
    assert r.rc == 0, r.stderr
    (skip,) = r.of_type("skip")
    assert "needs 1048576 MiB more" in skip["reason"] and "MiB free" in skip["reason"]
    assert leftovers(tmp_path) == []


def test_a_missing_directory_is_an_error_naming_it(probe, tmp_path):
    r = run_probe(probe, "run", BENCH, "--param", "size=1M", "--param", f"dir={tmp_path}/nope", *TINY)
    assert r.rc == 1
    (err,) = r.of_type("error")
    assert f"{tmp_path}/nope" in err["message"] and "No such file" in err["message"]


def test_sigterm_while_growing_the_file_leaves_nothing(probe, tmp_path):
    st = os.statvfs(tmp_path)
    if st.f_bavail * st.f_frsize < 2048 * MiB:
        pytest.skip("less than 2 GiB free here")
    with probe_started(probe, "run", BENCH, "--param", "size=1G", "--param", f"dir={tmp_path}", *TINY) as p:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any(
                (tmp_path / d / "cache_sweep.dat").exists() for d in leftovers(tmp_path)):
            time.sleep(0.01)
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=30)
    assert p.returncode == -signal.SIGTERM or p.returncode == 128 + signal.SIGTERM
    left = leftovers(tmp_path)
    for d in left:
        shutil.rmtree(tmp_path / d, ignore_errors=True)
    assert left == []
