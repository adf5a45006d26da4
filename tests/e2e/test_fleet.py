"""`osmeter fleet run` against three "hosts": network namespaces running sshd,
reached over veth pairs (tests/sshlab.py, built on tests/netlab.py), driven
by Ansible through ansible-runner as a user would.

- the real quick suite on all three: three complete runs in the store, each
  with its inventory name and the same fleet id;
- one host's sshd killed while its probe runs: that host is reported failed
  (unreachable), the other two are stored, exit 11; with sshd back,
  `--resume` runs that host alone and the fleet is complete;
- afterwards nothing is left: no namespace, link or lab process (netlab's
  leftover check), no private ansible-runner directory, no remote temporary
  directory, no ansible or ssh process.

Root, iproute2, openssh-server/-client, ansible-core and ansible-runner are
needed; each is an optional tool (skipped with the install hint, required
with OSMETER_TEST_REQUIRE_OPTIONAL=1).
"""

from __future__ import annotations

import re
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

import netlab
import sshlab
from conftest import osmeter_command, subprocess_env

pytestmark = [pytest.mark.slow, pytest.mark.root]

TINY = ["--min-time", "0.01", "--max-time", "0.1", "--min-samples", "5"]
FLEET_ID = re.compile(r"fleet (fleet-\d{8}T\d{6}Z-[0-9a-f]{4}):")
RUN_TIMEOUT_S = 600


def _env(probe: str) -> dict[str, str]:
    env = subprocess_env()
    env["OSMETER_PROBE"] = probe
    return env


