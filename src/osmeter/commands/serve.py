"""osmeter serve: the network peer of the net benchmarks (docs/peer.md).

osmeter hands over to the installed probe's `serve` (exec, same options):
the peer is then the very process the terminal or the service manager
started, so Ctrl-C or SIGTERM reach it directly; it closes its sessions,
reaps their processes and exits 0. Its exit status is osmeter's: 2 for a
bad option (the probe names what is allowed), 3 when it cannot listen.
On stderr: where it listens, then only problems; -v adds a line per
session (docs/peer.md, "What the peer says").
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Any

from ..errors import ProbeError
from ..probe import locate_probe
from .options import positive_float, positive_int

NAME = "serve"

# (option, value name, help); each is passed on to `osmeter-probe serve` as given.
VALUED = (
    ("--listen", "ADDR[:PORT]", "where to listen (default 127.0.0.1:7478; a bare address takes port 7478, "
     "port 0 lets the kernel choose); any address that is not loopback needs a token"),
    ("--max-sessions", "N", "sessions at once (default 32, at most 1024); a client beyond them gets 'ERR busy'"),
    ("--session-time", "S", "a session's longest life in seconds (default 120)"),
    ("--session-bytes", "B", "bytes a session may move, both ways (default 64g; suffixes k, m, g)"),
)


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        NAME,
        help="run the network peer the net benchmarks measure against",
        description="Run the network peer (echo, sink, source, udp, close) until Ctrl-C or SIGTERM, "
        "for net benchmarks on another machine: `osmeter run net... --param peer=HOST:PORT "
        "--param token_file=F`. It runs nothing but those services, bounds every session in time "
        "and bytes, and listens on loopback unless told otherwise. See docs/peer.md.",
        epilog="The token is no encryption: it keeps strangers from using the peer, "
        "it does not hide or protect the traffic. Exit codes: 0 stopped by a signal, 2 bad option, 3 cannot listen.",
    )
    types = {"--max-sessions": positive_int, "--session-time": positive_float}
    for option, metavar, text in VALUED:
        p.add_argument(option, metavar=metavar, type=types.get(option, str), help=text)
    token = p.add_mutually_exclusive_group()
    token.add_argument("--token", metavar="T",
                       help="the token clients must give (printable ASCII, no spaces, at most 256 bytes); "
                       "visible to other users in the process list: prefer --token-file")
    token.add_argument("--token-file", metavar="F",
                       help="read the token from the first line of F (else $OSMETER_PEER_TOKEN)")
    talk = p.add_mutually_exclusive_group()
    talk.add_argument("-v", "--verbose", action="store_true",
                      help="also one line per client session on stderr, as it ends (and one when the peer stops)")
    talk.add_argument("--quiet", action="store_true",
                      help="the default: on stderr only the line saying where it listens, and problems "
                      "(a client refused, a session cut by a limit or an error); kept for old command lines")
    return p


def probe_argv(probe: str, args: argparse.Namespace) -> list[str]:
    argv = [probe, NAME]
    for option in [o for o, _, _ in VALUED] + ["--token", "--token-file"]:
        value = getattr(args, option[2:].replace("-", "_"))
        if value is not None:
            argv += [option, str(value)]
    if args.verbose:
        argv.append("--verbose")
    if args.quiet:
        argv.append("--quiet")
    return argv


def run(args: argparse.Namespace) -> int:
    probe = str(locate_probe())
    argv = probe_argv(probe, args)
    sys.stdout.flush()
    sys.stderr.flush()
    # The peer starts with the dispositions a shell would give it: Python
    # ignores SIGPIPE, and an ignored signal stays ignored across exec.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        os.execv(probe, argv)
    except OSError as e:
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        raise ProbeError(f"cannot start {probe}: {e.strerror}") from None
    return 0  # not reached
