"""Full disk: on a 32 MiB ext4 file system (an image on a loop device),
file.write of 64 MiB is an error result that names ENOSPC, the next
benchmark (file.stat) still runs, and nothing the probe made is left on the
file system: its files, its work directory and the space they took."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from probe_helpers import TINY, optional_tool_missing, run_probe

IMAGE_MIB = 32


def sh(*argv: str) -> str:
    p = subprocess.run(list(argv), capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError(f"`{' '.join(argv)}` failed: {p.stderr.strip()}")
    return p.stdout.strip()


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A fresh 32 MiB ext4 mounted at a temporary directory; unmounted and
    its loop device detached on every path."""
    if os.geteuid() != 0:
        optional_tool_missing("the full-disk test needs root (losetup, mount)")
    for name, package in (("losetup", "mount"), ("mkfs.ext4", "e2fsprogs"), ("mount", "mount")):
        if not shutil.which(name) and not os.access(f"/usr/sbin/{name}", os.X_OK) and \
                not os.access(f"/sbin/{name}", os.X_OK):
            optional_tool_missing(f"{name} is missing (Debian: apt-get install {package})")
    image, mnt = tmp_path / "disk.img", tmp_path / "mnt"
    with open(image, "wb") as f:
        f.truncate(IMAGE_MIB << 20)
    sh("mkfs.ext4", "-q", "-F", "-L", "osmeter-full", str(image))
    mnt.mkdir()
    try:
        loop = sh("losetup", "--find", "--show", str(image))
    except RuntimeError as e:
        optional_tool_missing(f"no loop device for the full-disk test ({e}): load the loop module (modprobe loop)")
    try:
        sh("mount", "-t", "ext4", loop, str(mnt))
        try:
            yield mnt
        finally:
            subprocess.run(["umount", str(mnt)], capture_output=True)
            if os.path.ismount(mnt):
                subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
    finally:
        subprocess.run(["losetup", "-d", loop], capture_output=True)
        assert str(image) not in sh("losetup", "--list", "--noheadings", "--output", "BACK-FILE")


def test_write_beyond_a_full_disk_is_enospc_and_the_next_benchmark_runs(probe: str, small_fs: Path) -> None:
    before = os.statvfs(small_fs)
    assert before.f_bavail * before.f_frsize < 64 << 20  # the write cannot fit
    r = run_probe(probe, "run", "file.write", "file.stat", "--param", f"dir={small_fs}", "--param", "size=64M",
                  *TINY, timeout=300)
    assert r.rc == 1, r.stderr  # a benchmark failed; the run went on
    (err,) = [e for e in r.of_type("error") if e["bench"] == "file.write"]
    assert "ENOSPC" in err["message"], err
    assert err["info"]["dir"] == str(small_fs) and err["info"]["fs_type"] == "ext4", err
    assert not [x for x in r.of_type("result") if x["bench"] == "file.write"]
    stat = r.result("file.stat")
    assert stat["median"] > 0 and stat["info"]["dir"] == str(small_fs)
    assert r.of_type("end")[0]["counts"] == {"ok": 1, "skip": 0, "error": 1}
    assert sorted(os.listdir(small_fs)) == ["lost+found"]  # no work file, no osmeter-probe.* directory
    after = os.statvfs(small_fs)
    assert after.f_bfree == before.f_bfree and after.f_ffree == before.f_ffree  # the space is back
