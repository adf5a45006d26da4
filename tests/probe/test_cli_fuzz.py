"""Property-based test of the probe's argument parser (issue 10, item 9).

Hypothesis mutates valid command lines: tokens inserted, replaced, deleted or
repeated; names; --param KEY=VALUES with long, odd, unicode or non-UTF-8
values (bytes through os.fsdecode's surrogateescape); numbers out of range;
repeated options. Whatever the arguments, the probe must

- exit with a documented code (docs/exit-codes.md: 0, 1, 2, 3), never die
  of a signal;
- write nothing on stdout when it refuses its input (exit 2);
- write, for `run`, only lines that are JSON objects, one per line even for
  a reader that splits lines on U+2028 or NEL;
- under the sanitizer build (OSMETER_TEST_SLOW=1, or a path in
  OSMETER_TEST_SAN_PROBE), print no ASan or UBSan report.

Measuring is kept cheap: every run gets a one-sample budget, only cheap
benchmarks are named, and the probe runs in a scratch directory, so an
output path the mutations make up lands there. The file family's `dir` and
`file` get path-like values: absolute and relative, near the limit of 3967
bytes (bench/file.h) and PATH_MAX, names over NAME_MAX, and relative paths
into a long directory made in each scratch directory, whose real path is
beyond the limit (as is a short symlink to it, and one to a directory
beyond PATH_MAX). Mutations break most command lines before a path is
looked at, so a share of the cases are file.stat, file.open_close (2 files)
or file.seq_read_cold (1 MiB, or an existing 8 KiB file) with such values
and few other changes. The default run takes about 15 s;
OSMETER_TEST_SLOW=1 runs 3000 cases instead of 80."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from probe_helpers import REPO

SLOW = os.environ.get("OSMETER_TEST_SLOW") == "1"
EXAMPLES = 3000 if SLOW else 80
EXIT_CODES = {0, 1, 2, 3}  # docs/exit-codes.md, osmeter-probe

CHEAP = ["--max-time", "0.001", "--min-time", "0", "--min-samples", "1", "--max-samples", "1", "--quiet"]
# Benchmarks that cost little with the budget above, whatever their parameters.
NAMES = ["cpu.call", "cpu.timer_overhead", "cpu.loop_overhead", "syscall.null", "syscall.getuid", "syscall.stat"]
BASES = [
    ["run", "cpu.call"],
    ["run", "cpu.call", "--param", "args=1,2"],
    ["run", "cpu.timer_overhead", "--param", "source=probe"],
    ["run", "syscall.null", "syscall.getuid"],
    ["run", "syscall.stat", "--param", "path=."],
    ["run", "cpu.call", "--param", "args=0..3", "--param", "args=5"],
    ["list"],
    ["list", "--json", "--all"],
    ["--help"],
    ["version"],
]
OPTIONS = ["--param", "--sweep", "--cpu", "--min-time", "--max-time", "--min-samples", "--max-samples",
           "--target-rse", "--fifo", "--mlock", "--clock", "-o", "--output", "--die-with-parent", "--quiet",
           "--counters", "--lebench-exact", "--budget-fraction", "--inject-ns", "--suite", "--", "-", "--=",
           "--json", "--all", "--max", "-x"]
KEYS = ["args", "source", "path", "size", "ns", "", "ARGS", "args ", "a" * 300, "pa\u2028th", "é", "dir", "file",
        "files"]
LIMIT = 4095 - 128  # the longest dir= or file= (bench/file.h: OSM_FILE_DIR_MAX)
LONG_DEPTH = 20  # scratch/long/d{200}/...: 20 levels, a real path beyond LIMIT (4024 bytes and the scratch's)

# Text the mutations draw from: unicode, line separators, controls, and bytes
# that are not UTF-8 (surrogateescape strings, bytes again on the way out).
odd_bytes = st.binary(min_size=1, max_size=8).map(os.fsdecode)
odd_text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["\u2028", "\u2029", "\x85", "\x00x", "\n", "..", ",", "=", "0..7", "7..0", "1,,2",
                     "-1", "1e999", "nan", "0x10", "9" * 30, "4k", "1..100000000", ".", "/", "/dev/null",
                     "/nonexistent/x", "quick", "monotonic", "cycles", "cpu.call=5", "cpu.nope=1"]),
    odd_bytes,
)
numbers = st.one_of(st.integers(-10**20, 10**20).map(str),
                    st.floats(allow_nan=True, allow_infinity=True).map(repr))
values = st.one_of(numbers, odd_text,
                   st.lists(st.one_of(numbers, odd_text), min_size=1, max_size=5).map(",".join),
                   st.tuples(st.integers(-3, 9), st.integers(-3, 9)).map(lambda t: f"{t[0]}..{t[1]}"),
                   st.integers(1, 1500).map(lambda n: "1," + "0" * n + "3"))


def path_of(parts: list[str], length: int, absolute: bool) -> str:
    """A path of `length` bytes (or the nearest below), of the given names
    then names of 'x' up to 200 bytes."""
    p = ("/" if absolute else "") + "/".join(parts)
    while len(p) < length:
        n = min(200, length - len(p) - 1)
        p += ("/" if p and not p.endswith("/") else "") + "x" * max(n, 1)
    return p[:length]


# Path-like values: near the limits, long names, into the long directory.
paths = st.one_of(
    st.tuples(st.integers(LIMIT - 3, LIMIT + 3) | st.integers(4093, 4097) | st.integers(500, 520),
              st.booleans()).map(lambda t: path_of([], t[0], t[1])),
    st.integers(1, LONG_DEPTH).map(lambda k: "/".join(["long"] + ["d" * 200] * k)),
    st.integers(1, LONG_DEPTH).map(lambda k: "./" + "/".join(["long"] + ["d" * 200] * k) + "/"),
    st.sampled_from(["short", "short/", "deeper", "short/" + "e" * 100, "f", "long", ".", "./", "/proc/",
                     "/tmp/" + "n" * 256, "x" * 255, "x" * 256, "/nonexistent/f", "", "f/", "//proc", "long/../f"]),
)
path_param = st.tuples(st.sampled_from(["dir", "file"]), paths).map(lambda kv: f"{kv[0]}={kv[1]}")
param = st.one_of(st.tuples(st.sampled_from(KEYS), values).map(lambda kv: f"{kv[0]}={kv[1]}"), path_param)
token = st.one_of(st.sampled_from(OPTIONS), st.sampled_from(NAMES), values, param,
                  st.sampled_from(NAMES).map(lambda n: n + "x"))


@st.composite
def command_lines(draw):
    argv = list(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(0, 6))):
        op = draw(st.sampled_from(["insert", "replace", "delete", "repeat", "param", "path"]))
        i = draw(st.integers(0, len(argv)))
        if op == "insert":
            argv.insert(i, draw(token))
        elif op == "replace" and i < len(argv):
            argv[i] = draw(token)
        elif op == "delete" and i < len(argv):
            del argv[i]
        elif op == "repeat" and i < len(argv):
            argv[i:i] = argv[i:i + 2]
        elif op == "param":
            argv[i:i] = ["--param", draw(param)]
        elif op == "path":
            argv += ["--param", draw(path_param)]
    argv = [a.replace("\x00", "") for a in argv]  # an argument cannot hold a NUL
    if argv and argv[0] == "run":
        argv += CHEAP  # after the mutations: every run stays cheap
    return argv


@st.composite
def file_command_lines(draw):
    """A file benchmark with path values (most mutations above break a
    command line before its paths are looked at): dir= or file= from
    `paths` (file= for the cold read only), sometimes both or repeated (a
    list), sometimes any other --param."""
    bench = draw(st.sampled_from(["file.stat", "file.open_close", "file.seq_read_cold"]))
    argv = ["run", bench] + (["--param", "files=2"] if bench != "file.seq_read_cold" else
                             ["--param", "file_size=1M", "--param", "block=4K"])
    keys = ["dir"] if bench != "file.seq_read_cold" else ["dir", "file"]
    for _ in range(draw(st.integers(1, 3))):
        kv = f"{draw(st.sampled_from(keys))}={draw(paths)}" if draw(st.integers(0, 4)) else draw(param)
        argv += ["--param", kv]
    # monotonic_raw: no TSC calibration (half of a run's 0.1 s), so these cost
    # the fuzz little more time than it took before the file family
    return [a.replace("\x00", "") for a in argv] + CHEAP + ["--clock", "monotonic_raw"]


@pytest.fixture(autouse=True, scope="module")
def hypothesis_home(tmp_path_factory):
    """Hypothesis keeps caches in ./.hypothesis; these go to a scratch
    directory that pytest removes, so the tests leave nothing behind."""
    set_hypothesis_home_dir(str(tmp_path_factory.mktemp("hypothesis")))
    yield


def scratch(cwd: str) -> None:
    """What the path values name: a file f (8 KiB), a long directory whose
    real path passes the limit, a short symlink to it ("short"), and one to
    a directory in it whose real path passes PATH_MAX ("deeper")."""
    with open(os.path.join(cwd, "f"), "wb") as f:
        f.write(b"a" * 8192)
    fd = os.open(cwd, os.O_RDONLY)
    try:  # mkdir relative to a descriptor: no path ever passes PATH_MAX
        for name in ["long"] + ["d" * 200] * LONG_DEPTH + ["e" * 100]:
            os.mkdir(name, dir_fd=fd)
            nfd = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nfd
    finally:
        os.close(fd)
    os.symlink("/".join(["long"] + ["d" * 200] * LONG_DEPTH), os.path.join(cwd, "short"))
    os.symlink("short/" + "e" * 100, os.path.join(cwd, "deeper"))


def check(probe: str, argv: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="osm-fuzz-") as cwd:
        if any(a.startswith("file.") for a in argv):
            scratch(cwd)  # 6 ms: only where a file benchmark may look
        p = subprocess.run([probe, *argv], capture_output=True, cwd=cwd, env=env, timeout=60)
    assert p.returncode >= 0, f"killed by signal {-p.returncode}: {argv!r}\n{p.stderr[-2000:]!r}"
    assert p.returncode in EXIT_CODES, (p.returncode, argv, p.stderr[-2000:])
    if p.returncode == 2:
        assert p.stdout == b"", argv  # bad input: nothing written
        assert p.stderr, argv
    if argv and argv[0] == "run" and p.stdout:
        text = p.stdout.decode("utf-8")  # strict: invalid UTF-8 fails here
        assert text.endswith("\n")
        lines = text.splitlines()  # splits on U+2028, NEL, ... too
        assert len(lines) == text.count("\n"), argv
        for line in lines:
            assert isinstance(json.loads(line), dict), line
    return p


def fuzz(probe: str, env: dict | None = None) -> int:
    ran = []

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=not SLOW,
              suppress_health_check=list(HealthCheck))
    # one case in twelve is a file_command_line (dir=, file=, work
    # directories near PATH_MAX); 80 cases take ~3.5 s on a 2-CPU VM
    @given(st.integers(0, 11).flatmap(lambda k: file_command_lines() if k == 0 else command_lines()))
    def prop(argv):
        p = check(probe, argv, env)
        if env is not None:
            err = p.stderr.decode("utf-8", "replace")
            assert "Sanitizer" not in err and "runtime error" not in err, (argv, err[-3000:])
        ran.append(p.returncode)

    prop()
    codes = {c: ran.count(c) for c in sorted(set(ran))}
    print(f"\nfuzzed {len(ran)} command lines; exit codes {codes}")
    return len(ran)


@pytest.mark.slow  # 3.7 s; CI runs it (tests/unit/test_cli_fuzz.py fuzzes the front end in the default run)
def test_fuzzed_command_lines_keep_the_contract(probe):
    assert fuzz(probe) >= EXAMPLES // 2


@pytest.fixture(scope="module")
def sanitized_probe(tmp_path_factory):
    env_path = os.environ.get("OSMETER_TEST_SAN_PROBE")
    if env_path:
        return env_path
    if not SLOW:
        pytest.skip("the sanitizer build takes minutes: set OSMETER_TEST_SLOW=1 (CI does)")
    if not (shutil.which("cmake") and shutil.which("cc")):
        pytest.fail("cmake and cc are needed to build the probe (Debian: apt-get install build-essential cmake)")
    b = tmp_path_factory.mktemp("fuzz-san") / "build"
    subprocess.run(["cmake", "-S", str(REPO), "-B", str(b), "-DOSM_WERROR=ON", "-DOSM_SANITIZE=ON",
                    "-DCMAKE_BUILD_TYPE=RelWithDebInfo"], check=True, capture_output=True)
    p = subprocess.run(["cmake", "--build", str(b), "-j2", "--target", "osmeter-probe"], capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr[-4000:]
    return str(b / "probe" / "osmeter-probe")


def test_fuzzed_command_lines_under_asan_and_ubsan(sanitized_probe):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    assert fuzz(sanitized_probe, env) >= EXAMPLES // 2


def test_the_checker_catches_what_it_is_for(probe, tmp_path):
    """The properties fail where they should: an exit code outside the set,
    a death by signal, or output a line-splitting reader breaks."""
    fake = tmp_path / "fake"
    for body, what in (("exit 4", "4"), ("kill -SEGV $$", "signal"),
                       ("printf '{\"a\":\"x\\342\\200\\250y\"}\\n'; exit 0", "len(lines)")):
        fake.write_text(f"#!/bin/sh\n{body}\n")
        fake.chmod(0o755)
        with pytest.raises(AssertionError, match=what if what != "len(lines)" else None):
            check(str(fake), ["run"])
