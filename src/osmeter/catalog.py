"""The probe's catalogue of benchmarks (`osmeter-probe list --json`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from .errors import ProbeError, RecordError
from .probe import run_document
from .records import check_schema_version


@dataclass(frozen=True)
class Param:
    name: str
    type: str  # int, size, enum, string
    default: Any
    min: Any = None
    max: Any = None
    choices: tuple[str, ...] = ()
    help: str = ""


@dataclass(frozen=True)
class Benchmark:
    name: str  # family.operation
    family: str
    description: str
    unit: str
    requires: tuple[str, ...]
    suites: tuple[str, ...]
    params: tuple[Param, ...]
    sweep: tuple[dict[str, Any], ...]  # the parameter sets a suite runs; () = the defaults
    sweep_full: tuple[dict[str, Any], ...] = ()  # the full suite's sets (older probes: none, read as `sweep`)
    hidden: bool = False  # a test benchmark, listed only by `list --all`, in no suite


@dataclass(frozen=True)
class LebenchRow:
    """One of LEBench's figures and the benchmark that reproduces it (docs/lebench.md)."""

    name: str  # LEBench's name: "fork", "fork Child", "small read"
    bench: str
    given_params: str  # as the table gives them: "vmas=6000"
    params: dict[str, Any] | None  # every parameter, resolved; None while the row is pending
    available: bool
    pending: str | None  # why not available: the family is not built yet
    region: str  # LEBench's timed region
    note: str | None  # where osmeter's harness differs by default
    exact_batch: int  # operations LEBench times per clock pair
    lebench_iterations: int


@dataclass(frozen=True)
class Catalog:
    probe_version: str
    suites: tuple[str, ...]
    benchmarks: tuple[Benchmark, ...]
    lebench_rows: tuple[LebenchRow, ...] = ()


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ProbeError(f"list: {where} must be an array of strings")
    return tuple(value)


def _param(p: Any, where: str) -> Param:
    if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not isinstance(p.get("type"), str):
        raise ProbeError(f"list: {where} must be an object with a string 'name' and 'type'")
    choices = _strings(p["choices"], f"{where}.choices") if "choices" in p else ()
    return Param(p["name"], p["type"], p.get("default"), p.get("min"), p.get("max"), choices, str(p.get("help", "")))


def _benchmark(b: Any, i: int) -> Benchmark:
    where = f"benchmarks[{i}]"
    if not isinstance(b, dict):
        raise ProbeError(f"list: {where} must be an object")
    for key in ("name", "family", "description", "unit"):
        if not isinstance(b.get(key), str):
            raise ProbeError(f"list: {where}.{key} must be a string")
    params = b.get("params", [])
    sweep = b.get("sweep", [])
    sweep_full = b.get("sweep_full", [])
    for s in (sweep, sweep_full):
        if not isinstance(params, list) or not isinstance(s, list) or not all(isinstance(x, dict) for x in s):
            raise ProbeError(f"list: {where}.params, .sweep and .sweep_full must be arrays")
    return Benchmark(
        name=b["name"],
        family=b["family"],
        description=b["description"],
        unit=b["unit"],
        requires=_strings(b.get("requires", []), f"{where}.requires"),
        suites=_strings(b.get("suites", []), f"{where}.suites"),
        params=tuple(_param(p, f"{where}.params[{j}]") for j, p in enumerate(params)),
        sweep=tuple(sweep),
        sweep_full=tuple(sweep_full),
        hidden=b.get("hidden") is True,
    )


def _lebench_row(r: Any, i: int) -> LebenchRow:
    where = f"lebench_rows[{i}]"
    if not isinstance(r, dict):
        raise ProbeError(f"list: {where} must be an object")
    for key in ("name", "bench", "given_params", "region"):
        if not isinstance(r.get(key), str):
            raise ProbeError(f"list: {where}.{key} must be a string")
    params = r.get("params")
    if params is not None and not isinstance(params, dict):
        raise ProbeError(f"list: {where}.params must be an object or null")
    return LebenchRow(
        name=r["name"],
        bench=r["bench"],
        given_params=r["given_params"],
        params=params,
        available=bool(r.get("available")),
        pending=r.get("pending") if isinstance(r.get("pending"), str) else None,
        region=r["region"],
        note=r.get("note") if isinstance(r.get("note"), str) else None,
        exact_batch=int(r.get("exact_batch", 1)),
        lebench_iterations=int(r.get("lebench_iterations", 0)),
    )


def parse_catalog(doc: Mapping[str, Any]) -> Catalog:
    try:
        check_schema_version(doc.get("schema"), "list")
    except RecordError as e:
        raise ProbeError(e.message) from None
    benchmarks = doc.get("benchmarks")
    if not isinstance(benchmarks, list):
        raise ProbeError("list: 'benchmarks' must be an array")
    rows = doc.get("lebench_rows", [])  # probes before 0.2 have no table
    if not isinstance(rows, list):
        raise ProbeError("list: 'lebench_rows' must be an array")
    return Catalog(
        probe_version=str(doc.get("probe_version", "")),
        suites=_strings(doc.get("suites", []), "suites"),
        benchmarks=tuple(_benchmark(b, i) for i, b in enumerate(benchmarks)),
        lebench_rows=tuple(_lebench_row(r, i) for i, r in enumerate(rows)),
    )


def probe_catalog(probe: Path, hidden: bool = False) -> tuple[Catalog, dict[str, Any]]:
    """Ask the probe; returns the parsed catalogue and the document as printed.
    With `hidden`, the hidden test benchmarks too (`list --json --all`)."""
    doc = run_document(probe, ["list", "--json", *(["--all"] if hidden else [])])
    return parse_catalog(doc), doc
