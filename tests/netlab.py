"""A "remote machine" for tests: a network namespace behind a veth pair,
optionally rate-limited; on it an `osmeter-probe serve` peer, or a
directory mounted here with sshfs.

    with namespace_lab(rate_bit_s=100_000_000, ends="both") as lab:
        peer = lab.serve_peer(probe)      # osmeter-probe serve on lab.remote_ip
        ... --param peer={peer.address} --param token_file={peer.token_file} ...
        lab.set_rate(None)                # the link at full speed
        lab.set_rate(1_000_000_000, ends="both")

    with remote_dir(rate_bit_s=100_000_000) as lab:
        ... lab.mount ...            # a fuse.sshfs mount of lab.served
        lab.set_rate(None)           # the link at full speed
        lab.set_rate(100_000_000)    # limited again

What `namespace_lab` builds (root; ip and tc from iproute2):
- a network namespace `osmeter-lab.<pid>` (the "remote machine"),
- a veth pair, `osmlh<pid>` here and `osmln<pid>` in the namespace, with
  private addresses from a /30 of 10.254.0.0/16 (the host .1, the remote .2),
  MTU 1500 (a veth's default, as an Ethernet link),
- optionally a TBF qdisc on the namespace's end of the veth (the remote's
  egress towards us, `ends="remote"`), on the host's end (our egress
  towards it, `ends="host"`) or on both (BURST and LATENCY below say why
  those sizes),
- processes started in the namespace (`lab.start`, `lab.serve_peer`:
  `ip netns exec NS osmeter-probe serve --listen REMOTE_IP:PORT
  --token-file F` with a token made for this lab alone), each logging to
  the lab's directory.

`remote_dir` builds on it (and needs openssh-server, sshfs and /dev/fuse
too): sshd from openssh-server running inside the namespace
(`ip netns exec NS /usr/sbin/sshd -D -e -f CONFIG`), listening on the
remote address only, with a host key and an authorized key for root made
for this lab alone, no PAM, no DNS look-ups, the SFTP server in-process,
and a directory `served` that sshd serves, mounted at `mount` with sshfs
(non-interactive: the lab's key, no host-key check or record, BatchMode).
Its rate limit is on the remote's egress, the direction read data flows.

The namespace shares the file systems with the host: `served` is an
ordinary directory, so the remote's files and the remote's page cache are
this machine's; what makes the files remote is that every byte of them
crosses the veth inside SSH and SFTP, as it would over a real network.

sshd needs its privilege-separation directory /run/sshd, which Debian's
service creates. The lab does not create it on the host: sshd runs in the
mount namespace `ip netns exec` makes for it, with a private tmpfs on /run.

Teardown (on every path, a failing test included): the sshfs mount
(fusermount3 -u, else umount -l), the sshfs process, sshd, the peer and
every other process in the namespace or started by the lab, the veth pair
and its qdiscs, the namespace, the keys, the token and the directories. A
lab left behind by a process that is gone (a test run killed with SIGKILL)
is removed when the next one starts, its processes included.
"""


from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Iterator, Sequence

NAME = "osmeter-lab"  # the namespace "osmeter-lab.<pid>", the directory "osmeter-lab.<pid>.XXXXXX"
HOST_IF, REMOTE_IF = "osmlh", "osmln"  # + pid: at most 12 of the 15 characters an interface name may have
SUBNET = ipaddress.IPv4Network("10.254.0.0/16")  # cut into /30s, one per lab
SSH_PORT = 22
# The SSH cipher is pinned so that the overhead per SSH packet is known:
# chacha20-poly1305 (OpenSSH's default) has an 8-byte block and a 16-byte tag.
CIPHER = "chacha20-poly1305@openssh.com"
# sshfs's SFTP read request size (its default, pinned for the same reason).
SFTP_READ = 32768
# TBF bucket. BURST is how much may leave at line speed after the link has
# been idle, so it is an error term of any rate measured over a few
# megabytes: 32 KiB is 2 % of one 1 MiB block and 0.05 % of a 64 MiB pass.
# Too small a bucket loses rate instead: while the queue waits for tokens,
# the qdisc's hrtimer watchdog may fire late, and tokens beyond the bucket
# are lost; 32 KiB is 2.6 ms of traffic at 100 Mbit/s, far more than that
# lateness (the old rule of thumb rate/HZ, 50 kB here, dates from TBF's
# jiffy timer). It holds 21 full 1514-byte frames (TBF drops a packet
# bigger than the bucket; a 64 KiB GSO packet is cut into segments first).
# LATENCY bounds the queue: 50 ms at 100 Mbit/s is
# 625 kB, far above the link's bandwidth-delay product (a veth's round trip
# is tens of microseconds), so TCP keeps the queue from ever running empty
# and the link is busy all the time data is asked for.
BURST = "32kb"
# Faster links get the same 2.6 ms of traffic in their bucket (1 Gbit/s:
# 325 kB, 0.13 % of the 250 MB a two-second transfer moves): burst_bytes().
BURST_S = 0.0026
LATENCY = "50ms"
READY_S = 15.0  # sshd must answer, sshfs must mount, a peer must listen within this
PEER_PORT = 7478  # osmeter-probe serve's default port (docs/peer.md)
ENDS = ("remote", "host", "both")

