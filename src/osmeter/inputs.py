"""Reading a file a user names, bounded before it is read.

Every file a command takes (probe files to import, folded stacks, expect
files, fleet inventories) may name /dev/zero, /dev/urandom, a FIFO that
never sends, a tty, or a file of many gigabytes. `read_bounded` reads it
within a size limit, and a pipe or device within time limits too: one that
sends nothing for `idle_s`, or is still sending after `total_s`, is given up
on. A directory is refused. `-` is standard input, when the caller allows it,
read under the same limits.

Errors are raised as the caller's class (ImportFileError for imports,
UsageError elsewhere), with the path and what to do.
"""

from __future__ import annotations

import os
import select
import stat
import sys
import time
from pathlib import Path
from typing import Callable

from .errors import OsmeterError, UsageError

MIB = 1024 * 1024
IDLE_S = 10.0  # a pipe or device that sends nothing for this long is given up on
TOTAL_S = 120.0  # ... and one still sending after this long
_CHUNK = MIB

ErrorType = Callable[[str], OsmeterError]


def size_text(n: int) -> str:
    return f"{n / MIB:.4g} MiB" if n >= MIB else f"{n / 1024:.3g} KiB" if n >= 1024 else f"{n} bytes"


def read_bounded(path: Path | str, max_bytes: int, *, what: str = "file", error: ErrorType = UsageError,
                 idle_s: float | None = None, total_s: float | None = None, stdin: bool = False,
                 too_large_hint: str = "") -> bytes:
    """The bytes of `path` (`what` names it in messages: "folded-stack file").

    Refuses more than max_bytes, a directory, and a pipe or device that
    stalls or never ends (idle_s, total_s: IDLE_S and TOTAL_S, read when
    called). With stdin=True, "-" reads standard input."""
    idle_s = IDLE_S if idle_s is None else idle_s
    total_s = TOTAL_S if total_s is None else total_s
    shown = "standard input" if stdin and str(path) == "-" else str(path)
    restore_blocking = False
    if stdin and str(path) == "-":
        try:
            fd = os.dup(sys.stdin.fileno())
        except (OSError, AttributeError, ValueError):
            raise error(f"cannot read the {what} from standard input: it is closed") from None
        restore_blocking = os.get_blocking(fd)  # O_NONBLOCK is shared with fd 0: put back after
        os.set_blocking(fd, False)
    else:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
        except (OSError, ValueError) as e:  # ValueError: a NUL byte in the name
            raise error(f"cannot read the {what} {shown}: {getattr(e, 'strerror', None) or e}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise error(f"cannot read the {what} {shown}: it is a directory")
        hint = f"; {too_large_hint}" if too_large_hint else ""
        if stat.S_ISREG(mode):
            os.set_blocking(fd, True)
            return _accumulate(lambda: os.read(fd, _CHUNK), max_bytes,
                               error(f"the {what} {shown} is more than {size_text(max_bytes)}, the limit{hint}"))
        return _accumulate(_stream_reader(fd, shown, what, error, idle_s, total_s), max_bytes,
                           error(f"the {what} {shown} is not a regular file and sent more than "
                                 f"{size_text(max_bytes)}, the limit{hint}"))
    except OSError as e:
        raise error(f"cannot read the {what} {shown}: {e.strerror}") from None
    finally:
        if restore_blocking:
            try:
                os.set_blocking(fd, True)
            except OSError:
                pass
        os.close(fd)


def read_text_bounded(path: Path | str, max_bytes: int, *, what: str = "file", error: ErrorType = UsageError,
                      **kwargs) -> str:
    """As read_bounded, decoded as UTF-8 (a file that is not is refused, naming the byte)."""
    data = read_bounded(path, max_bytes, what=what, error=error, **kwargs)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise error(f"the {what} {path} is not UTF-8 text (line {line}, byte {e.start}): "
                    "is it the file you meant?") from None


def _stream_reader(fd: int, shown: str, what: str, error: ErrorType, idle_s: float,
                   total_s: float) -> Callable[[], bytes | None]:
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    give_up = time.monotonic() + total_s

    def chunk() -> bytes | None:
        wait = min(idle_s, give_up - time.monotonic())
        if wait <= 0 or not poller.poll(wait * 1000):
            if time.monotonic() >= give_up:
                raise error(f"the {what} {shown} is not a regular file and was still sending after {total_s:g} s; "
                            "write it to a file and give that")
            raise error(f"the {what} {shown} is not a regular file and sent nothing for {idle_s:g} s; "
                        "write it to a file and give that")
        try:
            return os.read(fd, _CHUNK)
        except BlockingIOError:
            return None  # woken without data: wait again

    return chunk


def _accumulate(read: Callable[[], bytes | None], max_bytes: int, too_large: OsmeterError) -> bytes:
    """Chunks from `read` until it gives b"" (EOF; None: nothing yet), at most max_bytes."""
    parts, size = [], 0
    while True:
        chunk = read()
        if chunk is None:
            continue
        if not chunk:
            return b"".join(parts)
        size += len(chunk)
        if size > max_bytes:
            raise too_large
        parts.append(chunk)
