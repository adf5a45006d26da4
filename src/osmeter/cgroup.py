"""A memory cgroup for the probe: `osmeter run --cgroup-mem SIZE`.

The probe runs inside a new memory cgroup whose limit is SIZE, so the page
cache its files fill is charged to that limit (the page cache is charged to
the cgroup of the process that brings a page in) and `file.cache_sweep`
finds a cache of SIZE, whatever the machine's memory.

Which hierarchy: cgroup v2 when the memory controller is on a cgroup2
mount (the limit file is `memory.max`), else cgroup v1 when a `cgroup`
mount carries the memory controller (`memory.limit_in_bytes`); the mounts
are read from /proc/self/mounts. Machines such as a v1 memory hierarchy at
/sys/fs/cgroup/memory next to a cgroup2 mount at /sys/fs/cgroup/unified
without the memory controller get v1.

Where: never outside the cgroup osmeter itself runs in, so any limit it is
under (a container, a job scheduler, a systemd slice) still applies and no
process leaves a cgroup something else put it in. On v1 the new cgroup is a
child of osmeter's own memory cgroup (/proc/self/cgroup). On v2 a cgroup
that holds processes cannot give its children a controller, so it is a
child of the nearest of osmeter's cgroup and its ancestors whose
`cgroup.subtree_control` lists `memory` (the root, or a systemd slice);
none: a clear error, nothing changed.

Its name is `osmeter-<pid of osmeter>-<random>`. The probe enters it in the
child process before exec (Popen's preexec_fn writes the child's pid to
`cgroup.procs`), so nothing the probe does escapes the limit. The cgroup is
removed when the `with` block ends, on every exit path (an error, Ctrl-C,
SIGTERM, a killed probe): processes left in it (children of a killed probe)
get SIGKILL, and removal is retried until the kernel lets it go. A cgroup
left by an osmeter that was itself SIGKILLed (its pid gone, no process in
it) is removed by the next `MemoryCgroup.create()` in the same place.

Refused before anything runs, with the reason: not root, no memory
controller, a size that is not a size, below MIN_LIMIT (the probe itself
needs a few MiB) or above the machine's memory (the limit would never bind).

Everything takes its root as a parameter (the mounts file, /proc/self/cgroup
and /proc/meminfo), so tests run the v1 and v2 paths against a fake tree.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from . import textsafe
from .errors import UsageError

MOUNTS = Path("/proc/self/mounts")
SELF_CGROUP = Path("/proc/self/cgroup")
MEMINFO = Path("/proc/meminfo")
PREFIX = "osmeter-"
MIB = 1 << 20
MIN_LIMIT = 16 * MIB
REMOVE_TIMEOUT_S = 10.0
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.I)

# cgroupfs makes a cgroup's control files with its directory (mkdir) and
# removes them with it (rmdir): a plain directory behaves otherwise, so
# tests of a fake tree replace these two with their model of cgroupfs.
_mkdir: Callable[[str], None] = os.mkdir
_rmdir: Callable[[str], None] = os.rmdir


def parse_size(text: str) -> int:
    """Bytes from `512M`, `1G`, `1.5GiB`, `524288k` or `536870912` (binary units, as the probe)."""
    m = _SIZE.match(text)
    if not m:
        raise ValueError(f"{text!r} is not a size: give bytes or a number with K, M, G or T (binary: 512M = 512 MiB)")
    value = float(m.group(1)) * _UNITS[m.group(2).lower()]
    if value != int(value) or value > 1 << 60:
        raise ValueError(f"{text!r} is not a whole number of bytes (or is too large)")
    return int(value)


def size_text(n: int) -> str:
    """512 MiB, 1.5 GiB, 4 KiB, 100 bytes."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.4g} {unit}"
    return f"{n} bytes"


@dataclass(frozen=True)
class Hierarchy:
    """Where the memory controller is mounted."""

    version: int  # 1 or 2
    mount: Path

    @property
    def limit_file(self) -> str:
        return "memory.max" if self.version == 2 else "memory.limit_in_bytes"


