"""`run --param KEY=VALUES` measures exactly the values asked for: comma
lists of any length (no fixed buffer), integer ranges A..B, repeated --param
for one key, each value once (probe/src/cli_param.h)."""
import pytest

from probe_helpers import run_probe

# One sample per instance: these tests check what is measured, not how well.
CHEAP = ["--max-time", "0.001", "--min-time", "0", "--min-samples", "1", "--max-samples", "1", "--quiet"]


def measured(probe, *args):
    r = run_probe(probe, "run", *args, *CHEAP)
    assert r.rc == 0, r.stderr
    return [(x["bench"], x["params"]) for x in r.of_type("progress")]


def args_of(probe, *args):
    return [p["args"] for _, p in measured(probe, "cpu.call", *args)]


def test_a_value_list_longer_than_1023_bytes_is_not_cut(probe):
    # The hostile case: before, the list was cut at 1023 bytes and the probe
    # measured args=0, a value nobody asked for.
    assert args_of(probe, "--param", "args=1,1,1," + "0" * 1100 + "3") == [1, 3]
    assert args_of(probe, "--param", "args=" + ",".join(["2"] * 600 + ["5"])) == [2, 5]


def test_integer_range(probe):
    assert args_of(probe, "--param", "args=0..7") == list(range(8))
    assert args_of(probe, "--param", "args=2..4,7") == [2, 3, 4, 7]
    assert args_of(probe, "--param", "args=5..5") == [5]


def test_repeated_param_sweeps_over_both(probe):
    assert args_of(probe, "--param", "args=1", "--param", "args=2") == [1, 2]
    assert args_of(probe, "--param", "args=1", "--param", "args=2") == args_of(probe, "--param", "args=1,2")
    assert args_of(probe, "--param", "args=6,0", "--param", "args=3..4") == [6, 0, 3, 4]


def test_values_given_twice_are_measured_once(probe):
    assert args_of(probe, "--param", "args=1,1,01,+1") == [1]
    assert args_of(probe, "--param", "args=0..3", "--param", "args=2,3,6") == [0, 1, 2, 3, 6]
    sizes = [p["size"] for _, p in measured(probe, "mem.mmap", "--param", "size=4k,4096,4KiB,8k",
                                            "--param", "group=1")]
    assert sizes == [4096, 8192]


def test_several_keys_give_every_combination(probe):
    got = measured(probe, "mem.mmap", "--param", "size=4k,8k", "--param", "group=1..2",
                   "--param", "size=4096")
    assert [(p["size"], p["group"]) for _, p in got] == [(4096, 1), (4096, 2), (8192, 1), (8192, 2)]


def test_a_key_applies_to_each_benchmark_that_has_it(probe):
    got = measured(probe, "cpu.call", "syscall.null", "--param", "args=1,2")
    assert got == [("cpu.call", {"args": 1}), ("cpu.call", {"args": 2}), ("syscall.null", {})]


def test_a_string_parameter_takes_its_value_whole(probe, tmp_path):
    # commas and ".." belong to a path; two --param give two paths
    a = tmp_path / "a,b..c"
    b = tmp_path / "d"
    a.write_text("x")
    b.write_text("y")
    got = measured(probe, "syscall.stat", "--param", f"path={a}", "--param", f"path={b}",
                   "--param", f"path={a}")
    assert [p["path"] for _, p in got] == [str(a), str(b)]


@pytest.mark.parametrize("text", ["comma list", "A..B", "--param KEY=A --param KEY=B", "1024"])
def test_help_documents_lists_ranges_and_repeats(probe, text):
    r = run_probe(probe, "--help")
    assert r.rc == 0 and text in r.stdout
