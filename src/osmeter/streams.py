"""The standard streams, whatever osmeter was started with: cli.main sets them up
(`standard()`) around each command, so no command needs to think of them.

- A descriptor 0, 1 or 2 closed at start-up (`osmeter runs >&-`) is first
  opened on /dev/null, so no file osmeter opens later (the store, a pipe to
  the probe) can land on it and receive what was meant for the terminal.
- Nothing written raises on encoding: what the streams' encoding lacks
  (PYTHONIOENCODING=ascii, a C locale) is written as a backslash escape.
- Standard output that cannot take what is written raises
  errors.OutputError (exit 12), one line: `cannot write to standard output:
  it is closed` (closed at start-up; raised at the first write, so a command
  that writes nothing, or writes after it stored something, still works),
  `...: No space left on device` (/dev/full, a full disk), an I/O error.
  What was still buffered is dropped (the descriptor is pointed at
  /dev/null), so the interpreter's last flush cannot fail a second time. A
  reader that went away (`osmeter runs | head`) stays a BrokenPipeError:
  cli.main ends quietly.
- Standard error that is closed or cannot be written: what goes there
  (progress, warnings, notes, the error message itself) is dropped; the
  command goes on and its exit code says how it went.
- Standard output that is a terminal: every control character but TAB and
  newline (ESC, CR, the C1 controls) and the bidi overrides are written as
  backslash escapes (textsafe.visible), so no output, CSV export included,
  can drive the terminal or reorder what it shows. Files and pipes get the
  text as it is (a CSV file keeps the stored value: export/csv_.py).
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any, Iterable, Iterator, TextIO

from . import fmt, textsafe
from .errors import OutputError

STDOUT = "standard output"
NEVER_RAISE = ("backslashreplace", "replace", "namereplace", "xmlcharrefreplace", "ignore")
CLOSED = "it is closed"


def reserve_descriptors() -> None:
    """Open /dev/null on each of descriptors 0, 1 and 2 that is closed."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        new = os.open(os.devnull, os.O_RDWR)
        if new != fd:  # a lower one was taken meanwhile: cannot happen, as they are filled in order
            os.dup2(new, fd)
            os.close(new)


def _drop(stream: Any) -> None:
    """Point the stream's descriptor at /dev/null, so what it still buffers goes nowhere."""
    try:
        fd = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
    except (OSError, ValueError, AttributeError):  # not a real descriptor (a test's capture)
        return
    try:
        os.dup2(null, fd)
    except OSError:
        pass
    finally:
        os.close(null)


class Guarded:
    """A standard stream as osmeter writes it (the module's docstring says how).

    `loud`: standard output (a failure raises); else standard error (a failure
    drops what is written). `closed`: the descriptor was closed at start-up."""

    def __init__(self, name: str, stream: TextIO, loud: bool, closed: bool = False) -> None:
        self.name = name
        self.stream = stream
        self.loud = loud
        self.escape = loud and not closed and _isatty(stream)
        self.failure: BaseException | None = OutputError(f"cannot write to {name}: {CLOSED}") if closed else None
        self.lost = closed
        self.plain = None if _encodes(stream, fmt.MICRO) else _PLAIN  # 'us' where the micro sign cannot go

    def write(self, text: str) -> int:
        if not text:
            return 0
        if self.lost:
            if self.loud and self.failure is not None:
                raise self.failure
            return len(text)
        shown = text if self.plain is None else text.translate(self.plain)
        try:
            self.stream.write(textsafe.visible(shown) if self.escape else shown)
        except OSError as e:
            self._fail(e)
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for text in lines:
            self.write(text)

    def flush(self) -> None:
        if self.lost:
            return
        try:
            self.stream.flush()
        except OSError as e:
            self._fail(e)

    def _fail(self, e: OSError) -> None:
        self.lost = True
        _drop(self.stream)
        if not self.loud:
            return
        if isinstance(e, BrokenPipeError):
            self.failure = BrokenPipeError(e.errno, e.strerror)
            raise e
        self.failure = OutputError(f"cannot write to {self.name}: {e.strerror or e}")
        raise self.failure from None

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, buffer, close, ...
        return getattr(self.stream, name)


_PLAIN = str.maketrans({fmt.MICRO: "u"})


def _encodes(stream: Any, text: str) -> bool:
    """Whether the stream's encoding has `text` (a stream without one takes anything)."""
    encoding = getattr(stream, "encoding", None)
    if not isinstance(encoding, str):
        return True
    try:
        text.encode(encoding)
        return True
    except (UnicodeEncodeError, LookupError):
        return False


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (OSError, ValueError, AttributeError):
        return False


def _guard(stream: TextIO | None, fd: int, name: str, loud: bool) -> Guarded:
    if isinstance(stream, Guarded):  # main() called inside main()
        return stream
    if stream is None:  # the descriptor was closed at start-up: now /dev/null (reserve_descriptors)
        null = open(fd, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
        return Guarded(name, null, loud, closed=loud)
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None and getattr(stream, "errors", None) not in NEVER_RAISE:
        try:
            reconfigure(errors="backslashreplace")
        except (OSError, ValueError):
            pass
    return Guarded(name, stream, loud)


@contextlib.contextmanager
def standard() -> Iterator[None]:
    """sys.stdout and sys.stderr guarded for one command; the previous ones are put back after."""
    reserve_descriptors()
    saved = sys.stdout, sys.stderr
    sys.stdout = _guard(sys.stdout, 1, STDOUT, loud=True)  # type: ignore[assignment]
    sys.stderr = _guard(sys.stderr, 2, "standard error", loud=False)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
