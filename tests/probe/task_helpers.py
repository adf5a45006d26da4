"""Helpers for the task/ctxsw/counters probe tests: children of a process,
running the probe as nobody with lowered limits."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest


def children(pid: int) -> list[int]:
    """Live processes whose parent is pid (from /proc)."""
    kids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            kids.append(int(d.name))
    return kids


def alive(pid: int) -> bool:
    """True while pid exists and is not a zombie (a zombie is dead, only unreaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_gone(pids: list[int], timeout: float = 5.0) -> list[int]:
    """The pids still alive after timeout seconds."""
    end = time.monotonic() + timeout
    left = list(pids)
    while left and time.monotonic() < end:
        left = [p for p in left if alive(p)]
        if left:
            time.sleep(0.05)
    return left


def wait_children(pid: int, n: int, timeout: float = 10.0) -> list[int]:
    """Wait until pid has at least n live children; return them."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        kids = children(pid)
        if len(kids) >= n:
            return kids
        time.sleep(0.05)
    return children(pid)


@contextmanager
def as_nobody(probe: str) -> Iterator[tuple[list[str], str]]:
    """(prefix, probe copy): a command prefix that runs a copy of the probe
    (and its exec helper) as nobody when we are root, or as ourselves
    otherwise. The copy lives in a directory every user can enter (pytest's
    tmp_path is under a 0700 directory), removed afterwards."""
    tmp = Path(tempfile.mkdtemp(prefix="osmeter-test-"))
    try:
        os.chmod(tmp, 0o755)
        d = tmp / "bin"
        d.mkdir(mode=0o755)
        copy = d / "osmeter-probe"
        shutil.copy(probe, copy)
        helper = Path(probe).parent / "osmeter-exec-helper"
        if helper.exists():
            shutil.copy(helper, d / helper.name)
        if os.geteuid() != 0:
            yield [], str(copy)
            return
        setpriv = shutil.which("setpriv")
        if not setpriv:
            pytest.fail("setpriv (util-linux) is needed to drop root in this test")
        yield [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
               "--bounding-set=-all"], str(copy)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_limited(argv: list[str], limit: int, value: int, timeout: float = 60, **kw) -> subprocess.CompletedProcess:
    import resource

    def lower() -> None:
        resource.setrlimit(limit, (value, value))

    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, preexec_fn=lower, **kw)
