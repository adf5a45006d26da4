"""osmeter study files: the course project's file-system figures in one command, one stored run.

Three parts, each one osmeter-probe invocation (the probe applies a --param
to every benchmark that has it, and `block` belongs to all of them, so one
invocation would multiply the matrix), recorded as one run (the recorder
takes several probe streams, as for `run --repeat`):

1. **Page cache** (`file.cache_sweep`): the re-read time per block of a
   file at sizes from 1/32 of `--max-mib` (1/16 with --quick) up to it,
   four sizes per doubling (two with --quick), inside a memory cgroup of
   `--cgroup-mem` (default 512M when root; `none`, or no root, runs
   unconfined). `--max-mib` defaults to twice the cgroup's limit; without
   a cgroup to twice MemAvailable (1 GiB with --quick), bounded by the
   local directory's free disk. The knee (osmeter.pagecache) is the
   effective page-cache size; unconfined on a large machine no knee may
   be reached, and the text says so. Every size gets at least one pass
   over the largest file's blocks (--min-samples), at most two.
2. **Cold reads** (`file.seq_read_cold`, `file.rand_read_cold`) at block
   sizes 4K, 16K, 64K, 256K, 1M (4K, 64K, 1M with --quick), in the local
   directory and, with `--remote-dir PATH` (a mounted remote directory:
   sshfs, NFS, SMB), there too: local against remote. Without it that
   part is left out, and the output says so.
3. **Contention** (`file.contention`): 1, 2, 4 and 8 processes reading at
   once.

Then, in DIR: the file family's figures (osmeter.report.figures.file) as
SVG and PNG, and a table (files-study.csv, files-study.txt), printed with
the page cache's knee. Free disk (the largest file, or the contention's
files) is checked up front: an explicit --max-mib that does not fit is
refused; the default is bounded by it, with a note.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Sequence

from .. import cgroup, outfile, pagecache, textsafe
from ..argtypes import non_negative_int, positive_int
from ..errors import UsageError
from ..fmt import MISSING, fmt_num, render_table
from ..runner import RunOptions
from ..store import open_store, resolve_location
from .common import Part, check_figures_possible, conclude, record_parts, write_files
from .common import render_csv as table_csv

NAME = "files"
HELP = "the page cache's size, cold reads by block size, local against remote files, contention"
DESCRIPTION = ("The course project's file-system figures as one stored run: the page cache's effective size "
               "(file.cache_sweep inside a memory cgroup, the knee detected), sequential against random cold reads "
               "by block size, local against remote files (--remote-dir), and contention of 1..8 readers.")
MIB = 1 << 20
DEFAULT_CGROUP = "512M"
BLOCKS = ("4K", "16K", "64K", "256K", "1M")
QUICK_BLOCKS = ("4K", "64K", "1M")
PROCS = (1, 2, 4, 8)
SWEEP_BLOCK = MIB  # file.cache_sweep's default block
QUICK_FILE_SIZE = "16M"  # cold reads and contention with --quick (default 64M)
COLD_FILE_MIB = 64
QUICK_UNCONFINED_MAX_MIB = 1024
DISK_RESERVE = 256 * MIB  # left free beyond the largest file (the probe itself keeps 128 MiB)
MIN_SWEEP_MIB = 4
# Per sweep point: a generous cap (setup, i.e. writing and the first read,
# counts into it), so the sample count, not the clock, ends each point.
SWEEP_MAX_TIME_S = 600.0
QUICK_BUDGET = (0.05, 1.0)  # min/max time of the cold and contention points with --quick


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The files study's options (the `study` command adds --store after them)."""
    p.add_argument("--quick", action="store_true", help="fewer sizes, block sizes and time: a few minutes")
    p.add_argument("-o", "--output", metavar="DIR", default="osmeter-files-study",
                   help="directory for figures and table")
    p.add_argument("--cgroup-mem", metavar="SIZE|none",
                   help=f"memory cgroup limit for the page-cache sweep (default {DEFAULT_CGROUP} as root; 'none' "
                   "or no root: unconfined)")
    p.add_argument("--max-mib", type=positive_int, metavar="N",
                   help="largest file of the page-cache sweep, MiB (default: twice the cgroup limit; without one "
                   "twice MemAvailable, bounded by free disk)")
    p.add_argument("--dir", metavar="PATH", help="local directory for the files (default: the probe's default, "
                   "$TMPDIR or /var/tmp when that is in memory)")
    p.add_argument("--remote-dir", metavar="PATH",
                   help="a mounted remote directory (sshfs, NFS, SMB): cold reads there too, local against remote")
    p.add_argument("--cpu", type=non_negative_int, metavar="N", help="pin to CPU N (default: the least busy)")
    p.add_argument("--label", help="a name for the stored run (default: 'files study')")


