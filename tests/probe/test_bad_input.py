"""Bad input is rejected before anything runs: exit 2, nothing on stdout,
a message on stderr that names what is allowed."""
import pytest

from probe_helpers import run_probe

CASES = [
    # (argv, words the message must contain)
    (["run", "nope.nothing"], ["unknown benchmark", "syscall.null"]),
    (["run", "syscall"], ["unknown benchmark"]),
    (["run", "syscall.null", "--param", "args=3"], ["no parameter 'args'", "none"]),
    (["run", "cpu.call", "--param", "argz=3"], ["no parameter 'argz'", "args"]),
    (["run", "cpu.call", "--param", "args=-1"], ["out of range", "0..7"]),
    (["run", "cpu.call", "--param", "args=8"], ["out of range", "0..7"]),
    (["run", "cpu.call", "--param", "args=99999999999999999999999"], ["not an integer", "0..7"]),
    (["run", "cpu.call", "--param", "args=three"], ["not an integer", "0..7"]),
    (["run", "cpu.call", "--param", "args="], ["not an integer"]),
    (["run", "cpu.call", "--param", "args"], ["KEY=VALUE"]),
    (["run", "cpu.timer_overhead", "--param", "source=sundial"], ["not allowed", "probe, monotonic_raw"]),
    (["run", "syscall.null", "--min-samples", "0"], ["out of range", "1..10000000"]),
    (["run", "syscall.null", "--min-samples", "-5"], ["out of range"]),
    (["run", "syscall.null", "--max-time", "0"], ["out of range"]),
    (["run", "syscall.null", "--max-time", "1e999"], ["not a number"]),
    (["run", "syscall.null", "--max-time", "soon"], ["not a number"]),
    (["run", "syscall.null", "--min-time", "5", "--max-time", "1"], ["larger than --max-time"]),
    (["run", "syscall.null", "--target-rse", "2"], ["out of range"]),
    (["run", "syscall.null", "--cpu", "100000"], ["out of range"]),
    (["run", "syscall.null", "--cpu", "1000"], ["not available", "allowed"]),
    (["run", "syscall.null", "--fifo", "0"], ["out of range", "1..99"]),
    (["run", "syscall.null", "--fifo", "100"], ["out of range", "1..99"]),
    (["run", "syscall.null", "--clock", "sundial"], ["unknown clock", "monotonic_raw"]),
    (["run", "syscall.null", "--clock", "monotonic_ra"], ["unknown clock", "monotonic_raw monotonic"]),
    (["run", "syscall.null", "--clock", "raw"], ["unknown clock"]),
    (["run", "syscall.null", "--budget-fraction", "0"], ["--budget-fraction", "0.01..1"]),
    (["run", "syscall.null", "--budget-fraction", "1.5"], ["--budget-fraction", "0.01..1"]),
    (["run", "syscall.null", "--budget-fraction", "half"], ["--budget-fraction"]),
    (["run", "syscall.null", "--inject-ns", "syscall.null"], ["NAME=NS"]),
    (["run", "syscall.null", "--inject-ns", "no.such=5"], ["unknown benchmark"]),
    (["run", "syscall.null", "--inject-ns", "syscall.null=-1"], ["ns per operation"]),
    (["run", "--suite", "huge"], ["unknown suite", "quick, standard, full"]),
    (["run", "--suite", "quick", "syscall.null"], ["not both"]),
    (["run"], ["nothing to run"]),
    (["run", "syscall.null", "--frobnicate"], ["unknown option"]),
    (["run", "syscall.null", "--max-time"], ["needs a value"]),
    (["frobnicate"], ["unknown command", "list, run"]),
    (["list", "--yaml"], ["unknown argument"]),
    ([], ["usage"]),
]


@pytest.mark.parametrize("argv,words", CASES, ids=[" ".join(c[0]) or "(none)" for c in CASES])
def test_bad_input_exits_2_before_running(probe, argv, words):
    r = run_probe(probe, *argv)
    assert r.rc == 2, (r.rc, r.stderr)
    assert r.stdout == ""  # nothing ran, nothing was written
    for w in words:
        assert w in r.stderr, (w, r.stderr)


def test_unwritable_output_exits_3(probe, tmp_path):
    r = run_probe(probe, "run", "syscall.null", "-o", str(tmp_path / "no" / "such" / "dir.jsonl"))
    assert r.rc == 3
    assert "cannot write" in r.stderr


def test_full_disk_is_reported(probe):
    # /dev/full fails every write with ENOSPC: the probe must notice and say so.
    r = run_probe(probe, "run", "cpu.loop_overhead", "--max-time", "0.05", "--min-time", "0",
                  "-o", "/dev/full")
    assert r.rc == 3
    assert "cannot write the output" in r.stderr
