"""Options several commands share, and argparse value types."""

from __future__ import annotations

import argparse
import math

from ..store import ENV_STORE


def add_store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        metavar="PATH|URL",
        help=f"the results store: an SQLite file, or postgresql://USER@HOST/DB (docs/store.md); default ${ENV_STORE}, "
             "else $XDG_DATA_HOME/osmeter/osmeter.db",
    )


def add_json_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--json", action="store_true", help=f"print {what} as JSON instead of a table")


def _number(text: str, kind: type, minimum: float, maximum: float | None = None) -> float:
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a{'n integer' if kind is int else ' number'}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    if value < minimum or (maximum is not None and value > maximum):
        bounds = f"between {minimum} and {maximum}" if maximum is not None else f"at least {minimum}"
        raise argparse.ArgumentTypeError(f"{text} is out of range: must be {bounds}")
    return value


def non_negative_int(text: str) -> int:
    return int(_number(text, int, 0))


def positive_int(text: str) -> int:
    return int(_number(text, int, 1))


def positive_float(text: str) -> float:
    value = _number(text, float, 0.0)
    if value == 0:
        raise argparse.ArgumentTypeError(f"{text} is out of range: must be more than 0")
    return value


def fifo_priority(text: str) -> int:
    return int(_number(text, int, 1, 99))
