"""Issue 27, defect 7: `osmeter hotspots BENCH` checks every option before it
profiles anything. Exit code 2 promises that no run was created; an output
path that is a file, a block device where a file is to be written, or a
parameter list where hotspots profiles one instance were refused only
after a 5 s profile had been stored.

Each case runs with the default --min-time (5 s): a refusal in well under
that cannot have profiled first, and the store holds no run.
"""
from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from ..conftest import db_rows

QUICK = 4.0  # seconds: below the default --min-time of 5 s; the checks take about 0.3 s


def refused(cli, store_path: Path, *args: str) -> str:
    start = time.monotonic()
    r = cli("hotspots", *args)
    took = time.monotonic() - start
    assert r.code == 2, (r.code, r.err)
    assert took < QUICK, f"{took:.1f} s: profiled before refusing"
    assert db_rows(store_path, "SELECT id FROM runs") == [], "a run was stored"
    return r.err


def test_an_output_path_that_is_a_file_is_refused_first(real_probe, cli, store_path: Path, tmp_path: Path):
    f = tmp_path / "out.txt"
    f.write_text("mine")
    err = refused(cli, store_path, "cpu.call", "-o", str(f))
    assert "it is not a directory" in err and str(f) in err, err
    assert f.read_text() == "mine"
    err = refused(cli, store_path, "cpu.call", "-o", str(f / "sub"))
    assert "not a directory" in err.lower(), err
    err = refused(cli, store_path, "cpu.call", "--diff", "args=0", "args=1", "-o", str(f))
    assert "it is not a directory" in err, err


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (mknod)")
@pytest.mark.parametrize("name", ["flamegraph.svg", "top.txt"])
def test_a_block_device_in_the_output_directory_is_refused_first(real_probe, cli, store_path: Path,
                                                                  tmp_path: Path, name: str):
    out = tmp_path / "out"
    out.mkdir()
    os.mknod(out / name, stat.S_IFBLK | 0o600, os.makedev(7, 250))
    err = refused(cli, store_path, "cpu.call", "-o", str(out))
    assert "block device" in err and name in err, err
    assert stat.S_ISBLK(os.lstat(out / name).st_mode)


def test_a_block_device_among_the_diff_files_is_refused_first(real_probe, cli, store_path: Path, tmp_path: Path):
    if os.geteuid() != 0:
        pytest.skip("needs root (mknod)")
    out = tmp_path / "out"
    out.mkdir()
    os.mknod(out / "diff.svg", stat.S_IFBLK | 0o600, os.makedev(7, 250))
    err = refused(cli, store_path, "cpu.call", "--diff", "args=0", "args=1", "-o", str(out))
    assert "block device" in err and "diff.svg" in err, err


@pytest.mark.parametrize("params, message", [
    (["--param", "args=1,2"], "--param: args=1,2 gives args more than one value"),
    (["--param", "args=0..3"], "--param: args=0..3 gives args more than one value"),
    (["--param", "args=1", "--param", "args=2"], "gives args more than one value"),
    (["--diff", "args=0", "args=1,2"], "--diff B: args=1,2 gives args more than one value"),
    (["--param", "args=1,2", "--diff", "args=0", "args=0"], "--diff A: args=1,2 args=0 gives args more than one"),
    (["--param", "args=9"], "9 is out of range; allowed: 0..7"),
    (["--diff", "args=0", "args=8"], "--diff B: args=8: 8 is out of range"),
    (["--param", "argz=1"], "cpu.call has no parameter 'argz'; its parameters: args"),
])
def test_a_parameter_set_that_is_not_one_instance_is_refused_first(real_probe, cli, store_path: Path,
                                                                   tmp_path: Path, params, message):
    err = refused(cli, store_path, "cpu.call", *params, "-o", str(tmp_path / "out"))
    assert message in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_one_value_given_twice_or_a_range_of_one_is_one_instance(real_probe, cli, store_path: Path,
                                                                   tmp_path: Path):
    r = cli("hotspots", "cpu.call", "--param", "args=1,1", "--param", "args=1..1", "--min-time", "1", "--frequency", "2999",
            "-o", str(tmp_path / "out"))
    assert r.code == 0, r.err
    assert (tmp_path / "out" / "flamegraph.svg").exists()
    assert len(db_rows(store_path, "SELECT id FROM runs")) == 1


def test_max_time_under_min_time_is_refused_first(real_probe, cli, store_path: Path):
    err = refused(cli, store_path, "cpu.call", "--diff", "args=0", "args=1", "--min-time", "3", "--max-time", "1")
    assert "--max-time (1 s) is shorter than --min-time (3 s)" in err, err


def test_show_checks_its_output_before_it_reads(cli, tmp_path: Path):
    f = tmp_path / "out.txt"
    f.write_text("mine")
    bad = tmp_path / "bad.folded"
    bad.write_text("no weight here\n")
    r = cli("hotspots", "--show", str(bad), "-o", str(f))
    assert r.code == 2 and "not a directory" in r.err, r.err  # not the parse error: the file was not read
    r = cli("hotspots", "--diff", str(bad), str(bad), "-o", str(f))
    assert r.code == 2 and "not a directory" in r.err, r.err
    r = cli("hotspots", "--show", "1", "--param", "args=1")
    assert r.code == 2 and "--param goes with BENCH" in r.err, r.err
