"""file.read and file.write (LEBench's eight file rows) with tiny budgets:
plausible values and units at every LEBench size, the buffer= and sync=
params, bad params, the target directory's errors, a failing fill, and no
work file left behind. Method: docs/methods/file.md."""
import json
import os
import resource
import signal
import subprocess

import pytest

from probe_helpers import TINY, optional_tool_missing, run_probe
from task_helpers import as_nobody

KiB = 1024
LEBENCH_SIZES = {"4K": 4 * KiB, "40K": 40 * KiB, "4000K": 4000 * KiB, "40000K": 40000 * KiB}
INFO_KEYS = {"dir", "fs_type", "device", "mount_options", "remote"}


def run(probe, *args, **kw):
    return run_probe(probe, "run", *args, *TINY, **kw)


def assert_no_workdir_left(path):
    left = [p.name for p in path.iterdir() if p.name.startswith("osmeter-probe.")]
    assert not left, f"work directories left in {path}: {left}"


@pytest.fixture(scope="module")
def lebench_sizes(probe, tmp_path_factory):
    """Both benchmarks at LEBench's four sizes, both buffers, in one run."""
    d = tmp_path_factory.mktemp("rw")
    r = run(probe, "file.read", "file.write", "--param", "size=" + ",".join(LEBENCH_SIZES),
            "--param", "buffer=reused,malloc", "--param", f"dir={d}", timeout=300)
    assert r.rc == 0, r.stderr + str(r.of_type("error")) + str(r.of_type("skip"))
    assert_no_workdir_left(d)
    return r, d


@pytest.mark.parametrize("bench", ["file.read", "file.write"])
@pytest.mark.parametrize("buffer", ["reused", "malloc"])
@pytest.mark.parametrize("size", list(LEBENCH_SIZES))
def test_every_lebench_size_is_plausible(lebench_sizes, bench, buffer, size):
    r, d = lebench_sizes
    nbytes = LEBENCH_SIZES[size]
    res = r.result(bench, size=nbytes, buffer=buffer)
    assert res["unit"] == "ns"
    # A copy through the page cache: slower than 100 GB/s, faster than
    # 20 MB/s plus a millisecond (a loaded machine, a fresh buffer's faults).
    assert max(50, nbytes / 100) < res["median"] < 1e6 + nbytes * 50, res["median"]
    assert res["extra"]["size_bytes"] == nbytes
    assert INFO_KEYS <= set(res["info"]) and res["info"]["dir"] == str(d)
    if buffer == "reused":
        assert res["extra"]["minflt_per_call"] == 0  # touched in setup: no fault in the clock
    if bench == "file.write":
        assert res["params"]["sync"] == "none"


def can_read_kpageflags():
    try:
        with open("/proc/kpageflags", "rb") as f:
            return len(f.read(8)) == 8 and os.geteuid() == 0
    except OSError:
        return False


def test_folios_count_the_page_caches_folios_over_the_file(lebench_sizes):
    """extra.folios: how many page-cache folios hold the file (a read or write
    walks them one by one). One page is one folio; never more folios than
    pages; null where /proc/kpageflags cannot be read."""
    r, _ = lebench_sizes
    for bench in ("file.read", "file.write"):
        for size, nbytes in LEBENCH_SIZES.items():
            folios = r.result(bench, size=nbytes, buffer="reused")["extra"]["folios"]
            if not can_read_kpageflags():
                assert folios is None
                continue
            assert isinstance(folios, int) and 1 <= folios <= nbytes // 4096, (bench, size, folios)
            if nbytes == 4096:
                assert folios == 1


def test_folios_are_null_without_the_privilege_to_read_them(probe):
    """As nobody (or any user but root) /proc/kpageflags is closed: the
    figure is still measured, its folio count null, not a false number."""
    with as_nobody(probe) as (prefix, copy):
        p = subprocess.run([*prefix, copy, "run", "file.read", "--param", "size=40K", *TINY],
                           capture_output=True, text=True, timeout=60, cwd="/")
    assert p.returncode == 0, p.stderr
    res = [json.loads(x) for x in p.stdout.splitlines() if '"type":"result"' in x][0]
    assert res["extra"]["folios"] is None
    assert res["median"] > 0


def test_bigger_calls_take_longer(lebench_sizes):
    r, _ = lebench_sizes
    for bench in ("file.read", "file.write"):
        t = [r.result(bench, size=n, buffer="reused")["median"] for n in LEBENCH_SIZES.values()]
        assert t[0] < t[2] < t[3], (bench, t)