def _fleet(probe: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(osmeter_command("fleet", "run", *args), capture_output=True, text=True,
                          env=_env(probe), timeout=RUN_TIMEOUT_S)


def _runs(store: Path) -> list:
    from osmeter.store import open_store

    s = open_store(str(store), create=False)
    try:
        return s.runs()
    finally:
        s.close()


def _nothing_left_behind(remote_wait_s: float = 0.0) -> None:
    """`remote_wait_s`: how long a host that dropped may take to notice
    (its script's next dot fails, every 2 s) and remove its own directory."""
    tmp = Path(tempfile.gettempdir())
    assert list(tmp.glob("osmeter-fleet.*")) == []  # ansible-runner's private directories
    deadline = time.monotonic() + remote_wait_s
    while list(tmp.glob("osmeter-fleet-*")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert list(tmp.glob("osmeter-fleet-*")) == []  # the hosts' temporary directories (their /tmp is ours)
    from osmeter.fleet.ansible import processes_naming

    assert processes_naming(str(tmp / "osmeter-fleet.")) == []  # ansible-playbook, ssh, SSH masters


def test_quick_suite_on_three_hosts(hosts, probe, tmp_path, store_path) -> None:
    inventory = sshlab.write_inventory(hosts, tmp_path / "inventory.ini")
    start = time.monotonic()
    r = _fleet(probe, str(inventory), "--suite", "quick", "--forks", "3")
    assert r.returncode == 0, r.stdout + r.stderr
    fleet_id = FLEET_ID.search(r.stderr).group(1)
    for h in hosts:
        for step in ("connecting", "copying the x86-64 probe", "running --suite quick", "fetching the output",
                     "stored run"):
            assert f"  {h.name}: {step}" in r.stderr, r.stderr
    runs = [run for run in _runs(store_path) if run.fleet == fleet_id]
    assert sorted(run.host for run in runs) == ["host1", "host2", "host3"]
    assert all(run.status == "complete" and run.suite == "quick" and run.counts.ok > 0 for run in runs)
    assert all(run.params["repeat"] == 3 and run.params["fleet"]["host"] == run.host for run in runs)
    assert f"fleet {fleet_id}: 3 of 3 host(s) stored, 0 failed" in r.stdout
    _nothing_left_behind()
    print(f"quick suite on three hosts: {time.monotonic() - start:.0f} s")
    _heatmap_by_host(probe, fleet_id, tmp_path)


def _osmeter(probe: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(osmeter_command(*args), capture_output=True, text=True, env=_env(probe), timeout=300)


def _heatmap_by_host(probe: str, fleet_id: str, tmp_path: Path) -> None:
    """`osmeter compare --by host` of the fleet run: one column per host, each
    compared with host1 (the same machine three times: most cells "~")."""
    r = _osmeter(probe, "compare", "--by", "host", "--fleet", fleet_id)
    assert r.returncode == 0, r.stderr
    header = next(line for line in r.stdout.splitlines() if line.startswith("benchmark"))
    assert header.split()[-4:] == ["host1", "(baseline)", "host2", "host3"], header
    assert "syscall.null" in r.stdout and "sysinfo" in r.stdout
    html = tmp_path / "heatmap.html"
    r = _osmeter(probe, "compare", "--by", "host", "--fleet", fleet_id, "-o", str(html))
    assert r.returncode == 0, r.stderr
    page = html.read_text()
    assert 'id="heatmap-by"' in page and all(h in page for h in ("host1", "host2", "host3"))
    report = tmp_path / "fleet.html"
    r = _osmeter(probe, "report", "--fleet", fleet_id, "-o", str(report))
    assert r.returncode == 0 and "3 hosts: 3 complete, 0 incomplete, 0 failed" in report.read_text(), r.stderr


def _kill_sshd_when_running(proc: subprocess.Popen[str], host: sshlab.SshHost, seen: list[str]) -> None:
    assert proc.stderr is not None
    for line in proc.stderr:
        seen.append(line)
        if line.startswith(f"  {host.name}: running"):
            time.sleep(1.0)
            host.kill_sshd()


def test_a_host_that_drops_is_reported_and_resumed(hosts, probe, tmp_path, store_path) -> None:
    inventory = sshlab.write_inventory(hosts, tmp_path / "inventory.ini")
    victim = hosts[1]
    proc = subprocess.Popen(osmeter_command("fleet", "run", str(inventory), "--suite", "quick", *TINY),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(probe))
    seen: list[str] = []
    reader = threading.Thread(target=_kill_sshd_when_running, args=(proc, victim, seen))
    reader.start()
    out = proc.stdout.read() if proc.stdout else ""
    proc.wait(timeout=RUN_TIMEOUT_S)
    reader.join(timeout=30)
    err = "".join(seen)
    print(out + err)
    assert proc.returncode == 11, out + err
    fleet_id = FLEET_ID.search(err).group(1)
    assert re.search(rf"  {victim.name}: failed: unreachable", err), err
    assert f"{victim.name}: failed: unreachable" in out
    assert f"--resume {fleet_id}" in err
    runs = [run for run in _runs(store_path) if run.fleet == fleet_id]
    assert sorted(run.host for run in runs) == ["host1", "host3"]
    _nothing_left_behind(remote_wait_s=20)  # the dropped host stops its probe and removes its directory itself
    shown = _osmeter(probe, "report", "--fleet", fleet_id, "--format", "txt")  # the failed host is in the report
    assert shown.returncode == 0 and "3 hosts: 2 complete, 0 incomplete, 1 failed" in shown.stdout, shown.stderr
    assert f"{victim.name}: failed, no run stored: unreachable" in shown.stdout

    victim.restart_sshd()
    r = _fleet(probe, str(inventory), "--resume")  # the latest fleet run, its suite and options
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"fleet {fleet_id}: 1 host(s) to run, 2 stored before" in r.stderr
    assert "host1: connecting" not in r.stderr and f"{victim.name}: stored run" in r.stderr
    runs = [run for run in _runs(store_path) if run.fleet == fleet_id]
    assert sorted(run.host for run in runs) == ["host1", "host2", "host3"]
    assert all(run.status == "complete" for run in runs)
    resumed = next(run for run in runs if run.host == victim.name)
    assert resumed.argv[resumed.argv.index("--max-time") + 1] == "0.1"  # the same options as the first attempt
    assert f"fleet {fleet_id}: 3 of 3 host(s) stored, 0 failed" in r.stdout
    _nothing_left_behind()
    assert not [p for p in victim.sshd_pids() if "notty" in Path(f"/proc/{p}/cmdline").read_text()]



def test_ctrl_c_stops_every_host_and_leaves_nothing(hosts, probe, tmp_path, store_path) -> None:
    """SIGINT while the probes run: exit 130, the probes on the hosts stopped
    (only sshd is left in their namespaces), every directory removed."""
    inventory = sshlab.write_inventory(hosts, tmp_path / "inventory.ini")
    proc = subprocess.Popen(osmeter_command("fleet", "run", str(inventory), "--suite", "quick"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(probe))
    assert proc.stderr is not None
    running = set()
    for line in proc.stderr:
        if ": running" in line:
            running.add(line.split(":")[0].strip())
        if len(running) == 3:
            break
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=120)
    assert proc.returncode == 130
    _nothing_left_behind()
    for h in hosts:
        left = netlab.run("ip", "netns", "pids", h.lab.ns).stdout.split()
        assert sorted(map(int, left)) == sorted(h.sshd_pids()), left
    assert not store_path.exists() or [run for run in _runs(store_path) if run.fleet] == []
