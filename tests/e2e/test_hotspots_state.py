"""Tracing and perf state after a profile, killed or not (issue 14: "after a
SIGKILL of the probe mid-profile, the next osmeter command leaves tracefs and
perf state as they were").

What a profile can change: a tracefs mount and an ftrace instance (function
mode), kptr_restrict (sample mode as root, for the moment of reading
kallsyms); perf events die with the process. The state is read before and
after: tracefs mounts, ftrace instances, kptr_restrict, perf_event_paranoid,
the journals in /run/osmeter, the probe's processes.

- A sample-mode probe SIGKILLed mid-profile: the next `osmeter` command
  finds everything as it was.
- A journal left by a killed probe, over real changes (a tracefs mount, an
  instance, kptr_restrict changed): the next `osmeter` command, or the next
  `osmeter-probe hotspots`, restores them and says so.
- On a kernel whose function tracer works (not this one: lockdown), a
  function-mode probe SIGKILLed while its instance exists: the next
  `osmeter` command removes it.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from ..probe_helpers import probe_started

TRACEFS = Path("/sys/kernel/tracing")
KPTR = Path("/proc/sys/kernel/kptr_restrict")
JOURNALS = Path("/run/osmeter")

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the tracing state is root's to change")


def tracefs_mounts() -> int:
    return sum(1 for line in Path("/proc/self/mounts").read_text().splitlines()
               if line.split()[1] == str(TRACEFS))


def state() -> dict:
    instances = sorted(p.name for p in (TRACEFS / "instances").iterdir()) if tracefs_mounts() else None
    return {
        "tracefs_mounts": tracefs_mounts(),
        "instances": instances,
        "kptr_restrict": KPTR.read_text().strip(),
        "perf_event_paranoid": Path("/proc/sys/kernel/perf_event_paranoid").read_text().strip(),
        "journals": sorted(p.name for p in JOURNALS.glob("trace-*")) if JOURNALS.exists() else [],
    }


def probe_pids() -> list[int]:
    out = subprocess.run(["pgrep", "-f", "osmeter-probe hotspots"], capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


def wait_for_sampling(p: subprocess.Popen[str], timeout: float = 30) -> None:
    """Until the probe has announced its instance (progress) and sampled a while."""
    deadline = time.monotonic() + timeout
    assert p.stdout is not None
    while time.monotonic() < deadline:
        line = p.stdout.readline()
        if line and json.loads(line)["type"] == "progress":
            time.sleep(1.5)  # set-up done, sampling on
            return
    pytest.fail("the probe did not start its benchmark")


def dead_pid() -> int:
    """A pid that was an osmeter process and is no more."""
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


@pytest.mark.slow
def test_sample_profile_killed_mid_run_leaves_the_state_as_it_was(probe, cli):
    before = state()
    with probe_started(probe, "hotspots", "task.fork", "--param", "touched_mib=64", "--min-time", "60",
                       "--max-time", "60") as p:
        wait_for_sampling(p)
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=10)
    out = cli("runs")
    assert out.code == 0, out.err
    assert "restored" not in out.err, "a sample-mode profile journals nothing it keeps"
    assert state() == before
    assert probe_pids() == []


def test_next_osmeter_command_replays_a_killed_probes_journal(cli):
    before = state()
    pid = dead_pid()
    journal = []
    mounted = False
    try:
        if not tracefs_mounts():
            subprocess.run(["mount", "-t", "tracefs", "nodev", str(TRACEFS)], check=True)
            mounted = True
            journal.append(f"umount {TRACEFS}")
        instance = TRACEFS / "instances" / f"osmeter-{pid}"
        journal.append(f"rmdir {instance}")
        instance.mkdir()
        journal.append(f"write {KPTR} {before['kptr_restrict']}")
        KPTR.write_text("2" if before["kptr_restrict"] != "2" else "1")
        JOURNALS.mkdir(mode=0o700, exist_ok=True)
        (JOURNALS / f"trace-{pid}").write_text("\n".join(journal) + "\n")
        out = cli("runs")
        assert out.code == 0, out.err
        assert f"pid {pid}" in out.err and "rmdir" in out.err and "kptr_restrict" in out.err, out.err
        assert state() == before
    finally:
        # Whatever failed above, the machine is put back by hand.
        if (TRACEFS / "instances" / f"osmeter-{pid}").exists():
            (TRACEFS / "instances" / f"osmeter-{pid}").rmdir()
        if mounted and tracefs_mounts():
            subprocess.run(["umount", str(TRACEFS)], check=False)
        KPTR.write_text(before["kptr_restrict"])
        (JOURNALS / f"trace-{pid}").unlink(missing_ok=True)


def test_next_probe_profile_replays_a_journal_too(probe):
    """For boards without Python: osmeter-probe hotspots --profile function
    replays the journals of dead probes before it changes anything."""
    before = state()
    pid = dead_pid()
    try:
        KPTR.write_text("2" if before["kptr_restrict"] != "2" else "1")
        JOURNALS.mkdir(mode=0o700, exist_ok=True)
        (JOURNALS / f"trace-{pid}").write_text(f"write {KPTR} {before['kptr_restrict']}\n")
        r = subprocess.run([probe, "hotspots", "syscall.getuid", "--profile", "function", "--min-time", "0.1",
                            "--max-time", "0.3", "--quiet"], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert f"trace-{pid}" in r.stderr and "kptr_restrict" in r.stderr, r.stderr
        assert state() == before
    finally:
        KPTR.write_text(before["kptr_restrict"])
        (JOURNALS / f"trace-{pid}").unlink(missing_ok=True)


def test_a_journal_cannot_name_other_files(cli, tmp_path):
    """A journal is replayed as root: lines naming anything but tracing
    state and kptr_restrict are ignored."""
    victim = tmp_path / "victim"
    victim.write_text("keep")
    pid = dead_pid()
    JOURNALS.mkdir(mode=0o700, exist_ok=True)
    (JOURNALS / f"trace-{pid}").write_text(f"write {victim} gone\nrmdir {tmp_path}\n")
    try:
        out = cli("runs")
        assert out.code == 0, out.err
        assert victim.read_text() == "keep" and tmp_path.is_dir()
        assert not (JOURNALS / f"trace-{pid}").exists(), "the journal is consumed"
    finally:
        (JOURNALS / f"trace-{pid}").unlink(missing_ok=True)


def _function_tracer_works(probe: str) -> str | None:
    r = subprocess.run([probe, "hotspots", "syscall.getuid", "--profile", "function", "--min-time", "0.05",
                        "--max-time", "0.2", "--quiet"], capture_output=True, text=True, timeout=60)
    prof = [json.loads(x) for x in r.stdout.splitlines() if '"profile"' in x]
    if not prof:
        return f"no profile: {r.stderr}"
    return None if prof[0]["status"] == "ok" else prof[0]["reason"]


def test_function_profile_killed_mid_run_is_restored_by_the_next_command(probe, cli):
    why = _function_tracer_works(probe)
    if why:
        pytest.skip(f"the function tracer does not work here: {why}")
    before = state()
    with probe_started(probe, "hotspots", "syscall.getuid", "--profile", "function", "--min-time", "60",
                       "--max-time", "60") as p:
        wait_for_sampling(p)
        instance = TRACEFS / "instances" / f"osmeter-{p.pid}"
        assert instance.exists(), "the probe's instance exists while it profiles"
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=10)
    assert instance.exists(), "a SIGKILL leaves it (nothing can catch one)"
    out = cli("runs")
    assert out.code == 0, out.err
    assert "restored" in out.err and str(instance) in out.err
    assert state() == before
