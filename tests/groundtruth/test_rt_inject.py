"""Ground truth for rt.*: a busy period of known length injected on the
measured CPU (a SCHED_FIFO thread of higher priority spinning 200 us every
10 ms, as issue 13 asks) is seen by both benchmarks: rt.cyclic's maximum
wake-up latency reaches 200 us, and rt.osnoise finds gaps at 100 per second
at least, whose spin part (a 400 us injection's gaps less a 200 us one's)
is 200 us within 15 %; each gap also holds what the guest spends switching
to the injector and back, 10 to 60 us here depending on the day's host."""
import os
import shutil
import signal
import statistics
import subprocess
import textwrap
import time
from contextlib import contextmanager

import pytest

from probe_helpers import run_probe

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="SCHED_FIFO injection needs root")

SPIN_US = 200
PERIOD_MS = 10
# The injector, in C so that its own overhead around the spin is a few
# us: pinned to the measured CPU, SCHED_FIFO 95 (above the probe's 80), it
# spins SPIN_US on CLOCK_MONOTONIC every PERIOD_MS of absolute time (so the
# rate is exact whatever its wake-up jitter), and prints "ready" once it
# runs at its priority.
INJECTOR_C = textwrap.dedent(f"""
    #define _GNU_SOURCE
    #include <sched.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <time.h>
    static long long now(void) {{
        struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
        return t.tv_sec * 1000000000LL + t.tv_nsec;
    }}
    int main(int argc, char **argv) {{
        cpu_set_t set; CPU_ZERO(&set); CPU_SET(atoi(argv[1]), &set);
        struct sched_param sp = {{.sched_priority = 95}};
        if (sched_setaffinity(0, sizeof(set), &set) || sched_setscheduler(0, SCHED_FIFO, &sp))
            return perror("injector"), 1;
        puts("ready"); fflush(stdout);
        long long spin = atoll(argv[2]) * 1000LL, period = {PERIOD_MS} * 1000000LL, next = now() + period;
        for (;;) {{
            struct timespec t = {{next / 1000000000LL, next % 1000000000LL}};
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
            long long end = now() + spin;
            while (now() < end)
                ;
            next += period;
        }}
    }}
""")


@pytest.fixture(scope="module")
def injector_bin(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.fail("a C compiler is needed to build the injector (apt-get install build-essential)")
    d = tmp_path_factory.mktemp("injector")
    (d / "inject.c").write_text(INJECTOR_C)
    subprocess.run([cc, "-O2", "-o", str(d / "inject"), str(d / "inject.c")], check=True)
    return str(d / "inject")


@contextmanager
def injector(binary: str, cpu: int, spin_us: int = SPIN_US):
    p = subprocess.Popen([binary, str(cpu), str(spin_us)], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        time.sleep(0.1)
        yield p
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()


def measure(probe, bench, *params, seconds, limit=None):
    args = ["run", bench, "--cpu", "1" if len(os.sched_getaffinity(0)) > 1 else "0",
            "--min-time", str(seconds), "--max-time", str(limit or seconds + 5), "--quiet"]
    for p in params:
        args += ["--param", p]
    r = run_probe(probe, *args)
    assert r.rc == 0, r.stderr
    return r.result(bench), r.of_type("samples")[0]["values"]


@pytest.mark.slow
def test_cyclic_max_reaches_the_injected_busy_period(probe, injector_bin):
    cpu = 1 if len(os.sched_getaffinity(0)) > 1 else 0
    with injector(injector_bin, cpu):
        # 97 us cycles: at least two timers expire in every 200 us spin, and
        # as 10 ms is no multiple of 97 us, the first one's offset into the
        # spin moves by 9 us from one spin to the next: every few spins one
        # expires as the spin starts and waits out all of it.
        res, values = measure(probe, "rt.cyclic", "interval_us=97", seconds=3)
    assert res["info"]["policy"] == "SCHED_FIFO 80"
    assert res["extra"]["max_ns"] >= SPIN_US * 1000, res
    # ... and the typical cycle does not: the spin is 2 % of the time.
    assert res["median"] < SPIN_US * 1000 / 2


# Each injection is measured ROUNDS times, the two lengths interleaved, and
# every figure below is the median of its rounds: a round the host
# disturbed (a foreign gap of a millisecond, the switching slower for a
# while: seen on this project's VM) moves no median.
ROUNDS = 3
FIGURES = ("gaps_per_s", "gap_median_ns", "max_gap_ns", "noise_ns_per_s")


def osnoise_once(probe, injector_bin, cpu: int, spin_us: int) -> dict:
    with injector(injector_bin, cpu, spin_us):
        # SCHED_FIFO 1: below the injector, above whatever else runs there.
        # Under a second in all, so the kernel's RT throttling (95 % of
        # each second by default) never takes the CPU away from a busy
        # FIFO loop (that would be a 50 ms gap, and stop the injector too).
        res, _ = measure(probe, "rt.osnoise", "threshold_ns=100000", "priority=1", seconds=0.7, limit=0.9)
    return {k: res["extra"][k] for k in FIGURES}


def osnoise_medians(probe, injector_bin, cpu: int, spins: tuple[int, ...]) -> dict[int, dict]:
    seen: dict[int, list[dict]] = {s: [] for s in spins}
    for _ in range(ROUNDS):
        for s in spins:
            seen[s].append(osnoise_once(probe, injector_bin, cpu, s))
    for s, rounds in seen.items():
        print(f"spin {s} us: " + "; ".join(str({k: round(v) for k, v in r.items()}) for r in rounds))
    return {s: {k: statistics.median(r[k] for r in rounds) for k in FIGURES} for s, rounds in seen.items()}


@pytest.mark.slow
def test_osnoise_finds_the_injected_gaps_at_their_rate(probe, injector_bin):
    """Each gap is the spin plus what the guest spends switching to the
    injector and back (10 to 30 us on this project's VM on some days, 50 to
    60 us on others, varying with the host): the spin's own length is the
    difference between a 400 us and a 200 us injection, and it must be
    200 us within 15 % (the switching varies by some 10 us from round to
    round, and the difference carries both). Every injection is found (the
    rate within 10 % from below); other noise can only add gaps, and a spin
    counted twice would double the rate, so the rate stays under 1.5x.
    Each figure is the median of ROUNDS interleaved rounds."""
    cpu = 1 if len(os.sched_getaffinity(0)) > 1 else 0
    medians = osnoise_medians(probe, injector_bin, cpu, (SPIN_US, 2 * SPIN_US))
    e200, e400 = medians[SPIN_US], medians[2 * SPIN_US]
    rate = 1000 / PERIOD_MS
    for e in (e200, e400):
        assert 0.9 * rate <= e["gaps_per_s"] < 1.5 * rate, e
    spin = e400["gap_median_ns"] - e200["gap_median_ns"]
    assert spin == pytest.approx(SPIN_US * 1000, rel=0.15), (e200, e400)
    # Every gap holds the whole spin, and the switching adds under half of it.
    assert SPIN_US * 1000 <= e200["gap_median_ns"] < 1.5 * SPIN_US * 1000, e200
    # The injected spins are all in the total; other noise can only add.
    assert e200["noise_ns_per_s"] >= 0.9 * rate * SPIN_US * 1000, e200
