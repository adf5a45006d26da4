"""cpu.* with tiny budgets: plausible values, the right unit and parameters."""
import math

import pytest

from probe_helpers import TINY, run_probe


def test_timer_overhead_is_the_cost_of_a_clock_read(probe):
    r = run_probe(probe, "run", "cpu.timer_overhead", "--sweep", *TINY)
    assert r.rc == 0, r.stderr
    meta = r.of_type("meta")[0]
    res = {x["params"]["source"]: x for x in r.of_type("result")}
    assert set(res) == {"probe", "monotonic_raw", "monotonic", "realtime"}
    for x in res.values():
        assert x["unit"] == "ns"
        # A clock read is never free and never takes microseconds.
        assert 1 < x["median"] < 2000, x
    # The probe's own read costs about what an empty timed region costs
    # (one start plus one stop read), within a factor of four.
    own = res["probe"]["median"]
    assert meta["clock"]["overhead_ns"] / 4 < own < meta["clock"]["overhead_ns"] * 4 + 5


def test_loop_overhead_is_under_a_few_ns(probe):
    r = run_probe(probe, "run", "cpu.loop_overhead", *TINY)
    res = r.result("cpu.loop_overhead")
    assert res["unit"] == "ns"
    assert 0.02 < res["median"] < 20
    assert res["batch"] > 1000  # far cheaper than the clock: must be batched


@pytest.mark.parametrize("args", range(8))
def test_call_records_its_argument_count(probe, args):
    r = run_probe(probe, "run", "cpu.call", "--param", f"args={args}", *TINY)
    res = r.result("cpu.call", args=args)
    assert res["params"] == {"args": args}
    assert 0.1 < res["median"] < 200
    s = r.of_type("samples")[0]
    assert s["batch"] == res["batch"] and len(s["values"]) == res["n"]
    assert all(math.isfinite(v) and v > 0 for v in s["values"])


def test_call_sweep_covers_zero_to_seven(probe):
    r = run_probe(probe, "run", "cpu.call", "cpu.loop_overhead", "--sweep", *TINY)
    calls = [x for x in r.of_type("result") if x["bench"] == "cpu.call"]
    assert sorted(x["params"]["args"] for x in calls) == list(range(8))
    # Placement (issue 30): every timed loop and callee starts a 64-byte line,
    # whatever the linker put before it; 1 ns of cpu.call's 2 moved with it.
    for x in r.of_type("result"):
        assert x["extra"]["loop_line_offset"] == 0, x
    assert all(x["extra"]["callee_line_offset"] == 0 for x in calls)
