"""The hostile cases of issue 27, run as a user would run them, and tallied.

    python tests/hostile/run_hostile.py [--json]

Each case runs `osmeter` in a subprocess with its own HOME, XDG directories
and store, under a memory limit (2 GiB of address space) and a time limit,
and is checked for: a Python traceback, an exit code docs/exit-codes.md does
not list, a secret printed, the time limit hit, and files left in its own $TMPDIR
or spool directory. The tally is what the issue's "re-run
of the same hostile cases" asks for: every count must be 0.
tests/unit/test_hostile.py runs it (slow-marked).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

SECRET = "Xyzzy12345"
DOCUMENTED = {0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}  # docs/exit-codes.md; 1 is a bug (a traceback)
MEM_LIMIT = 2 << 30
OSMETER = [sys.executable, "-m", "osmeter"]


@dataclass
class Case:
    name: str
    argv: list[str]
    shell: str | None = None  # a shell command instead (fds closed, /dev/full), OSM standing for osmeter
    env: dict[str, str] = field(default_factory=dict)
    timeout: float = 60
    expect_codes: tuple[int, ...] = ()  # empty: any documented code
    prepare: Callable[[Path], None] | None = None


@dataclass
class Outcome:
    name: str
    code: int | None
    seconds: float
    problems: list[str]


def _folded(work: Path, name: str, text: str) -> str:
    path = work / name
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    return str(path)


DATA = Path(__file__).resolve().parents[1] / "data" / "run_x86_64.jsonl"


def _seed(work: Path) -> None:
    """Run 1 in the case's store: a probe file imported."""
    subprocess.run([*OSMETER, "import", str(DATA), "--store", str(work / "store.db")], check=True,
                   capture_output=True, env={**os.environ, "HOME": str(work / "home"),
                                             "XDG_STATE_HOME": str(work / "home" / "state")})


def cases(work: Path) -> list[Case]:
    deep = ";".join(f"f{i}" for i in range(100_000)) + " 7\n"
    fifo = work / "fifo"
    return [
        Case("password without host", ["runs", "--store", f"postgresql://bench2:{SECRET}/bench2"]),
        Case("password as %70assword", ["runs", "--store", f"postgresql://u@127.0.0.1:1/db?%70assword={SECRET}"]),
        Case("sslpassword", ["runs", "--store", f"postgresql://u@127.0.0.1:1/db?sslpassword={SECRET}"]),
        Case("postgresql: without //", ["runs", "--store", f"postgresql:u:{SECRET}@h/db"]),
        Case("'@' in the password", ["runs", "--store", f"postgresql://u:{SECRET[:4]}@{SECRET[4:]}@127.0.0.1:1/db"]),
        Case("hotspots --show /dev/zero", ["hotspots", "--show", "/dev/zero"], expect_codes=(2,)),
        Case("hotspots --show /dev/urandom", ["hotspots", "--show", "/dev/urandom"], expect_codes=(2,)),
        Case("hotspots --diff /dev/null /dev/zero", ["hotspots", "--diff", "/dev/null", "/dev/zero"], expect_codes=(2,)),
        Case("hotspots --show FIFO", ["hotspots", "--show", str(fifo)], expect_codes=(2,), timeout=60,
             prepare=lambda w: os.mkfifo(fifo)),
        Case("hotspots --show 100 000-frame stack", ["hotspots", "--show", "@deep", "-o", "@out"],
             prepare=lambda w: (w / "deep.folded").write_text(deep)),
        Case("hotspots weight of 5000 digits", ["hotspots", "--show", "@big"], expect_codes=(2,),
             prepare=lambda w: (w / "big.folded").write_text("main;f " + "9" * 5000 + "\n")),
        Case("hotspots ESC and NUL in frames", ["hotspots", "--show", "@ctl", "-o", "@out"],
             prepare=lambda w: (w / "ctl.folded").write_bytes(b"main;\x1b[31mred;nul\x00x 5\n")),
        Case("import /dev/zero", ["import", "/dev/zero"], expect_codes=(5,)),
        Case("report --expect /dev/zero", ["report", "1", "--expect", "/dev/zero"], expect_codes=(2,),
             prepare=_seed),
        Case("report --expect FIFO", ["report", "1", "--expect", "@@expect-fifo"], expect_codes=(2,),
             prepare=lambda w: (_seed(w), os.mkfifo(w / "expect-fifo"))),
        Case("fleet run /dev/zero", ["fleet", "run", "/dev/zero", "--suite", "quick"], expect_codes=(2,)),
        Case("runs >&-", [], shell="OSM runs >&-"),
        Case("list >&-", [], shell="OSM list >&-"),
        Case("sysinfo >&-", [], shell="OSM sysinfo >&-"),
        Case("store info >&-", [], shell="OSM store info >&-", expect_codes=(12,), prepare=_seed),
        Case("show 1 >&-", [], shell="OSM show 1 >&-", expect_codes=(12,), prepare=_seed),
        Case("show 1 > /dev/full", [], shell="OSM show 1 > /dev/full", expect_codes=(12,), prepare=_seed),
        Case("export 1 --format csv > /dev/full", [], shell="OSM export 1 --format csv > /dev/full",
             expect_codes=(12,), prepare=_seed),
        Case("runs > /dev/full", [], shell="OSM runs > /dev/full"),
        Case("list > /dev/full", [], shell="OSM list > /dev/full"),
        Case("list 2>&-", [], shell="OSM list 2>&-"),
        Case("ascii stdout", ["list"], env={"PYTHONIOENCODING": "ascii"}),
    ]


