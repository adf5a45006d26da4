"""The `osmeter` command: builds the parser from COMMANDS and maps errors to exit codes.

The commands (and numpy, matplotlib behind them) are imported inside main(),
so a Ctrl-C during those imports is an interruption (exit 130), not a traceback.
The standard streams are osmeter.streams' for the whole call: stdout that
cannot be written is an OutputError (exit 12), stderr that cannot be is
dropped, nothing raises on encoding, a terminal gets no control character.
"""

from __future__ import annotations

import argparse
import atexit
import os
import signal
import sys
import threading
from types import FrameType
from typing import Any, NoReturn, Sequence

from . import streams, textsafe
from .version import __version__
from .errors import EXIT_SIGNAL_BASE, EXIT_USAGE, OsmeterError, OutputError, Terminated, interruption_signal


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser of every command, or, when argv starts with a command's
    name, of that command alone (only its module is imported: its usage,
    help and errors are the same)."""
    from . import commands  # the heavy imports: see the module's docstring

    chosen = argv[0] if argv and argv[0] in commands.NAMES else None
    modules = (commands.load(chosen),) if chosen is not None else commands.load_all()

    parser = argparse.ArgumentParser(
        prog="osmeter",
        description="Measure what the operating system and the hardware under it really cost.",
        epilog="Exit codes are listed in docs/exit-codes.md.",
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"osmeter {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in modules:
        p = command.add_parser(sub)
        p.set_defaults(handler=command.run)
    return parser


def _not_utf8(argv: Sequence[str]) -> str | None:
    """The message for the first argument that is not UTF-8 text, if any.

    Python hands undecodable bytes over as lone surrogates (surrogateescape);
    they cannot be stored, printed or passed on as text, so they are refused
    before anything runs. So is a NUL, which no path or name may hold (an
    argument from exec() cannot; one from a caller of main() can)."""
    for i, arg in enumerate(argv, 1):
        if "\0" in arg:
            return f"argument {i} ({arg!r}) holds a NUL character, which no path or name may hold"
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            shown = arg.encode("utf-8", "surrogateescape") if _reversible(arg) else arg.encode("utf-8", "replace")
            return (f"argument {i} ({shown!r}) is not valid UTF-8 text; osmeter takes UTF-8 arguments "
                    "(rename the file, or use a UTF-8 locale)")
    return None


def _reversible(arg: str) -> bool:
    try:
        arg.encode("utf-8", "surrogateescape")
        return True
    except UnicodeEncodeError:
        return False


TERMINATING = (signal.SIGTERM, signal.SIGHUP)


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated(signum)


def _catch_termination() -> dict[int, Any]:
    """SIGTERM and SIGHUP raise Terminated (a KeyboardInterrupt), as SIGINT
    does, so every exit path cleans up; the previous handlers are returned."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {s: signal.signal(s, _terminate) for s in TERMINATING}


def main(argv: Sequence[str] | None = None) -> int:
    previous = _catch_termination()
    try:
        with streams.standard():
            return _main(argv)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def entry() -> NoReturn:
    """The `osmeter` program (console script, `python -m osmeter`): main(),
    then a quick exit. Python's own teardown frees every object a command
    made one at a time (20 000 results and cells for `compare --by` of 100
    hosts: a fifth of a second here) to give the memory back to a process
    that is ending. So, once the streams are flushed, the exit handlers
    have run (a temp dir's finalizer, logging's flush) and no other thread
    is left, the process ends at once with main()'s code; anything else
    (a stream that cannot be flushed, a thread still running, a profiler
    or debugger that reports when the program returns, an interpreter
    without atexit's runner) takes the usual way out."""
    code = main()
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    watched = sys.getprofile() is not None or sys.gettrace() is not None
    if run_exit_handlers is None or watched or threading.active_count() > 1:
        sys.exit(code)
    try:
        _flush_standard_streams()
        run_exit_handlers()
        _flush_standard_streams()
    except (OSError, ValueError):  # a stream gone meanwhile: Python's exit says what it says
        sys.exit(code)
    os._exit(code)


def _flush_standard_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:  # None: the descriptor was closed when Python started (`2>&-`)
            stream.flush()


# What a command has stored before it writes to stdout: said when that output is lost.
STORED_FIRST = {
    "run": "the run is stored (`osmeter runs` lists it)",
    "import": "the file is imported (`osmeter runs` lists it)",
    "noise": "the runs and the noise result are stored (`osmeter runs` lists them)",
}


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    bad = _not_utf8(argv)
    if bad is not None:
        print(f"osmeter: error: {bad}", file=sys.stderr)
        return EXIT_USAGE
    command = None
    try:
        from .tracestate import recover

        for line in recover():  # what a SIGKILLed probe left (tracestate.py)
            print(f"osmeter: {line}", file=sys.stderr)
        parser = build_parser(argv)
        try:
            args = parser.parse_args(argv)
        except SystemExit:
            sys.stdout.flush()  # --help, --version: an OutputError when it cannot be written
            raise
        command = args.command
        code = int(args.handler(args))
        sys.stdout.flush()  # here, not at exit: a full disk is an error of this command
        return code
    except OsmeterError as e:
        return _failed(e, command)
    except KeyboardInterrupt as e:
        signum = interruption_signal(e)
        by = "" if signum == signal.SIGINT else f" by {signal.Signals(signum).name}"
        print(f"osmeter: interrupted{by}", file=sys.stderr)
        return EXIT_SIGNAL_BASE + signum
    except BrokenPipeError:
        # The reader went away (`osmeter runs | head`): not an error of ours.
        sys.stderr.close()
        return 0


def _failed(e: OsmeterError, command: str | None) -> int:
    """`osmeter: error: MESSAGE` on stderr after what stdout holds; the exit code.
    When stdout cannot take what it holds, that is the error to report."""
    try:
        sys.stdout.flush()
    except OutputError as lost:
        e = lost
    except BrokenPipeError:
        pass
    message = e.message
    if isinstance(e, OutputError) and command in STORED_FIRST:
        message += f"; {STORED_FIRST[command]}"
    print(f"osmeter: error: {textsafe.terminal(message)}", file=sys.stderr)
    return e.exit_code
