"""One kernel booted under qemu-system-x86_64 (docs/kernels.md, "The VM").

The VM has nothing but what the measurement needs (-nodefaults): the
kernel and our initramfs, two serial ports (ttyS0 the kernel's console,
kept as the console log; ttyS1 the data channel, osmeter.kernels.channel),
N vCPUs and M MiB. It starts paused (-S); through its QMP socket the vCPU
threads are pinned to host CPUs (one each) before it runs (`cont`). The
kernel powers off at the end (the probe as init calls reboot(2)); a panic
reboots at once (panic=-1) and -no-reboot turns that into qemu's exit too.
A guest past its time limit is killed, qemu and everything in its process
group; so is one still running when osmeter is interrupted.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from .. import textsafe
from ..errors import UsageError
from . import cleanup

QEMU = "qemu-system-x86_64"
BASE_APPEND = ("console=ttyS0", "panic=-1", "osmeter.channel=/dev/ttyS1")
QMP_TIMEOUT_S = 20.0
CONSOLE_TAIL_LINES = 25
MAX_CHANNEL_BYTES = 1024 * 1024 * 1024


@dataclass(frozen=True)
class Machine:
    """The VM each kernel gets (the same for all of a group)."""

    accel: str  # "kvm" or "tcg"
    cpus: int
    memory_mib: int
    append: tuple[str, ...] = ()  # the user's kernel parameters, after ours
    pin: tuple[int, ...] = ()  # host CPU of vCPU i; () leaves them unpinned
    qemu: str = QEMU

    @property
    def emulated(self) -> bool:
        return self.accel == "tcg"

    def cmdline(self) -> str:
        return " ".join([*BASE_APPEND, *self.append])


def check_append(words: Sequence[str]) -> tuple[str, ...]:
    """--append's kernel parameters (each value split as a shell would), after
    osmeter's own; a later parameter wins in the kernel, so `console=` or
    `rdinit=` given here replace osmeter's (docs/kernels.md)."""
    out: list[str] = []
    for text in words:
        try:
            parts = shlex.split(text)
        except ValueError as e:
            raise UsageError(f"--append {text!r}: {e}") from None
        for p in parts:
            if any(c in p for c in "\n\0") or not p.isprintable():
                raise UsageError(f"--append: {p!r} holds a control character")
            out.append(p)
    if len(" ".join([*BASE_APPEND, *out])) > 2000:
        raise UsageError("--append: the kernel command line would exceed 2000 bytes")
    return tuple(out)


def argv(machine: Machine, kernel: Path, initrd: Path, workdir: Path) -> list[str]:
    """qemu's command line (stored with the run)."""
    accel = ["-accel", "kvm", "-cpu", "host"] if machine.accel == "kvm" else ["-accel", "tcg", "-cpu", "max"]
    return [
        machine.qemu, "-name", "osmeter-guest", "-nodefaults", "-no-user-config", "-nographic",
        *accel, "-smp", str(machine.cpus), "-m", f"{machine.memory_mib}M",
        "-kernel", str(kernel), "-initrd", str(initrd), "-append", machine.cmdline(),
        "-chardev", f"file,id=console,path={workdir / 'console.log'}", "-serial", "chardev:console",
        "-chardev", f"file,id=data,path={workdir / 'channel'}", "-serial", "chardev:data",
        "-qmp", f"unix:{workdir / 'qmp.sock'},server=on,wait=off", "-S", "-no-reboot",
    ]


@dataclass
class BootOutcome:
    status: str  # "ended" (qemu exited by itself), "timeout", "no-start", "too-much" (the channel past its bound)
    returncode: int | None
    seconds: float
    channel: bytes
    console_tail: list[str]
    qemu_message: str = ""
    pinned: dict[int, int] = field(default_factory=dict)  # vCPU -> host CPU
    panic: str | None = None  # the console's "Kernel panic - not syncing: ..." line


