"""Helpers for the peer's tests: a running `osmeter-probe serve`, a client
that speaks the hello (docs/peer.md), the peer's processes and memory,
and a network namespace behind a veth pair (a non-loopback address)."""
from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import pytest

import netlab
from task_helpers import children, wait_gone

READY_S = 10.0
LISTENING = re.compile(r"listening on \[?([0-9a-fA-F.:]+)\]?:(\d+) \(")


class Peer:
    """`osmeter-probe serve ARGS`; its stderr is read all the time (a full
    pipe would stop the peer) and kept in `lines`."""

    def __init__(self, argv: Sequence[str], env: dict[str, str] | None = None) -> None:
        self.argv = list(argv)
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True, env=env)
        self.lines: list[str] = []
        self.ready = threading.Event()
        self.host, self.port = "", 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            m = LISTENING.search(line)
            if m and not self.ready.is_set():
                self.host, self.port = m.group(1), int(m.group(2))
                self.ready.set()
        self.ready.set()

    def wait_ready(self) -> "Peer":
        self.ready.wait(READY_S)
        assert self.port, f"the peer did not say where it listens: {self.stderr()}"
        return self

    @property
    def addr(self) -> tuple[str, int]:
        return self.host, self.port

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stderr(self) -> str:
        return "".join(self.lines)

    def sessions(self) -> list[int]:
        return children(self.pid)

    def rss_kib(self) -> int:
        m = re.search(r"^VmRSS:\s+(\d+) kB", Path(f"/proc/{self.pid}/status").read_text(), re.M)
        assert m
        return int(m.group(1))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        rc = self.proc.wait(timeout)
        self.reader.join(5)
        return rc

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@contextmanager
def serving(probe: str, *args: str, listen: str = "127.0.0.1:0", prefix: Sequence[str] = (),
            env: dict[str, str] | None = None) -> Iterator[Peer]:
    """A peer for the length of the block; killed on every way out, and
    none of its session processes may outlive it."""
    peer = Peer([*prefix, probe, "serve", "--listen", listen, *args], env=env)
    try:
        yield peer.wait_ready()
    finally:
        kids = peer.sessions() if peer.alive() else []
        peer.kill()
        peer.reader.join(5)
        assert not wait_gone(kids), f"session processes outlived the peer: {kids}"
        # A sanitized probe (tests/probe/test_c_build.py builds one) reports here.
        assert "runtime error" not in peer.stderr() and "Sanitizer" not in peer.stderr(), peer.stderr()


def read_line(s: socket.socket, limit: int = 600) -> str:
    """One line, read byte by byte (what follows belongs to the session);
    "" when the peer closed first."""
    out = b""
    while not out.endswith(b"\n") and len(out) < limit:
        try:
            b = s.recv(1)
        except ConnectionResetError:
            break
        if not b:
            break
        out += b
    return out.decode("ascii", "replace").rstrip("\n")


def hello(addr: tuple[str, int], service: str, *words: str, token: str | None = None,
          timeout: float = 10.0) -> tuple[socket.socket, str]:
    """A session: the connected socket and the peer's answer line."""
    s = socket.create_connection(addr, timeout=timeout)
    line = " ".join(["OSMPEER", "1", service, *([f"token={token}"] if token else []), *words]) + "\n"
    s.sendall(line.encode())
    return s, read_line(s)


def recv_exactly(s: socket.socket, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        b = s.recv(n - len(out))
        if not b:
            break
        out += b
    return bytes(out)


def assert_serves(addr: tuple[str, int], token: str | None = None) -> None:
    """An honest client gets an echo session and its bytes back."""
    s, ans = hello(addr, "echo", token=token)
    with s:
        assert ans.startswith("OK "), ans
        msg = os.urandom(3000)
        s.sendall(msg)
        assert recv_exactly(s, len(msg)) == msg


def reset_close(s: socket.socket) -> None:
    """Vanish: close with an RST (SO_LINGER 0), as a crashed client would."""
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    s.close()


def wait_until(cond, timeout: float = 10.0, step: float = 0.05) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(step)
    return cond()


# ---- a non-loopback address: a namespace behind a veth pair ------------

NS_PREFIX, HOST_IF, REMOTE_IF = "osmpeer", "osmpph", "osmppn"


@dataclass
class Remote:
    ns: str
    host_if: str
    host_ip: str
    remote_ip: str

    def exec_prefix(self) -> list[str]:
        return [netlab.tool("ip") or "ip", "netns", "exec", self.ns]


def remote_missing() -> str | None:
    if os.geteuid() != 0:
        return "a network namespace and a veth pair need root"
    if netlab.tool("ip") is None:
        return "ip is missing (Debian: apt-get install iproute2)"
    return None


def _remove_stale() -> None:
    for ns in netlab._namespaces():
        m = re.fullmatch(rf"{NS_PREFIX}(\d+)", ns)
        if m and not netlab._alive(int(m.group(1))):
            netlab._remove_ns(ns, f"{HOST_IF}{m.group(1)}")


@contextmanager
def remote_namespace() -> Iterator[Remote]:
    """A namespace `osmpeer<pid>` reached over a veth pair: 10.253.x.1 here,
    10.253.x.2 there (a /30 chosen from the pid). Removed on every way out."""
    why = remote_missing()
    if why:
        pytest.skip(why)
    _remove_stale()
    pid = os.getpid()
    ns, host_if, remote_if = f"{NS_PREFIX}{pid}", f"{HOST_IF}{pid}", f"{REMOTE_IF}{pid}"
    base = f"10.253.{(pid >> 6) & 0xff}.{(pid & 63) << 2}"
    prefix = base.rsplit(".", 1)[0]
    last = int(base.rsplit(".", 1)[1])
    remote = Remote(ns, host_if, f"{prefix}.{last + 1}", f"{prefix}.{last + 2}")
    ip = netlab.tool("ip") or "ip"
    try:
        netlab.run(ip, "netns", "add", ns)
        netlab.run(ip, "link", "add", host_if, "type", "veth", "peer", "name", remote_if, "netns", ns)
        netlab.run(ip, "addr", "add", f"{remote.host_ip}/30", "dev", host_if)
        netlab.run(ip, "link", "set", host_if, "up")
        netlab.run(ip, "-n", ns, "addr", "add", f"{remote.remote_ip}/30", "dev", remote_if)
        netlab.run(ip, "-n", ns, "link", "set", remote_if, "up")
        netlab.run(ip, "-n", ns, "link", "set", "lo", "up")
        yield remote
    finally:
        netlab._remove_ns(ns, host_if)
