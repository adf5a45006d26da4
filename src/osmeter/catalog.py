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
    sweep: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class Catalog:
    probe_version: str
    suites: tuple[str, ...]
    benchmarks: tuple[Benchmark, ...]


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
    if not isinstance(params, list) or not isinstance(sweep, list) or not all(isinstance(s, dict) for s in sweep):
        raise ProbeError(f"list: {where}.params and .sweep must be arrays")
    return Benchmark(
        name=b["name"],
        family=b["family"],
        description=b["description"],
        unit=b["unit"],
        requires=_strings(b.get("requires", []), f"{where}.requires"),
        suites=_strings(b.get("suites", []), f"{where}.suites"),
        params=tuple(_param(p, f"{where}.params[{j}]") for j, p in enumerate(params)),
        sweep=tuple(sweep),
    )


def parse_catalog(doc: Mapping[str, Any]) -> Catalog:
    try:
        check_schema_version(doc.get("schema"), "list")
    except RecordError as e:
        raise ProbeError(e.message) from None
    benchmarks = doc.get("benchmarks")
    if not isinstance(benchmarks, list):
        raise ProbeError("list: 'benchmarks' must be an array")
    return Catalog(
        probe_version=str(doc.get("probe_version", "")),
        suites=_strings(doc.get("suites", []), "suites"),
        benchmarks=tuple(_benchmark(b, i) for i, b in enumerate(benchmarks)),
    )


def probe_catalog(probe: Path) -> tuple[Catalog, dict[str, Any]]:
    """Ask the probe; returns the parsed catalogue and the document as printed."""
    doc = run_document(probe, ["list", "--json"])
    return parse_catalog(doc), doc
