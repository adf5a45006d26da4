"""The store interface every backend provides, and the shared sample codec."""

from __future__ import annotations

import zlib
from typing import ContextManager, Protocol, Sequence

import numpy as np

from ..model import BenchResult, NewRun, RunInfo
from ..stats import FloatArray

SAMPLES_DTYPE = "<f8"  # little-endian float64, whatever the host's byte order


def encode_samples(values: Sequence[float] | FloatArray) -> bytes:
    """Samples as stored: zlib-compressed little-endian float64."""
    return zlib.compress(np.asarray(values, dtype=SAMPLES_DTYPE).tobytes())


def decode_samples(blob: bytes) -> FloatArray:
    return np.frombuffer(zlib.decompress(blob), dtype=SAMPLES_DTYPE).astype(np.float64)


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

    def finish_run(self, run_id: int, status: str, end_time: str, reason: str | None) -> None: ...

    def runs(self) -> list[RunInfo]: ...

    def run(self, ref: str) -> RunInfo: ...

    def results(self, run_id: int) -> list[BenchResult]: ...

    def samples(self, run_id: int, seq: int) -> FloatArray | None: ...

    def close(self) -> None: ...
