"""`osmeter study files` end to end: its plan (three probe invocations, the
page cache's in a memory cgroup), one stored run, the figures and the table,
against a stand-in probe that answers the file benchmarks with a known
machine (a 512 MiB page cache, a remote directory four times slower); and
`--quick` with the real probe (slow)."""

from __future__ import annotations

import argparse
import csv
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from osmeter import cgroup, errors
from osmeter.studies import files as study_files
from osmeter.errors import UsageError

from ..conftest import DATA, db_rows, osmeter_command, subprocess_env


pytest.importorskip("matplotlib")

MiB = 1 << 20
STAND_IN = r'''
import itertools, json, os, sys
MiB = 1 << 20
CACHE = 512 * MiB
DEFAULTS = {
    "file.cache_sweep": {"size": "64M", "block": "1M", "dir": ""},
    "file.seq_read_cold": {"file_size": "64M", "block": "1M", "method": "auto", "dir": ""},
    "file.rand_read_cold": {"file_size": "64M", "block": "4K", "method": "auto", "dir": ""},
    "file.contention": {"procs": "1", "shared": "0", "pattern": "seq", "file_size": "64M", "block": "64K",
                        "method": "auto", "dir": ""},
}
def size(v):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(v[:-1]) * units[v[-1]] if v and v[-1] in units else int(v)
def emit(o):
    sys.stdout.write(json.dumps(o) + "\n")
args = sys.argv[2:]
names, params, i = [], {}, 0
while i < len(args):
    a = args[i]
    if a == "--param":
        k, _, v = args[i + 1].partition("=")
        params.setdefault(k, []).extend(v.split(",") if k != "dir" else [v])
        i += 2
    elif a.startswith("--") and a not in ("--die-with-parent", "--quiet"):
        i += 2
    elif a.startswith("--"):
        i += 1
    else:
        names.append(a)
        i += 1
log = os.environ["STAND_IN_LOG"]
call = 1 + (len(open(log).read().splitlines()) if os.path.exists(log) else 0)
with open(log, "a") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "cgroup": open("/proc/self/cgroup").read()}) + "\n")
if str(call) == os.environ.get("STAND_IN_FAIL_CALL"):
    sys.stderr.write("osmeter-probe: error: cannot run here\n")
    sys.exit(3)
meta = json.loads(open(os.environ["STAND_IN_META"]).readline())
meta["suite"] = None
emit(meta)
sys.stdout.flush()
if os.environ.get("STAND_IN_DELAY"):
    import time
    time.sleep(float(os.environ["STAND_IN_DELAY"]))
insts = []
for n in names:
    keys = list(DEFAULTS[n])
    for combo in itertools.product(*[params.get(k, [DEFAULTS[n][k]]) for k in keys]):
        insts.append((n, dict(zip(keys, combo))))
for idx, (n, p) in enumerate(insts):
    shown = {k: (size(v) if k in ("size", "block", "file_size") else int(v) if k in ("procs", "shared") else v)
             for k, v in p.items()}
    emit({"type": "progress", "index": idx, "total": len(insts), "bench": n, "params": shown})
    remote = p["dir"] == os.environ.get("STAND_IN_REMOTE")
    info = {"dir": p["dir"] or "/var/tmp", "fs_type": "fuse.sshfs" if remote else "ext4",
            "remote": "yes" if remote else "no"}
    extra = {}
    if n == "file.cache_sweep":
        s = shown["size"]
        r = min(1.0, CACHE / s)
        miss = min(49, round(100 * (1 - r)))
        values = [50e3] * (100 - miss) + [800e3] * miss
        extra = {"size_bytes": s, "block_bytes": shown["block"], "resident_fraction": r, "passes": 2.0,
                 "mb_per_s": 1.0, "mem_available_bytes": 20 << 30, "cgroup_headroom_bytes": CACHE}
    elif n == "file.contention":
        values = [100e3 * shown["procs"] * (1 + 0.01 * k) for k in range(20)]
    else:
        b = shown["block"]
        lat = (100e3 if "rand" in n else 20e3) * (4 if remote else 1)
        values = [lat + b / (0.5 if remote else 2.0) * (1 + 0.01 * k) for k in range(20)]
    emit({"type": "samples", "bench": n, "params": shown, "unit": "ns", "batch": 1, "values": values})
    emit({"type": "result", "bench": n, "params": shown, "unit": "ns", "n": len(values), "min": min(values),
          "median": sorted(values)[len(values) // 2], "mean": sum(values) / len(values), "batch": 1, "cpu": 0,
          "placement": None, "elapsed_s": 0.1, "stop_reason": "rse", "ref_cycles": None, "extra": extra,
          "info": info})
emit({"type": "end", "status": "complete", "signal": None, "end_time": "2026-11-22T07:41:10Z",
      "counts": {"ok": len(insts), "skip": 0, "error": 0}})
'''


