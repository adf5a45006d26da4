"""syscall.* with tiny budgets: plausible values, ordering, parameters, errors."""
import os

from probe_helpers import TINY, run_probe

NAMES = ["syscall.null", "syscall.getuid", "syscall.read", "syscall.write",
         "syscall.open_close", "syscall.stat"]


def test_every_syscall_benchmark_gives_a_plausible_figure(probe):
    r = run_probe(probe, "run", *NAMES, "cpu.loop_overhead", *TINY)
    assert r.rc == 0, r.stderr
    med = {x["bench"]: x["median"] for x in r.of_type("result")}
    for n in NAMES:
        assert r.result(n)["unit"] == "ns"
        # Entering the kernel costs tens of ns at least, and far less than 100 us.
        assert 10 < med[n] < 100_000, (n, med[n])
        # ...and far more than a loop iteration.
        assert med[n] > 5 * med["cpu.loop_overhead"], n
    # open+close walks a path and allocates a file: dearer than a null call.
    assert med["syscall.open_close"] > med["syscall.null"]
    assert med["syscall.stat"] > med["syscall.null"] * 0.8


def test_null_is_batched_and_has_reference_cycles_on_tsc(probe):
    r = run_probe(probe, "run", "syscall.null", *TINY)
    res = r.result("syscall.null")
    assert res["batch"] >= 2
    if r.of_type("meta")[0]["clock"]["source"] == "tsc":
        hz = r.of_type("meta")[0]["clock"]["hz"]
        assert abs(res["ref_cycles"] - res["median"] * hz / 1e9) < 1e-6 * res["ref_cycles"]
    else:
        assert res["ref_cycles"] is None


def test_open_close_and_stat_take_a_path(probe, tmp_path):
    f = tmp_path / "target"
    f.write_text("x")
    r = run_probe(probe, "run", "syscall.open_close", "syscall.stat", "--param", f"path={f}", *TINY)
    assert r.rc == 0, r.stderr
    assert r.result("syscall.stat")["params"] == {"path": str(f)}


def test_missing_path_is_an_error_record_not_a_figure(probe, tmp_path):
    missing = tmp_path / "nope"
    r = run_probe(probe, "run", "syscall.stat", "syscall.null", "--param", f"path={missing}", *TINY)
    assert r.rc == 1  # a benchmark failed; the run went on
    err = r.of_type("error")
    assert len(err) == 1 and err[0]["bench"] == "syscall.stat"
    assert str(missing) in err[0]["message"]
    assert not [x for x in r.of_type("result") if x["bench"] == "syscall.stat"]
    r.result("syscall.null")  # the next benchmark still ran
    assert r.of_type("end")[0]["counts"] == {"ok": 1, "skip": 0, "error": 1}


def test_work_directory_is_removed(probe, tmp_path):
    tmp_path = tmp_path / "work"
    tmp_path.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp_path))
    r = run_probe(probe, "run", "syscall.open_close", *TINY, env=env)
    assert r.rc == 0
    assert list(tmp_path.iterdir()) == []
