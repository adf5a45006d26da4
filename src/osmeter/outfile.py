"""Output files (`-o`) of export, report, plot, compare and study: one set of rules.

Never damage what is not ours:

- A regular file (or a new one) is written next to its final name and renamed
  into place, so a reader never sees half of it and a failure leaves any old
  file as it was. An existing file keeps its mode (and, where we may, its
  owner and group); a new file gets 0666 minus the umask, as `>` would.
- A symbolic link is followed, never replaced: the file it points to is
  written (atomically, as above). A dangling link or a loop is refused.
- A character device or a FIFO (`/dev/null`, a named pipe) is written in
  place: opened for writing, neither created nor truncated nor renamed over.
  `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` are osmeter's own descriptors,
  written where they stand, as a shell would (`>>` appends).
- A directory, a block device (a disk) or a socket is refused.

The format of a file comes from its suffix (`choose_format`): an unknown
suffix is refused, `--format` overrides. Every check runs before the work
(`check`), so a bad `-o` costs nothing.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from .errors import UsageError

NEW, FILE, IN_PLACE = "new", "file", "in-place"
STREAMS = ("/dev/stdout", "/dev/stderr", "/dev/fd/", "/proc/self/fd/")  # without a suffix: as stdout


@dataclass(frozen=True)
class Target:
    """Where `-o GIVEN` goes: `path` (symlinks resolved) and how it is written (NEW, FILE, IN_PLACE)."""

    given: Path
    path: Path
    kind: str
    st: os.stat_result | None  # of `path`, None for a new file
    fd: int | None = None  # /dev/stdout, /dev/fd/N: write to this descriptor of ours, as a shell would


def _fail(given: Path, why: str) -> UsageError:
    return UsageError(f"cannot write {given}: {why}")


def _refuse_broken_link(given: Path, e: OSError) -> UsageError:
    if e.errno == errno.ELOOP:
        return _fail(given, "it is a symbolic link that loops; point it at a file or remove it")
    if e.errno == errno.ENOENT and os.path.islink(given):
        return _fail(
            given,
            f"it is a symbolic link to {os.readlink(given)}, which does not exist; "
            "create the file it points to, or remove the link",
        )
    return _fail(given, e.strerror or str(e))


_OWN_FD = re.compile(r"/(?:dev/fd|proc/self/fd)/(\d+)")


def own_fd(given: Path) -> int | None:
    """N for /dev/stdout (1), /dev/stderr (2), /dev/fd/N, /proc/self/fd/N; else None."""
    text = os.path.normpath(str(given))
    if text in ("/dev/stdout", "/dev/stderr"):
        return 1 if text.endswith("out") else 2
    m = _OWN_FD.fullmatch(text)
    return int(m.group(1)) if m else None


def _same_file(a: os.stat_result, path: Path) -> bool:
    try:
        b = os.stat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def target(given: str | Path) -> Target:
    """Where writing `given` would go, or a UsageError saying why it cannot be written."""
    given = Path(given)
    try:
        st = os.stat(given)  # the kernel follows every link, /proc/self/fd/N ones included
    except FileNotFoundError as e:
        if os.path.islink(given):
            raise _refuse_broken_link(given, e) from None
        parent = given.parent if str(given.parent) else Path(".")
        if not parent.is_dir():
            raise _fail(given, f"the directory {parent} does not exist (No such file or directory)") from None
        return Target(given, given, NEW, None)
    except OSError as e:
        raise _refuse_broken_link(given, e) from None
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        raise _fail(given, "it is a directory; give a file name")
    if stat.S_ISBLK(mode):
        raise _fail(given, "it is a block device (a disk); osmeter does not write onto one")
    if stat.S_ISSOCK(mode):
        raise _fail(given, "it is a socket; give a file, a FIFO or a character device")
    if not os.access(given, os.W_OK):
        raise _fail(given, "Permission denied")
    fd = own_fd(given)
    if fd is not None or not stat.S_ISREG(mode):
        return Target(given, given, IN_PLACE, st, fd)
    path = Path(os.path.realpath(given)) if os.path.islink(given) else given
    if not _same_file(st, path):  # a link only the kernel can follow (/proc/self/fd/N of a deleted file)
        return Target(given, given, IN_PLACE, st)
    return Target(given, path, FILE, st)


def check(given: str | Path) -> Target:
    """Fail now, before any work, if write(given, ...) could not succeed."""
    t = target(given)
    if t.kind != IN_PLACE:  # the rename needs a temporary file next to the target
        fd, tmp = _temp(t)
        os.close(fd)
        Path(tmp).unlink(missing_ok=True)
    return t


def _temp(t: Target) -> tuple[int, str]:
    directory = t.path.parent if str(t.path.parent) else Path(".")
    try:
        return tempfile.mkstemp(prefix=f".{t.path.name}.", suffix=".tmp", dir=directory)
    except OSError as e:
        raise _fail(t.given, f"cannot create a file in {directory} ({e.strerror}); "
                             "osmeter writes next to the target and renames into place") from None


def umask() -> int:
    """The process's umask, read without changing it where /proc allows."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current


