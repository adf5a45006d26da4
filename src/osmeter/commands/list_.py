"""osmeter list: the probe's catalogue of benchmarks."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..catalog import Benchmark, Param, probe_catalog
from ..probe import locate_probe
from ..report.table import render_table
from .options import add_json_option

NAME = "list"
HEADERS = ("name", "unit", "suites", "params (default [range])", "description")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(NAME, help="list the benchmarks", description="List the benchmarks the probe knows.")
    add_json_option(p, "the probe's catalogue document")
    return p


def format_param(p: Param) -> str:
    if p.type == "enum" and p.choices:
        allowed = " {" + "|".join(p.choices) + "}"
    elif p.min is not None or p.max is not None:
        low = "" if p.min is None else str(p.min)
        high = "" if p.max is None else str(p.max)
        allowed = f" [{low}..{high}]"
    else:
        allowed = ""
    default = json.dumps(p.default) if isinstance(p.default, str) and p.type == "string" else str(p.default)
    return f"{p.name}={default}{allowed}"


def benchmark_row(b: Benchmark) -> list[str]:
    return [
        b.name,
        b.unit,
        ",".join(b.suites) or "-",
        ", ".join(format_param(p) for p in b.params) or "-",
        b.description + (f" (needs {', '.join(b.requires)})" if b.requires else ""),
    ]


def run(args: argparse.Namespace) -> int:
    catalog, doc = probe_catalog(locate_probe())
    if args.json:
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        sys.stdout.write(render_table(HEADERS, [benchmark_row(b) for b in catalog.benchmarks]) + "\n")
    return 0