class Qmp:
    """A minimal QMP client: one command at a time, events skipped."""

    def __init__(self, path: Path, proc: subprocess.Popen, timeout: float = QMP_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        while True:
            try:
                self.sock.connect(str(path))
                break
            except (FileNotFoundError, ConnectionRefusedError):
                if proc.poll() is not None or time.monotonic() > deadline:
                    self.sock.close()
                    raise OSError("qemu's QMP socket never opened") from None
                time.sleep(0.05)
        self.sock.settimeout(timeout)
        self.buf = b""
        self._message()  # the greeting
        self.execute("qmp_capabilities")

    def _message(self) -> dict:
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise OSError("qemu closed its QMP socket")
            self.buf += chunk
            if len(self.buf) > 1 << 20:
                raise OSError("qemu's QMP reply is too long")
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def execute(self, command: str) -> object:
        self.sock.sendall(json.dumps({"execute": command}).encode() + b"\n")
        while True:
            msg = self._message()
            if "return" in msg:
                return msg["return"]
            if "error" in msg:
                raise OSError(f"QMP {command}: {msg['error'].get('desc', msg['error'])}")

    def close(self) -> None:
        self.sock.close()


def _pin(qmp: Qmp, pin: Sequence[int]) -> dict[int, int]:
    """Each vCPU thread to its host CPU (sched_setaffinity on the thread id)."""
    done: dict[int, int] = {}
    if not pin:
        return done
    cpus = qmp.execute("query-cpus-fast")
    for cpu in cpus if isinstance(cpus, list) else []:
        index, tid = cpu.get("cpu-index"), cpu.get("thread-id")
        if isinstance(index, int) and isinstance(tid, int) and index < len(pin):
            os.sched_setaffinity(tid, {pin[index]})
            done[index] = pin[index]
    return done


def console_tail(path: Path, lines: int = CONSOLE_TAIL_LINES) -> list[str]:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - 64 * 1024))
            text = f.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    kept = [textsafe.line(t.rstrip("\r")) for t in text.split("\n") if t.strip()]
    return kept[-lines:]


def panic_line(path: Path) -> str | None:
    """The kernel's panic message in the console log (its last 1 MiB), if it panicked."""
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - 1024 * 1024))
            text = f.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    at = text.rfind("Kernel panic - not syncing")
    if at < 0:
        return None
    return textsafe.line(text[at:].split("\n", 1)[0].strip())


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _read_channel(path: Path) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(MAX_CHANNEL_BYTES)
    except FileNotFoundError:
        return b""


def _kill(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()


def boot(cmd: list[str], workdir: Path, timeout: float, pin: Sequence[int] = (),
         tick: Callable[[Path], None] | None = None) -> BootOutcome:
    """Run qemu `cmd` (from argv(...)) until it exits or `timeout` s pass; never leaves it running.
    `tick` is called with the channel's path about once a second (progress)."""
    start = time.monotonic()
    proc: subprocess.Popen | None = None
    with open(workdir / "qemu.log", "wb") as log:
        try:
            with cleanup.deferred():  # qemu started and known, or neither
                try:
                    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True, cwd=workdir)
                except OSError as e:
                    return BootOutcome("no-start", None, 0.0, b"", [], f"cannot start {cmd[0]}: {e.strerror}")
            return _supervise(proc, workdir, timeout, pin, tick, start)
        finally:
            if proc is not None:
                with cleanup.deferred():
                    _kill(proc)


def _supervise(proc: subprocess.Popen, workdir: Path, timeout: float, pin: Sequence[int],
               tick: Callable[[Path], None] | None, start: float) -> BootOutcome:
    pinned: dict[int, int] = {}
    try:
        qmp = Qmp(workdir / "qmp.sock", proc)
        try:
            pinned = _pin(qmp, pin)
            qmp.execute("cont")
        finally:
            qmp.close()
    except (OSError, ValueError) as e:
        _kill(proc)
        return BootOutcome("no-start", proc.returncode, time.monotonic() - start, b"", console_tail(
            workdir / "console.log"), _qemu_message(workdir, str(e)))
    last_tick = 0.0
    status = "ended"
    while proc.poll() is None:
        now = time.monotonic()
        if now - start > timeout:
            status = "timeout"
            _kill(proc)
            break
        if now - last_tick >= 1.0:
            last_tick = now
            if _size(workdir / "channel") > MAX_CHANNEL_BYTES:  # a guest that writes without end
                status = "too-much"
                _kill(proc)
                break
            if tick is not None:
                tick(workdir / "channel")
        time.sleep(0.1)
    seconds = time.monotonic() - start
    return BootOutcome(status, proc.returncode, seconds, _read_channel(workdir / "channel"),
                       console_tail(workdir / "console.log"), _qemu_message(workdir), pinned,
                       panic_line(workdir / "console.log"))


def _qemu_message(workdir: Path, extra: str = "") -> str:
    try:
        text = (workdir / "qemu.log").read_bytes()[-4096:].decode("utf-8", errors="replace")
    except OSError:
        text = ""
    lines = [textsafe.line(t) for t in text.splitlines() if t.strip() and "terminating on signal" not in t]
    return "; ".join([*lines[-3:], *([extra] if extra else [])])
