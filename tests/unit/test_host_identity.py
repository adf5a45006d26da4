"""One machine, one host (issue 28): a run's host is its machine (the probe's machine_id, osmeter's
application-specific ID of /etc/machine-id, with its hostname), not the name it was run under, so a local
run (host "vm", its hostname) and a fleet run of `localhost` on the same machine are one column of
compare --by host; runs without a machine_id fall back to their hostname (or inventory name)."""

from __future__ import annotations

import hashlib
import hmac
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from osmeter import compare_by as cb
from osmeter import errors
from osmeter.model import RunInfo
from osmeter.sysinfo import machine_identity

from ..fleet_runs import FLEET, OLD_FLEET, add_host_run
from ..synthetic import MACHINE, noisy

APP_ID = "57032c07d9184336b4cf11796e44f07c"  # probe/src/sysinfo_id.c
A, B = "7e9bb65cef694bd78598fc5197b2e9ee", "03d70bf207ed4ae29a44e07edca97e51"  # two machines' machine_id


def _run(run_id: int, hostname: str | None, machine_id: str | None = None, host: str | None = None,
         fleet: str | None = None, start: str = "2026-11-28T10:00:00Z") -> RunInfo:
    machine: dict = {} if hostname is None else {"hostname": hostname}
    if machine_id is not None:
        machine["machine_id"] = machine_id
    return RunInfo(id=run_id, label=None, start_time=start, end_time=None, status="complete", status_reason=None,
                   source="import" if fleet else "run", osmeter_version="0", probe_version="0", suite="quick",
                   argv=[], params={}, machine=machine, meta={}, host=host, fleet=fleet)


def _columns(*runs: RunInfo) -> dict[str, list[int]]:
    """Each column's name and its runs' ids."""
    return {c.name: sorted(r.id for r in c.runs) for c in cb.columns_of(runs, "host")}


def test_the_identity_is_the_machine_id_with_the_hostname() -> None:
    assert machine_identity({"machine_id": A, "hostname": "vm"}) == f"{A}/vm"
    assert machine_identity({"machine_id": A}) == A
    assert machine_identity({"hostname": "vm"}) is None  # an older probe's run: by its hostname
    assert machine_identity({"machine_id": None, "hostname": "vm"}) is None  # no /etc/machine-id there


def test_a_local_run_and_a_fleet_run_of_one_machine_are_one_host() -> None:
    """The report: `localhost ansible_connection=local` was host "localhost", the same machine run
    locally host "vm". Now one column, named by the hostname (localhost names no machine)."""
    local = _run(1, "vm", A)
    fleet = _run(2, "vm", A, host="localhost", fleet=FLEET, start="2026-11-28T11:00:00Z")
    other = _run(3, "db1", B, host="db1", fleet=FLEET)
    assert _columns(local, fleet, other) == {"db1": [3], "vm": [1, 2]}
    (vm,) = [c for c in cb.columns_of([local, fleet, other], "host") if c.name == "vm"]
    assert vm.aliases == {"vm", "localhost"} and vm.same_host == [fleet, local]
    assert vm.notes()[0] == "vm: also localhost (the same machine)"
    # a real inventory name is the readable one, wherever the machine ran
    named = _run(4, "vm", A, host="bench1", fleet=OLD_FLEET)
    assert _columns(local, named, other) == {"bench1": [1, 4], "db1": [3]}


def test_different_machine_ids_are_different_hosts_even_of_one_name() -> None:
    """Two machines called vm: two columns, told apart by their machine_id's first digits."""
    assert _columns(_run(1, "vm", A), _run(2, "vm", B)) == {f"vm ({A[:8]})": [1], f"vm ({B[:8]})": [2]}
    # clones that share a machine-id under other hostnames stay apart too
    assert _columns(_run(1, "web1", A), _run(2, "web2", A)) == {"web1": [1], "web2": [2]}


