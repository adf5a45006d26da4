"""Frozen dataclasses made without their __init__, for the hot paths that
make tens of thousands of them from values already checked (the store's
decoder, compare --by's cells).

A frozen dataclass's __init__ sets each field through object.__setattr__:
for Summary's 18 fields that was a fifth of the time of decoding a result.
`built` fills the instance's __dict__ at once: the same object as
cls(**values) (equal, hashing alike, still frozen), but __post_init__ does
not run, so only for classes whose checks the caller's values already meet
(tests/unit/test_store.py holds it)."""

from __future__ import annotations

from typing import Any, TypeVar

_T = TypeVar("_T")


def built(cls: type[_T], values: dict[str, Any]) -> _T:
    """The frozen dataclass `cls` holding `values`: one per field, every field."""
    obj = object.__new__(cls)
    obj.__dict__.update(values)
    return obj
