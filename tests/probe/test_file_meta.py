"""file.create, file.unlink, file.stat, file.open_close (lmbench lat_fs
style) with tiny budgets and small directories: plausible values, units and
rates, bad params, the inode/space check, and nothing left behind. Method:
docs/methods/file.md."""
import os
import shutil
import subprocess

import pytest

from probe_helpers import TINY, optional_tool_missing, run_probe

INFO_KEYS = {"dir", "fs_type", "device", "mount_options", "remote"}
META = ("file.create", "file.unlink", "file.stat", "file.open_close")


def run(probe, *args, **kw):
    return run_probe(probe, "run", *args, *TINY, **kw)


def assert_no_workdir_left(path):
    left = [p.name for p in path.iterdir() if p.name.startswith("osmeter-probe.")]
    assert not left, f"work directories left in {path}: {left}"


@pytest.fixture(scope="module")
def meta_run(probe, tmp_path_factory):
    d = tmp_path_factory.mktemp("meta")
    # files=50: creating a population costs a create each (0.1 ms and more
    # on a busy virtual disk), inside the tiny time budget.
    r = run_probe(probe, "run", *META, "--param", "files=50", "--param", "file_bytes=0,4K", "--param", f"dir={d}",
                  "--min-time", "0.01", "--max-time", "1", "--min-samples", "5", "--quiet", timeout=300)
    assert r.rc == 0, r.stderr + str(r.of_type("error")) + str(r.of_type("skip"))
    assert_no_workdir_left(d)
    return r, d


@pytest.mark.parametrize("bench", META)
def test_each_is_plausible_with_its_rate(meta_run, bench):
    r, d = meta_run
    for res in (x for x in r.of_type("result") if x["bench"] == bench):
        assert res["unit"] == "ns"
        # Cached metadata calls: from a fraction of a microsecond (stat) to
        # milliseconds (a create waiting for a journal commit on a busy disk).
        assert 50 < res["median"] < 50e6, (bench, res["params"], res["median"])
        rate = res["extra"]["ops_per_s"]
        # 1e9 / the mean of every timed operation: near 1e9 / the median.
        assert 0.05 * 1e9 / res["median"] < rate < 2 * 1e9 / res["median"], (bench, rate, res["median"])
        assert res["extra"]["files"] == 50
        assert INFO_KEYS <= set(res["info"]) and res["info"]["dir"] == str(d)


def test_the_sweep_of_file_bytes_runs_for_create_and_unlink(meta_run):
    r, _ = meta_run
    for bench in ("file.create", "file.unlink"):
        assert {x["params"]["file_bytes"] for x in r.of_type("result") if x["bench"] == bench} == {0, 4096}


def test_a_lookup_is_cheaper_than_a_create(meta_run):
    r, _ = meta_run
    create = r.result("file.create", file_bytes=0)["median"]
    assert r.result("file.stat")["median"] < create
    assert r.result("file.open_close")["median"] < create
    # stat and open+close are batched (sub-microsecond to a few µs each);
    # a create or an unlink is timed one by one.
    assert r.result("file.create", file_bytes=0)["batch"] == 1


@pytest.mark.parametrize("bench,param,message", [
    ("file.stat", "files=0", "files"),
    ("file.open_close", "files=2000000", "files"),
    ("file.create", "file_bytes=2M", "file_bytes"),
    ("file.unlink", "files=x", "files"),
])
def test_bad_params_exit_2(probe, bench, param, message):
    r = run_probe(probe, "run", bench, "--param", param)
    assert r.rc == 2 and message in r.stderr and not r.records, r.stderr


def test_a_bad_dir_is_an_error_naming_it_and_the_run_goes_on(probe, tmp_path):
    regular = tmp_path / "a-file"
    regular.write_text("x")
    r = run(probe, "file.stat", "--param", "files=10", "--param", "dir=/nonexistent",
            "--param", f"dir={regular}", "--param", f"dir={tmp_path}")
    assert r.rc == 1, r.stderr
    errors = {e["params"]["dir"]: e["message"] for e in r.of_type("error")}
    assert "dir=/nonexistent" in errors["/nonexistent"]
    assert f"dir={regular}" in errors[str(regular)] and "not a directory" in errors[str(regular)]
    assert r.result("file.stat", dir=str(tmp_path))["median"] > 0
    assert_no_workdir_left(tmp_path)


