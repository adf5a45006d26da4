"""osmeter page-cache: the effective page-cache size a run's file.cache_sweep curve shows.

Reads a stored run's `file.cache_sweep` results, finds the knee of each
curve (osmeter.pagecache states the method) and sets it next to what
/proc/meminfo suggested when the run started (MemAvailable) and the memory
cgroup's limit when the run had one (`osmeter run --cgroup-mem`). The curve
comes from `osmeter study files` (which sweeps the sizes inside a memory
cgroup) or `osmeter run file.cache_sweep --param size=A,B,... --cgroup-mem
SIZE`. `-o FIGURE.svg|png|pdf` writes the curve with its knee: the suffix
picks the format, `--format` overrides it (outfile.py's rule, as for every
`-o`).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .. import outfile, pagecache, textsafe
from ..errors import MissingDependencyError, UsageError
from ..store import open_store, resolve_location
from ..store.refs import RUN_HELP
from .options import add_json_option, add_store_option

NAME = "page-cache"
PAGECACHE_SCHEMA = 1
FIGURE_SUFFIXES = {".svg": "svg", ".png": "png", ".pdf": "pdf"}


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        NAME,
        help="the effective page-cache size read off a run's file.cache_sweep curve",
        description="Find the knee of a stored run's file.cache_sweep curve (re-read time per block against "
        "file size): the effective page-cache size, next to /proc/meminfo's MemAvailable at run time and the "
        "memory cgroup's limit when the run had one.",
    )
    p.add_argument("run", metavar="RUN", help=f"{RUN_HELP} (see `osmeter runs`)")
    p.add_argument("-o", "--output", metavar="FIGURE", help="write the curve with its knee (.svg, .png or .pdf)")
    p.add_argument("--format", choices=tuple(FIGURE_SUFFIXES.values()),
                   help="the figure's format (default: from the suffix of -o; svg for a device or pipe)")
    add_store_option(p)
    add_json_option(p, "the curves and knees")
    return p


def page_cache(store: Any, ref: str, as_json: bool) -> tuple[str, list[pagecache.CacheAnalysis]]:
    """The knees of a stored run, as text or as a versioned JSON document."""
    info = store.run(ref)
    analyses = pagecache.analyse(store.results(info.id), info.params)
    if as_json:
        doc = {"schema": PAGECACHE_SCHEMA, "run": info.id, "curves": [a.as_dict() for a in analyses]}
        return textsafe.json_text(json.dumps(doc, indent=2)) + "\n", analyses
    return textsafe.terminal(f"run {info.id}\n" + pagecache.render_text(analyses)), analyses


def write_figure(path: str, fmt: str, analyses: list[pagecache.CacheAnalysis]) -> str:
    from ..report import plots
    from ..report.figures.file import cache_figure

    usable = [a for a in analyses if len(a.points) >= 2]
    if not usable:
        return "no curve of two or more sizes: no figure written"
    nf = cache_figure(usable[0], "file-cache-sweep")
    try:
        written = outfile.write(path, plots.render(nf.figure, fmt))
    finally:
        plots.close(nf.figure)
    more = f" (the first of {len(usable)} curves; `osmeter plot RUN` draws all)" if len(usable) > 1 else ""
    return f"wrote {written}{more}"


def run(args: argparse.Namespace) -> int:
    fmt = None
    if args.format and not args.output:
        raise UsageError("--format is the figure's format: give -o FIGURE too")
    if args.output:  # a bad name fails before any work
        fmt = outfile.choose_format(args.format, args.output, FIGURE_SUFFIXES, "svg")
        outfile.check(args.output)
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise MissingDependencyError("the figure needs matplotlib: pip install matplotlib") from None
    store = open_store(resolve_location(args.store), create=False)
    try:
        text, analyses = page_cache(store, args.run, args.json)
        sys.stdout.write(text)
        if args.output and fmt:
            textsafe.say("note", write_figure(args.output, fmt, analyses))
    finally:
        store.close()
    return 0
