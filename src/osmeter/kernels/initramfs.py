"""The initramfs each kernel boots: the static probe as /init (docs/kernels.md,
"The guest"; docs/probe-init.md, what init does).

A cpio archive in the kernel's `newc` format (the kernel unpacks it before
it runs anything; no compression, which every kernel reads), written here,
no cpio program needed:

    /init                  the static osmeter-probe (init mode: argv[0] is "init")
    /osmeter-exec-helper   task.posix_spawn's and task.exec's helper, when there is one
    /osmeter/plan          the probe commands, one per line, arguments separated by tabs
    /dev/console           the console the kernel opens for init (character device 5:1)
    /proc /sys /tmp /root  mount points
    /var/tmp               file.*'s default directory (on the initramfs's own tmpfs)
    /lib/modules/RELEASE/  a modules tree, when --kernel ...,modules=DIR gives one

Every entry has mtime 0, uid 0, and a fixed inode order, so the same inputs
make the same bytes (the archive's digest is stored with the run). An
initramfs the user adds (--kernel ...,initrd=FILE) goes *before* ours in the
file qemu loads: the kernel unpacks both, and ours, last, decides /init.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Iterable

from ..errors import UsageError
from ..inputs import MIB, read_bounded

MAX_TREE_FILES = 50_000
MAX_TREE_BYTES = 2048 * MIB
MAX_ADDED_INITRD = 1024 * MIB
MAX_PLAN_BYTES = 64 * 1024  # the probe's own limit (docs/probe-init.md)
MAX_COMMANDS = 32
MAX_ARGS = 512
PLAN_PATH = "osmeter/plan"


def plan_text(commands: Iterable[list[str]]) -> str:
    """The plan file: each command a line, its arguments separated by tabs."""
    lines = []
    for argv in commands:
        if not argv or len(argv) > MAX_ARGS:
            raise UsageError(f"a guest command has {len(argv)} arguments (1 to {MAX_ARGS})")
        for arg in argv:
            if not arg or any(c in arg for c in "\t\n\r\0"):
                raise UsageError(f"a guest argument can hold no tab, newline or NUL and can't be empty: {arg!r}")
        lines.append("\t".join(argv))
    if not lines or len(lines) > MAX_COMMANDS:
        raise UsageError(f"the guest runs 1 to {MAX_COMMANDS} probe commands, not {len(lines)}")
    text = "\n".join(lines) + "\n"
    if len(text.encode()) > MAX_PLAN_BYTES:
        raise UsageError(f"the guest's plan is {len(text.encode())} bytes, more than {MAX_PLAN_BYTES} (fewer "
                         "--param values, or fewer benchmark names)")
    return text


@dataclass
class CpioWriter:
    """A newc archive written to `out`."""

    out: BinaryIO
    ino: int = 1
    written: int = 0
    names: set[str] = field(default_factory=set)

    def _entry(self, name: str, mode: int, data: bytes = b"", rdev: tuple[int, int] = (0, 0)) -> None:
        if name in self.names:
            raise ValueError(f"cpio: {name} twice")
        self.names.add(name)
        encoded = name.encode() + b"\0"
        fields = (self.ino, mode, 0, 0, 2 if stat.S_ISDIR(mode) else 1, 0, len(data), 0, 0, rdev[0], rdev[1],
                  len(encoded), 0)
        header = b"070701" + b"".join(b"%08x" % v for v in fields)
        self.ino += 1
        self._write(header + encoded)
        self._pad()
        self._write(data)
        self._pad()

    def _write(self, data: bytes) -> None:
        self.out.write(data)
        self.written += len(data)

    def _pad(self) -> None:
        self._write(b"\0" * (-self.written % 4))

    def directory(self, name: str, mode: int = 0o755) -> None:
        self._entry(name, stat.S_IFDIR | mode)

    def file(self, name: str, data: bytes, mode: int = 0o644) -> None:
        self._entry(name, stat.S_IFREG | mode, data)

    def symlink(self, name: str, target: str) -> None:
        self._entry(name, stat.S_IFLNK | 0o777, target.encode())

    def char_device(self, name: str, major: int, minor: int, mode: int = 0o600) -> None:
        self._entry(name, stat.S_IFCHR | mode, rdev=(major, minor))

    def trailer(self) -> None:
        self._entry("TRAILER!!!", 0)


@dataclass(frozen=True)
class Built:
    path: Path
    size: int  # bytes
    files: int  # entries in our archive


def _tree(writer: CpioWriter, root: Path, prefix: str) -> None:
    """A directory tree (regular files, directories, symlinks) under `prefix`, bounded."""
    count = total = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        rel = os.path.relpath(dirpath, root)
        base = prefix if rel == "." else f"{prefix}/{rel}"
        if rel != ".":
            writer.directory(base)
        for name in sorted(filenames) + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            count += 1
            if count > MAX_TREE_FILES:
                raise UsageError(f"{root}: more than {MAX_TREE_FILES} files for the initramfs")
            if stat.S_ISLNK(st.st_mode):
                writer.symlink(f"{base}/{name}", os.readlink(path))
            elif stat.S_ISREG(st.st_mode):
                total += st.st_size
                if total > MAX_TREE_BYTES:
                    raise UsageError(f"{root}: more than {MAX_TREE_BYTES // MIB} MiB for the initramfs")
                writer.file(f"{base}/{name}", read_bounded(path, MAX_TREE_BYTES, what="module file"),
                            st.st_mode & 0o777)
            else:
                raise UsageError(f"{path}: not a regular file, directory or symlink; the initramfs takes none")
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]


def build(target: Path, probe: bytes, helper: bytes | None, plan: str, *, release: str,
          modules: Path | None = None, added: Path | None = None) -> Built:
    """Write the initramfs to `target`; `added` (an initramfs of the user's) goes first."""
    with open(target, "wb") as out:
        if added is not None:
            data = read_bounded(added, MAX_ADDED_INITRD, what="initramfs")
            out.write(data)
            out.write(b"\0" * (-len(data) % 4))  # the next archive starts 4-byte aligned
        writer = CpioWriter(out)
        for d in ("dev", "proc", "sys", "tmp", "root", "osmeter", "var"):
            writer.directory(d)
        writer.directory("var/tmp", 0o1777)  # file.*'s default directory
        writer.char_device("dev/console", 5, 1)
        writer.file("init", probe, 0o755)
        if helper is not None:
            writer.file("osmeter-exec-helper", helper, 0o755)
        writer.file(PLAN_PATH, plan.encode())
        if modules is not None:
            for d in ("lib", "lib/modules"):
                writer.directory(d)
            writer.directory(f"lib/modules/{release}")
            _tree(writer, modules, f"lib/modules/{release}")
        writer.trailer()
        files = writer.ino - 1
    return Built(target, target.stat().st_size, files)