def test_malloc_buffer_read_pays_the_faults_of_its_fresh_buffer(lebench_sizes):
    """LEBench's read mallocs an untouched destination: at 40 000 KiB glibc
    maps it fresh each time, so the read takes a fault per 4 KiB page."""
    r, _ = lebench_sizes
    n = LEBENCH_SIZES["40000K"]
    fresh = r.result("file.read", size=n, buffer="malloc")
    reused = r.result("file.read", size=n, buffer="reused")
    faults = fresh["extra"]["minflt_per_call"]
    if faults < n / 4096 / 2:
        pytest.skip(f"malloc's buffer took {faults} faults per read (transparent huge pages always on?): "
                    "nothing to compare")
    assert faults <= n / 4096 + 16
    assert fresh["median"] > 1.2 * reused["median"], (fresh["median"], reused["median"])
    # The write fills its malloc'd buffer before the clock: no fault inside.
    assert r.result("file.write", size=n, buffer="malloc")["extra"]["minflt_per_call"] == 0


def test_sync_adds_the_device_write(probe, tmp_path):
    r = run(probe, "file.write", "--param", "sync=none,fsync,fdatasync", "--param", f"dir={tmp_path}")
    assert r.rc == 0, r.stderr
    if r.result("file.write", sync="none")["info"]["fs_type"] in ("tmpfs", "ramfs"):
        pytest.skip("the test directory is in memory: fsync has nothing to write")
    none = r.result("file.write", sync="none")["median"]
    for how in ("fsync", "fdatasync"):
        res = r.result("file.write", sync=how)
        assert res["unit"] == "ns" and res["median"] > 2 * none, (how, res["median"], none)
    assert_no_workdir_left(tmp_path)


def test_the_lebench_rows_are_these_benchmarks_with_a_malloced_buffer(probe):
    import json
    cat = json.loads(run_probe(probe, "list", "--json").stdout)
    rows = {r["name"]: r for r in cat["lebench_rows"]}
    for label, size in zip(("small", "mid", "big", "huge"), LEBENCH_SIZES.values()):
        for op in ("read", "write"):
            row = rows[f"{label} {op}"]
            assert row["available"] and row["bench"] == f"file.{op}" and row["exact_batch"] == 1
            assert row["params"]["size"] == size and row["params"]["buffer"] == "malloc"
            # LEBench's set-up: opened around each call, its file grown as LEBench's.
            assert row["params"]["open"] == "per_call" and row["params"]["fill"] == "lebench"
            if op == "write":
                assert row["params"]["sync"] == "none"


@pytest.mark.slow  # 2 s; CI runs it (the default run stays under 5 minutes)
def test_lebenchs_open_and_fill_run_with_plausible_figures(probe, tmp_path):
    """open=per_call and fill=lebench (LEBench's set-up) run, each alone and
    together, with figures of a cached 40 KiB call."""
    r = run(probe, "file.read", "file.write", "--param", "size=40K", "--param", "open=once,per_call",
            "--param", "fill=chunks,lebench", "--param", f"dir={tmp_path}")
    assert r.rc == 0, r.stderr + str(r.of_type("error"))
    for bench in ("file.read", "file.write"):
        for how in ("once", "per_call"):
            for fill in ("chunks", "lebench"):
                res = r.result(bench, open=how, fill=fill)
                assert res["unit"] == "ns" and 400 < res["median"] < 1e6 + 40960 * 50, (bench, how, fill, res)
                assert res["extra"]["size_bytes"] == 40960
    assert_no_workdir_left(tmp_path)


@pytest.mark.parametrize("bench,param,message", [
    ("file.read", "open=twice", "once, per_call"),
    ("file.write", "fill=sparse", "chunks, lebench"),
    ("file.read", "size=0", "size"),
    ("file.write", "size=2G", "size"),
    ("file.read", "buffer=bogus", "reused, malloc"),
    ("file.write", "sync=sometimes", "none, fsync, fdatasync"),
])
def test_bad_params_exit_2(probe, bench, param, message):
    r = run_probe(probe, "run", bench, "--param", param)
    assert r.rc == 2 and message in r.stderr and not r.records, r.stderr


