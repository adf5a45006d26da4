"""The machine description's state fields (issue 29, part 4): each value
checked against what the test reads itself from the same source (sysfs,
/proc, the audit netlink socket, bpf(), securityfs and tracefs mounted in a
private mount namespace, a probe started under seccomp filters).

Nothing here changes the system: audit is only asked (AUDIT_GET,
AUDIT_LIST_RULES), never set; file systems are mounted only inside a
throw-away mount namespace; the one BPF program loaded lives as long as its
descriptor, during one probe run."""
from __future__ import annotations

import ctypes
import errno
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from probe_helpers import REPO, run_probe

ROOT = os.geteuid() == 0


def sysinfo(probe: str, prefix: list[str] | None = None) -> tuple[dict, dict]:
    """The probe's sysinfo document as {key: value} and {key: help}."""
    p = subprocess.run([*(prefix or []), probe, "sysinfo", "--json"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    fields = json.loads(p.stdout)["fields"]
    return {f["key"]: f["value"] for f in fields}, {f["key"]: f["help"] for f in fields}


@pytest.fixture(scope="module")
def machine(probe):
    return sysinfo(probe)


def reason(values: dict, key: str) -> str:
    return values["null_reasons"].get(key, "")


def test_null_reasons_name_only_null_fields_and_come_last(probe, machine):
    values, helps = machine
    assert list(values)[-1] == "null_reasons"
    for key, why in values["null_reasons"].items():
        assert key in values and values[key] is None, key
        assert isinstance(why, str) and why, key
    text = run_probe(probe, "sysinfo").stdout
    assert "\nnull_reasons:" in text
    for key in ("audit_enabled", "seccomp_mode", "lockdown", "bpf_programs", "tracing", "ksm_run"):
        assert "(" in helps[key], f"{key}'s help names no source: {helps[key]}"


# ---------------------------------------------------------------- memory settings

def bracketed(path: str) -> str | None:
    try:
        text = Path(path).read_text()
    except OSError:
        return None
    return text[text.index("[") + 1:text.index("]")] if "[" in text else None


def int_file(path: str) -> int | None:
    try:
        return int(Path(path).read_text())
    except (OSError, ValueError):
        return None


def test_thp_ksm_numa_zswap_match_sysfs(machine):
    values, _ = machine
    thp = "/sys/kernel/mm/transparent_hugepage/"
    assert values["thp_enabled"] == bracketed(thp + "enabled")
    assert values["thp_defrag"] == bracketed(thp + "defrag")
    assert values["thp_shmem_enabled"] == bracketed(thp + "shmem_enabled")
    for key, path in (("ksm_run", "/sys/kernel/mm/ksm/run"), ("numa_balancing", "/proc/sys/kernel/numa_balancing")):
        assert values[key] == int_file(path), key
        if values[key] is None:
            assert path in reason(values, key)
    try:
        zswap = {"Y": True, "N": False}.get(Path("/sys/module/zswap/parameters/enabled").read_text().strip())
    except OSError:
        zswap = None
    assert values["zswap_enabled"] == zswap


# ---------------------------------------------------------------- seccomp

def own_status(name: str) -> int | None:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(name + ":"):
            return int(line.split()[1])
    return None


# Installs argv[1] allow-all filters, then execs argv[2:] (used when
# tests/seccomp_wrap.py is not there).
_FILTERS = r"""
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
insn = ctypes.create_string_buffer(struct.pack("=HBBI", 0x06, 0, 0, 0x7FFF0000))
class Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
fp = Fprog(1, ctypes.addressof(insn))
ul = ctypes.c_ulong
if libc.prctl(38, ul(1), ul(0), ul(0), ul(0)):
    sys.exit("PR_SET_NO_NEW_PRIVS: " + os.strerror(ctypes.get_errno()))
for _ in range(int(sys.argv[1])):
    if libc.prctl(22, ul(2), ctypes.byref(fp), ul(0), ul(0)):
        sys.exit("PR_SET_SECCOMP: " + os.strerror(ctypes.get_errno()))
os.execv(sys.argv[2], sys.argv[2:])
"""


def under_filters(n: int) -> list[str]:
    wrap = REPO / "tests" / "seccomp_wrap.py"
    if wrap.exists():
        return [sys.executable, str(wrap), "--filters", str(n), "--"]
    return [sys.executable, "-c", _FILTERS, str(n)]


def test_seccomp_is_the_probes_own(probe, machine):
    values, helps = machine
    mode, filters = own_status("Seccomp"), own_status("Seccomp_filters")
    if mode is None:
        assert values["seccomp_mode"] is None and "Seccomp" in reason(values, "seccomp_mode")
        pytest.skip("this kernel has no seccomp")
    # The probe inherits this process's filters, and none more.
    assert (values["seccomp_mode"], values["seccomp_filters"]) == (mode, filters)
    under, _ = sysinfo(probe, under_filters(3))
    assert under["seccomp_mode"] == 2
    if filters is not None:
        assert under["seccomp_filters"] == filters + 3
    assert "every system call" in helps["seccomp_filters"]


# ---------------------------------------------------------------- securityfs, tracefs

def mounted(fstype: str) -> str | None:
    for line in Path("/proc/self/mounts").read_text().splitlines():
        parts = line.split()
        if len(parts) > 2 and parts[2] == fstype:
            return parts[1].replace("\\040", " ")
    return None


def around_probe(probe: str, show: str, mount: tuple[str, str] | None = None) -> tuple[dict, str, str]:
    """sysinfo, with what `show` (a shell command) prints just before and just
    after it; with `mount` (type, where), all in a mount namespace of its own
    where that file system is mounted (it goes with the namespace)."""
    script = f'{show}; echo "@@"; "$0" sysinfo --json || exit 1; echo "@@"; {show}'
    argv = ["sh", "-c", script, probe]
    if mount:
        if not ROOT or not shutil.which("unshare"):
            pytest.skip(f"mounting {mount[0]} in a private mount namespace needs root and unshare (util-linux)")
        script = f"mount -t {mount[0]} {mount[0]} {mount[1]} || exit 77; {script}"
        argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, probe]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if mount and (p.returncode == 77 or (p.returncode != 0 and "unshare" in p.stderr)):
        pytest.skip(f"cannot mount {mount[0]} here: {p.stderr.strip()}")
    assert p.returncode == 0, p.stderr
    before, doc, after = p.stdout.split("@@\n")
    return {f["key"]: f["value"] for f in json.loads(doc)["fields"]}, before, after


def test_lockdown_and_lsms(probe, machine):
    values, _ = machine
    where = mounted("securityfs")
    mount = None
    if where is None:
        assert values["lockdown"] is None and values["lsms"] is None
        assert "securityfs is not mounted" in reason(values, "lockdown")
        assert "securityfs is not mounted" in reason(values, "lsms")
        if not Path("/sys/kernel/security").is_dir():
            pytest.skip("no /sys/kernel/security to mount securityfs on")
        where, mount = "/sys/kernel/security", ("securityfs", "/sys/kernel/security")
    values, shown, _ = around_probe(probe, f"cat '{where}/lsm'; echo; cat '{where}/lockdown' 2>/dev/null || echo",
                                    mount)
    lsm_line, lockdown_line = (shown.splitlines() + ["", ""])[:2]
    assert values["lsms"] == lsm_line.strip().split(",")
    if "[" in lockdown_line:
        assert values["lockdown"] == lockdown_line[lockdown_line.index("[") + 1:lockdown_line.index("]")]
    else:
        assert "lockdown" not in values["lsms"] and values["lockdown"] == "none"


def test_tracing(probe, machine):
    values, helps = machine
    where = mounted("tracefs")
    mount = None
    if where is None:
        assert values["tracing"] is None and "tracefs is not mounted" in reason(values, "tracing")
        if not Path("/sys/kernel/tracing").is_dir():
            pytest.skip("no /sys/kernel/tracing to mount tracefs on")
        where, mount = "/sys/kernel/tracing", ("tracefs", "/sys/kernel/tracing")
    elif not os.access(Path(where, "current_tracer"), os.R_OK):
        assert values["tracing"] is None and reason(values, "tracing")
        pytest.skip("tracefs is not readable here")
    show = (f"cd '{where}' && cat current_tracer tracing_on && wc -l < set_event && "
            f"(wc -l < uprobe_events 2>/dev/null || echo null) && ls instances | wc -l")
    values, before, after = around_probe(probe, show, mount)
    tr = values["tracing"]
    assert tr["path"] == where
    # The tracing state is the whole machine's: another test may change it
    # meanwhile, so the probe's value is the one read just before or just after.
    seen = {k: set() for k in ("current_tracer", "tracing_on", "enabled_events", "uprobe_events", "instances")}
    for text in (before, after):
        tracer, on, events, uprobes, instances = text.split()
        seen["current_tracer"].add(tracer)
        seen["tracing_on"].add(int(on) != 0)
        seen["enabled_events"].add(int(events))
        seen["uprobe_events"].add(None if uprobes == "null" else int(uprobes))
        seen["instances"].add(int(instances))
    for key, values_seen in seen.items():
        assert tr[key] in values_seen, (key, tr[key], values_seen)
    assert "tracefs" in helps["tracing"]


# ---------------------------------------------------------------- audit (asked, never set)

NETLINK_AUDIT, AUDIT_GET, AUDIT_LIST_RULES = 9, 1000, 1013
NLMSG_ERROR, NLMSG_DONE, NLM_F_REQUEST = 2, 3, 1


def audit_ask(msg_type: int) -> list[bytes] | int:
    """The payloads the kernel answers a read-only audit request with (until
    NLMSG_DONE for a list), or the errno it refuses it with. Only AUDIT_GET
    and AUDIT_LIST_RULES are ever sent: AUDIT_SET would change audit, and
    once audit is on, every later task pays for it until reboot."""
    assert msg_type in (AUDIT_GET, AUDIT_LIST_RULES)
    try:
        s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_AUDIT)
    except OSError as e:
        return e.errno or -1
    seq, out = 4242, []
    with s:
        s.settimeout(5)
        s.sendto(struct.pack("=IHHII", 16, msg_type, NLM_F_REQUEST, seq, 0), (0, 0))
        while True:
            data = s.recv(1 << 16)
            off = 0
            while off + 16 <= len(data):
                length, typ, _, got_seq, _ = struct.unpack_from("=IHHII", data, off)
                payload = data[off + 16:off + length]
                off += (length + 3) & ~3
                if got_seq != seq:
                    continue
                if typ == NLMSG_ERROR:
                    err = struct.unpack_from("=i", payload)[0]
                    if err:
                        return -err
                elif typ == NLMSG_DONE:
                    return out
                else:
                    out.append(payload)
                    if msg_type == AUDIT_GET:
                        return out


