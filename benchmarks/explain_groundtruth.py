#!/usr/bin/env python3
"""Ground truth for `osmeter compare --explain` (issue 29): a known change
of the machine's state, measured before and after with `osmeter run
--profile --counters sw`, and what the explanation says about it.

Cases:
  seccomp  the second run under N seccomp filters that inspect an argument
           and allow everything (tests/seccomp_wrap.py); needs no privilege
  thp      the system's THP setting `never`, then `always` (root; the
           setting is put back on every way out, SIGINT and SIGTERM too)
  audit    audit enabled with three rules for the second run (root, Debian
           auditd's auditctl). THE TRAP: once audit has been enabled in a
           boot, every task keeps an audit context and every system call pays
           for it until the machine reboots, even after `auditctl -e 0`. This
           case slows every later measurement on this machine: it runs only
           with --enable-audit-until-reboot, and never in the test suite.

For each case it prints the summary of the explanation, and a table row per
significant change: the top 3 functions by the change of their self time
per operation (ns) and the counter changes per operation, for the issue's
closing note. Exit status 1 when the explanation misses what the case must
show (seccomp: seccomp functions and `seccomp_filters 0 -> N`; thp: the THP
setting named, the pinned instances warned about; audit: audit functions).

Usage: benchmarks/explain_groundtruth.py seccomp|thp|audit [--filters 32] [--min-time 0.5]
                                          [--enable-audit-until-reboot] [--keep DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator
from contextlib import contextmanager

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")
CASES = {
    "seccomp": ["syscall.null", "syscall.getuid", "file.read", "--param", "size=4096"],  # names first: argparse
    "thp": ["task.fork", "mem.fault_anon", "--param", "touched_mib=64", "--param", "thp=0,1,2"],
    "audit": ["syscall.null", "syscall.getuid", "file.read", "--param", "size=4096"],
}
AUDIT_RULES = (["-a", "always,exit", "-F", "arch=b64", "-S", "openat", "-k", "osmeter-gt1"],
               ["-a", "always,exit", "-F", "arch=b64", "-S", "unlinkat", "-k", "osmeter-gt2"],
               ["-a", "always,exit", "-F", "arch=b64", "-S", "execve", "-k", "osmeter-gt3"])


def osmeter() -> list[str]:
    found = shutil.which("osmeter")
    return [found] if found else [sys.executable, "-m", "osmeter"]


def run(store: Path, label: str, names: list[str], min_time: float, wrap: list[str] = ()) -> None:
    argv = [*wrap, *osmeter(), "run", *names, "--profile", "--counters", "sw", "--min-time", str(min_time),
            "--label", label, "--store", str(store)]
    print("$", " ".join(argv), flush=True)
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)


def explain(store: Path, a: str, b: str) -> dict[str, Any]:
    argv = [*osmeter(), "compare", a, b, "--explain", "--store", str(store)]
    print("$", " ".join(argv), flush=True)
    text = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    print(text)
    doc = subprocess.run([*argv, "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(doc)["explain"]


def num(v: float) -> str:
    """4 significant digits, never an exponent (osmeter's own formatting)."""
    from osmeter.fmt import fmt_num

    return fmt_num(v, 4)


def ns(v: float) -> str:
    from osmeter.fmt import fmt_quantity

    return fmt_quantity(v, "ns", 3)


def value(c: dict[str, Any]) -> str:
    """A counter's two values per op: time scaled, counts to 4 digits."""
    show = ns if c["unit"] == "ns" else num
    return f"{show(c['baseline'])} → {show(c['run'])}"


def table(doc: dict[str, Any]) -> None:
    """A Markdown row per significant change: top 3 functions and the counters, in ns per op."""
    print("| change | top 3 functions (self ns per op, A → B) | counters per op (A → B) |")
    print("| --- | --- | --- |")
    for e in doc["explanations"]:
        fns = "; ".join(f"{f['function'].removesuffix('_[k]')} {ns(f['self_ns'][0])} → {ns(f['self_ns'][1])}"
                        f" ({'+' if f['self_delta_ns'] >= 0 else '-'}{ns(abs(f['self_delta_ns']))})"
                        for f in e["functions"][:3]) or e["profile_missing"]
        cnt = "; ".join(f"{c['name']} {value(c)}" + (" (sig.)" if c["significant"] else "")
                        for c in e["counters"] if c["significant"] or c["name"] == "task-clock") or "-"
        print(f"| {e['summary'].split(':')[0]} | {fns} | {cnt} |")


@contextmanager
def thp_setting() -> Iterator[Any]:
    """Sets the THP mode on request; the first value put back on every way out."""
    text = THP.read_text()
    before = text[text.index("[") + 1:text.index("]")]

    def restore(*_: Any) -> None:
        THP.write_text(before)
        if _:
            sys.exit(f"interrupted: THP put back to {before}")

    old = {s: signal.signal(s, restore) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield lambda mode: THP.write_text(mode)
    finally:
        restore()
        for s, h in old.items():
            signal.signal(s, h)
        print(f"THP put back to {before}", flush=True)


def case_seccomp(store: Path, args: argparse.Namespace) -> list[str]:
    run(store, "gt-base", CASES["seccomp"], args.min_time)
    wrap = [sys.executable, str(ROOT / "tests" / "seccomp_wrap.py"), "--filters", str(args.filters), "--"]
    run(store, "gt-seccomp", CASES["seccomp"], args.min_time, wrap)
    doc = explain(store, "gt-base", "gt-seccomp")
    table(doc)
    problems = []
    null = next((e for e in doc["explanations"] if e["bench"] == "syscall.null"), None)
    if null is None or null["delta_ns"] <= 0:
        problems.append("syscall.null is not explained as slower")
    elif not any("seccomp" in f["function"] or f["function"].removesuffix("_[k]") == "[kernel outside text]"
                 for f in null["functions"][:3]):
        problems.append("no seccomp function among syscall.null's top 3")
    if not any(d["key"] == "seccomp_filters" and d["baseline"] == "0" and d["run"] == str(args.filters)
               for d in doc["differences"]):
        problems.append(f"seccomp_filters 0 -> {args.filters} is not among the differences")
    return problems


def case_thp(store: Path, args: argparse.Namespace) -> list[str]:
    if os.geteuid() != 0 or not THP.exists():
        sys.exit("the thp case needs root and a kernel with transparent huge pages")
    with thp_setting() as set_mode:
        set_mode("never")
        run(store, "gt-thp-never", CASES["thp"], args.min_time)
        set_mode("always")
        run(store, "gt-thp-always", CASES["thp"], args.min_time)
    doc = explain(store, "gt-thp-never", "gt-thp-always")
    table(doc)
    problems = []
    if not any(d["key"] == "thp_enabled" for d in doc["differences"]):
        problems.append("thp_enabled is not among the differences")
    if not any(c["key"] == "thp_enabled" for e in doc["explanations"] for c in e["causes"]):
        problems.append("no change is put down to thp_enabled")
    if not any("thp=2" in p for p in doc["pinned"] + [x for e in doc["explanations"] for x in e["pinned"]]):
        problems.append("the pinned instances (thp=0) are not warned about")
    return problems


def case_audit(store: Path, args: argparse.Namespace) -> list[str]:
    if not args.enable_audit_until_reboot:
        sys.exit("the audit case enables audit, which slows every task on this machine until it reboots: "
                 "give --enable-audit-until-reboot to run it anyway")
    auditctl = shutil.which("auditctl")
    if os.geteuid() != 0 or auditctl is None:
        sys.exit("the audit case needs root and auditctl (apt-get install auditd)")
    run(store, "gt-audit-off", CASES["audit"], args.min_time)
    subprocess.run([auditctl, "-e", "1"], check=True, stdout=subprocess.DEVNULL)
    try:
        for rule in AUDIT_RULES:
            subprocess.run([auditctl, *rule], check=True, stdout=subprocess.DEVNULL)
        run(store, "gt-audit-on", CASES["audit"], args.min_time)
    finally:
        subprocess.run([auditctl, "-D"], stdout=subprocess.DEVNULL)
        subprocess.run([auditctl, "-e", "0"], stdout=subprocess.DEVNULL)
        print("audit rules deleted and audit disabled; tasks keep their audit context until reboot", flush=True)
    doc = explain(store, "gt-audit-off", "gt-audit-on")
    table(doc)
    null = next((e for e in doc["explanations"] if e["bench"] == "syscall.null"), None)
    if null is None or not any("audit" in f["function"] for f in null["functions"][:3]):
        return ["no audit function among syscall.null's top 3"]
    return []


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("case", choices=sorted(CASES))
    p.add_argument("--filters", type=int, default=32, help="seccomp filters (default 32)")
    p.add_argument("--min-time", type=float, default=0.5, help="seconds per benchmark and repetition (default 0.5)")
    p.add_argument("--enable-audit-until-reboot", action="store_true")
    p.add_argument("--keep", metavar="DIR", help="keep the store in DIR (default: a temporary one, removed)")
    args = p.parse_args()
    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="osmeter-explain-gt."))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        problems = {"seccomp": case_seccomp, "thp": case_thp, "audit": case_audit}[args.case](tmp / "s.db", args)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    for problem in problems:
        print(f"FAIL: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