# --- the plan ---------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    parts: tuple[Part, ...]
    sweep_mib: tuple[int, ...]
    cgroup_bytes: int | None
    local_dir: str  # "" = the probe's default
    remote_dir: str | None
    notes: tuple[str, ...] = ()


def sweep_sizes(max_mib: int, per_doubling: int, doublings: int) -> tuple[int, ...]:
    """Sizes in MiB from max / 2**doublings to max, `per_doubling` per doubling, whole MiB, ascending."""
    steps = per_doubling * doublings
    sizes = {max(MIN_SWEEP_MIB, round(max_mib * 2 ** ((k - steps) / per_doubling))) for k in range(steps + 1)}
    return tuple(sorted(s for s in sizes if s <= max_mib))


def _options(names: tuple[str, ...], params: Sequence[str], cpu: int | None, label: str,
             budget: tuple[float | None, float | None] = (None, None), **more: Any) -> RunOptions:
    return RunOptions(names=names, suite=None, params=tuple(params), cpu=cpu, label=label, min_time=budget[0],
                      max_time=budget[1], min_samples=None, fifo=None, mlock=False, clock=None, repeat=1, **more)


def build_parts(sweep_mib: Sequence[int], local_dir: str, remote_dir: str | None, quick: bool, cpu: int | None,
                label: str, cgroup_bytes: int | None) -> tuple[Part, ...]:
    """The three probe invocations (the page cache's in the cgroup)."""
    blocks_per_pass = max(1, max(sweep_mib) * MIB // SWEEP_BLOCK)
    local = [f"dir={local_dir}"] if local_dir else []
    sweep = _options(("file.cache_sweep",), ["size=" + ",".join(f"{s}M" for s in sweep_mib), *local], cpu, label,
                     (0.1 if quick else 0.5, SWEEP_MAX_TIME_S))
    sweep = replace(sweep, min_samples=blocks_per_pass, max_samples=max(2 * blocks_per_pass, 100))
    # --param dir= (empty: the probe's default) and --param dir=REMOTE: both directories
    dirs = [f"dir={local_dir}", f"dir={remote_dir}"] if remote_dir else local
    size = [f"file_size={QUICK_FILE_SIZE}"] if quick else []
    budget = QUICK_BUDGET if quick else (None, None)
    cold = _options(("file.seq_read_cold", "file.rand_read_cold"),
                    ["block=" + ",".join(QUICK_BLOCKS if quick else BLOCKS), *size, *dirs], cpu, label, budget)
    contention = _options(("file.contention",), ["procs=" + ",".join(map(str, PROCS)), *size, *local], cpu, label,
                          budget)
    where = f" inside a {cgroup.size_text(cgroup_bytes)} memory cgroup" if cgroup_bytes else " (unconfined)"
    return (
        Part(f"page cache: file.cache_sweep at {len(sweep_mib)} sizes, {sweep_mib[0]} to {sweep_mib[-1]} MiB{where}",
             sweep, cgroup_bytes is not None),
        Part("cold reads: file.seq_read_cold and file.rand_read_cold by block size"
             + (f", local and {remote_dir}" if remote_dir else ""), cold),
        Part(f"contention: file.contention with {', '.join(map(str, PROCS))} processes", contention),
    )


def _mount_type(path: str, mounts: Path = cgroup.MOUNTS) -> str | None:
    """The file system type of the mount holding `path` (the longest mount point that prefixes it)."""
    real = os.path.realpath(path)
    best, fstype = "", None
    try:
        lines = mounts.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        f = line.split()
        if len(f) < 3:
            continue
        point = f[1].replace("\\040", " ")
        if (real == point or real.startswith(point.rstrip("/") + "/")) and len(point) >= len(best):
            best, fstype = point, f[2]
    return fstype


def local_directory(given: str | None) -> str:
    """Where the local files go: --dir, else as the probe chooses ($TMPDIR unless in memory, then /var/tmp)."""
    if given:
        return given
    tmp = tempfile.gettempdir()
    return "/var/tmp" if _mount_type(tmp) in ("tmpfs", "ramfs") else tmp


def _check_dir(path: str, what: str) -> None:
    if not os.path.isdir(path):
        raise UsageError(f"{what} {path} is not a directory")
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"{what} {path}: cannot write there (Permission denied)")


