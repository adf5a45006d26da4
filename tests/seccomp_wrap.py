"""Run a command under seccomp filters that allow everything but cost what a
real filter costs: each one loads a system call's first argument, so the
kernel's per-syscall cache of constant verdicts (seccomp_cache, 5.11+)
cannot skip it, and every system call runs every filter (JIT-compiled
classic BPF, outside the kernel's text).

    python tests/seccomp_wrap.py [--filters N] -- CMD ARGS...

installs N identical filters (1 by default) in this process and execs CMD;
the filters are inherited across exec and by every child. No privilege is
needed (PR_SET_NO_NEW_PRIVS comes first, as the kernel asks of a user
without CAP_SYS_ADMIN). Tests use `command()` to build that argv, and
`unavailable()` to skip where the kernel has no seccomp filters.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import sys
from pathlib import Path

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000

# Classic BPF opcodes (linux/filter.h, linux/bpf_common.h).
BPF_LD_W_ABS = 0x00 | 0x00 | 0x20  # BPF_LD | BPF_W | BPF_ABS
BPF_JEQ_K = 0x05 | 0x10 | 0x00     # BPF_JMP | BPF_JEQ | BPF_K
BPF_RET_K = 0x06 | 0x00            # BPF_RET | BPF_K
# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6].
ARGS0 = 16


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]


def program() -> list[tuple[int, int, int, int]]:
    """The filter: load args[0] (a word of it), compare it, allow either way."""
    return [
        (BPF_LD_W_ABS, 0, 0, ARGS0),
        (BPF_JEQ_K, 0, 0, 0x5ECC0),  # both branches go on: the load is what counts
        (BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
    ]


def _prctl(libc, option: int, arg2: int, arg3=None) -> None:
    third = arg3 if arg3 is not None else ctypes.c_ulong(0)
    if libc.prctl(ctypes.c_int(option), ctypes.c_ulong(arg2), third, ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl({option}): {os.strerror(err)}")


def install(filters: int = 1) -> None:
    """Installs `filters` identical argument-reading allow-all filters in
    this process (and so in what it execs). Raises OSError when it cannot."""
    if not sys.platform.startswith("linux"):
        raise OSError(0, "seccomp filters are Linux's")
    libc = ctypes.CDLL(None, use_errno=True)
    insns = program()
    arr = (SockFilter * len(insns))(*[SockFilter(*i) for i in insns])
    prog = SockFprog(len(insns), ctypes.cast(arr, ctypes.POINTER(SockFilter)))
    _prctl(libc, PR_SET_NO_NEW_PRIVS, 1)
    for _ in range(filters):
        _prctl(libc, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog))


def filter_count(pid: int | str = "self") -> int | None:
    """Seccomp_filters of /proc/PID/status (Linux 5.9+), or None."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Seccomp_filters:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def command(cmd: list[str], filters: int = 1) -> list[str]:
    """The argv that runs cmd under `filters` filters."""
    return [sys.executable, str(Path(__file__).resolve()), "--filters", str(filters), "--", *cmd]


def unavailable() -> str | None:
    """Why filters cannot be installed here (tried in a child), or None."""
    if not sys.platform.startswith("linux"):
        return "seccomp filters are Linux's"
    pid = os.fork()
    if pid == 0:
        try:
            install(1)
            os._exit(0)
        except OSError as e:
            os._exit(e.errno if 0 < (e.errno or 0) < 256 else 255)
        except BaseException:
            os._exit(255)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code == 0:
        return None
    return f"a seccomp filter cannot be installed here: {os.strerror(code) if code < 255 else 'failed'}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 usage="%(prog)s [--filters N] -- CMD ARGS...")
    ap.add_argument("--filters", type=int, default=1, help="identical filters to install (default 1)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args(argv)
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        ap.error("no command given (after --)")
    if a.filters < 0:
        ap.error("--filters must be >= 0")
    try:
        install(a.filters)
    except OSError as e:
        print(f"seccomp_wrap: {e.strerror or e}", file=sys.stderr)
        return 1
    try:
        os.execvp(cmd[0], cmd)
    except OSError as e:
        print(f"seccomp_wrap: {cmd[0]}: {e.strerror}", file=sys.stderr)
        return 127
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main())