def _as_bytes(data: str | bytes) -> bytes:
    return data if isinstance(data, bytes) else data.encode("utf-8")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _atomic(t: Target, data: bytes) -> None:
    fd, tmp = _temp(t)
    try:
        try:
            if t.st is not None:  # keep what the old file had: owner and group where we may, then mode
                try:
                    os.fchown(fd, t.st.st_uid, t.st.st_gid)
                except PermissionError:
                    pass
                os.fchmod(fd, stat.S_IMODE(t.st.st_mode))
            else:
                os.fchmod(fd, 0o666 & ~umask())  # as open() would have made it
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, t.path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise _fail(t.given, e.strerror or str(e)) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _in_place(t: Target, data: bytes) -> None:
    """Write into a device or FIFO as it is: no create, no rename. /dev/stdout and /dev/fd/N
    are our own descriptors, written where they stand (a shell's `>>` appends); a regular
    file reached only through the kernel (/proc/PID/fd/N) is cut to what was written."""
    try:
        if t.fd is not None:
            sys.stdout.flush()
            sys.stderr.flush()
            fd = os.dup(t.fd)
        else:
            fd = os.open(t.path, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as e:
        raise _fail(t.given, e.strerror or str(e)) from None
    try:
        _write_all(fd, data)
        if t.fd is None and stat.S_ISREG(os.fstat(fd).st_mode):
            os.ftruncate(fd, len(data))
    except BrokenPipeError:
        raise _fail(t.given, "the reader closed it before everything was written (Broken pipe)") from None
    except OSError as e:
        raise _fail(t.given, e.strerror or str(e)) from None
    finally:
        os.close(fd)


def write(given: str | Path, data: str | bytes) -> Path:
    """Write `data` (text as UTF-8, or bytes as they are) to `given` by the rules above; returns
    the path written (symlinks resolved)."""
    t = target(given)
    if t.kind == IN_PLACE:
        _in_place(t, _as_bytes(data))
    else:
        _atomic(t, _as_bytes(data))
    return t.path


def prepare_directory(given: str | Path) -> Path:
    """A directory to write files into (`plot -o DIR`), created if needed; a link to one is followed."""
    given = Path(given)
    try:
        os.stat(given)
    except FileNotFoundError as e:
        if os.path.islink(given):
            raise _refuse_broken_link(given, e) from None
    except OSError as e:
        raise _refuse_broken_link(given, e) from None
    path = Path(os.path.realpath(given))
    if path.exists() and not path.is_dir():
        raise UsageError(f"cannot write files into {given}: it is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot create {given}: {e.strerror}") from None
    return path


def check_entries(directory: Path, names: Iterable[str], globs: Iterable[str] = ()) -> None:
    """Fail now, before any work, if a file a command will write into
    `directory` (from prepare_directory) could not be written: each of
    `names`, and each existing entry matching one of `globs` (files named
    after the data, such as figures)."""
    for name in names:
        check(directory / name)
    for pattern in globs:
        for path in sorted(directory.glob(pattern)):
            check(path)


def choose_format(
    fmt: str | None,
    output: str | None,
    suffixes: Mapping[str, str],
    default: str | None,
    refused: Mapping[str, str] | None = None,
) -> str | None:
    """The format of `-o output`: `fmt` (--format) when given, else from the suffix.

    `suffixes` maps a lower-case suffix (`.md`) to a format. Without output (stdout)
    the format is `default`. A name without a suffix takes the suffix of the file a
    symbolic link points to; a device or FIFO, or /dev/stdout, /dev/fd/N and the
    like, without one gets `default`. Any other suffix (or none) is refused, naming
    the ones known; `refused` maps a suffix to a sentence saying why it is not
    written (`.pdf`)."""
    if fmt:
        return fmt
    if not output or output == "-":
        return default
    given = Path(output)
    suffix = given.suffix.lower()
    if not suffix and str(given).startswith(STREAMS):
        return default
    if not suffix and os.path.islink(given):
        suffix = Path(os.path.realpath(given)).suffix.lower()
    if suffix in suffixes:
        return suffixes[suffix]
    known = ", ".join(suffixes)
    if refused and suffix in refused:
        raise UsageError(f"cannot write {output}: {refused[suffix]}; give a file ending in {known}")
    if not suffix and default is not None:
        try:
            if not stat.S_ISREG(os.stat(given).st_mode):
                return default  # /dev/null, /dev/stdout, a FIFO: as to stdout
        except OSError:
            pass
    what = f"its suffix {suffix!r}" if suffix else "a name without a suffix"
    raise UsageError(
        f"cannot tell what to write to {output} from {what}: give a file ending in {known}, or --format"
    )
