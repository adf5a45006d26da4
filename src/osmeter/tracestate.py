"""What a killed probe left in the system's tracing state, put back.

`osmeter-probe hotspots` journals every change it makes to tracing state
(a tracefs mount, an ftrace instance, kptr_restrict) before making it, in
/run/osmeter/trace-<pid> (probe/src/cleanup_trace.h), and undoes it on
every exit path it can see. A SIGKILL is not one: the next osmeter command
(every one, through cli.main) replays the journals whose probe is gone,
newest action first, and says what it restored. The probe does the same
when it starts a profile, for boards without Python.

Journal lines: `write PATH VALUE`, `rmdir PATH`, `umount PATH`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from pathlib import Path

JOURNAL_DIR = Path("/run/osmeter")
KINDS = ("write", "rmdir", "umount")
#: Paths a journal may name: tracing state and the sysctls the probe changes,
#: nothing else (a journal is a root-owned file, but replaying one must never
#: write or remove anything else, whoever wrote it).
ALLOWED_PREFIXES = ("/sys/kernel/tracing", "/sys/kernel/debug/tracing", "/proc/sys/kernel/kptr_restrict")


def _probe_alive(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"osmeter-probe" in cmdline


def _umount(path: str) -> str | None:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    if libc.umount2(path.encode(), 0) != 0:
        return os.strerror(ctypes.get_errno())
    return None


def _undo(kind: str, path: str, value: str) -> str | None:
    """Undoes one action; returns why it could not be, or None."""
    try:
        if kind == "write":
            Path(path).write_text(value)
        elif kind == "rmdir":
            os.rmdir(path)
        else:
            return _umount(path)
    except FileNotFoundError:
        return None  # already gone: nothing to put back
    except OSError as e:
        return e.strerror or str(e)
    return None


def parse_journal(text: str) -> list[tuple[str, str, str]]:
    """The actions of a journal, oldest first; lines that are not actions
    the probe writes, or name other paths, are left out."""
    actions = []
    for line in text.splitlines():
        parts = line.split(" ")
        if len(parts) < 2 or parts[0] not in KINDS:
            continue
        kind, path, value = parts[0], parts[1], " ".join(parts[2:])
        if not path.startswith(ALLOWED_PREFIXES) or ".." in path.split("/"):
            continue
        if kind == "write" and not value:
            continue
        actions.append((kind, path, value))
    return actions


def recover(journal_dir: Path = JOURNAL_DIR) -> list[str]:
    """Replays the journals of probes that no longer run; returns one line
    per action restored (or not, with why)."""
    try:
        entries = sorted(journal_dir.iterdir())
    except OSError:
        return []
    said = []
    for entry in entries:
        name = entry.name
        if not name.startswith("trace-") or not name[6:].isdigit():
            continue
        pid = int(name[6:])
        if pid == os.getpid() or _probe_alive(pid):
            continue
        try:
            actions = parse_journal(entry.read_text(errors="replace"))
        except OSError:
            continue
        for kind, path, value in reversed(actions):
            why = _undo(kind, path, value)
            what = f"{kind} {path}" + (f" {value}" if value else "")
            said.append(f"restored what a killed osmeter-probe (pid {pid}) had changed: {what}"
                        + (f" (failed: {why})" if why else ""))
        try:
            entry.unlink()
        except OSError:
            pass
    return said