def test_a_bad_dir_is_an_error_naming_it_and_the_run_goes_on(probe, tmp_path):
    regular = tmp_path / "a-file"
    regular.write_text("x")
    missing = tmp_path / "nonexistent"
    # A path parameter takes its value whole: one --param per directory.
    r = run(probe, "file.read", "--param", f"dir={missing}", "--param", f"dir={regular}",
            "--param", f"dir={tmp_path}")
    assert r.rc == 1, r.stderr
    errors = {e["params"]["dir"]: e["message"] for e in r.of_type("error")}
    assert set(errors) == {str(missing), str(regular)}
    assert str(missing) in errors[str(missing)] and "No such file" in errors[str(missing)]
    assert str(regular) in errors[str(regular)] and "not a directory" in errors[str(regular)]
    assert r.result("file.read", dir=str(tmp_path))["median"] > 0
    assert_no_workdir_left(tmp_path)


def test_a_failing_fill_is_an_error_with_its_errno_and_leaves_nothing(probe, tmp_path):
    """A file size limit (RLIMIT_FSIZE: EFBIG, the path a full disk's ENOSPC
    takes) makes setup's write fail: an error naming the errno; the next
    benchmark runs; no file is left."""

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of the signal
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

    r = run(probe, "file.write", "--param", "size=4M,4K", "--param", f"dir={tmp_path}", preexec_fn=limit)
    assert r.rc == 1, r.stderr
    (err,) = r.of_type("error")
    assert err["params"]["size"] == 4 << 20
    assert "EFBIG" in err["message"] and "of 4194304 bytes" in err["message"], err["message"]
    assert err["info"]["dir"] == str(tmp_path)
    assert r.result("file.write", size=4096)["median"] > 0
    assert_no_workdir_left(tmp_path)


def test_lebench_exact_times_one_call_per_sample(probe, tmp_path):
    r = run(probe, "file.read", "file.write", "--param", "buffer=malloc", "--param", f"dir={tmp_path}",
            "--lebench-exact")
    assert r.rc == 0, r.stderr
    for bench in ("file.read", "file.write"):
        res = r.result(bench)
        assert res["batch"] == 1 and 50 < res["median"] < 1e6
    assert_no_workdir_left(tmp_path)


def test_default_dir_is_the_probes_work_directory(probe, tmp_path):
    env = dict(os.environ, TMPDIR=str(tmp_path))
    r = run(probe, "file.read", env=env)
    assert r.rc == 0, r.stderr
    info = r.result("file.read")["info"]
    if info["fs_type"] in ("tmpfs", "ramfs"):
        pytest.skip("the test directory is on tmpfs: the default is /var/tmp then")
    assert info["dir"].startswith(str(tmp_path) + "/osmeter-probe.")
    assert_no_workdir_left(tmp_path)


def _memory_cgroup(name):
    """A new memory cgroup under this process's own, as (dir, limit file),
    or None where none can be made (no root, no memory controller)."""
    if os.geteuid() != 0:
        return None
    for line in open("/proc/self/cgroup"):
        hid, ctrls, path = line.rstrip("\n").split(":", 2)
        if hid == "0" and not ctrls and os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
            base, limit = f"/sys/fs/cgroup{path.rstrip('/')}", "memory.max"
            subtree = f"{base}/cgroup.subtree_control"
            if not os.path.exists(subtree) or "memory" not in open(subtree).read().split():
                continue
        elif "memory" in ctrls.split(","):
            base, limit = f"/sys/fs/cgroup/memory{path.rstrip('/')}", "memory.limit_in_bytes"
        else:
            continue
        d = f"{base}/{name}"
        try:
            os.mkdir(d)
        except OSError:
            return None
        return d, limit
    return None


def test_a_size_that_does_not_fit_in_memory_is_a_skip(probe, tmp_path):
    """Buffer + cached file must fit: in a memory cgroup of 48 MiB a 40 000 KiB
    read (80 MiB) is refused up front, never met by the OOM killer."""
    made = _memory_cgroup(f"osmeter-test-rw-{os.getpid()}")
    if made is None:
        optional_tool_missing("needs root and a writable memory cgroup")
    cg, limit = made
    try:
        with open(f"{cg}/{limit}", "w") as f:
            f.write(str(48 << 20))

        def enter():
            with open(f"{cg}/cgroup.procs", "w") as f:
                f.write(str(os.getpid()))

        r = run(probe, "file.read", "--param", "size=40000K,4K", "--param", f"dir={tmp_path}", preexec_fn=enter)
    finally:
        os.rmdir(cg)
    assert r.rc == 0, r.stderr
    (skip,) = r.of_type("skip")
    assert skip["params"]["size"] == 40960000 and "memory cgroup" in skip["reason"], skip
    assert skip["info"]["dir"] == str(tmp_path)
    assert r.result("file.read", size=4096)["median"] > 0
    assert_no_workdir_left(tmp_path)
