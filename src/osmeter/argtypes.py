"""argparse value types: numbers within bounds, a list of counters.

Below the commands, so both `osmeter.commands` and `osmeter.studies` (whose
options the `study` command builds) can use them; a bad value is an
argparse.ArgumentTypeError, which argparse shows as a usage error.
"""

from __future__ import annotations

import argparse
import math


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


def positive_int_up_to(maximum: int):  # type: ignore[no-untyped-def]
    """An argparse type: an integer from 1 to `maximum`."""
    def parse(text: str) -> int:
        return int(_number(text, int, 1, maximum))

    return parse


def positive_float(text: str) -> float:
    value = _number(text, float, 0.0)
    if value == 0:
        raise argparse.ArgumentTypeError(f"{text} is out of range: must be more than 0")
    return value


def fifo_priority(text: str) -> int:
    return int(_number(text, int, 1, 99))


def counter_list(text: str) -> str:
    """argparse type for --counters: a non-empty comma-separated list (the probe checks the names)."""
    if not text or not all(part.strip() for part in text.split(",")) or any(c.isspace() for c in text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of counters (for example sw,cycles)")
    return text


def percentage(text: str) -> float:
    try:
        value = float(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage (e.g. 5 or 5%)") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text} is out of range: must be a percentage of at least 0")
    return value
