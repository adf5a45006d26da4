"""Which parameters a table shows: those that say something.

A result stores every parameter of its instance, defaults included
(`task.fork concurrency=1 drop_caches=0 migrate=0 thp=0 touched_mib=0
vmas=6000`). A table people read shows a parameter where it varies among
the run's instances of that benchmark (vmas=0, 6000, 12000) or differs from
the benchmark's default in the probe's catalogue (`size=1073741824` where
the default is 16 MiB); the rest is the default, and `osmeter list NAME`
says what it is. `--wide`, JSON and CSV show every parameter.

Without a catalogue (no usable probe here: a store read on another
machine), every parameter is shown.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..catalog import probe_catalog
from ..errors import OsmeterError
from ..model import BenchResult
from ..probe import locate_probe

Defaults = Mapping[str, Mapping[str, Any]]  # benchmark -> parameter -> its default
ParamsOf = Callable[[BenchResult], Mapping[str, Any]]


def catalog_defaults() -> Defaults | None:
    """Every benchmark's parameter defaults from the probe's catalogue (hidden ones too); None
    without a usable probe. Asked once per probe file (path, size, mtime) in a process."""
    try:
        probe = locate_probe()
        st = probe.stat()
    except (OsmeterError, OSError):
        return None
    return _defaults_of(str(probe), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _defaults_of(probe: str, size: int, mtime_ns: int) -> Defaults | None:
    try:
        catalog, _ = probe_catalog(Path(probe), hidden=True)
    except OsmeterError:
        return None
    return {b.name: {p.name: p.default for p in b.params} for b in catalog.benchmarks}


def every_param(r: BenchResult) -> Mapping[str, Any]:
    return r.params


def _same(a: Any, b: Any) -> bool:
    """A stored value and a default: equal as JSON would have them (1 == 1.0; True is not 1)."""
    return type(a) is type(b) and a == b if isinstance(a, bool) or isinstance(b, bool) else a == b


def telling_params(results: Sequence[BenchResult], defaults: Defaults | None) -> ParamsOf:
    """The parameters worth showing of each result (module docstring); every one when `defaults`
    is None."""
    if defaults is None:
        return every_param
    values: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for r in results:
        for k, v in r.params.items():
            values[r.bench][k].add(repr(v))
    varying = {bench: {k for k, seen in keys.items() if len(seen) > 1} for bench, keys in values.items()}

    def shown(r: BenchResult) -> Mapping[str, Any]:
        known = defaults.get(r.bench)
        if known is None:
            return r.params
        vary = varying.get(r.bench, set())
        return {k: v for k, v in r.params.items() if k in vary or k not in known or not _same(v, known[k])}

    return shown
