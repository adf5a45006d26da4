"""The machine description, as the probe reports it.

`osmeter-probe sysinfo --json` prints
``{"schema": 1, "fields": [{"key", "value", "help"}, ...]}`` and the same
facts appear in every run's `meta.machine` as ``{key: value}``
(docs/schema.md). Values may be strings, numbers, booleans, null (the
machine does not expose it), lists or objects.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from .errors import ProbeError, RecordError
from .probe import run_document
from .fmt import human_bytes
from .records import check_schema_version

# The machine keys osmeter itself reads (runs table, warnings). Every other
# key is shown as it comes.
KEY_HOSTNAME = "hostname"
KEY_MACHINE_ID = "machine_id"  # osmeter's app-specific hash of /etc/machine-id (docs/fleet.md)
KEY_KERNEL = "kernel_release"
KEY_ARCH = "arch"
KEY_GOVERNOR = "cpufreq_governor"
KEY_VIRTUALIZATION = "virtualization"
# What decides real-time latency (the rt study prints them; compare shows them when they differ).
# (Not cpus_allowed: the probe describes the machine once it has pinned itself, so in a run's
# machine it is the measured CPU.)
RT_KEYS = ("kernel_release", "kernel_version", "preemption", "preemption_source", "realtime", "kernel_hz",
           "isolated_cpus", "nohz_full_cpus", "cpufreq_governor", "cpus_online")


@dataclass(frozen=True)
class MachineField:
    key: str
    value: Any
    help: str


@dataclass(frozen=True)
class MachineInfo:
    fields: tuple[MachineField, ...]

    def as_dict(self) -> dict[str, Any]:
        return {f.key: f.value for f in self.fields}


def parse_sysinfo(doc: Mapping[str, Any]) -> MachineInfo:
    """Validate the `sysinfo --json` document."""
    try:
        check_schema_version(doc.get("schema"), "sysinfo")
    except RecordError as e:
        raise ProbeError(e.message) from None
    raw_fields = doc.get("fields")
    if not isinstance(raw_fields, list):
        raise ProbeError("sysinfo: 'fields' must be an array")
    fields = []
    for i, f in enumerate(raw_fields):
        if not (isinstance(f, dict) and isinstance(f.get("key"), str) and "value" in f):
            raise ProbeError(f"sysinfo: field {i} must be an object with a string 'key' and a 'value'")
        help_text = f.get("help")
        fields.append(MachineField(f["key"], f["value"], help_text if isinstance(help_text, str) else ""))
    return MachineInfo(tuple(fields))


def probe_sysinfo(probe: Path) -> tuple[MachineInfo, dict[str, Any]]:
    """Ask the probe; returns the parsed description and the document as printed."""
    doc = run_document(probe, ["sysinfo", "--json"])
    return parse_sysinfo(doc), doc


def format_value(value: Any) -> str:
    """A machine value on one line: null or empty as '-', lists and objects as compact JSON."""
    if value is None or value == "":
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(", ", ": ")) if isinstance(value, (list, dict)) else str(value)


def machine_text(machine: Mapping[str, Any], key: str) -> str | None:
    """A machine value as text, or None when missing or null."""
    value = machine.get(key)
    return None if value is None else format_value(value)


def host_of(run: Any) -> str | None:
    """The host a run (a model.RunInfo) ran on: the fleet inventory's name, else the machine's hostname."""
    return run.host or machine_text(run.machine, KEY_HOSTNAME)


def machine_identity(machine: Mapping[str, Any]) -> str | None:
    """The machine a description is of, one string per machine: its
    machine_id (the probe's hash of /etc/machine-id) with its hostname, so
    that VM clones or containers that share a machine-id but not a name stay
    apart; None when the description has no machine_id (runs of an older
    probe, a machine without /etc/machine-id: they go by their hostname).
    docs/fleet.md, "One machine, one host"."""
    ident = machine.get(KEY_MACHINE_ID)
    if not isinstance(ident, str) or not ident:
        return None
    name = machine.get(KEY_HOSTNAME)
    return f"{ident}/{name}" if isinstance(name, str) and name else ident


# Lists `osmeter sysinfo` shows as a count unless asked for (--flags): a CPU
# has a hundred flags or more.
FOLDED_KEYS = {"cpu_flags": "--flags"}

# Why a field is null, where the probe knows: {key: reason} (the last field).
KEY_NULL_REASONS = "null_reasons"

# Settings the probe records as a number, shown with what the number means.
CODED_KEYS: dict[str, dict[int, str]] = {
    "audit_enabled": {0: "off", 1: "on", 2: "on, locked"},
    "seccomp_mode": {0: "none", 1: "strict", 2: "filter"},
    "ksm_run": {0: "stopped", 1: "running", 2: "unmerging"},
    "numa_balancing": {0: "off", 1: "on", 2: "memory tiering", 3: "on, memory tiering"},
    "aslr": {0: "off", 1: "partial", 2: "full"},
}
# Booleans whose "yes" is worth a word more.
_YES_TEXT = {"audit_ever_enabled": "yes (every task since has an audit context: each system call pays for it "
                                   "until reboot)"}


def null_reason(machine: Mapping[str, Any], key: str) -> str | None:
    """Why the machine's `key` is null, where the probe said (runs of an older
    probe say nothing: None)."""
    reasons = machine.get(KEY_NULL_REASONS)
    why = reasons.get(key) if isinstance(reasons, dict) else None
    return why if isinstance(why, str) and why else None


def _scalar_text(key: str, value: Any, exact: bool = True) -> str:
    """One value for `osmeter sysinfo`: sizes (keys ending in _bytes) in
    KiB/MiB/GiB (`exact`: with the byte count), null or empty as '-'."""

    if isinstance(value, int) and not isinstance(value, bool) and key.endswith("_bytes") and value >= 1024:
        return f"{human_bytes(value)} ({value})" if exact else human_bytes(value)
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(", ", ": "))
    if isinstance(value, int) and not isinstance(value, bool) and value in CODED_KEYS.get(key, {}):
        return f"{value} ({CODED_KEYS[key][value]})"
    if value is True and key in _YES_TEXT:
        return _YES_TEXT[key]
    return format_value(value)


def display_value(key: str, value: Any, unfold: bool = False) -> str:
    """A machine value for `osmeter sysinfo`'s text output, one item a line:
    a list of words space-separated (wrapped by the table), a list of
    objects one object a line (`key=value, ...`), an object one `key: value`
    a line; the lists of FOLDED_KEYS as a count unless `unfold`; an empty
    list or object as 'none'; the numbers of CODED_KEYS with their meaning."""
    if isinstance(value, list) and value and all(not isinstance(v, (list, dict)) for v in value):
        if key in FOLDED_KEYS and not unfold:
            return f"{len(value)} (osmeter sysinfo {FOLDED_KEYS[key]} lists them)"
        return " ".join(_scalar_text(key, v) for v in value)
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return "\n".join(", ".join(f"{k}={_scalar_text(k, v, False)}" for k, v in item.items()) for item in value)
    if isinstance(value, dict) and value:
        return "\n".join(f"{k}: {_scalar_text(k, v)}" for k, v in value.items())
    if isinstance(value, (list, dict)):
        return "none"  # empty: no BPF programs, no null reasons
    return _scalar_text(key, value)


def rt_facts(machine: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The machine's real-time facts (RT_KEYS) as (key, text) pairs, in that
    order; a key the run did not record is left out, null shown as '-'
    (unknown), an empty cpu list as 'none'."""
    out = []
    for key in RT_KEYS:
        if key not in machine:
            continue
        value = machine[key]
        if key in ("isolated_cpus", "nohz_full_cpus") and value == "":
            out.append((key, "none"))
        else:
            out.append((key, format_value(value)))
    return out
