"""osmeter export: one run as JSON or CSV, to stdout or a file.

A file is written next to its final name and renamed into place, so a
reader never sees half of it and a failure leaves any old file as it was.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..export import EXPORTERS
from ..report import names as nm
from ..store import open_store, resolve_location
from .options import add_store_option

NAME = "export"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(NAME, help="export a run as JSON or CSV", description="Export one run's results.")
    p.add_argument("run", metavar="RUN", help="a run id (see `osmeter runs`) or 'latest'")
    p.add_argument("--format", choices=sorted(EXPORTERS), required=True, help="output format")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    nm.add_names_option(p)
    add_store_option(p)
    return p


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


def check_writable(path: Path) -> None:
    """Fail now, before any work, if write_atomically(path, ...) could not succeed."""
    if path.is_dir():
        raise UsageError(f"cannot write {path}: it is a directory")
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror}") from None
    os.close(fd)
    Path(tmp).unlink(missing_ok=True)


def write_atomically(path: Path, text: str | bytes) -> None:
    """Write to a temporary file in the same directory, then rename over `path`.

    `text` may be bytes (a PNG, a PDF): written as they are."""
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror}") from None
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # as open() would have made it
        if isinstance(text, bytes):
            f = os.fdopen(fd, "wb")
        else:
            f = os.fdopen(fd, "w", encoding="utf-8", newline="")
        with f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise UsageError(f"cannot write {path}: {e.strerror}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def run(args: argparse.Namespace) -> int:
    store = open_store(resolve_location(args.store), create=False)
    try:
        info = store.run(args.run)
        text = EXPORTERS[args.format](info, store.results(info.id), names=nm.row_names(args.names))
    finally:
        store.close()
    if args.output and args.output != "-":
        write_atomically(Path(args.output), text)
    else:
        sys.stdout.write(text)
    return 0