@pytest.fixture
def small_tmpfs(tmp_path):
    """A tmpfs of 64 inodes and 1 MiB in tmp_path, unmounted afterwards."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        optional_tool_missing("needs root and mount(8) to mount a small tmpfs")
    mnt = tmp_path / "small"
    mnt.mkdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,nr_inodes=64", "osmeter-test", str(mnt)],
                       capture_output=True, text=True)
    if p.returncode:
        optional_tool_missing(f"cannot mount a tmpfs here: {p.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_files_that_do_not_fit_are_refused_up_front(probe, small_tmpfs):
    for args, want in ((["file.stat", "--param", "files=100"], "100 files need 116 free inodes"),
                       (["file.create", "--param", "files=20", "--param", "file_bytes=100K"],
                        "20 files of 102400 bytes need")):
        r = run(probe, *args, "--param", f"dir={small_tmpfs}")
        assert r.rc == 0, r.stderr
        (skip,) = r.of_type("skip")
        assert want in skip["reason"] and str(small_tmpfs) in skip["reason"], skip["reason"]
        assert not r.of_type("result")
        assert os.listdir(small_tmpfs) == []
    assert "MiB free" in skip["reason"]


def test_teardown_empties_the_directory_between_benchmarks(probe, small_tmpfs):
    """64 inodes: two populations of 40 fit only if the first one is gone
    before the second is made."""
    r = run(probe, "file.stat", "file.open_close", "--param", "files=40", "--param", f"dir={small_tmpfs}")
    assert r.rc == 0, r.stderr + str(r.of_type("skip"))
    assert r.result("file.stat")["median"] > 0 and r.result("file.open_close")["median"] > 0
    assert os.listdir(small_tmpfs) == []


def test_create_and_unlink_name_their_population_with_links(meta_run):
    """The population of create and unlink is hard links to one file (the
    run frees one inode at its end, not `files`, so no later create steps
    over them: docs/methods/file.md, "What moved file.create"); stat and
    open_close need a file per name."""
    r, _ = meta_run
    for res in r.of_type("result"):
        want = 1 if res["bench"] in ("file.create", "file.unlink") else 50
        assert res["extra"]["population_inodes"] == want, (res["bench"], res["extra"])


def test_on_ext4_the_directory_gets_a_block_group_of_its_own(meta_run):
    r, d = meta_run
    fs = r.of_type("result")[0]["info"]["fs_type"]
    if fs not in ("ext4", "ext3", "ext2"):
        pytest.skip(f"{d} is on {fs}, not ext4: FS_TOPDIR_FL is ext4's")
    for res in r.of_type("result"):
        assert res["info"]["dir_placement"].startswith("own block group"), res["info"]
    for bench in ("file.create", "file.unlink"):
        for res in (x for x in r.of_type("result") if x["bench"] == bench):
            # The new file's inode follows the directory's and the population's
            # (gap 0 in a fresh group); a directory whose group held other
            # inodes was made again, at most 4 times.
            gap, tries = res["extra"]["inode_gap"], res["extra"]["dir_tries"]
            assert 1 <= tries <= 4 and (0 <= gap <= 16 or tries == 4), res["extra"]


def test_elsewhere_the_directory_stays_next_to_its_parent(probe, small_tmpfs):
    """tmpfs refuses FS_TOPDIR_FL: said in info, no inode gap (its inode
    numbers are a counter), and the population is still links."""
    r = run(probe, "file.create", "--param", "files=20", "--param", f"dir={small_tmpfs}")
    assert r.rc == 0, r.stderr
    res = r.result("file.create")
    assert res["info"]["dir_placement"].startswith("next to its parent (FS_TOPDIR_FL: "), res["info"]
    assert "inode_gap" not in res["extra"] and res["extra"]["population_inodes"] == 1
    assert os.listdir(small_tmpfs) == []
