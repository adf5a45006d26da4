"""Options several commands share, and argparse value types (these from osmeter.argtypes)."""

from __future__ import annotations

import argparse

from ..argtypes import fifo_priority, non_negative_int, positive_float, positive_int, positive_int_up_to
from ..store import ENV_STORE

__all__ = ["add_store_option", "add_json_option", "add_budget_options", "fifo_priority", "non_negative_int", "positive_float",
           "positive_int", "positive_int_up_to"]


def add_store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        metavar="PATH|URL",
        help=f"the results store: an SQLite file, or postgresql://USER@HOST/DB (docs/store.md); default ${ENV_STORE}, "
             "else $XDG_DATA_HOME/osmeter/osmeter.db",
    )


def add_json_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--json", action="store_true", help=f"print {what} as JSON instead of a table")


def add_budget_options(parser: argparse.ArgumentParser, per: str) -> None:
    """--repeat and the time budget of a run elsewhere (`fleet run` per host, `kernels run` per kernel)."""
    parser.add_argument("--repeat", type=positive_int, metavar="R", help=f"repetitions per {per} (as for `osmeter run`)")
    parser.add_argument("--min-time", type=positive_float, metavar="S", help="minimum time per benchmark, seconds")
    parser.add_argument("--max-time", type=positive_float, metavar="S", help="maximum time per benchmark, seconds")
    parser.add_argument("--min-samples", type=positive_int, metavar="N", help="minimum samples per benchmark")
    parser.add_argument("--max-samples", type=positive_int, metavar="N", help="maximum samples per benchmark")
    parser.add_argument("--target-rse", type=positive_float, metavar="R", help="target precision, as for `osmeter run`")
