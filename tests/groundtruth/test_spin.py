"""Ground truth: a busy loop whose length is known independently (measured
with CLOCK_MONOTONIC_RAW over long intervals, see docs/methods/harness.md) is
measured by the harness within 5 % at 50 ns, 1 us and 100 us, with every
clock this machine offers."""
import json

import pytest

from probe_helpers import run_probe

TOLERANCE = 0.05
# The spin's speed follows the core clock. When the machine's speed changed
# during the run by more than this (extra.drift, before vs after sampling),
# the expected length is itself uncertain and the measurement is repeated.
UNSTABLE = 0.02
ATTEMPTS = 3


def clocks(probe):
    return json.loads(run_probe(probe, "list", "--json").stdout)["clocks"]


def measure(probe, clock, ns):
    r = run_probe(probe, "run", "test.spin", "--param", f"ns={ns}", "--clock", clock,
                  "--min-time", "1.0", "--max-time", "6", "--quiet")
    if r.rc == 2 and "not usable" in r.stderr:
        pytest.skip(f"clock {clock} is not usable here: {r.stderr.strip()}")
    assert r.rc == 0, r.stderr
    assert r.of_type("meta")[0]["clock"]["source"] == clock
    res = r.result("test.spin")
    return res["median"], res["extra"]["expected_ns"], res["extra"]["drift"], res["batch"]


# 100 us (one call a sample) runs by default; 50 ns (batched) and 1 us in
# the slow run (each length costs ~5 s: every clock, 1 s each), as is the
# check of batching itself (test_cheap_spin_is_batched_and_expensive_spin_is_not).
@pytest.mark.parametrize("ns", [pytest.param(50, marks=pytest.mark.slow), pytest.param(1000, marks=pytest.mark.slow),
                                100_000])
def test_spin_of_known_length_is_measured_as_that_length(probe, ns):
    for clock in clocks(probe):
        seen = []
        for _ in range(ATTEMPTS):
            median, expected, drift, batch = measure(probe, clock, ns)
            ratio = median / expected
            seen.append(f"median {median:.2f} expected {expected:.2f} ratio {ratio:.4f} "
                        f"drift {drift:+.3f} batch {batch}")
            if abs(ratio - 1) <= TOLERANCE or abs(drift) <= UNSTABLE:
                break
        assert abs(ratio - 1) <= TOLERANCE, f"{clock} {ns} ns: " + "; ".join(seen)
        # The nominal length is only a target, but the calibration must be near it.
        assert 0.5 * ns < expected < 2 * ns


# Slow-marked to keep the default run under 5 minutes (~5 s; the 100 us spin's ground truth runs by default); CI runs it.
@pytest.mark.slow
def test_cheap_spin_is_batched_and_expensive_spin_is_not(probe):
    _, _, _, batch50 = measure(probe, "monotonic_raw", 50)
    _, _, _, batch100k = measure(probe, "monotonic_raw", 100_000)
    assert batch50 > 10
    assert batch100k == 1
