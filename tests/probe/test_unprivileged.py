"""Without root: SCHED_FIFO and mlockall are refused with a message and
recorded as not applied; everything else works. With root they apply."""
import json
import os
import resource
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from probe_helpers import run_probe


@pytest.fixture
def open_tmp():
    """A temporary directory every user can enter (pytest's tmp_path lives
    under a 0700 directory of the user running the tests)."""
    d = tempfile.mkdtemp(prefix="osmeter-test-")
    os.chmod(d, 0o755)
    yield Path(d)
    shutil.rmtree(d, ignore_errors=True)


def typical_memlock_limit():
    # Containers often lift RLIMIT_MEMLOCK; a desktop user has a few MiB at
    # most. 64 KiB is less than the probe already maps, so mlockall fails.
    resource.setrlimit(resource.RLIMIT_MEMLOCK, (65536, 65536))


def as_nobody(probe, tmp_path):
    """A copy of the probe nobody can run, and the command prefix to run it
    as nobody (when we are root), or as ourselves (when we are not)."""
    d = tmp_path / "bin"
    d.mkdir()
    os.chmod(d, 0o755)
    copy = d / "osmeter-probe"
    shutil.copy(probe, copy)
    os.chmod(copy, 0o755)
    work = tmp_path / "tmp"
    work.mkdir()
    os.chmod(work, 0o1777)
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if not setpriv:
            pytest.fail("setpriv (util-linux) is needed to drop root in this test")
        prefix = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
                  "--inh-caps=-all", "--bounding-set=-all"]
    else:
        prefix = []
    return prefix, str(copy), dict(os.environ, TMPDIR=str(work))


def test_fifo_and_mlock_are_refused_without_root_and_the_run_goes_on(probe, open_tmp):
    tmp_path = open_tmp
    prefix, copy, env = as_nobody(probe, tmp_path)
    p = subprocess.run([*prefix, copy, "run", "syscall.null", "syscall.open_close", "--fifo", "50",
                        "--mlock", "--min-time", "0.01", "--max-time", "0.3"],
                       capture_output=True, text=True, env=env, timeout=60,
                       preexec_fn=typical_memlock_limit)
    assert p.returncode == 0, p.stderr
    assert "SCHED_FIFO not applied" in p.stderr and "CAP_SYS_NICE" in p.stderr
    assert "memory not locked" in p.stderr
    recs = [json.loads(x) for x in p.stdout.splitlines()]
    meta = recs[0]
    assert meta["fifo"] == {"requested": 50, "applied": False, "reason": meta["fifo"]["reason"]}
    assert "root" in meta["fifo"]["reason"]
    assert meta["mlock"]["requested"] is True and meta["mlock"]["applied"] is False
    assert [r["bench"] for r in recs if r["type"] == "result"] == ["syscall.null", "syscall.open_close"]
    assert list((tmp_path / "tmp").iterdir()) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to apply SCHED_FIFO and mlockall")
def test_fifo_and_mlock_apply_with_root(probe):
    r = run_probe(probe, "run", "syscall.null", "--fifo", "10", "--mlock", "--min-time", "0.01",
                  "--max-time", "0.2")
    assert r.rc == 0, r.stderr
    meta = r.of_type("meta")[0]
    assert meta["fifo"] == {"requested": 10, "applied": True, "reason": None}
    assert meta["mlock"] == {"requested": True, "applied": True, "reason": None}