def _resolve(argv: list[str], work: Path) -> list[str]:
    out = []
    for a in argv:
        if a == "@out":
            out.append(str(work / "out"))
        elif a.startswith("@@"):
            out.append(str(work / a[2:]))
        elif a.startswith("@"):
            out.append(str(work / f"{a[1:]}.folded"))
        else:
            out.append(a)
    return out


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEM_LIMIT, MEM_LIMIT))


def run_case(case: Case, root: Path) -> Outcome:
    work = root / case.name.replace(" ", "_").replace("/", "_")
    work.mkdir()
    home = work / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home / "data"), "XDG_STATE_HOME": str(home / "state"),
           "XDG_CONFIG_HOME": str(home / "config"), "XDG_CACHE_HOME": str(home / "cache"),
           "OSMETER_STORE": str(work / "store.db"), "TMPDIR": str(work / "tmp"), **case.env}
    (work / "tmp").mkdir()
    if case.prepare is not None:
        case.prepare(work)
    if case.shell is not None:
        osm = " ".join(map(str, OSMETER))
        argv = ["sh", "-c", case.shell.replace("OSM", f"exec {osm}")]
    else:
        argv = [*OSMETER, *_resolve(case.argv, work)]
    started = time.monotonic()
    problems: list[str] = []
    try:
        p = subprocess.run(argv, env=env, cwd=work, capture_output=True, timeout=case.timeout, preexec_fn=_limit)
        code, out, err = p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        code, out, err = None, "", ""
        problems.append(f"still running after {case.timeout:g} s")
    seconds = time.monotonic() - started
    if "Traceback (most recent call last)" in err:
        problems.append("traceback: " + err.strip().splitlines()[-1][:200])
    if code is not None and code not in DOCUMENTED:
        problems.append(f"exit code {code} not documented")
    if case.expect_codes and code not in case.expect_codes:
        problems.append(f"exit code {code}, expected {case.expect_codes}: {err.strip()[:200]}")
    if SECRET in out + err or SECRET[4:] in out + err:
        problems.append("a secret printed")
    if code is not None and code != 0 and not err.strip() and "2>&-" not in (case.shell or ""):
        problems.append("failed without a word")
    left = sorted(p.name for p in (work / "tmp").iterdir())
    if left:
        problems.append(f"left in $TMPDIR: {left}")
    if (home / "state" / "osmeter" / "spool").is_dir() and any((home / "state" / "osmeter" / "spool").iterdir()):
        problems.append("a spool file left")
    return Outcome(case.name, code, seconds, problems)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="hostile."))
    try:
        outcomes = []
        for case in cases(root):
            outcomes.append(run_case(case, root))
            if not args.json:
                o = outcomes[-1]
                print(f"{o.name:40} exit {o.code!s:>4}  {o.seconds:6.1f} s  {'; '.join(o.problems) or 'ok'}",
                      flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    tally = {k: sum(1 for o in outcomes for p in o.problems if p.startswith(k))
             for k in ("traceback", "exit code", "a secret", "still running", "left in $TMPDIR", "a spool", "failed")}
    if args.json:
        print(json.dumps({"cases": [o.__dict__ for o in outcomes], "tally": tally}, indent=2))
    else:
        print(f"\n{len(outcomes)} cases; " + ", ".join(f"{k}: {v}" for k, v in tally.items()))
    return 1 if any(o.problems for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
