"""Cleaning up that an interruption cannot cut short.

osmeter turns SIGINT, SIGTERM and SIGHUP into an exception (cli.py) that
Python raises at whatever line runs when the signal comes. Raised inside a
`finally` that kills qemu or removes a temporary directory, it would leave
them behind. `deferred()` blocks those signals for a block of cleanup: one
that comes meanwhile is delivered when the block ends, and raises then.
`work_dir()` is a temporary directory removed that way.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import tempfile
from pathlib import Path
from typing import Iterator

SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP held back for the block (delivered, and raised, after it)."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@contextlib.contextmanager
def work_dir(prefix: str, parent: Path | None = None) -> Iterator[Path]:
    """A new temporary directory, removed at the end however the block ends."""
    with deferred():
        path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    try:
        yield path
    finally:
        with deferred():
            shutil.rmtree(path, ignore_errors=True)
