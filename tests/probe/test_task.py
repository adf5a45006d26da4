"""task.* with tiny budgets: plausible values, the parent-size axes,
concurrency and migration, memory refused up front, failures as error
records, and no child left behind, even when the probe is killed."""
import json
import os
import resource
import shutil
import signal
import subprocess

import pytest

from probe_helpers import TINY, retried_under_load, run_probe
from task_helpers import as_nobody, run_limited, wait_children, wait_gone

NAMES = ["task.fork", "task.fork_exit", "task.fork_child", "task.vfork", "task.posix_spawn", "task.fork_exec",
         "task.thread_create", "task.thread_join", "task.thread_child"]


def ncpus():
    return len(os.sched_getaffinity(0))


def test_every_task_benchmark_gives_a_plausible_figure(probe):
    r = run_probe(probe, "run", *NAMES, *TINY)
    assert r.rc == 0, r.stderr
    med = {x["bench"]: x["median"] for x in r.of_type("result")}
    assert set(med) == set(NAMES), r.of_type("skip") + r.of_type("error")
    for n in NAMES:
        res = r.result(n)
        assert res["unit"] == "ns" and res["batch"] == 1  # one by one
        assert res["placement"] == "same_cpu"
        # Creating a thread or a process costs microseconds, not seconds.
        assert 1_000 < med[n] < 100_000_000, (n, med[n])
    # vfork copies no address space; exec of a new program adds to a fork;
    # the parent's return from fork() comes before the child's exit and wait.
    assert med["task.vfork"] < med["task.fork_exit"]
    assert med["task.thread_join"] < med["task.fork_exit"]
    assert med["task.fork_exec"] > med["task.vfork"]
    assert med["task.fork"] < med["task.fork_exit"]


def test_touched_memory_makes_the_fork_dearer(probe):
    r = run_probe(probe, "run", "task.fork", "--param", "touched_mib=1,256", "--counters", "page-faults",
                  "--min-time", "0.01", "--max-time", "1", "--min-samples", "5", "--quiet")
    assert r.rc == 0, r.stderr
    small, big = r.result("task.fork", touched_mib=1), r.result("task.fork", touched_mib=256)
    assert big["median"] > 10 * small["median"]
    assert small["extra"]["anon_huge_mib"] == 0  # thp=0 is MADV_NOHUGEPAGE


def test_vmas_make_the_fork_dearer(probe):
    r = run_probe(probe, "run", "task.fork", "--param", "vmas=0,6000", *TINY)
    assert r.rc == 0, r.stderr
    assert r.result("task.fork", vmas=6000)["median"] > 2 * r.result("task.fork", vmas=0)["median"]


def test_thp_maps_huge_pages_and_forks_cheaper(probe):
    thp = open("/sys/kernel/mm/transparent_hugepage/enabled").read()

    def check():
        r = run_probe(probe, "run", "task.fork", "--param", "touched_mib=64", "--param", "thp=0,1", *TINY)
        if "[never]" in thp:
            assert r.of_type("skip")[0]["params"]["thp"] == 1
            return
        assert r.rc == 0, r.stderr
        huge = r.result("task.fork", thp=1)
        if huge["extra"]["anon_huge_mib"] < 32:
            pytest.skip("the kernel gave no huge pages (memory fragmented?)")
        # A huge page's fork copies one PMD entry instead of 512 PTEs. No
        # margin, timed apart: retried once when the machine was busy.
        assert huge["median"] < r.result("task.fork", thp=0)["median"]

    retried_under_load(check)


@pytest.mark.skipif(ncpus() < 2, reason="needs two CPUs")
def test_concurrency_on_every_cpu_and_migration(probe):
    r = run_probe(probe, "run", "task.fork", "task.fork_child", "--param", "concurrency=0",
                  "--param", "migrate=0,1", "--param", "touched_mib=8", *TINY)
    assert r.rc == 0, r.stderr
    for bench in ("task.fork", "task.fork_child"):
        for migrate in (0, 1):
            res = r.result(bench, migrate=migrate)
            ex = res["extra"]
            assert ex["concurrency"] == ncpus()
            # The other processes forked in the same rounds and timed theirs.
            assert ex["peers_n"] >= res["n"] * (ncpus() - 1)
            assert 1_000 < ex["peers_median_ns"] < 100_000_000
            assert ex["peers_min_ns"] <= ex["peers_median_ns"] <= ex["peers_max_ns"]


def test_concurrency_beyond_the_cpus_is_a_skip(probe):
    r = run_probe(probe, "run", "task.fork", "--param", f"concurrency={ncpus() + 1}", *TINY)
    assert r.rc == 0
    assert "CPUs" in r.of_type("skip")[0]["reason"]


