"""Errors the front end reports to the user, each with its own exit code.

Every class has a distinct exit code (pipx's lesson: two names sharing one
number make scripts guess). docs/exit-codes.md lists them; keep both in step.
`cli.main()` prints ``osmeter: error: <message>`` and exits with the code.
"""

from __future__ import annotations

import signal

EXIT_OK = 0
EXIT_INTERNAL = 1  # an uncaught exception: a bug in osmeter (traceback shown)
EXIT_USAGE = 2  # bad command line or parameters (also the probe's verdict)
EXIT_STORE = 3  # the store cannot be opened, created, written or read
EXIT_PROBE = 4  # the probe is missing, failed, died or broke the schema
EXIT_IMPORT = 5  # `osmeter import` refused a file; nothing was stored
EXIT_NOT_FOUND = 6  # an unknown run id, or no store yet
EXIT_RECORD = 7  # a JSON Lines record violates docs/schema.md
EXIT_BENCH_ERRORS = 8  # the run finished but some benchmark reported `error`
EXIT_DEPENDENCY = 9  # an optional dependency (pandas) is not installed
EXIT_REGRESSION = 10  # `compare --fail-above`: a significant regression beyond the limit
EXIT_HOSTS_FAILED = 11  # `fleet run`: at least one host failed or could not be reached
EXIT_OUTPUT = 12  # standard output cannot be written: closed, a full disk or device, an I/O error
EXIT_SIGNAL_BASE = 128  # interrupted: 128 + signal number (SIGINT 130, SIGTERM 143)


class OsmeterError(Exception):
    """Base class: a failure explained to the user, never a traceback."""

    exit_code: int = EXIT_INTERNAL

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(OsmeterError):
    """Bad command-line input (format, names, values)."""

    exit_code = EXIT_USAGE


class StoreError(OsmeterError):
    """The results store cannot be used; the message names the path and a fix."""

    exit_code = EXIT_STORE


class ProbeError(OsmeterError):
    """osmeter-probe is missing, failed, died or wrote something unreadable."""

    exit_code = EXIT_PROBE


class ImportFileError(OsmeterError):
    """A file given to `osmeter import` was refused as a whole."""

    exit_code = EXIT_IMPORT


class NotFoundError(OsmeterError):
    """A run (or the store itself) that does not exist."""

    exit_code = EXIT_NOT_FOUND


class RecordError(OsmeterError):
    """One JSON Lines record that does not follow docs/schema.md.

    Callers usually re-raise it as ProbeError or ImportFileError with the
    context (which line of which file) added.
    """

    exit_code = EXIT_RECORD


class MissingDependencyError(OsmeterError):
    """An optional dependency is needed for this feature."""

    exit_code = EXIT_DEPENDENCY


class RegressionFound(OsmeterError):
    """`compare --fail-above PCT` found a significant regression larger than PCT.

    Raised after the comparison was printed (and any output file written),
    so a CI job shows the table and still fails.
    """

    exit_code = EXIT_REGRESSION


class HostsFailed(OsmeterError):
    """`fleet run`: at least one host failed (unreachable, no probe for it, the
    probe failed); raised after the others were stored and the summary printed."""

    exit_code = EXIT_HOSTS_FAILED


class OutputError(OsmeterError):
    """Standard output cannot be written: closed when osmeter started, a full disk or
    device (/dev/full), an I/O error (osmeter.streams). A reader that went away
    (`osmeter runs | head`) is not one: osmeter then ends quietly."""

    exit_code = EXIT_OUTPUT


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP while no probe runs (between repetitions, while
    storing): raised where Ctrl-C raises KeyboardInterrupt, so the same
    clean-up runs and the run is marked `incomplete`, never left `running`."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def interruption_signal(e: BaseException) -> int:
    """The signal behind a KeyboardInterrupt: SIGINT unless a Terminated says otherwise."""
    return getattr(e, "signum", signal.SIGINT)


class Interrupted(OsmeterError):
    """osmeter was stopped by a signal; finished results are kept."""

    def __init__(self, signum: int, message: str | None = None) -> None:
        name = signal.Signals(signum).name
        super().__init__(message or f"interrupted by {name}")
        self.signum = signum
        self.exit_code = EXIT_SIGNAL_BASE + signum
