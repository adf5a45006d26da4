"""The `osmeter` command: builds the parser from COMMANDS and maps errors to exit codes."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from . import __version__
from .commands import COMMANDS
from .errors import EXIT_SIGNAL_BASE, OsmeterError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="osmeter",
        description="Measure what the operating system and the hardware under it really cost.",
        epilog="Exit codes are listed in docs/exit-codes.md.",
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"osmeter {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        p = command.add_parser(sub)
        p.set_defaults(handler=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except OsmeterError as e:
        sys.stdout.flush()
        print(f"osmeter: error: {e.message}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("osmeter: interrupted", file=sys.stderr)
        return EXIT_SIGNAL_BASE + 2
    except BrokenPipeError:
        # The reader went away (`osmeter runs | head`): not an error of ours.
        sys.stderr.close()
        return 0
