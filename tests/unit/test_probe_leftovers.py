"""osmeter removes the work directories `osmeter-probe.<pid>.XXXXXX` that a
killed probe left in its `dir=` directories and /var/tmp: exactly those of
that probe, real directories only, nothing reached through a symbolic link."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from osmeter import probe


def dead_pid() -> int:
    """The pid of a process that has ended and been reaped."""
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def workdir(parent: Path, name: str, content: bool = True) -> Path:
    d = parent / name
    d.mkdir()
    if content:
        (d / "work").write_bytes(b"a" * 4096)
        (d / "sub" / "deeper").mkdir(parents=True)
        (d / "sub" / "deeper" / "f").write_text("x")
    return d


@pytest.mark.parametrize(
    ("argv", "dirs"),
    [
        (["p", "run", "file.read", "--param", "dir=/mnt/x"], ["/mnt/x"]),
        (["p", "run", "file.read", "--param=dir=/mnt/x"], ["/mnt/x"]),
        (["p", "run", "file.read", "--par", "dir=/mnt/x"], ["/mnt/x"]),  # getopt takes an unambiguous prefix
        (["p", "run", "file.read", "--param", "dir=a,b"], ["a,b"]),  # a path is taken whole, commas included
        (["p", "run", "x", "--param", "dir=/a", "--param", "size=4k", "--param", "dir=/b"], ["/a", "/b"]),
        (["p", "run", "x", "--param", "dir=/a", "--param", "dir=/a"], ["/a"]),
        (["p", "run", "x", "--param", "dir="], []),  # the default directory
        (["p", "run", "x", "--param", "dirs=/a", "--param", "size=4k"], []),
        (["p", "run", "x", "--param"], []),
        (["p", "run", "x", "--", "--param", "dir=/a"], []),
        (["p", "run", "x", "--label", "dir=/a"], []),
    ],
)
def test_dir_params_of_a_probe_command_line(argv: list[str], dirs: list[str]) -> None:
    assert probe.probe_dir_params(argv) == dirs


def test_only_that_probes_directories_go(tmp_path: Path) -> None:
    pid = dead_pid()
    parent = tmp_path / "target"
    parent.mkdir()
    mine = [workdir(parent, f"osmeter-probe.{pid}.aB3xYz"), workdir(parent, f"osmeter-probe.{pid}.000000", False)]
    kept = [
        workdir(parent, f"osmeter-probe.{pid + 1}.aB3xYz"),  # another probe's
        workdir(parent, f"osmeter-probe.{pid}0.aB3xYz"),  # a pid that starts with ours
        workdir(parent, f"osmeter-probe.{str(pid)[1:] or '9'}.aB3xYz"),  # one that ends with ours
        workdir(parent, f"osmeter-probe.{pid}.aB3xY"),  # five characters
        workdir(parent, f"osmeter-probe.{pid}.aB3xYz7"),  # seven
        workdir(parent, f"osmeter-probe.{pid}.aB-xYz"),  # not a mkdtemp character
        workdir(parent, f"osmeter-probe.{pid}.aB3xYz.old"),
        workdir(parent, f"x-osmeter-probe.{pid}.aB3xYz"),
        workdir(parent, f"osmeter-run.{pid}.aB3xYz"),
    ]
    plain_file = parent / f"osmeter-probe.{pid}.fileXX"
    plain_file.write_text("not a directory")
    removed = probe.remove_probe_workdirs(pid, ["probe", "run", "file.read", "--param", f"dir={parent}"],
                                          shared=str(tmp_path / "no-such-dir"))
    assert sorted(removed) == sorted(str(d) for d in mine)
    assert not any(d.exists() for d in mine)
    assert all((d / "work").read_bytes() == b"a" * 4096 for d in kept)
    assert plain_file.read_text() == "not a directory"


def test_symbolic_links_are_never_followed(tmp_path: Path) -> None:
    pid = dead_pid()
    parent, victim = tmp_path / "target", tmp_path / "victim"
    parent.mkdir()
    victim.mkdir()
    (victim / "precious").write_text("keep")
    (parent / f"osmeter-probe.{pid}.LinkXX").symlink_to(victim, target_is_directory=True)
    real = workdir(parent, f"osmeter-probe.{pid}.RealXX")
    (real / "escape").symlink_to(victim, target_is_directory=True)  # a link inside the work directory
    removed = probe.remove_probe_workdirs(pid, ["probe", "run", "x", "--param", f"dir={parent}"],
                                          shared=str(tmp_path / "none"))
    assert removed == [str(real)]
    assert (victim / "precious").read_text() == "keep"
    assert (parent / f"osmeter-probe.{pid}.LinkXX").is_symlink()


def test_every_dir_the_shared_one_and_relative_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pid = dead_pid()
    a, comma, shared = tmp_path / "a", tmp_path / "b,c", tmp_path / "var-tmp"
    for d in (a, comma, shared):
        d.mkdir()
    left = [workdir(d, f"osmeter-probe.{pid}.Qq1234") for d in (a, comma, shared)]
    monkeypatch.chdir(tmp_path)  # the probe resolves a relative dir= in the working directory it shares with us
    argv = ["probe", "run", "file.read", "file.stat", "--param", "dir=a", "--param", "dir=b,c"]
    removed = probe.remove_probe_workdirs(pid, argv, shared=str(shared))
    assert len(removed) == 3
    assert not any(d.exists() for d in left)
    assert a.is_dir() and comma.is_dir() and shared.is_dir()  # the parents stay


def test_missing_or_unreadable_parents_are_no_error(tmp_path: Path) -> None:
    argv = ["probe", "run", "x", "--param", f"dir={tmp_path / 'gone'}", "--param", "dir=/proc/self/fd/999"]
    assert probe.remove_probe_workdirs(dead_pid(), argv, shared=str(tmp_path / "also-gone")) == []


KILLED_PROBE = """#!/bin/sh
# Makes a work directory the way osmeter-probe does, then dies of SIGKILL.
for a in "$@"; do
    case "$a" in dir=*) d="${a#dir=}" ;; esac
done
w=$(mktemp -d "$d/osmeter-probe.$$.XXXXXX")
echo data > "$w/work"
kill -KILL $$
"""


def test_close_removes_what_a_killed_probe_left(tmp_path: Path) -> None:
    script = tmp_path / "killed-probe"
    script.write_text(KILLED_PROBE)
    script.chmod(0o755)
    target = tmp_path / "target"
    target.mkdir()
    with probe.ProbeProcess.start([str(script), "run", "file.read", "--param", f"dir={target}"]) as proc:
        assert list(proc.lines()) == []
        returncode = proc.close()
    assert returncode == -9
    assert probe.describe_exit(returncode) == "killed by SIGKILL"
    assert len(proc.leftovers) == 1 and f"osmeter-probe.{proc.pid}." in proc.leftovers[0]
    assert list(target.iterdir()) == []


def test_close_leaves_other_probes_directories(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    other = workdir(target, f"osmeter-probe.{os.getpid()}.Other1")  # a live process's
    with probe.ProbeProcess.start([sys.executable, "-c", "pass", "--param", f"dir={target}"]) as proc:
        list(proc.lines())
    assert proc.leftovers == []
    assert (other / "work").exists()