def test_audit_enabled_and_rules_as_the_kernel_answers(machine):
    values, helps = machine
    status = audit_ask(AUDIT_GET)
    if isinstance(status, int):
        assert values["audit_enabled"] is None and "AUDIT_GET" in reason(values, "audit_enabled"), status
        assert values["audit_rules"] is None and "AUDIT_LIST_RULES" in reason(values, "audit_rules")
        pytest.skip(f"the kernel refuses AUDIT_GET here: {os.strerror(status)}")
    enabled = struct.unpack_from("=II", status[0])[1]  # struct audit_status: mask, enabled, ...
    assert values["audit_enabled"] == enabled
    rules = audit_ask(AUDIT_LIST_RULES)
    assert values["audit_rules"] == len(rules)
    for key in ("audit_enabled", "audit_rules", "audit_ever_enabled"):
        assert "audit context" in helps[key] and "auditctl -e 0" in helps[key], key


def kernel_log_audit() -> tuple[bool, bool] | None:
    """(audit's start still in the kernel log, a record only an enabled audit
    writes), from /dev/kmsg; None when unreadable."""
    try:
        fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    start = on = False
    try:
        while True:
            try:
                rec = os.read(fd, 8192).decode(errors="replace")
            except BlockingIOError:
                break
            except BrokenPipeError:
                continue
            head, _, text = rec.partition(";")
            if not text.startswith("audit: ") or int(head.split(",")[0]) >> 3 != 0:
                continue
            start |= "state=initialized" in text
            on |= any(w in text for w in ("type=1305 ", "type=1300 ", "audit_enabled=1", "audit_enabled=2"))
    finally:
        os.close(fd)
    return start, on