def _free_bytes(path: str) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def _mem_available() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def choose_cgroup(text: str | None) -> tuple[int | None, list[str]]:
    """The cgroup limit (None: unconfined) and notes. An explicit SIZE that cannot be had is an error."""
    if text is not None and text.lower() == "none":
        return None, []
    if text is None and os.geteuid() != 0:
        return None, ["not root: the page-cache sweep runs without a memory cgroup (unconfined)"]
    try:
        limit = cgroup.parse_size(text or DEFAULT_CGROUP)
    except ValueError as e:
        raise UsageError(f"--cgroup-mem: {e}") from None
    try:
        cgroup.check_possible(limit)
    except UsageError as e:
        if text is not None:
            raise
        return None, [f"no memory cgroup ({e.message}): the page-cache sweep runs unconfined"]
    return limit, []


def make_plan(args: argparse.Namespace) -> Plan:
    """Everything checked and decided before anything runs."""
    local = local_directory(args.dir)
    _check_dir(local, "--dir" if args.dir else "the local directory")
    if args.remote_dir:
        _check_dir(args.remote_dir, "--remote-dir")
    limit, notes = choose_cgroup(args.cgroup_mem)
    free = _free_bytes(local)
    room_mib = max(0, (free - DISK_RESERVE) // MIB)
    avail = _mem_available()
    contention_mib = max(PROCS) * (16 if args.quick else COLD_FILE_MIB)
    if room_mib < max(contention_mib, 64):
        raise UsageError(f"{local} has {free // MIB} MiB free: the study needs at least "
                         f"{max(contention_mib, 64) + DISK_RESERVE // MIB} MiB there (give another --dir)")
    if args.max_mib is not None:
        max_mib = args.max_mib
        if max_mib > room_mib:
            raise UsageError(f"--max-mib {max_mib}: {local} has {free // MIB} MiB free, room for a file of "
                             f"{room_mib} MiB ({DISK_RESERVE // MIB} MiB kept free); give a smaller --max-mib or "
                             "another --dir")
    elif limit is not None:
        max_mib = 2 * limit // MIB
    else:
        max_mib = 2 * (avail or 0) // MIB or QUICK_UNCONFINED_MAX_MIB
        if args.quick:
            max_mib = min(max_mib, QUICK_UNCONFINED_MAX_MIB)
            notes.append(f"--quick without a memory cgroup sweeps up to {max_mib} MiB only: expect no knee "
                         "unless less memory than that is available")
    if max_mib > room_mib:
        notes.append(f"the sweep stops at {room_mib} MiB, the room on {local} ({free // MIB} MiB free), not at "
                     f"{max_mib} MiB: the text says so when no knee is reached")
        max_mib = room_mib
    if limit is not None and avail is not None and limit > avail:
        notes.append(f"the cgroup limit ({cgroup.size_text(limit)}) is above the memory available now "
                     f"({cgroup.size_text(avail)}): the knee will be where memory runs out")
    if not args.remote_dir:
        notes.append("no --remote-dir: local against remote is left out (mount a remote directory, e.g. with "
                     "sshfs, and give it)")
    elif (fstype := _mount_type(args.remote_dir)) is not None and not _is_remote(fstype):
        notes.append(f"--remote-dir {args.remote_dir} is on {fstype}, not a network file system: its figures are "
                     "of a local directory")
    sizes = sweep_sizes(max_mib, 2 if args.quick else 4, 4 if args.quick else 5)
    label = args.label or "files study"
    parts = build_parts(sizes, args.dir or "", args.remote_dir, args.quick, args.cpu, label, limit)
    return Plan(parts, sizes, limit, args.dir or "", args.remote_dir, tuple(notes))


def _is_remote(fstype: str | None) -> bool:
    return bool(fstype) and (fstype in ("nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "ceph", "glusterfs", "afs")
                             or str(fstype).startswith("fuse."))


# --- the table --------------------------------------------------------------

PART_OF = {"file.cache_sweep": "page cache", "file.seq_read_cold": "cold reads", "file.rand_read_cold": "cold reads",
           "file.contention": "contention"}
HEADER = ["part", "benchmark", "where", "file_mib", "block", "procs", "median_us", "mean_us", "mb_per_s", "in_cache",
          "status"]


def _mib(v: Any) -> str:
    return f"{v / MIB:g}" if isinstance(v, (int, float)) and v > 0 else MISSING


def table_rows(results: Sequence[Any]) -> list[list[str]]:
    """One row per instance of the study's run, in run order."""
    from ..report.figures.file import location

    rows = []
    for r in results:
        if r.bench not in PART_OF:
            continue
        p = r.params or {}
        size = p.get("size") if r.bench == "file.cache_sweep" else p.get("file_size")
        block = p.get("block")
        row = [PART_OF[r.bench], r.bench, location(r)[0], _mib(size),
               cgroup.size_text(block) if isinstance(block, int) else MISSING,
               str(p["procs"]) if isinstance(p.get("procs"), int) else MISSING]
        if r.status == "ok" and r.summary is not None:
            s = r.summary
            mbps = block / s.mean * 1e3 if isinstance(block, int) and s.mean > 0 else None
            resident = r.extra.get("resident_fraction") if r.bench == "file.cache_sweep" else None
            row += [fmt_num(s.median / 1e3, grouped=False), fmt_num(s.mean / 1e3, grouped=False),
                    fmt_num(mbps, grouped=False),  # the CSV's too: no thousands separators
                    f"{100 * resident:.0f}%" if isinstance(resident, (int, float)) and resident >= 0 else MISSING,
                    "ok"]
        else:
            row += [MISSING] * 4 + [f"{r.status}: {r.reason}"]
        rows.append(row)
    return rows


def render_csv(rows: list[list[str]]) -> str:
    return table_csv(HEADER, rows)


def render_text(rows: list[list[str]], analyses: Sequence[pagecache.CacheAnalysis], notes: Sequence[str]) -> str:
    right = [False, False, False, True, True, True, True, True, True, True, False]
    text = render_table(HEADER, [[textsafe.line(c) for c in row] for row in rows], right) + "\n"
    for a in analyses:
        text += f"\npage cache ({a.label}): {pagecache.knee_text(a)}\n"
        text += "".join(f"  note: {n}\n" for n in a.knee.notes)
    if not analyses:
        text += "\npage cache: no file.cache_sweep result, no knee\n"
    text += "".join(f"note: {n}\n" for n in notes)
    return text


# --- running ----------------------------------------------------------------


TABLES = ("files-study.csv", "files-study.txt")  # what write_outputs writes, checked before the study runs
FIGURES = ("file-*.svg", "file-*.png")  # report/figures/file.py names them so


def write_outputs(store: Any, run_id: int, directory: Path, notes: Sequence[str]) -> tuple[list[Path], str]:
    """Figures (SVG and PNG) and the table (CSV and text) of a stored files-study run."""
    from ..report.content import run_data
    from ..report.figures.file import figures

    info = store.run(str(run_id))
    data = run_data(store, info)
    rows = table_rows(data.results)
    text = render_text(rows, pagecache.analyse(data.results, info.params), notes)
    return write_files(directory, list(zip(TABLES, (render_csv(rows), text))), figures(data)), text


def run(args: argparse.Namespace) -> int:
    check_figures_possible()
    plan = make_plan(args)
    directory = outfile.prepare_directory(Path(args.output))  # checked and made before any work
    outfile.check_entries(directory, TABLES, FIGURES)
    for note in plan.notes:
        textsafe.say("note", note)
    store = open_store(resolve_location(args.store), create=True)
    try:
        cg = cgroup.MemoryCgroup.create(plan.cgroup_bytes) if plan.cgroup_bytes is not None else None
        with cg if cg is not None else contextlib.nullcontext():  # the cgroup goes on every way out
            params: dict[str, Any] = {"study": "files", "quick": bool(args.quick), "sweep_mib": list(plan.sweep_mib),
                                      "local_dir": plan.local_dir, "remote_dir": plan.remote_dir,
                                      "parts": [asdict(p.opts) for p in plan.parts]}
            if cg is not None:
                params["cgroup"] = {**cg.describe(), "scope": "file.cache_sweep only"}
            rec = record_parts(store, plan.parts, params, cg)
        assert rec.recorder.run_id is not None  # record_parts raises otherwise
        written, text = write_outputs(store, rec.recorder.run_id, directory, plan.notes)
        return conclude(rec, len(plan.parts), text, written)
    finally:
        store.close()
