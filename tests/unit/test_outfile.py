"""Every -o (export, report, plot, compare) by the rules of osmeter.outfile:
never damage what isn't ours, keep modes, and one suffix rule for the format."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

from osmeter import errors

from ..conftest import import_fixture, osmeter_command, subprocess_env
from ..synthetic import add_run, noisy

root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (mknod, chown)")


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


@pytest.fixture
def stored(store_path: Path) -> int:
    return import_fixture(store_path, label="box")


@pytest.fixture
def two_runs(store_path: Path) -> None:
    rng = np.random.default_rng(7)
    for scale in (1.0, 1.2):
        add_run(store_path, [("syscall.null", {}, "ns", noisy(rng, 100.0 * scale, 500))])


# --- never damage what isn't ours ------------------------------------------------


@pytest.mark.root
@root
def test_export_to_a_character_device_writes_through_it(cli, stored, tmp_path: Path) -> None:
    node = tmp_path / "null"
    os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a /dev/null of our own
    r = cli("export", "latest", "--format", "csv", "-o", str(node))
    assert r.code == 0, r.err
    st = os.lstat(node)
    assert stat.S_ISCHR(st.st_mode) and os.major(st.st_rdev) == 1 and os.minor(st.st_rdev) == 3
    assert leftovers(tmp_path) == []
    # no suffix on a device: the default format, as on stdout
    r = cli("report", "latest", "-o", str(node))
    assert r.code == 0, r.err
    assert stat.S_ISCHR(os.lstat(node).st_mode)


@pytest.mark.root
@root
def test_a_block_device_is_refused(cli, stored, tmp_path: Path) -> None:
    node = tmp_path / "disk"
    os.mknod(node, stat.S_IFBLK | 0o600, os.makedev(7, 250))
    r = cli("export", "latest", "--format", "csv", "-o", str(node))
    assert r.code == errors.EXIT_USAGE and "block device" in r.err
    assert stat.S_ISBLK(os.lstat(node).st_mode)


def test_a_fifo_is_written_in_place(cli, stored, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    spare = tmp_path / "spare"
    os.link(fifo, spare)  # the same FIFO under a second name, to release the reader whatever happens
    got: list[bytes] = []

    def reader() -> None:
        with open(fifo, "rb") as f:
            got.append(f.read())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    r = cli("export", "latest", "-o", str(fifo), "--format", "csv")
    thread.join(10)
    if thread.is_alive():
        try:
            os.close(os.open(spare, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
        thread.join(10)
    assert r.code == 0, r.err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert got and got[0].startswith(b"run_id,run_label,")
    assert leftovers(tmp_path) == []


@pytest.mark.slow
def test_dev_stdout_writes_to_whatever_stdout_is(stored, tmp_path: Path) -> None:
    """/dev/stdout is a link only the kernel can follow (/proc/self/fd/1 -> pipe:[N]):
    written in place, to a pipe or to the file the shell opened, in the stdout format."""
    command = osmeter_command("export", "latest", "-o", "/dev/stdout", "--format", "csv")
    piped = subprocess.run(command, capture_output=True, text=True, env=subprocess_env(), timeout=60)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.startswith("run_id,run_label,")
    out = tmp_path / "redirected.txt"
    out.write_text("before\n")
    inode = out.stat().st_ino
    with open(out, "a") as f:  # `>> redirected.txt`: appended to, never replaced
        done = subprocess.run(osmeter_command("export", "latest", "-o", "/dev/stdout"), stdout=f,
                              stderr=subprocess.PIPE, text=True, env=subprocess_env(), timeout=60)
    assert done.returncode == 0, done.stderr
    before, exported = out.read_text().split("\n", 1)
    assert before == "before" and out.stat().st_ino == inode
    assert json.loads(exported)["osmeter_export"] == 1  # no suffix on /dev/stdout: json, as on stdout


def test_a_symlink_is_followed_not_replaced(cli, stored, tmp_path: Path) -> None:
    real = tmp_path / "reports" / "box.html"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "link"
    link.symlink_to(real)
    r = cli("report", "latest", "-o", str(link))  # no suffix: the target's (.html) decides
    assert r.code == 0, r.err
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text().startswith("<!DOCTYPE html>")
    assert leftovers(tmp_path) == [] and leftovers(real.parent) == []


def test_a_dangling_symlink_is_refused(cli, stored, tmp_path: Path) -> None:
    link = tmp_path / "out.csv"
    link.symlink_to(tmp_path / "nowhere.csv")
    r = cli("export", "latest", "--format", "csv", "-o", str(link))
    assert r.code == errors.EXIT_USAGE
    assert "symbolic link" in r.err and "nowhere.csv" in r.err and "does not exist" in r.err
    assert link.is_symlink() and not (tmp_path / "nowhere.csv").exists()
    loop = tmp_path / "loop.csv"
    loop.symlink_to(loop)
    r = cli("export", "latest", "--format", "csv", "-o", str(loop))
    assert r.code == errors.EXIT_USAGE and "loops" in r.err


def test_an_existing_file_keeps_its_mode(cli, stored, tmp_path: Path) -> None:
    out = tmp_path / "private.csv"
    out.write_text("old")
    out.chmod(0o600)
    r = cli("export", "latest", "--format", "csv", "-o", str(out))
    assert r.code == 0, r.err
    assert out.read_text().startswith("run_id,")
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


def test_a_new_file_gets_0666_minus_the_umask(cli, stored, tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        r = cli("export", "latest", "-o", str(tmp_path / "new.json"))
    finally:
        os.umask(old)
    assert r.code == 0, r.err
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o640


@pytest.mark.root
@root
def test_an_existing_file_keeps_its_owner(cli, stored, tmp_path: Path) -> None:
    out = tmp_path / "theirs.html"
    out.write_text("old")
    os.chown(out, 4321, 4322)
    out.chmod(0o640)
    assert cli("report", "latest", "-o", str(out)).code == 0
    st = out.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (4321, 4322, 0o640)


def test_plot_follows_the_same_rules_in_its_directory(cli, store_path: Path, tmp_path: Path) -> None:
    import_fixture(store_path)
    real = tmp_path / "real-figs"
    real.mkdir()
    figs = tmp_path / "figs"
    figs.symlink_to(real)  # DIR itself a link to a directory
    kept = tmp_path / "elsewhere.svg"
    kept.write_text("old")
    kept.chmod(0o600)
    (real / "run1-dist-syscall.null.svg").symlink_to(kept)
    r = cli("plot", "1", "syscall.null", "-o", str(figs))
    assert r.code == 0, r.err
    assert figs.is_symlink() and (real / "run1-dist-syscall.null.svg").is_symlink()
    assert kept.read_text().lstrip().startswith("<?xml") and stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert leftovers(real) == []
    dangling = tmp_path / "gone"
    dangling.symlink_to(tmp_path / "no-such-dir")
    r = cli("plot", "1", "-o", str(dangling))
    assert r.code == errors.EXIT_USAGE and "does not exist" in r.err


def test_compare_heatmap_keeps_mode_and_link(cli, two_runs, tmp_path: Path) -> None:
    real = tmp_path / "heat.svg"
    real.write_text("old")
    real.chmod(0o604)
    link = tmp_path / "latest-heat.svg"
    link.symlink_to(real)
    r = cli("compare", "1", "2", "-o", str(link))
    assert r.code == 0, r.err
    assert link.is_symlink() and stat.S_IMODE(real.stat().st_mode) == 0o604
    assert b"<svg" in real.read_bytes()


# --- one suffix rule ------------------------------------------------------------


def test_export_format_from_the_suffix(cli, stored, tmp_path: Path) -> None:
    assert cli("export", "latest", "-o", str(tmp_path / "a.CSV")).code == 0
    assert (tmp_path / "a.CSV").read_text().startswith("run_id,")
    assert cli("export", "latest", "-o", str(tmp_path / "a.json")).code == 0
    assert json.loads((tmp_path / "a.json").read_text())["osmeter_export"] == 1
    r = cli("export", "latest", "-o", str(tmp_path / "a.txt"))
    assert r.code == errors.EXIT_USAGE and ".json, .csv" in r.err and "--format" in r.err
    assert not (tmp_path / "a.txt").exists()
    assert cli("export", "latest", "--format", "json", "-o", str(tmp_path / "a.txt")).code == 0  # --format overrides
    assert json.loads((tmp_path / "a.txt").read_text())["osmeter_export"] == 1
    assert json.loads(cli("export", "latest").out)["osmeter_export"] == 1  # stdout: json by default
    assert cli("export", "latest", "-o", "-", "--format", "csv").out.startswith("run_id,")


def test_report_format_from_the_suffix(cli, stored, tmp_path: Path) -> None:
    r = cli("report", "latest", "-o", str(tmp_path / "r.pdf"))
    assert r.code == errors.EXIT_USAGE and "no PDF renderer" in r.err and ".html" in r.err and ".md" in r.err
    assert not (tmp_path / "r.pdf").exists()
    r = cli("report", "latest", "-o", str(tmp_path / "r.docx"))
    assert r.code == errors.EXIT_USAGE and ".txt" in r.err
    r = cli("report", "latest", "-o", str(tmp_path / "noext"))
    assert r.code == errors.EXIT_USAGE and "without a suffix" in r.err
    assert cli("report", "latest", "-o", str(tmp_path / "r.txt")).code == 0
    text = (tmp_path / "r.txt").read_text()
    assert "syscall.null" in text and "<" not in text and "|" not in text.splitlines()[0]
    assert cli("report", "latest", "--format", "md", "-o", str(tmp_path / "noext")).code == 0
    assert (tmp_path / "noext").read_text().startswith("# osmeter report")


def test_compare_format_from_the_suffix_or_format(cli, two_runs, tmp_path: Path) -> None:
    out = tmp_path / "heat.out"
    r = cli("compare", "1", "2", "-o", str(out))
    assert r.code == errors.EXIT_USAGE and ".html" in r.err and "--format" in r.err
    assert cli("compare", "1", "2", "-o", str(out), "--format", "png").code == 0
    assert out.read_bytes().startswith(b"\x89PNG")
    r = cli("compare", "1", "2", "--format", "svg")
    assert r.code == errors.EXIT_USAGE and "-o" in r.err
