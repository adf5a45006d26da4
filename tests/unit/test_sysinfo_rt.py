"""The machine's real-time facts: `realtime` (/sys/kernel/realtime) and
`kernel_hz` (CONFIG_HZ from /boot/config-$(uname -r)) next to the
preemption model, isolated CPUs and the governor; what the real probe
reports matches what Python reads from the same files, and `osmeter
sysinfo --explain` says where each comes from."""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path

import pytest

from osmeter.report.content import MACHINE_HELP
from osmeter.sysinfo import RT_KEYS, rt_facts

from ..conftest import DATA


@pytest.fixture
def real_probe(probe: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OSMETER_PROBE", probe)
    return probe


def expected_realtime() -> bool | None:
    path = Path("/sys/kernel/realtime")
    if not path.exists():
        return False
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return {"1": True, "0": False}.get(text)


def expected_hz() -> int | None:
    """CONFIG_HZ from /boot/config-$(uname -r), as the probe reads it; else,
    where the probe can work it out from /proc/timer_list (root), from
    /proc/config.gz, which Python can inflate and the probe does not read:
    an independent reading of the same number."""
    try:
        text = Path(f"/boot/config-{os.uname().release}").read_text(errors="replace")
    except OSError:
        if not os.access("/proc/timer_list", os.R_OK):
            return None
        try:
            text = gzip.open("/proc/config.gz", "rt", errors="replace").read()
        except OSError:
            pytest.skip("no /boot/config nor /proc/config.gz to check the probe's HZ from /proc/timer_list")
    m = re.search(r"^CONFIG_HZ=(\d+)$", text, re.M)
    return int(m.group(1)) if m else None


def test_the_probe_reads_realtime_and_hz_as_python_does(cli, real_probe: str) -> None:
    r = cli("sysinfo", "--json")
    assert r.code == 0, r.err
    fields = {f["key"]: f for f in json.loads(r.out)["fields"]}
    assert fields["realtime"]["value"] is expected_realtime()
    assert fields["kernel_hz"]["value"] == expected_hz()
    assert "/sys/kernel/realtime" in fields["realtime"]["help"]
    assert "/boot/config-$(uname -r)" in fields["kernel_hz"]["help"] and "null = unknown" in fields["kernel_hz"]["help"]
    assert "/proc/timer_list" in fields["kernel_hz"]["help"]
    keys = list(fields)
    assert keys.index("preemption_source") + 1 == keys.index("realtime")  # next to the preemption model
    assert set(RT_KEYS) <= set(fields)


def test_explain_says_where_they_come_from(cli, real_probe: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    r = cli("sysinfo", "--explain")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[:1] == ["realtime"])
    assert lines[at].split()[1] == ("yes" if expected_realtime() else "no" if expected_realtime() is False else "-")
    assert "/sys/kernel/realtime" in " ".join(lines[at:at + 3])
    at = next(i for i, line in enumerate(lines) if line.split()[:1] == ["kernel_hz"])
    assert lines[at].split()[1] == str(expected_hz() or "-")
    assert "CONFIG_HZ" in " ".join(lines[at:at + 3])


def test_the_report_knows_every_key_the_probe_prints(cli, real_probe: str) -> None:
    """MACHINE_HELP mirrors the probe's help for the report (a run stores values only)."""
    fields = json.loads(cli("sysinfo", "--json").out)["fields"]
    assert [f["key"] for f in fields if f["key"] not in MACHINE_HELP] == []


def test_rt_facts_in_order_with_unknown_and_none() -> None:
    machine = {"kernel_hz": None, "realtime": True, "preemption": "rt", "isolated_cpus": "", "cpus_online": 4,
               "nohz_full_cpus": "2-3", "cpufreq_governor": "performance", "hostname": "x", "cpus_allowed": "1"}
    assert rt_facts(machine) == [("preemption", "rt"), ("realtime", "yes"), ("kernel_hz", "-"),
                                 ("isolated_cpus", "none"), ("nohz_full_cpus", "2-3"),
                                 ("cpufreq_governor", "performance"), ("cpus_online", "4")]
    assert rt_facts({}) == []


def test_the_fake_probes_sysinfo_has_the_rt_fields() -> None:
    fields = {f["key"]: f["value"] for f in json.loads((DATA / "sysinfo.json").read_text())["fields"]}
    assert fields["realtime"] is False and fields["kernel_hz"] == 250