def test_audit_ever_enabled_follows_its_sources(machine):
    values, _ = machine
    ever, source = values["audit_ever_enabled"], values["audit_ever_enabled_source"]
    args = dict(w.split("=", 1) for w in Path("/proc/cmdline").read_text().split("--")[0].split() if "=" in w)
    if "audit" in args:
        assert (ever, source) == (int(args["audit"], 0) != 0, "cmdline")
        return
    status = audit_ask(AUDIT_GET)
    if isinstance(status, list) and struct.unpack_from("=II", status[0])[1]:
        assert (ever, source) == (True, "audit_status")
        return
    if status == errno.EPROTONOSUPPORT:  # no audit in this kernel
        assert (ever, source) == (False, "audit_status")
        return
    log = kernel_log_audit()
    if ever is None:
        assert reason(values, "audit_ever_enabled"), "null without a reason"
        return
    assert source == "kmsg" and log is not None
    start, on = log
    if ever:
        assert on, "audit_ever_enabled is true, but the kernel log holds no record of an enabled audit"
    else:
        assert start and not on, "audit_ever_enabled is false without audit's start in the log, or with a record of it on"


# ---------------------------------------------------------------- BPF programs

BPF_PROG_LOAD, BPF_PROG_GET_NEXT_ID = 5, 11