def test_memory_beyond_what_the_machine_can_spare_is_refused_up_front(probe):
    r = run_probe(probe, "run", "task.fork", "task.thread_create", "--param", "touched_mib=1048576", *TINY)
    assert r.rc == 0, r.stderr  # a skip is not a failure
    skip = r.of_type("skip")
    assert len(skip) == 1 and skip[0]["bench"] == "task.fork"
    assert "not enough memory" in skip[0]["reason"] and "MemAvailable" in skip[0]["reason"]
    assert not [x for x in r.of_type("result") if x["bench"] == "task.fork"]
    r.result("task.thread_create")  # the run went on


def test_vmas_beyond_max_map_count_is_refused(probe):
    r = run_probe(probe, "run", "task.fork", "--param", "vmas=1000000", *TINY)
    assert r.rc == 0
    assert "max_map_count" in r.of_type("skip")[0]["reason"]


def test_drop_caches_needs_root(probe):
    with as_nobody(probe) as (prefix, copy):
        p = subprocess.run([*prefix, copy, "run", "task.fork", "--param", "drop_caches=1", *TINY],
                           capture_output=True, text=True, timeout=60)
    recs = [json.loads(x) for x in p.stdout.splitlines()]
    skip = [x for x in recs if x["type"] == "skip"]
    assert p.returncode == 0 and skip and "needs root" in skip[0]["reason"]


def test_failed_forks_and_thread_creations_are_error_records(probe):
    """RLIMIT_NPROC (for nobody: root ignores it) makes fork, vfork,
    posix_spawn and pthread_create fail with EAGAIN: each an error record,
    no sample."""
    names = ["task.fork", "task.vfork", "task.posix_spawn", "task.fork_exec", "task.thread_create"]
    # (LeakSanitizer needs a thread of its own at exit: off in a sanitized build.)
    env = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    with as_nobody(probe) as (prefix, copy):
        p = run_limited([*prefix, copy, "run", *names, *TINY], resource.RLIMIT_NPROC, 1, env=env)
    recs = [json.loads(x) for x in p.stdout.splitlines()]
    assert p.returncode == 1, p.stderr  # a benchmark failed; the run went on
    errors = {x["bench"]: x["message"] for x in recs if x["type"] == "error"}
    assert set(errors) == set(names)
    assert all("Resource temporarily unavailable" in m for m in errors.values()), errors
    assert not [x for x in recs if x["type"] in ("samples", "result")]
    assert recs[-1]["counts"] == {"ok": 0, "skip": 0, "error": len(names)}


def test_address_space_limit_is_an_error_record(probe):
    """RLIMIT_AS applies to root too: the parent memory cannot be mapped and a
    thread's stack cannot be either."""
    p = run_limited([probe, "run", "task.fork", "task.thread_create", "--param", "touched_mib=64", *TINY],
                    resource.RLIMIT_AS, 6 << 20)
    recs = [json.loads(x) for x in p.stdout.splitlines()]
    errors = {x["bench"]: x["message"] for x in recs if x["type"] == "error"}
    assert p.returncode == 1
    assert "Cannot allocate memory" in errors["task.fork"]
    assert "pthread_create" in errors["task.thread_create"]


def test_missing_exec_helper_is_a_skip(probe, tmp_path):
    alone = tmp_path / "osmeter-probe"
    shutil.copy(probe, alone)
    r = run_probe(str(alone), "run", "task.posix_spawn", "task.fork_exec", *TINY)
    assert r.rc == 0
    assert [x["bench"] for x in r.of_type("skip")] == ["task.posix_spawn", "task.fork_exec"]
    assert all("osmeter-exec-helper" in x["reason"] for x in r.of_type("skip"))


@pytest.mark.skipif(ncpus() < 2, reason="needs two CPUs for a worker")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_no_worker_survives_the_probe(probe, sig):
    """Concurrency workers die with the probe: SIGTERM runs the cleanup
    stack, SIGKILL leaves it to PR_SET_PDEATHSIG."""
    p = subprocess.Popen([probe, "run", "task.fork", "--param", "concurrency=0", "--param", "touched_mib=4",
                          "--min-time", "30", "--max-time", "30", "--quiet"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        kids = wait_children(p.pid, ncpus() - 1)
        assert len(kids) >= ncpus() - 1
    finally:
        p.send_signal(sig)
        p.wait(timeout=10)
    assert p.returncode == -sig
    assert wait_gone(kids) == []


def test_bad_parameters_are_rejected(probe):
    for bad in ("touched_mib=-1", "thp=3", "migrate=yes", "concurrency=100000"):
        r = run_probe(probe, "run", "task.fork", "--param", bad)
        assert r.rc == 2 and r.stdout == "", bad