# The tools the labs need and the Debian package of each: the namespace
# lab's, then remote_dir's.
NS_TOOLS = {"ip": "iproute2", "tc": "iproute2"}
SSH_TOOLS = {**NS_TOOLS, "sshd": "openssh-server", "ssh": "openssh-client", "ssh-keygen": "openssh-client"}
TOOLS = {**SSH_TOOLS, "sshfs": "sshfs", "fusermount3": "fuse3"}
SBIN = ("/usr/sbin", "/sbin", "/usr/bin", "/bin")


def tool(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for d in SBIN:
        if os.access(os.path.join(d, name), os.X_OK):
            return os.path.join(d, name)
    return None


def missing(files: bool = True) -> str | None:
    """Why no lab can be built here (with the packages to install), or None.
    `files`: remote_dir's lab (sshd, sshfs, FUSE); else namespace_lab's."""
    if os.geteuid() != 0:
        if files:
            return "the remote-file lab needs root (a network namespace, a veth pair, a qdisc, a FUSE mount)"
        return "the network lab needs root (a network namespace, a veth pair, a qdisc)"
    tools = TOOLS if files else NS_TOOLS
    absent = [n for n in tools if tool(n) is None]
    if absent:
        packages = " ".join(sorted({tools[n] for n in absent}))
        return f"{', '.join(absent)} missing (Debian: apt-get install {packages})"
    if files and not os.path.exists("/dev/fuse"):
        return "/dev/fuse is missing: sshfs cannot mount (load the fuse module: modprobe fuse)"
    return None


def run(*argv: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise RuntimeError(f"`{' '.join(argv)}` failed ({p.returncode}): {p.stderr.strip() or p.stdout.strip()}")
    return p


def in_ns(ns: str, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run(tool("ip") or "ip", "netns", "exec", ns, *argv, check=check)


def burst_bytes(rate_bit_s: int) -> int:
    """TBF's bucket for a rate: BURST (32 KiB), or BURST_S of traffic when that is more."""
    return max(32 * 1024, int(rate_bit_s / 8 * BURST_S))


@dataclass
class Peer:
    """An `osmeter-probe serve` in the lab's namespace."""

    address: str  # "REMOTE_IP:PORT", for --param peer=
    token_file: Path  # for --param token_file=
    proc: "subprocess.Popen[bytes]"
    log: Path


@dataclass
class Lab:
    ns: str
    host_if: str
    remote_if: str
    host_ip: str
    remote_ip: str
    root: Path  # the lab's private directory: keys, configs, tokens, logs
    rate_bit_s: int | None = None  # the TBF's rate (None: none)
    rate_ends: str | None = None  # where it is: "remote", "host" or "both"
    procs: list["subprocess.Popen[bytes]"] = field(default_factory=list)  # started by start(), stopped at exit

    def set_rate(self, rate_bit_s: int | None, ends: str = "remote") -> None:
        """A TBF of `rate_bit_s` on the egress of `ends` ("remote": the
        namespace's end, towards us; "host": ours, towards it; "both"), or
        none anywhere (None: full speed)."""
        if ends not in ENDS:
            raise ValueError(f"ends={ends!r}: one of {', '.join(ENDS)}")
        tc = tool("tc") or "tc"
        for end in ("remote", "host"):
            if rate_bit_s is not None and ends in (end, "both"):
                argv = ["qdisc", "replace", "dev", self._dev(end), "root", "tbf", "rate", f"{rate_bit_s}bit",
                        "burst", BURST if burst_bytes(rate_bit_s) == 32 * 1024 else str(burst_bytes(rate_bit_s)),
                        "latency", LATENCY]
            else:
                argv = ["qdisc", "del", "dev", self._dev(end), "root"]
            if end == "remote":
                in_ns(self.ns, tc, *argv, check=rate_bit_s is not None and ends in (end, "both"))
            else:
                run(tc, *argv, check=rate_bit_s is not None and ends in (end, "both"))
        self.rate_bit_s, self.rate_ends = (rate_bit_s, ends) if rate_bit_s is not None else (None, None)

    def _dev(self, end: str) -> str:
        return self.remote_if if end == "remote" else self.host_if

    def qdisc(self, end: str = "remote") -> str:
        """`tc qdisc show` of one end of the veth."""
        tc = tool("tc") or "tc"
        if end == "remote":
            return in_ns(self.ns, tc, "qdisc", "show", "dev", self.remote_if).stdout
        return run(tc, "qdisc", "show", "dev", self.host_if).stdout

    def start(self, argv: Sequence[str], log_name: str, cpu: int | None = None) -> "subprocess.Popen[bytes]":
        """`argv` running in the namespace (pinned to `cpu` if given), its
        output in ROOT/log_name; stopped when the lab goes."""
        pin = [tool("taskset") or "taskset", "-c", str(cpu)] if cpu is not None else []
        with open(self.root / log_name, "wb") as out:
            proc = subprocess.Popen([tool("ip") or "ip", "netns", "exec", self.ns, *pin, *argv],
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        self.procs.append(proc)
        return proc

    def serve_peer(self, probe: str, port: int = PEER_PORT, cpu: int | None = None) -> Peer:
        """`osmeter-probe serve` on the remote address with a token of its own,
        once it accepts connections (a bare connect is accepted and closed)."""
        token = self.root / f"token.{port}"
        fd = os.open(token, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(16) + "\n")
        log = self.root / f"peer.{port}.log"
        proc = self.start([probe, "serve", "--listen", f"{self.remote_ip}:{port}", "--token-file", str(token)],
                          log.name, cpu)
        _wait_listening(self.remote_ip, port, proc, log, "the peer (osmeter-probe serve)")
        return Peer(f"{self.remote_ip}:{port}", token, proc, log)


@dataclass
class RemoteDir(Lab):
    served: Path = Path()  # the remote's directory (on this machine's disk)
    mount: Path = Path()  # its sshfs mount


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _namespaces() -> list[str]:
    p = run(tool("ip") or "ip", "netns", "list", check=False)
    return [line.split()[0] for line in p.stdout.splitlines() if line.strip()]


def _mounts() -> list[tuple[str, str]]:
    """(mount point, file system type) of every mount, innermost last."""
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            dash = fields.index("-")
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
            out.append((point, fields[dash + 1]))
    return out


def _unmount(point: str) -> None:
    """Unmount a FUSE mount: fusermount3 -u, then lazily if it is busy."""
    if not any(p == point for p, _ in _mounts()):
        return
    run(tool("fusermount3") or "fusermount3", "-u", point, check=False)
    if any(p == point for p, _ in _mounts()):
        run(tool("fusermount3") or "fusermount3", "-u", "-z", point, check=False)
    if any(p == point for p, _ in _mounts()):
        run("umount", "-l", point, check=False)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _kill_ns_processes(ns: str) -> None:
    p = run(tool("ip") or "ip", "netns", "pids", ns, check=False)
    for word in p.stdout.split():
        if word.isdigit():
            _kill(int(word))


def _lab_processes(tmp: str | None = None) -> list[tuple[int, int, str]]:
    """(pid, lab owner's pid, command) of every process whose arguments name
    a lab's directory (sshd's config, sshfs's served directory, the peer's
    token file): what a lab started, in its namespace or not."""
    tmp = tmp or tempfile.gettempdir()
    mark = re.compile(rf"{re.escape(tmp)}/{re.escape(NAME)}\.(\d+)\.")
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        text = " ".join(a.decode(errors="replace") for a in argv if a)
        m = mark.search(text)
        if m:
            found.append((int(entry.name), int(m.group(1)), text[:120]))
    return found


def _remove_ns(ns: str, host_if: str) -> None:
    _kill_ns_processes(ns)
    ip = tool("ip") or "ip"
    run(ip, "link", "del", host_if, check=False)  # takes its peer (and the qdisc) with it
    for _ in range(100):  # the namespace goes once its last process has been reaped
        run(ip, "netns", "del", ns, check=False)  # again: under load one can fail while a process exits
        if ns not in _namespaces():
            return
        time.sleep(0.05)
        _kill_ns_processes(ns)


def _remove_dir(root: Path) -> None:
    """The lab's directory, unless a mount is still inside it (rmtree would
    then reach into the mounted file system)."""
    prefix = str(root) + "/"
    if any(p == str(root) or p.startswith(prefix) for p, _ in _mounts()):
        return
    shutil.rmtree(root, ignore_errors=True)


def remove_stale(tmp: str | None = None) -> list[str]:
    """Remove labs whose process is gone (a test run killed outright).
    Returns what was removed."""
    removed = []
    tmp = tmp or tempfile.gettempdir()
    stale_dir = re.compile(rf"{re.escape(tmp)}/{re.escape(NAME)}\.(\d+)\.[^/]+")
    for point, fstype in reversed(_mounts()):
        m = stale_dir.match(point)
        if m and fstype.startswith("fuse") and not _alive(int(m.group(1))):
            _unmount(point)
            removed.append(point)
    for pid, owner, what in _lab_processes(tmp):
        if not _alive(owner):
            _kill(pid)
            removed.append(f"process {pid} ({what})")
    for ns in _namespaces():
        m = re.fullmatch(rf"{re.escape(NAME)}\.(\d+)(?:-(\d+))?", ns)
        if m and not _alive(int(m.group(1))):
            _remove_ns(ns, f"{HOST_IF}{m.group(1)}{_if_suffix(int(m.group(2) or 0))}")
            removed.append(f"netns {ns}")
    ip = tool("ip") or "ip"
    for line in run(ip, "-o", "link", "show", check=False).stdout.splitlines():
        m = re.search(rf"\d+: ({HOST_IF}(\d+)[a-z]?)[@:]", line)
        if m and not _alive(int(m.group(2))):
            run(ip, "link", "del", m.group(1), check=False)
            removed.append(f"link {m.group(1)}")
    for entry in Path(tmp).glob(f"{NAME}.*"):
        m = re.fullmatch(rf"{re.escape(NAME)}\.(\d+)\.\w+", entry.name)
        if m and entry.is_dir() and not entry.is_symlink() and not _alive(int(m.group(1))):
            _remove_dir(entry)
            removed.append(str(entry))
    return removed


def _if_suffix(index: int) -> str:  # lab `index` of a process: a letter after the pid in its interfaces' names
    return chr(ord("a") + index - 1) if index else ""


def _free_subnet(pid: int) -> ipaddress.IPv4Network:
    """A /30 of SUBNET that no interface here uses, the first try chosen by pid."""
    used = run(tool("ip") or "ip", "-o", "-4", "addr", "show", check=False).stdout
    in_use = {ipaddress.IPv4Interface(m).network for m in re.findall(r"inet (\S+)", used)}
    nets = list(SUBNET.subnets(new_prefix=30))
    for k in range(len(nets)):
        net = nets[(pid + k) % len(nets)]
        if not any(net.overlaps(u) for u in in_use):
            return net
    raise RuntimeError(f"no free /30 in {SUBNET} for the lab")


SSHD_CONFIG = """\
ListenAddress {ip}:{port}
AddressFamily inet
HostKey {root}/host_key
PidFile none
AuthorizedKeysFile {root}/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
UseDNS no
StrictModes no
X11Forwarding no
AllowTcpForwarding no
AllowAgentForwarding no
PermitTunnel no
PrintMotd no
PrintLastLog no
Compression no
Ciphers {cipher}
Subsystem sftp internal-sftp
LogLevel ERROR
"""


def _wait_sshd(ip: str, sshd: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        if sshd.poll() is not None:
            raise RuntimeError(f"sshd in the lab exited ({sshd.returncode}): {log.read_text().strip()}")
        try:
            with socket.create_connection((ip, SSH_PORT), timeout=1) as s:
                if s.recv(64).startswith(b"SSH-"):
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"sshd in the lab did not answer on {ip}:{SSH_PORT} within {READY_S} s: {log.read_text()}")


def _wait_listening(ip: str, port: int, proc: subprocess.Popen[bytes], log: Path, what: str) -> None:
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} in the lab exited ({proc.returncode}): {log.read_text().strip()}")
        try:
            with socket.create_connection((ip, port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on {ip}:{port} within {READY_S} s: {log.read_text()}")


def _wait_mount(point: Path, sshfs: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        if any(p == str(point) and t == "fuse.sshfs" for p, t in _mounts()):
            return
        if sshfs.poll() is not None:
            raise RuntimeError(f"sshfs exited ({sshfs.returncode}) before mounting: {log.read_text().strip()}")
        time.sleep(0.05)
    raise RuntimeError(f"sshfs did not mount {point} within {READY_S} s: {log.read_text()}")


def _stop(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
    proc.wait()


def _start_sshd(lab: Lab) -> subprocess.Popen[bytes]:
    keygen = tool("ssh-keygen") or "ssh-keygen"
    run(keygen, "-q", "-t", "ed25519", "-N", "", "-C", "osmeter-lab host", "-f", str(lab.root / "host_key"))
    run(keygen, "-q", "-t", "ed25519", "-N", "", "-C", "osmeter-lab client", "-f", str(lab.root / "client_key"))
    shutil.copyfile(lab.root / "client_key.pub", lab.root / "authorized_keys")
    (lab.root / "sshd_config").write_text(SSHD_CONFIG.format(ip=lab.remote_ip, port=SSH_PORT, root=lab.root,
                                                             cipher=CIPHER))
    return run_sshd(lab)


def run_sshd(lab: Lab) -> subprocess.Popen[bytes]:
    """sshd in the lab's namespace with the lab's config (again, after it was killed)."""
    config = lab.root / "sshd_config"
    # A private /run (in the mount namespace `ip netns exec` makes) holds the
    # privilege-separation directory sshd insists on; the host's /run is untouched.
    script = 'mount -t tmpfs -o mode=0755,size=1m osmeter-lab /run && mkdir -m 0755 /run/sshd && exec "$0" "$@"'
    sshd = ["sh", "-c", script, tool("sshd") or "/usr/sbin/sshd"]
    in_ns(lab.ns, *sshd, "-t", "-f", str(config))  # a config error is reported now, in words
    proc = lab.start([*sshd, "-D", "-e", "-f", str(config)], "sshd.log")
    _wait_sshd(lab.remote_ip, proc, lab.root / "sshd.log")
    return proc


def _mount(lab: RemoteDir) -> subprocess.Popen[bytes]:
    options = ",".join([
        f"IdentityFile={lab.root / 'client_key'}",
        "IdentitiesOnly=yes",
        "StrictHostKeyChecking=no",
        "UserKnownHostsFile=/dev/null",
        "BatchMode=yes",
        "LogLevel=ERROR",
        "ConnectTimeout=10",
        f"Ciphers={CIPHER}",
        "Compression=no",
        f"max_read={SFTP_READ}",
    ])
    log = lab.root / "sshfs.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([tool("sshfs") or "sshfs", "-f", "-F", "/dev/null", "-o", options,
                                 f"root@{lab.remote_ip}:{lab.served}", str(lab.mount)],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    lab.procs.append(proc)
    _wait_mount(lab.mount, proc, log)
    return proc


@contextmanager
def namespace_lab(rate_bit_s: int | None = None, ends: str = "remote", index: int = 0) -> Iterator[Lab]:
    """The namespace, the veth pair and a TBF of `rate_bit_s` on `ends`
    (see the module's docstring); everything is removed on exit, the
    processes the lab started included. `index` > 0: another lab of this
    process (`osmeter-lab.<pid>-<index>`, interfaces with a letter after the pid)."""
    why = missing(files=False)
    if why:
        raise RuntimeError(why)
    remove_stale()
    pid = os.getpid()
    ns = f"{NAME}.{pid}" + (f"-{index}" if index else "")
    if ns in _namespaces():
        raise RuntimeError(f"a lab of this process ({ns}) is already up: one at a time")
    net = _free_subnet(pid)
    root = Path(tempfile.mkdtemp(prefix=f"{NAME}.{pid}."))
    host_ip, remote_ip = (str(a) for a in list(net.hosts())[:2])
    lab = Lab(ns, f"{HOST_IF}{pid}{_if_suffix(index)}", f"{REMOTE_IF}{pid}{_if_suffix(index)}", host_ip, remote_ip,
              root)
    try:
        ip = tool("ip") or "ip"
        run(ip, "netns", "add", ns)
        run(ip, "link", "add", lab.host_if, "type", "veth", "peer", "name", lab.remote_if, "netns", ns)
        run(ip, "addr", "add", f"{host_ip}/30", "dev", lab.host_if)
        run(ip, "link", "set", lab.host_if, "up")
        in_ns(ns, ip, "addr", "add", f"{remote_ip}/30", "dev", lab.remote_if)
        in_ns(ns, ip, "link", "set", lab.remote_if, "up")
        in_ns(ns, ip, "link", "set", "lo", "up")
        if rate_bit_s is not None:
            lab.set_rate(rate_bit_s, ends)
        yield lab
    finally:
        for proc in reversed(lab.procs):
            _stop(proc)
        _remove_ns(ns, lab.host_if)
        _remove_dir(root)


@contextmanager
def remote_dir(rate_bit_s: int | None = None) -> Iterator[RemoteDir]:
    """The remote-file lab (see the module's docstring): a namespace lab with
    sshd in it and its directory mounted here; everything is removed on exit."""
    why = missing()
    if why:
        raise RuntimeError(why)
    with namespace_lab(rate_bit_s) as base:
        lab = RemoteDir(**{f.name: getattr(base, f.name) for f in fields(Lab)},
                        served=base.root / "served", mount=base.root / "mnt")
        try:
            lab.served.mkdir()
            lab.mount.mkdir()
            _start_sshd(lab)
            _mount(lab)
            yield lab
        finally:
            _unmount(str(lab.mount))
            for proc in reversed(lab.procs):  # sshfs, then sshd: the namespace lab stops any left
                _stop(proc)


ABANDON = """
import sys, time
sys.path.insert(0, {tests!r})
import netlab
{body}
    time.sleep(600)
"""


def abandoned_lab(body: str) -> tuple[int, list[str]]:
    """A lab left behind: `body` (a `with netlab...() as lab:` block that
    prints one line of words) runs in a child process, which is killed with
    SIGKILL once it has printed, so no teardown runs. Returns the child's
    pid (the lab's owner) and the printed words."""
    code = ABANDON.format(tests=str(Path(__file__).resolve().parent), body=body.strip("\n"))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        words = proc.stdout.readline().split()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    return proc.pid, words


def leftovers(pid: int | None = None) -> list[str]:
    """What a lab of process `pid` (default: this one) left: namespace,
    links, mounts, directories, processes. Empty after a clean teardown."""
    pid = os.getpid() if pid is None else pid
    found = [f"netns {n}" for n in _namespaces() if re.fullmatch(rf"{re.escape(NAME)}\.{pid}(-\d+)?", n)]
    links = run(tool("ip") or "ip", "-o", "link", "show", check=False).stdout
    found += [f"link {m}" for m in re.findall(rf"\d+: ({HOST_IF}{pid}[a-z]?)[@:]", links)]
    tmp = tempfile.gettempdir()
    found += [f"mount {p}" for p, _ in _mounts() if p.startswith(f"{tmp}/{NAME}.{pid}.")]
    found += [str(p) for p in Path(tmp).glob(f"{NAME}.{pid}.*")]
    found += [f"process {p} ({what})" for p, owner, what in _lab_processes(tmp) if owner == pid]
    return found