def _unescape(field: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def find_hierarchy(mounts: Path = MOUNTS) -> Hierarchy:
    """The memory controller's hierarchy: v2 if a cgroup2 mount has it, else v1; UsageError if none."""
    try:
        lines = mounts.read_text().splitlines()
    except OSError as e:
        raise UsageError(f"--cgroup-mem: cannot read {mounts}: {e.strerror}") from None
    v1 = None
    seen_v2 = []
    for line in lines:
        fields = line.split()
        if len(fields) < 4:
            continue
        point, fstype, options = Path(_unescape(fields[1])), fields[2], fields[3].split(",")
        if fstype == "cgroup2":
            seen_v2.append(point)
            try:
                controllers = (point / "cgroup.controllers").read_text().split()
            except OSError:
                continue
            if "memory" in controllers:
                return Hierarchy(2, point)
        elif fstype == "cgroup" and "memory" in options and v1 is None:
            v1 = Hierarchy(1, point)
    if v1 is not None:
        return v1
    where = f" (cgroup2 at {', '.join(map(str, seen_v2))} has no memory controller)" if seen_v2 else ""
    raise UsageError(f"--cgroup-mem: no memory cgroup controller is mounted here{where}; "
                     "enable the memory controller (cgroup_enable=memory) or run without --cgroup-mem")


def own_cgroup(hierarchy: Hierarchy, self_cgroup: Path = SELF_CGROUP) -> str:
    """osmeter's own cgroup in that hierarchy, as /proc/self/cgroup says ("/" for the root)."""
    try:
        lines = self_cgroup.read_text().splitlines()
    except OSError as e:
        raise UsageError(f"--cgroup-mem: cannot read {self_cgroup}: {e.strerror}") from None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if hierarchy.version == 2 and parts[0] == "0" and parts[1] == "":
            return parts[2] or "/"
        if hierarchy.version == 1 and "memory" in parts[1].split(","):
            return parts[2] or "/"
    raise UsageError(f"--cgroup-mem: {self_cgroup} names no cgroup of the memory hierarchy at {hierarchy.mount}")


def _under(mount: Path, cgroup: str) -> Path:
    return mount / cgroup.lstrip("/") if cgroup != "/" else mount


def parent_dir(hierarchy: Hierarchy, self_cgroup: Path = SELF_CGROUP) -> Path:
    """The directory the new cgroup is made in (see the module docstring)."""
    own = _under(hierarchy.mount, own_cgroup(hierarchy, self_cgroup))
    if hierarchy.version == 1:
        return own
    here = own
    while True:
        try:
            if "memory" in (here / "cgroup.subtree_control").read_text().split():
                return here
        except OSError:
            pass
        if here == hierarchy.mount or hierarchy.mount not in here.parents:
            break
        here = here.parent
    raise UsageError(
        f"--cgroup-mem: neither osmeter's cgroup ({own}) nor any cgroup above it gives the memory controller "
        f"to its children (cgroup.subtree_control); enable it in one (echo +memory > "
        f"{hierarchy.mount}/cgroup.subtree_control) or run osmeter in a delegated cgroup"
    )


def mem_total(meminfo: Path = MEMINFO) -> int | None:
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def check_limit(limit: int, meminfo: Path = MEMINFO) -> None:
    if limit < MIN_LIMIT:
        raise UsageError(f"--cgroup-mem {size_text(limit)} is below {size_text(MIN_LIMIT)}: "
                         "the probe itself needs a few MiB")
    total = mem_total(meminfo)
    if total is not None and limit > total:
        raise UsageError(f"--cgroup-mem {size_text(limit)} is more than this machine's memory "
                         f"({size_text(total)}, MemTotal): the limit would never bind")


def check_possible(limit: int, mounts: Path = MOUNTS, self_cgroup: Path = SELF_CGROUP,
                   meminfo: Path = MEMINFO, euid: int | None = None) -> tuple[Hierarchy, Path]:
    """Everything --cgroup-mem needs, checked without changing anything: the
    hierarchy and the directory the cgroup would be made in, or UsageError."""
    check_limit(limit, meminfo)
    if (os.geteuid() if euid is None else euid) != 0:
        raise UsageError("--cgroup-mem needs root (it creates a memory cgroup); run as root, or run osmeter "
                         "inside a limited cgroup yourself: systemd-run --scope -p MemoryMax=SIZE osmeter run ...")
    hierarchy = find_hierarchy(mounts)
    return hierarchy, parent_dir(hierarchy, self_cgroup)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _procs(path: Path) -> list[int]:
    try:
        return [int(x) for x in (path / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def remove_stale(parent: Path) -> list[Path]:
    """Remove our cgroups in `parent` left by an osmeter that no longer lives (empty ones only)."""
    removed = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return removed
    for entry in entries:
        m = re.fullmatch(re.escape(PREFIX) + r"(\d+)-[0-9a-f]+", entry.name)
        if not m or not entry.is_dir() or _pid_alive(int(m.group(1))) or _procs(entry):
            continue
        try:
            _rmdir(str(entry))
            removed.append(entry)
        except OSError:
            pass
    return removed


class EnterCgroup:
    """Popen's preexec_fn: moves the child (before it execs) into the cgroup."""

    def __init__(self, procs_file: Path) -> None:
        self.procs_file = str(procs_file)
        self.what = f"entering the memory cgroup ({self.procs_file})"  # for probe.py's message

    def __call__(self) -> None:
        fd = os.open(self.procs_file, os.O_WRONLY)
        try:
            os.write(fd, str(os.getpid()).encode())
        finally:
            os.close(fd)


class MemoryCgroup:
    """A memory cgroup of its own with a limit; use as a context manager so it is always removed."""

    def __init__(self, hierarchy: Hierarchy, path: Path, requested: int, limit: int) -> None:
        self.hierarchy = hierarchy
        self.path = path
        self.requested_bytes = requested
        self.limit_bytes = limit  # as the kernel reads it back (v1 rounds to pages)
        self.removed = False

    @classmethod
    def create(cls, limit: int, mounts: Path = MOUNTS, self_cgroup: Path = SELF_CGROUP,
               meminfo: Path = MEMINFO, euid: int | None = None) -> "MemoryCgroup":
        hierarchy, parent = check_possible(limit, mounts, self_cgroup, meminfo, euid)
        remove_stale(parent)
        path = parent / f"{PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
        try:
            _mkdir(str(path))
        except OSError as e:
            raise UsageError(f"--cgroup-mem: cannot create the cgroup {path}: {e.strerror}") from None
        cg = cls(hierarchy, path, limit, limit)
        try:
            cg._set_limit(limit)
        except BaseException:
            cg.remove()
            raise
        return cg

    def _set_limit(self, limit: int) -> None:
        target = self.path / self.hierarchy.limit_file
        try:
            target.write_text(str(limit))
            read = target.read_text().strip()
        except OSError as e:
            raise UsageError(f"--cgroup-mem: cannot set {target} to {limit}: {e.strerror}") from None
        self.limit_bytes = int(read) if read.isdigit() else limit
        if not os.access(self.path / "cgroup.procs", os.W_OK):
            raise UsageError(f"--cgroup-mem: cannot write {self.path / 'cgroup.procs'}")

    def enter(self) -> EnterCgroup:
        return EnterCgroup(self.path / "cgroup.procs")

    def describe(self) -> dict[str, Any]:
        """What the stored run records (run params "cgroup")."""
        return {
            "version": self.hierarchy.version,
            "path": str(self.path),
            "limit_file": self.hierarchy.limit_file,
            "requested_bytes": self.requested_bytes,
            "limit_bytes": self.limit_bytes,
        }

    def remove(self, timeout_s: float = REMOVE_TIMEOUT_S) -> str | None:
        """Remove the cgroup (killing what is left in it); None, or why it could not be removed."""
        if self.removed:
            return None
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                _rmdir(str(self.path))
                self.removed = True
                return None
            except FileNotFoundError:
                self.removed = True
                return None
            except OSError as e:
                if e.errno not in (errno.EBUSY, errno.ENOTEMPTY) or time.monotonic() > deadline:
                    return (f"could not remove the memory cgroup {self.path}: {e.strerror}; "
                            f"remove it with: rmdir {self.path}")
            for pid in _procs(self.path):  # children of a killed probe, in our cgroup only
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.05)

    def __enter__(self) -> "MemoryCgroup":
        return self

    def __exit__(self, *exc: object) -> None:
        problem = self.remove()
        if problem is not None:
            textsafe.say("warning", problem)


def describe_recorded(cgroup: Any) -> str | None:
    """One line for a run's recorded cgroup (run params "cgroup"), or None."""
    if not isinstance(cgroup, dict) or not isinstance(cgroup.get("limit_bytes"), int):
        return None
    scope = cgroup.get("scope")
    where = f", {scope}" if isinstance(scope, str) else ""
    return (f"memory cgroup: limit {size_text(cgroup['limit_bytes'])} "
            f"(cgroup v{cgroup.get('version')} {cgroup.get('limit_file')}{where})")
