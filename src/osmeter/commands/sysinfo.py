"""osmeter sysinfo: the machine description the probe records with every run."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from typing import Any

from ..probe import locate_probe
from ..fmt import render_pairs
from ..sysinfo import MachineInfo, display_value, probe_sysinfo
from .options import add_json_option

NAME = "sysinfo"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        NAME,
        help="describe this machine",
        description="Describe this machine as osmeter records it with each run ('-' means not exposed). "
        "Sizes show in KiB/MiB/GiB with the exact byte count, lists one item a line, and the CPU flags "
        "as their count (--flags lists them); --json prints the probe's document unchanged.",
    )
    p.add_argument("--flags", action="store_true", help="list every CPU flag instead of their count")
    p.add_argument("--explain", action="store_true", help="add a column saying what each field means")
    add_json_option(p, "the probe's sysinfo document")
    return p


def render_machine(info: MachineInfo, explain: bool, width: int = 100, flags: bool = False) -> str:
    pairs = [(f.key, display_value(f.key, f.value, flags), f.help if explain else "") for f in info.fields]
    return render_pairs(pairs, width) + "\n"


def run(args: argparse.Namespace) -> int:
    info, doc = probe_sysinfo(locate_probe())
    if args.json:
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        width = shutil.get_terminal_size((100, 24)).columns
        sys.stdout.write(render_machine(info, args.explain, width, args.flags))
    return 0
