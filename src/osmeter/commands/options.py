"""Options several commands share, and argparse value types (these from osmeter.argtypes)."""

from __future__ import annotations

import argparse

from ..argtypes import fifo_priority, non_negative_int, positive_float, positive_int, positive_int_up_to
from ..store import ENV_STORE

__all__ = ["add_store_option", "add_json_option", "fifo_priority", "non_negative_int", "positive_float",
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
