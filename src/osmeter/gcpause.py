"""Python's cyclic garbage collector paused while a command builds many
objects that hold no cycles.

Reading 20 000 results and comparing them makes hundreds of thousands of
containers that live until the command ends; with the collector on, each
of its full passes walks all of them again (a fifth of `compare --by
host` over 100 hosts here). Reference counting frees them as usual; the
collector comes back afterwards, also when the block raises. Not for code
that makes cycles by the thousand (matplotlib's figures)."""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def paused() -> Iterator[None]:
    """The collector off for the block (left as it is when already off)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
