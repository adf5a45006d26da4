"""The probe interrupted: it cleans up, writes an `end` record marked
interrupted as its last line, never half a line, and dies of the signal."""
import json
import os
import signal
import subprocess
import time

import pytest

from probe_helpers import TINY


def start(probe, work, *args):
    env = dict(os.environ, TMPDIR=str(work))
    return subprocess.Popen([probe, "run", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


@pytest.mark.slow  # 30 s each: the first benchmark samples for its whole --min-time
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_signal_mid_run_ends_cleanly(probe, tmp_path, sig):
    tmp_path = tmp_path / "work"
    tmp_path.mkdir()
    # syscall.open_close makes a file in the work directory; sampling for up
    # to 30 s keeps it there when the signal arrives.
    p = start(probe, tmp_path, "syscall.null", "syscall.open_close", "--min-time", "30",
              "--max-time", "30", "--quiet")
    lines = []
    for line in p.stdout:
        lines.append(line)
        if json.loads(line)["type"] == "progress" and json.loads(line)["bench"] == "syscall.open_close":
            break
    time.sleep(0.3)
    assert any(tmp_path.iterdir()), "the benchmark's work directory should exist now"
    p.send_signal(sig)
    rest, _ = p.communicate(timeout=10)
    assert p.returncode == -sig
    lines += rest.splitlines(keepends=True)
    assert all(x.endswith("\n") for x in lines)
    recs = [json.loads(x) for x in lines]
    assert recs[-1]["type"] == "end"
    assert recs[-1]["status"] == "interrupted"
    assert recs[-1]["signal"] == signal.Signals(sig).name
    assert recs[-1]["counts"]["ok"] == 1  # syscall.null finished
    assert [r["bench"] for r in recs if r["type"] == "result"] == ["syscall.null"]
    assert list(tmp_path.iterdir()) == []  # work directory removed


def test_die_with_parent(probe, tmp_path):
    """With --die-with-parent the probe ends when the process that started it dies."""
    script = (
        "import subprocess,sys,time;"
        f"p=subprocess.Popen([{probe!r},'run','syscall.null','--min-time','30','--max-time','30',"
        "'--quiet','--die-with-parent'],stdout=subprocess.DEVNULL);"
        "print(p.pid,flush=True);time.sleep(60)"
    )
    parent = subprocess.Popen(["python3", "-c", script], stdout=subprocess.PIPE, text=True)
    pid = int(parent.stdout.readline())
    time.sleep(0.5)
    parent.kill()
    parent.wait()
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        # A dead but unreaped child (reparented to init or a subreaper) is gone too.
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split()[2] == "Z":
                    return
        except FileNotFoundError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    pytest.fail("the probe outlived its parent")


def test_complete_run_exits_zero(probe):
    p = subprocess.run([probe, "run", "cpu.loop_overhead", *TINY], capture_output=True, text=True)
    assert p.returncode == 0
    assert json.loads(p.stdout.splitlines()[-1])["status"] == "complete"
