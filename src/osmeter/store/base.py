"""The store interface every backend provides, and the shared sample codec."""

from __future__ import annotations

import zlib
from typing import ContextManager, Protocol, Sequence

import numpy as np

from ..errors import StoreError
from ..model import BenchResult, NewRun, RunInfo, StoredProfile
from ..stats import FloatArray

class StoreConnectionLost(StoreError):
    """The connection to the store was lost, or its server stopped answering:
    worth reconnecting and trying again (a full disk or a refused write is not)."""


class TooManySamples(ValueError):
    """A samples blob that expands to more values than its result's n."""


SAMPLES_DTYPE = np.dtype("<f8")  # little-endian float64, whatever the host's byte order


def encode_samples(values: Sequence[float] | FloatArray) -> bytes:
    """Samples as stored: zlib-compressed little-endian float64."""
    return zlib.compress(np.asarray(values, dtype=SAMPLES_DTYPE).tobytes())


def decode_samples(blob: bytes, max_values: int) -> FloatArray:
    """The samples of a blob, refusing one that expands to more than
    max_values (a damaged or hostile blob must not fill the memory):
    TooManySamples, ValueError or zlib.error."""
    d = zlib.decompressobj()
    data = d.decompress(blob, max_values * SAMPLES_DTYPE.itemsize + 1)
    if len(data) > max_values * SAMPLES_DTYPE.itemsize:
        raise TooManySamples(f"it expands to more than the {max_values} values its result holds")
    if not d.eof:
        raise zlib.error("incomplete or truncated stream")
    return np.frombuffer(data, dtype=SAMPLES_DTYPE).astype(np.float64)


class Store(Protocol):
    """Where runs live. Every write is committed when the call returns,
    unless it happens inside transaction(), which commits all or nothing."""

    location: str

    def transaction(self) -> ContextManager[None]: ...

    def create_run(self, run: NewRun) -> int: ...

    def add_result(self, run_id: int, result: BenchResult, samples: FloatArray | None) -> None: ...

    def replace_result(self, run_id: int, result: BenchResult, samples: FloatArray | None) -> None: ...

    def set_counters(self, run_id: int, seq: int, counters: dict[str, object]) -> None: ...

    def set_content_hash(self, run_id: int, digest: str, file_digests: Sequence[str] = ()) -> None: ...

    def runs_with_content(self, digest: str) -> list[int]: ...

    def lock_content(self, digests: Sequence[str]) -> None: ...

    def finish_run(self, run_id: int, status: str, end_time: str, reason: str | None) -> None: ...

    def set_run_meta(self, run_id: int, key: str, value: object) -> None: ...

    def runs(self) -> list[RunInfo]: ...

    def readable_runs(self, last: int | None = None) -> tuple[list[RunInfo], list[StoreError]]: ...

    def count_runs(self) -> int: ...

    def run(self, ref: str) -> RunInfo: ...

    def results(self, run_id: int) -> list[BenchResult]: ...

    def samples(self, run_id: int, seq: int) -> FloatArray | None: ...

    def add_profile(self, run_id: int, seq: int, record: dict[str, object]) -> None: ...

    def profiles(self, run_id: int) -> list[StoredProfile]: ...

    def close(self) -> None: ...
