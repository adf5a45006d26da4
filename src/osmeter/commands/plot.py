"""osmeter plot: a run's figures as files (SVG, PNG or PDF), ready for a paper.

The same figures as the HTML report: every family figure the run has data
for, then one distribution figure per benchmark. `BENCH` narrows it to one
family (`mem`) or one benchmark (`mem.latency`: its distribution and its
family's figures). Files are named `run<ID>-<figure>.<format>`, each written
by the rules of osmeter.outfile (atomically, mode kept, a symlink followed,
a device or FIFO written in place); DIR may be a symlink to a directory.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .. import textsafe
from .. import outfile
from ..errors import UsageError
from ..report import plots
from ..report.content import run_data
from ..report.figures import NamedFigure, family_figures
from ..store import open_store, resolve_location
from ..store.refs import RUN_HELP
from .options import add_store_option

NAME = "plot"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        NAME,
        help="write a run's figures as SVG, PNG or PDF files",
        description="Write the figures of the report as files: labelled axes with units, legends.",
    )
    p.add_argument("run", metavar="RUN", help=f"{RUN_HELP} (see `osmeter runs`)")
    p.add_argument("bench", metavar="BENCH", nargs="?", help="only this benchmark (family.op) or family")
    p.add_argument("-o", "--output", metavar="DIR", required=True, help="directory for the files (created if needed)")
    p.add_argument("--format", choices=plots.FORMATS, default="svg", help="file format (default svg)")
    add_store_option(p)
    return p


def run(args: argparse.Namespace) -> int:
    from ..report.figures.distribution import benchmarks, distribution_figures

    directory = Path(args.output)
    store = open_store(resolve_location(args.store), create=False)
    try:
        info = store.run(args.run)
        data = run_data(store, info)
        names = benchmarks(data)
        if not names:
            raise UsageError(f"run {info.id} has no ok result to plot")
        bench = args.bench
        if bench is not None:
            family = bench.split(".", 1)[0]
            chosen = [n for n in names if n == bench or ("." not in bench and n.split(".", 1)[0] == bench)]
            if not chosen:
                raise UsageError(
                    f"run {info.id} has no ok result of {bench!r}; it has: {', '.join(names)}"
                )
            families = [family]
        else:
            chosen, families = names, None
        outfile.prepare_directory(directory)
        figures: list[NamedFigure]
        figures, failures = family_figures(data, families)
        for name in chosen:
            figures += distribution_figures(data, name)
    finally:
        store.close()
    written = []
    for nf in figures:
        path = directory / f"run{info.id}-{nf.name}.{args.format}"
        try:
            outfile.write(path, plots.render(nf.figure, args.format))
        finally:
            plots.close(nf.figure)
        written.append(path)
        print(path)
    for f in failures:
        textsafe.say("warning", f"the {f.family} figures could not be drawn: {f.message}")
    print(f"wrote {len(written)} figure(s) to {directory}", file=sys.stderr)
    return 0