def bpf(cmd: int, attr: ctypes.Array) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    nr = {"x86_64": 321, "aarch64": 280}.get(os.uname().machine)
    if nr is None:
        pytest.skip("the bpf() system call number is known here for x86_64 and aarch64 only")
    r = libc.syscall(ctypes.c_long(nr), ctypes.c_long(cmd), attr, ctypes.c_ulong(len(attr)))
    return r if r >= 0 else -ctypes.get_errno()


def bpf_ids() -> list[int] | int:
    ids, start = [], 0
    while True:
        attr = ctypes.create_string_buffer(struct.pack("=III", start, 0, 0), 16)
        r = bpf(BPF_PROG_GET_NEXT_ID, attr)
        if r < 0:
            return ids if r == -2 else -r  # ENOENT: the end
        start = struct.unpack_from("=II", attr.raw)[1]
        ids.append(start)


def socket_filter() -> int:
    """Loads the smallest socket filter (r0 = 0; exit): its descriptor, or -errno."""
    insns = ctypes.create_string_buffer(struct.pack("=BBhi", 0xB7, 0, 0, 0) + struct.pack("=BBhi", 0x95, 0, 0, 0))
    lic = ctypes.create_string_buffer(b"GPL")
    attr = ctypes.create_string_buffer(struct.pack("=IIQQ", 1, 2, ctypes.addressof(insns), ctypes.addressof(lic)),
                                       128)
    return bpf(BPF_PROG_LOAD, attr)


def test_bpf_programs_counted_with_their_types(probe, machine):
    values, _ = machine
    ids = bpf_ids()
    if isinstance(ids, int):
        assert values["bpf_programs"] is None and "BPF_PROG_GET_NEXT_ID" in reason(values, "bpf_programs")
        pytest.skip(f"BPF programs cannot be listed here: {os.strerror(ids)}")
    fd = socket_filter()
    if fd < 0:
        pytest.skip(f"cannot load a socket filter here: {os.strerror(-fd)}")
    try:
        before = bpf_ids()
        during, _ = sysinfo(probe)
        after = bpf_ids()
    finally:
        os.close(fd)  # the program goes with its last descriptor
    # Ours is among them whatever else happens.
    assert during["bpf_programs"] >= 1
    assert during["bpf_program_types"].get("socket_filter", 0) >= 1
    if before == after:  # else others loaded or unloaded programs meanwhile
        assert during["bpf_programs"] == len(before)
        assert sum(during["bpf_program_types"].values()) == len(before)


def test_without_root_the_privileged_fields_are_null_with_their_reason(probe):
    if not ROOT or not shutil.which("setpriv"):
        pytest.skip("dropping root needs root and setpriv (util-linux)")
    d = tempfile.mkdtemp(prefix="osmeter-test-")
    try:
        os.chmod(d, 0o755)
        copy = Path(d) / "osmeter-probe"
        shutil.copy(probe, copy)
        os.chmod(copy, 0o755)
        values, _ = sysinfo(str(copy), ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                        "--inh-caps=-all", "--bounding-set=-all"])
    finally:
        shutil.rmtree(d, ignore_errors=True)
    if audit_ask(AUDIT_GET) != errno.EPROTONOSUPPORT:
        assert values["audit_enabled"] is None and "CAP_AUDIT_CONTROL" in reason(values, "audit_enabled")
        assert values["audit_rules"] is None and "CAP_AUDIT_CONTROL" in reason(values, "audit_rules")
    if not isinstance(bpf_ids(), int):
        assert values["bpf_programs"] is None and "CAP_SYS_ADMIN" in reason(values, "bpf_programs")
    if values["audit_ever_enabled"] is None:
        assert reason(values, "audit_ever_enabled")
    assert values["seccomp_mode"] == own_status("Seccomp")


def test_the_text_form_says_what_the_numbers_mean(machine):
    from osmeter.sysinfo import CODED_KEYS, display_value, null_reason

    values, _ = machine
    for key, meanings in CODED_KEYS.items():
        v = values.get(key)
        if isinstance(v, int) and v in meanings:
            assert display_value(key, v) == f"{v} ({meanings[v]})"
    assert display_value("seccomp_mode", 2) == "2 (filter)"
    assert display_value("audit_ever_enabled", True).startswith("yes (every task since has an audit context")
    assert display_value("bpf_program_types", {}) == "none"
    assert display_value("bpf_program_types", {"socket_filter": 1}) == "socket_filter: 1"
    for key, why in values["null_reasons"].items():
        assert null_reason(values, key) == why
    assert null_reason({}, "lockdown") is None  # a run of an older probe
