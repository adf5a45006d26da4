"""Bad input is rejected before anything runs: exit 2, nothing on stdout,
a message on stderr that names what is allowed."""
import os
import subprocess

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
    # an integer beyond int64 is out of range, not "not an integer" (issue 10)
    (["run", "cpu.call", "--param", "args=99999999999999999999999"], ["is out of range; allowed: 0..7"]),
    (["run", "cpu.call", "--param", "args=-99999999999999999999999"], ["is out of range; allowed: 0..7"]),
    (["run", "file.read", "--param", "size=99999999999999999999k"], ["is out of range; allowed: 1 B..1 GiB"]),
    (["run", "file.read", "--param", "size=99999999999999999999"], ["is out of range; allowed: 1 B..1 GiB"]),
    (["run", "syscall.null", "--min-samples", "99999999999999999999"], ["is out of range; allowed: 1..10000000"]),
    (["run", "syscall.null", "--max-time", "99999999999999999999"], ["is out of range"]),
    (["run", "syscall.null", "--inject-ns", "syscall.null=1e999"], ["is out of range"]),
    (["run", "cpu.call", "--param", "args=three"], ["not an integer", "0..7"]),
    (["run", "cpu.call", "--param", "args="], ["not an integer"]),
    (["run", "cpu.call", "--param", "args"], ["KEY=VALUE"]),
    (["run", "cpu.timer_overhead", "--param", "source=sundial"], ["not allowed", "probe, monotonic_raw"]),
    (["run", "syscall.null", "--min-samples", "0"], ["out of range", "1..10000000"]),
    (["run", "syscall.null", "--min-samples", "-5"], ["out of range"]),
    (["run", "syscall.null", "--max-time", "0"], ["out of range"]),
    (["run", "syscall.null", "--max-time", "1e999"], ["1e999 is out of range; allowed: 0.001..86400"]),
    (["run", "syscall.null", "--max-time", "nan"], ["not a number"]),
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
    # --param lists and ranges (cli_param.h): each refusal names what is allowed
    (["run", "cpu.call", "--param", "args=0..8"], ["out of range", "0..7"]),
    (["run", "cpu.call", "--param", "args=7..0"], ["range 7..0 is empty", "low..high"]),
    (["run", "cpu.call", "--param", "args=1,,2"], ["'' is not an integer", "0..7"]),
    (["run", "cpu.call", "--param", "args=1,"], ["'' is not an integer"]),
    (["run", "cpu.call", "--param", "args=1..2..3"], ["not an integer"]),
    (["run", "cpu.timer_overhead", "--param", "source=probe..realtime"],
     ["ranges (A..B) work only for integer parameters", "source is a choice", "commas"]),
    (["run", "mem.mmap", "--param", "size=4k..8k"], ["ranges (A..B) work only for integer parameters", "a size"]),
    (["run", "test.spin", "--param", "ns=10..1034"], ["1025 values", "at most 1024 per parameter"]),
    (["run", "test.spin", "--param", "ns=10..533", "--param", "ns=1000..1500"],
     ["more than 1024 values", "at most 1024 per parameter"]),
    (["run", "task.fork", "--param", "touched_mib=0..1023", "--param", "vmas=0..1023"],
     ["more than 65536 benchmark instances", "at most 65536"]),
    # a single-valued option given twice with different values is refused
    (["run", "syscall.null", "--max-time", "1", "--max-time", "2"], ["--max-time given twice", "give it once"]),
    (["run", "--suite", "quick", "--suite", "full"], ["--suite given twice"]),
    (["run", "syscall.null", "--cpu", "0", "--cpu", "1"], ["--cpu given twice"]),
    (["run", "syscall.null", "-o", "no/such/a", "--output", "no/such/b"], ["--output given twice"]),
    # fixed limits reached from argv: refused with the limit named, never cut
    (["run", "syscall.stat", "--param", "path=/" + "x" * 5000], ["5001 bytes", "at most 4095"]),
    (["run", "syscall.null", "-o", "/tmp/" + "x" * 5000], ["-o: the path has 5005 bytes", "at most 4095"]),
    (["run", "syscall.null", "--counters", ",".join(["cycles"] * 300)], ["2099 bytes", "at most 1023"]),
    (["run", "syscall.null", "--inject-ns", "y" * 300 + "=5"], ["unknown benchmark", "(300 bytes)"]),
    (["run", "z" * 10000], ["unknown benchmark", "(10000 bytes)", "syscall.null, syscall.getuid", "ctxsw.yield"]),
    (["run", "--suite", "q" * 10000], ["unknown suite", "(10000 bytes)", "quick, standard, full"]),
    (["run", "syscall.null", "--clock", "c" * 10000], ["unknown clock", "(10000 bytes)", "monotonic"]),
    (["run", "cpu.call", "--param", "args=" + "9" * 10000], ["out of range", "(10000 bytes)", "0..7"]),
    (["run", "cpu.call", "--param", "args=" + "9" * 10000 + "x"], ["not an integer", "(10001 bytes)", "0..7"]),
    (["run", "syscall.null", "--" + "f" * 10000], ["unknown option", "(10002 bytes)"]),
]


@pytest.mark.parametrize("argv,words", CASES, ids=[" ".join(c[0])[:80] or "(none)" for c in CASES])
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


def test_cpu_not_available_lists_every_allowed_cpu(probe):
    """The allowed CPUs are written as ranges, none cut off (no 256-byte buffer)."""
    allowed = sorted(os.sched_getaffinity(0))
    r = run_probe(probe, "run", "syscall.null", "--cpu", "1023")
    if 1023 in allowed:
        pytest.skip("CPU 1023 is available here")
    assert r.rc == 2 and r.stdout == ""
    runs, start = [], allowed[0]
    for a, b in zip(allowed, allowed[1:] + [None]):
        if b != a + 1:
            runs.append(str(start) if start == a else f"{start}-{a}")
            start = b
    assert r.stderr.rstrip().endswith("allowed: " + ", ".join(runs)), r.stderr


NON_UTF8 = [
    ["run", "cpu.call", "--param", os.fsdecode(b"args=\xff")],
    ["run", "syscall.stat", "--param", os.fsdecode(b"path=/tmp/\xe9t\xe9")],
    ["run", "syscall.null", "-o", "OUT/" + os.fsdecode(b"\xc0\xaf")],
    ["run", os.fsdecode(b"syscall.n\xffull")],
    ["list", os.fsdecode(b"--json\xed\xa0\x80")],
]


@pytest.mark.parametrize("argv", NON_UTF8, ids=range(len(NON_UTF8)))
def test_non_utf8_arguments_are_refused(probe, argv, tmp_path):
    """Policy (docs/exit-codes.md): arguments must be UTF-8; any other byte is
    a usage error naming the argument, before anything is measured."""
    out = tmp_path / "out"
    out.mkdir()
    argv = [a.replace("OUT", str(out)) for a in argv]
    p = subprocess.run([probe, *argv], capture_output=True, timeout=30)
    assert p.returncode == 2, p.stderr
    assert p.stdout == b""
    assert b"is not valid UTF-8" in p.stderr and b"UTF-8 arguments only" in p.stderr
    assert list(out.iterdir()) == []