def test_without_a_machine_id_a_run_goes_by_its_hostname() -> None:
    """Runs stored before the identity existed: by hostname (a local run, a fleet run of localhost), or
    by inventory name; such a run joins the one machine of its hostname (and inventory name)."""
    old_local, old_fleet = _run(1, "vm"), _run(2, "vm", host="localhost", fleet=OLD_FLEET)
    assert _columns(old_local, old_fleet, _run(3, "db1")) == {"db1": [3], "vm": [1, 2]}
    new = _run(4, "vm", A, start="2026-11-29T00:00:00Z")
    assert _columns(old_local, old_fleet, new) == {"vm": [1, 2, 4]}  # joins the machine called vm
    # two machines called vm: the old run belongs to neither
    assert _columns(old_local, new, _run(5, "vm", B)) == {f"vm ({A[:8]})": [4], f"vm ({B[:8]})": [5],
                                                            "vm (run 1)": [1]}
    # an old fleet run keeps its inventory name, and joins the machine only under that name and hostname
    old_xeon, new_xeon = _run(6, "xeon01", host="xeon", fleet=OLD_FLEET), _run(7, "xeon01", B, host="xeon",
                                                                                fleet=FLEET)
    assert _columns(old_xeon, new_xeon) == {"xeon": [6, 7]}
    assert _columns(old_xeon, _run(8, "xeon01", B)) == {"xeon": [6], "xeon01": [8]}
    assert _columns(_run(9, None), _run(10, None, host="h", fleet=FLEET)) == {"h": [10], "run 9": [9]}


def test_one_fleet_run_under_several_inventory_names_keeps_them_apart() -> None:
    """Network namespaces of one machine (tests/sshlab.py) share its hostname and machine-id: the
    inventory says they are three hosts, and so they stay; a local run there is the machine's own."""
    lab = [_run(i, "vm", A, host=f"host{i}", fleet=FLEET) for i in (1, 2, 3)]
    assert _columns(*lab) == {"host1": [1], "host2": [2], "host3": [3]}
    assert _columns(*lab, _run(4, "vm", A)) == {"host1": [1], "host2": [2], "host3": [3], "vm": [4]}
    resumed = _run(5, "vm", A, host="host2", fleet=FLEET, start="2026-11-28T12:00:00Z")
    assert _columns(*lab, resumed) == {"host1": [1], "host2": [2, 5], "host3": [3]}


def test_the_baseline_by_any_name_of_its_machine() -> None:
    local, fleet = _run(1, "vm", A), _run(2, "vm", A, host="localhost", fleet=FLEET)
    columns = cb.columns_of([local, fleet, _run(3, "db1", B, host="db", fleet=FLEET)], "host")
    assert [c.name for c in columns] == ["db", "vm"]
    assert cb.baseline_index(columns, "localhost", "host") == 1 == cb.baseline_index(columns, "vm", "host")
    assert cb.baseline_index(columns, "db1", "host") == 0  # its hostname
    twins = cb.columns_of([_run(1, "vm", A), _run(2, "vm", B)], "host")
    with pytest.raises(errors.UsageError, match=r"--baseline 'vm' names 2 columns of --by host \(vm \("):
        cb.baseline_index(twins, "vm", "host")
    alone = cb.columns_of([local, fleet], "host")
    with pytest.raises(errors.UsageError, match=r"make 1 \(vm: runs 1, 2 are of one machine; `osmeter compare RUN"):
        cb.baseline_index(alone, None, "host")