@pytest.fixture
def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = tmp_path / "stand-in-probe"
    script.write_text(f"#!{sys.executable}\n{STAND_IN}")
    script.chmod(0o755)
    log = tmp_path / "stand-in.log"
    monkeypatch.setenv("OSMETER_PROBE", str(script))
    monkeypatch.setenv("STAND_IN_LOG", str(log))
    monkeypatch.setenv("STAND_IN_META", str(DATA / "run_x86_64.jsonl"))
    return log


def invocations(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_sweep_sizes():
    assert study_files.sweep_sizes(1024, 2, 4) == (64, 91, 128, 181, 256, 362, 512, 724, 1024)
    full = study_files.sweep_sizes(1024, 4, 5)
    assert full[0] == 32 and full[-1] == 1024 and len(full) == 21
    assert study_files.sweep_sizes(64, 4, 5)[0] == study_files.MIN_SWEEP_MIB  # never below 4 MiB


def test_three_parts_with_their_own_parameters():
    parts = study_files.build_parts((64, 128, 256), "", "/mnt/remote", False, 1, "files study", 128 * MiB)
    sweep, cold, contention = (p.opts for p in parts)
    assert parts[0].in_cgroup and not parts[1].in_cgroup and not parts[2].in_cgroup
    assert sweep.names == ("file.cache_sweep",) and sweep.params == ("size=64M,128M,256M",)
    assert sweep.min_samples == 256 and sweep.max_samples == 512  # one pass over the largest file, at most two
    assert cold.names == ("file.seq_read_cold", "file.rand_read_cold")
    assert cold.params == ("block=4K,16K,64K,256K,1M", "dir=", "dir=/mnt/remote")
    assert contention.params == ("procs=1,2,4,8",)
    assert all(p.opts.cpu == 1 and p.opts.repeat == 1 for p in parts)
    quick = study_files.build_parts((64,), "/data", None, True, None, "x", None)
    assert quick[1].opts.params == ("block=4K,64K,1M", "file_size=16M", "dir=/data")
    assert quick[2].opts.max_time == 1.0 and not quick[0].in_cgroup


def plan_args(tmp_path: Path, **kw) -> argparse.Namespace:
    base = dict(quick=False, output=str(tmp_path / "out"), cgroup_mem="none", max_mib=None, dir=str(tmp_path),
                remote_dir=None, cpu=None, label=None, store=None)
    base.update(kw)
    return argparse.Namespace(**base)


def test_the_plan_is_bounded_by_free_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(study_files, "_mem_available", lambda: 8 << 30)
    monkeypatch.setattr(study_files, "_free_bytes", lambda path: 3 << 30)
    plan = study_files.make_plan(plan_args(tmp_path))
    assert plan.sweep_mib[-1] == 3 * 1024 - 256  # not 16 GiB (2 x MemAvailable): the disk's room
    assert any("the sweep stops at 2816 MiB" in n for n in plan.notes)
    assert any("no --remote-dir" in n for n in plan.notes)
    with pytest.raises(UsageError, match="--max-mib 4000: .* room for a file of 2816 MiB"):
        study_files.make_plan(plan_args(tmp_path, max_mib=4000))
    monkeypatch.setattr(study_files, "_free_bytes", lambda path: 300 * MiB)
    with pytest.raises(UsageError, match="the study needs at least"):
        study_files.make_plan(plan_args(tmp_path))


def test_the_plan_without_a_cgroup_and_quick(tmp_path, monkeypatch):
    monkeypatch.setattr(study_files, "_mem_available", lambda: 8 << 30)
    monkeypatch.setattr(study_files, "_free_bytes", lambda path: 100 << 30)
    plan = study_files.make_plan(plan_args(tmp_path))
    assert plan.cgroup_bytes is None and plan.sweep_mib[-1] == 16 * 1024
    quick = study_files.make_plan(plan_args(tmp_path, quick=True))
    assert quick.sweep_mib[-1] == 1024 and any("expect no knee" in n for n in quick.notes)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    plan = study_files.make_plan(plan_args(tmp_path, cgroup_mem=None))
    assert plan.cgroup_bytes is None and any("not root" in n for n in plan.notes)
    with pytest.raises(UsageError, match="needs root"):
        study_files.make_plan(plan_args(tmp_path, cgroup_mem="256M"))


def test_bad_directories_and_sizes_are_refused(tmp_path):
    with pytest.raises(UsageError, match="--dir .* is not a directory"):
        study_files.make_plan(plan_args(tmp_path, dir=str(tmp_path / "nope")))
    with pytest.raises(UsageError, match="--remote-dir .* is not a directory"):
        study_files.make_plan(plan_args(tmp_path, remote_dir=str(tmp_path / "nope")))
    with pytest.raises(UsageError, match="is not a size"):
        study_files.make_plan(plan_args(tmp_path, cgroup_mem="lots"))


def test_a_remote_dir_that_is_local_is_said(tmp_path, monkeypatch):
    monkeypatch.setattr(study_files, "_free_bytes", lambda path: 100 << 30)
    (tmp_path / "r").mkdir()
    plan = study_files.make_plan(plan_args(tmp_path, remote_dir=str(tmp_path / "r"), max_mib=256))
    assert plan.parts[1].opts.params[-1] == f"dir={tmp_path / 'r'}"
    assert any("not a network file system" in n for n in plan.notes)


def study(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(osmeter_command("study", "files", "-o", str(tmp_path / "out"), *args),
                          capture_output=True, text=True, env=subprocess_env(), timeout=300)


# Slow-marked to keep the default run under 5 minutes (~5 s); CI runs it.
@pytest.mark.slow
def test_one_run_with_figures_a_table_and_the_knee(stand_in, store_path, tmp_path, monkeypatch):
    remote = tmp_path / "remote"
    remote.mkdir()
    monkeypatch.setenv("STAND_IN_REMOTE", str(remote))
    p = study(tmp_path, "--remote-dir", str(remote), "--max-mib", "1024", "--dir", str(tmp_path))
    assert p.returncode == 0, p.stderr[-3000:]
    calls = invocations(stand_in)
    assert [c["argv"][2] for c in calls] == ["file.cache_sweep", "file.seq_read_cold", "file.contention"]
    assert db_rows(store_path, "SELECT label, status FROM runs") == [("files study", "complete")]
    (params,) = db_rows(store_path, "SELECT params FROM runs")
    recorded = json.loads(params[0])
    assert recorded["study"] == "files" and recorded["remote_dir"] == str(remote)
    assert len(recorded["parts"]) == 3 and recorded["sweep_mib"][-1] == 1024
    n_results = db_rows(store_path, "SELECT COUNT(*) FROM results")[0][0]
    assert n_results == 21 + 20 + 4  # sizes, 5 blocks x 2 patterns x 2 directories, 4 process counts
    out = tmp_path / "out"
    for name in ("file-cache-sweep", "file-cold-reads", "file-local-vs-remote", "file-contention"):
        assert (out / f"{name}.svg").read_text().lstrip().startswith(("<?xml", "<svg"))
        assert (out / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = list(csv.DictReader((out / "files-study.csv").open()))
    assert len(rows) == n_results and {r["part"] for r in rows} == {"page cache", "cold reads", "contention"}
    remote_rows = [r for r in rows if r["where"].startswith("remote")]
    assert len(remote_rows) == 10 and all(r["where"] == "remote (fuse.sshfs)" for r in remote_rows)
    seq_1m = {r["where"]: float(r["mb_per_s"]) for r in rows
              if r["benchmark"] == "file.seq_read_cold" and r["block"] == "1 MiB"}
    assert seq_1m["local (ext4)"] > 3 * seq_1m["remote (fuse.sshfs)"]
    assert "effective page cache 512 MiB" in p.stdout  # the stand-in's cache, from what it kept
    assert (out / "files-study.txt").read_text() in p.stdout
    assert "no --remote-dir" not in p.stdout


def page_cache(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(osmeter_command("page-cache", *args), capture_output=True, text=True,
                          env=subprocess_env(), timeout=120)


@pytest.mark.slow  # ~7 s; test_one_run_with_figures_a_table_and_the_knee reads the knee by default
def test_page_cache_reads_the_knee_off_the_stored_run(stand_in, store_path, tmp_path, monkeypatch):
    p = study(tmp_path, "--max-mib", "2048", "--cgroup-mem", "none", "--dir", str(tmp_path))
    assert p.returncode == 0, p.stderr[-3000:]
    t = page_cache("latest")
    assert t.returncode == 0, t.stderr
    assert t.stdout.startswith("run 1\nfile.cache_sweep, block 1 MiB") and "effective page cache 512 MiB" in t.stdout
    assert "MemAvailable at the start: 20 GiB" in t.stdout and "the knee is 1.00 x 512 MiB" in t.stdout
    assert "the probe's memory cgroup had 512 MiB of headroom at the start" in t.stdout
    j = page_cache("1", "--json", "-o", str(tmp_path / "knee.svg"))
    assert j.returncode == 0, j.stderr
    doc = json.loads(j.stdout)
    (curve,) = doc["curves"]
    assert doc["schema"] == 1 and doc["run"] == 1 and curve["knee"]["status"] == "knee"
    assert curve["knee"]["size_bytes"] == 512 * MiB and curve["knee"]["method"] == "resident"
    assert curve["meminfo_available_bytes"] == 20 << 30 and curve["cgroup_limit_bytes"] is None
    assert len(curve["points"]) == 21 and (tmp_path / "knee.svg").read_text().lstrip().startswith("<?xml")
    assert "wrote" in j.stderr
    bad = page_cache("1", "-o", str(tmp_path / "knee.txt"))
    assert bad.returncode == errors.EXIT_USAGE and ".svg" in bad.stderr
    assert page_cache("7").returncode == errors.EXIT_NOT_FOUND


@pytest.mark.slow  # ~8 s; unit/test_outfile.py covers the -o rule by default
def test_page_cache_figure_follows_the_suffix_rule(stand_in, store_path, tmp_path):
    """The one -o rule (outfile.py): the suffix picks the format, --format
    overrides it, a device is written in place; --format needs -o."""
    assert study(tmp_path, "--max-mib", "256", "--cgroup-mem", "none", "--dir", str(tmp_path)).returncode == 0
    odd = tmp_path / "knee.out"
    bad = page_cache("1", "-o", str(odd))
    assert bad.returncode == errors.EXIT_USAGE and "--format" in bad.stderr and not odd.exists()
    assert page_cache("1", "-o", str(odd), "--format", "png").returncode == 0
    assert odd.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert page_cache("1", "-o", str(tmp_path / "knee.PDF")).returncode == 0
    assert (tmp_path / "knee.PDF").read_bytes().startswith(b"%PDF")
    node = tmp_path / "null"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers
    p = page_cache("1", "-o", str(node))
    assert p.returncode == 0, p.stderr
    assert stat.S_ISCHR(os.lstat(node).st_mode)
    alone = page_cache("1", "--format", "svg")
    assert alone.returncode == errors.EXIT_USAGE and "give -o FIGURE too" in alone.stderr


def test_an_output_that_cannot_be_written_is_refused_before_the_study(stand_in, store_path, tmp_path):
    """A directory where the table goes (or a figure of an earlier study)
    is found before the probe runs, not after minutes of measuring."""
    out = tmp_path / "out"
    (out / "files-study.csv").mkdir(parents=True)
    p = study(tmp_path, "--max-mib", "256", "--cgroup-mem", "none", "--dir", str(tmp_path))
    assert p.returncode == errors.EXIT_USAGE and "files-study.csv: it is a directory" in p.stderr, p.stderr
    assert not stand_in.exists() and db_rows(store_path, "SELECT id FROM runs") == []
    (out / "files-study.csv").rmdir()
    (out / "file-contention.png").mkdir()
    p = study(tmp_path, "--max-mib", "256", "--cgroup-mem", "none", "--dir", str(tmp_path))
    assert p.returncode == errors.EXIT_USAGE and "file-contention.png: it is a directory" in p.stderr
    assert not stand_in.exists()


def test_page_cache_of_a_run_without_a_sweep(cli, store_path):
    from ..conftest import import_fixture

    import_fixture(store_path)
    r = cli("page-cache", "latest")
    assert r.code == 0 and "no file.cache_sweep results in this run" in r.out


# Slow-marked to keep the default run under 5 minutes (~3.4 s); CI runs it.
@pytest.mark.slow
def test_cache_part_alone_in_the_cgroup(stand_in, store_path, tmp_path, monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("needs root for the memory cgroup")
    try:
        h, _ = cgroup.check_possible(64 * MiB)
    except UsageError as e:
        pytest.skip(f"no memory cgroup here: {e.message}")
    p = study(tmp_path, "--cgroup-mem", "256M", "--quick")
    assert p.returncode == 0, p.stderr[-3000:]
    calls = invocations(stand_in)

    def where(c):
        line = next(x for x in c["cgroup"].splitlines()
                    if (h.version == 2 and x.startswith("0::")) or (h.version == 1 and ":memory:" in x))
        return line.rsplit(":", 1)[1]

    first, *rest = [where(c) for c in calls]
    assert Path(first).name.startswith("osmeter-") and all(not Path(w).name.startswith("osmeter-") for w in rest)
    assert not (h.mount / first.lstrip("/")).exists()
    (params,) = db_rows(store_path, "SELECT params FROM runs")
    assert json.loads(params[0])["cgroup"]["scope"] == "file.cache_sweep only"
    assert json.loads(params[0])["sweep_mib"][-1] == 512  # twice the limit
    assert "memory cgroup limit: 256 MiB" in p.stdout


@pytest.mark.slow
def test_a_probe_that_never_starts_stores_nothing(stand_in, store_path, tmp_path, monkeypatch):
    monkeypatch.setenv("STAND_IN_FAIL_CALL", "1")
    p = study(tmp_path, "--max-mib", "256", "--cgroup-mem", "none", "--dir", str(tmp_path))
    assert p.returncode == errors.EXIT_PROBE and "stopped before starting the run" in p.stderr
    assert "cannot run here" in p.stderr
    assert len(invocations(stand_in)) == 1 and db_rows(store_path, "SELECT id FROM runs") == []


@pytest.mark.slow
def test_a_failing_part_stops_the_study_and_keeps_what_ran(stand_in, store_path, tmp_path, monkeypatch):
    monkeypatch.setenv("STAND_IN_FAIL_CALL", "2")  # the cold reads' probe dies before its meta
    p = study(tmp_path, "--max-mib", "256", "--cgroup-mem", "none", "--dir", str(tmp_path))
    assert p.returncode == errors.EXIT_PROBE, p.stderr[-2000:]
    assert "part 2 (cold reads): osmeter-probe did not start (exit status 3)" in p.stderr
    assert len(invocations(stand_in)) == 2  # the contention part was not started
    ((status, reason),) = db_rows(store_path, "SELECT status, status_reason FROM runs")
    assert status == "incomplete" and "part 2" in reason
    benches = {b for (b,) in db_rows(store_path, "SELECT bench FROM results")}
    assert benches == {"file.cache_sweep"}
    assert (tmp_path / "out" / "file-cache-sweep.svg").exists() and "no knee up to 256 MiB" in p.stdout


@pytest.mark.slow
def test_sigterm_mid_study_keeps_the_run_and_leaves_no_cgroup(stand_in, store_path, tmp_path, monkeypatch,
                                                             osmeter_proc):
    limit = "none"
    if os.geteuid() == 0:
        try:
            cgroup.check_possible(256 * MiB)
            limit = "256M"
        except UsageError:
            pass
    monkeypatch.setenv("STAND_IN_DELAY", "30")
    proc = osmeter_proc("study", "files", "-o", str(tmp_path / "out"), "--cgroup-mem", limit, "--max-mib", "512",
                        "--dir", str(tmp_path))
    deadline = time.monotonic() + 30
    while not (stand_in.exists() and stand_in.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    (call,) = invocations(stand_in)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert db_rows(store_path, "SELECT status FROM runs") == [("incomplete",)]
    if limit != "none":
        h = cgroup.find_hierarchy()
        line = next(x for x in call["cgroup"].splitlines()
                    if (h.version == 2 and x.startswith("0::")) or (h.version == 1 and ":memory:" in x))
        where = h.mount / line.rsplit(":", 1)[1].lstrip("/")
        assert where.name.startswith("osmeter-") and not where.exists()


@pytest.mark.slow  # ~20 s: a quick study with the real probe (a 1 GiB sweep inside 512 MiB as root)
def test_quick_study_with_the_real_probe(store_path, tmp_path, real_probe):
    p = study(tmp_path, "--quick")
    assert p.returncode in (0, errors.EXIT_BENCH_ERRORS), p.stderr[-3000:]
    assert db_rows(store_path, "SELECT label FROM runs") == [("files study",)]
    assert (tmp_path / "out" / "file-cache-sweep.svg").exists()
    assert "effective page cache" in p.stdout or "no knee up to" in p.stdout
