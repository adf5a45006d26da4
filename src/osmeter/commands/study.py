"""osmeter study fork|files|net|rt: a study's matrix as one stored run, with figures.

The studies live in osmeter.studies; this command builds one subcommand per
study (its options, then --store) and runs the one chosen.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..studies import STUDIES
from .options import add_store_option

NAME = "study"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    top = sub.add_parser(
        NAME,
        help="run a study (fork: fork cost against parent memory; files: page cache, cold reads, contention; "
        "net: round trips, bandwidth, connect/close, loopback against remote; rt: real-time workload kernels under "
        "memory stressors, wake-up latency) and write its figures",
        description="Run a study's matrix as one stored run and write its figures (SVG and PNG) and its table.",
    )
    studies = top.add_subparsers(dest="study", metavar="STUDY", required=True)
    for study in STUDIES:
        p = studies.add_parser(study.NAME, help=study.HELP, description=study.DESCRIPTION)
        study.add_arguments(p)
        add_store_option(p)
    return top


def run(args: argparse.Namespace) -> int:
    study = next(s for s in STUDIES if s.NAME == args.study)
    return study.run(args)