def test_compare_by_host_puts_a_local_and_a_fleet_run_of_one_machine_in_one_column(cli, store_path: Path) -> None:
    """Stored as `osmeter run` and `osmeter fleet run` store them: the local run without an inventory
    name, the fleet run with `localhost`; another machine's fleet run beside them."""
    rng = np.random.default_rng(11)
    null = noisy(rng, 100.0, 800)
    vm = dict(MACHINE, hostname="vm", machine_id=A)
    local = add_host_run(store_path, [("syscall.null", {}, "ns", null)], None, fleet=None, machine=vm,
                         start_time="2026-11-28T10:00:00Z")
    fleet = add_host_run(store_path, [("syscall.null", {}, "ns", null * 1.01)], "localhost", machine=vm,
                         start_time="2026-11-28T11:00:00Z")
    other = add_host_run(store_path, [("syscall.null", {}, "ns", null * 2)], "db1",
                         machine=dict(MACHINE, hostname="db1.lab", machine_id=B))
    r = cli("compare", "--by", "host", str(local), "--fleet", FLEET, "--json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert [(c["name"], c["runs"]) for c in doc["columns"]] == [("db1", [other]), ("vm", [fleet, local])]
    r = cli("compare", "--by", "host", str(local), "--fleet", FLEET, "--baseline", "localhost")
    assert r.code == 0, r.err
    head = next(line for line in r.out.splitlines() if line.startswith("benchmark"))
    assert head.split()[2:] == ["db1", "vm", "(baseline)"]
    assert "vm: also localhost (the same machine)" in r.out
    assert "db1.lab" in r.out  # the hostnames differ, and say so in the sysinfo diff


def test_the_fleet_report_names_a_localhost_by_its_machine(cli, store_path: Path) -> None:
    """report --fleet: the host `localhost` is the machine vm; its run stored (incomplete), though its
    last attempt failed, is no host 'with no run stored' (the state knows it by its inventory name)."""
    from osmeter.fleet import state

    rng = np.random.default_rng(12)
    add_host_run(store_path, [("syscall.null", {}, "ns", noisy(rng, 100.0, 300))], "localhost",
                 machine=dict(MACHINE, hostname="vm", machine_id=A), status="incomplete")
    add_host_run(store_path, [("syscall.null", {}, "ns", noisy(rng, 200.0, 300))], "db1",
                 machine=dict(MACHINE, hostname="db1", machine_id=B))
    st = state.FleetState(id=FLEET, created="2026-11-27T00:15:00Z", inventory="/inv.ini", limit="all",
                          suite="quick", probe_options={}, store=str(store_path),
                          hosts={"localhost": state.HostState(status="failed", reason="unreachable: gone"),
                                 "db1": state.HostState(status="stored", run_id=2)})
    state.save(st)
    r = cli("report", "--fleet", FLEET, "--format", "txt")
    assert r.code == 0, r.err
    assert "2 hosts: 1 complete, 1 incomplete, 0 failed" in r.out and "no run stored" not in r.out
    assert any(line.split()[:2] == ["vm", "1"] for line in r.out.splitlines()), r.out


def _app_specific(machine_id: str) -> str:
    mac = bytearray(hmac.new(bytes.fromhex(machine_id), bytes.fromhex(APP_ID), hashlib.sha256).digest()[:16])
    mac[6], mac[8] = (mac[6] & 0x0F) | 0x40, (mac[8] & 0x3F) | 0x80
    return mac.hex()


def test_the_probe_records_the_app_specific_machine_id(probe: str) -> None:
    """The real probe's machine_id is systemd's application-specific ID of this machine's machine-id
    (worked out here with hmac; and what systemd-id128 prints, where it is installed), never the ID."""
    fields = json.loads(subprocess.run([probe, "sysinfo", "--json"], capture_output=True, text=True,
                                       check=True).stdout)["fields"]
    got = next(f["value"] for f in fields if f["key"] == "machine_id")
    mine = None
    for path in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        try:
            text = Path(path).read_text().strip()
        except OSError:
            continue
        if len(text) == 32 and all(c in "0123456789abcdefABCDEF" for c in text) and int(text, 16):
            mine = text
            break
    if mine is None:
        assert got is None
        return
    assert got == _app_specific(mine) and got != mine.lower()
    tool = shutil.which("systemd-id128")
    if tool and Path("/etc/machine-id").exists():
        p = subprocess.run([tool, "machine-id", f"--app-specific={APP_ID}"], capture_output=True, text=True)
        if p.returncode == 0:
            assert p.stdout.strip() == got
