"""osmeter store: the store itself — copy runs between stores (SQLite and
PostgreSQL, either way), and what a store is (backend, schema, runs)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .. import textsafe
from ..errors import EXIT_STORE, UsageError
from ..store import describe, open_store, resolve_location
from .options import add_json_option, add_store_option

NAME = "store"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(NAME, help="copy runs between stores; show what a store holds",
                       description="Work on stores: SQLite files and PostgreSQL databases (docs/store.md).")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    c = actions.add_parser(
        "copy", help="copy runs from one store to another",
        description="Copy runs from SRC to DST (a path or a postgresql:// URL each), every result, sample and "
                    "profile as stored, under new ids. A run already in DST (copied before) is not copied again; "
                    "a damaged run is reported and left behind. DST is created if needed.")
    c.add_argument("src", metavar="SRC", help="the store to copy from")
    c.add_argument("dst", metavar="DST", help="the store to copy to")
    c.add_argument("--run", dest="runs", metavar="ID", action="append", type=_run_id,
                   help="copy this run only (repeatable; default: every run)")
    add_json_option(c, "the copied runs")
    i = actions.add_parser("info", help="the store's backend, schema version and runs",
                           description="Open the store (upgrading its schema if it is older) and say what it is.")
    add_store_option(i)
    add_json_option(i, "the store's description")
    return p


def _run_id(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a run id is a number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"a run id is 1 or more, not {value}")
    return value


def _copy(args: argparse.Namespace) -> int:
    from ..store.copy import copy_runs  # noqa: PLC0415 (SQLAlchemy: only when a store is opened)

    src_loc, dst_loc = resolve_location(args.src), resolve_location(args.dst)
    if src_loc == dst_loc:
        raise UsageError(f"SRC and DST are the same store ({describe(src_loc)}); give two different stores")
    src = open_store(src_loc, create=False)
    try:
        dst = open_store(dst_loc, create=True)
        try:
            out = copy_runs(src, dst, args.runs, say=lambda line: textsafe.say("copy", line))
        finally:
            dst.close()
    finally:
        src.close()
    if args.json:
        doc = {"copied": [{"src": a, "dst": b} for a, b in out.copied],
               "already_there": [{"src": a, "dst": b} for a, b in out.present],
               "updated": [{"src": a, "dst": b} for a, b in out.updated],
               "still_running": out.running,
               "damaged": [e.message for e in out.damaged]}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        sys.stdout.write(f"{len(out.copied)} runs copied from {describe(src_loc)} to {describe(dst_loc)}"
                         f"{f', {len(out.present)} already there' if out.present else ''}"
                         f"{f', {len(out.updated)} updated' if out.updated else ''}"
                         f"{f', {len(out.running)} still running (not copied)' if out.running else ''}"
                         f"{f', {len(out.damaged)} damaged (not copied)' if out.damaged else ''}\n")
    for e in out.damaged:
        textsafe.say("error", e.message)
    if out.running:
        textsafe.say("warning", f"{len(out.running)} run(s) still running were not copied "
                                f"({', '.join(map(str, out.running))}); copy again when they have ended")
    return EXIT_STORE if out.damaged else 0


def _info(args: argparse.Namespace) -> int:
    from ..store.migrate import head_version  # noqa: PLC0415 (SQLAlchemy: only when a store is opened)

    location = resolve_location(args.store)
    store = open_store(location, create=False)
    try:
        runs, damaged = store.readable_runs()
        doc = {"location": describe(location), "backend": store.BACKEND,
               "schema_version": store.schema_version(), "schema_head": head_version(),
               "runs": len(runs) + len(damaged), "damaged_runs": len(damaged),
               "fleets": sorted({r.fleet for r in runs if r.fleet})}
    finally:
        store.close()
    if args.json:
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        sys.stdout.write("".join(f"{k}: {textsafe.line(str(v))}\n" for k, v in doc.items()))
    return 0


def run(args: argparse.Namespace) -> int:
    return _copy(args) if args.action == "copy" else _info(args)
