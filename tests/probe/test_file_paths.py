"""Long paths in the file family (issue 10: never measure the wrong thing
silently). A message about a long path keeps its cause (osm_fail cuts a
message too long for its buffer in the middle, never at the end)."""
from __future__ import annotations

from pathlib import Path

import pytest

from probe_helpers import TINY, optional_tool_missing, run_probe


def long_dir(base: Path, length: int, make: bool = True) -> Path:
    """A directory under base whose absolute path has exactly `length`
    bytes, in components of at most 200 bytes; made when `make`."""
    base = base.resolve()
    left = length - len(str(base))
    assert left >= 2, (base, length)
    parts = []
    while left > 0:
        n = min(200, left - 1)
        if left - 1 - n == 1:  # never leave a remainder that cannot hold "/x"
            n -= 1
        parts.append(chr(ord("a") + len(parts) % 26) * n)
        left -= n + 1
    d = base.joinpath(*parts)
    assert len(str(d)) == length, (len(str(d)), length)
    if make:
        d.mkdir(parents=True)
    return d


def run(probe, *args, **kw):
    return run_probe(probe, "run", *args, *TINY, **kw)


def test_a_message_about_a_long_path_keeps_its_cause(probe, tmp_path):
    # 490 + "/nonexistent": the message used to end "...: No" (cut at 511).
    d = long_dir(tmp_path, 490)
    r = run(probe, "file.seq_read_cold", "--param", f"file={d}/nonexistent")
    assert r.rc == 1, r.stderr
    (err,) = r.of_type("error")
    assert err["message"] == f"file={d}/nonexistent: No such file or directory", err["message"]


# dir= and file= leave room under them for the work directory and the files
# made in it (bench/file.h: OSM_FILE_DIR_MAX = PATH_MAX - 1 - 128).
LIMIT = 4095 - 128
FILE_BENCHES = {
    "file.read": [], "file.write": [],
    "file.create": ["files=5"], "file.unlink": ["files=5"], "file.stat": ["files=5"], "file.open_close": ["files=5"],
    "file.seq_read_cold": ["file_size=1M", "block=4K"], "file.rand_read_cold": ["file_size=1M", "block=4K"],
    "file.contention": ["file_size=1M", "block=4K"], "file.cache_sweep": ["size=1M", "block=4K"],
}


def params(*kv):
    return [a for p in kv for a in ("--param", p)]


def test_list_names_the_limit_of_each_string_parameter(probe):
    cat = run_probe(probe, "list", "--json", jsonl=False)
    seen = set()
    for b in __import__("json").loads(cat.stdout)["benchmarks"]:
        for p in b["params"]:
            if p["type"] != "string":
                continue
            seen.add(b["name"])
            if p["name"] == "peer":  # net: an address, not a path
                assert p["max_len"] == 300 and "HOST:PORT" in p["max_len_why"], (b["name"], p)
                continue
            if p["name"] == "cpus":  # rt: a CPU list, not a path
                assert p["max_len"] == 256 and "CPU list" in p["max_len_why"], (b["name"], p)
                continue
            want = LIMIT if b["family"] == "file" else 4095
            assert p["max_len"] == want, (b["name"], p)
            assert "PATH_MAX - 1" in p["max_len_why"], p
    assert set(FILE_BENCHES) <= seen
    assert f"--param dir=STRING (at most {LIMIT} bytes" in run_probe(probe, "list").stdout


def test_a_dir_or_file_beyond_the_limit_is_refused_before_anything_runs(probe, tmp_path):
    for key in ("dir", "file"):
        for bench in ("file.stat", "file.seq_read_cold"):
            if key == "file" and bench == "file.stat":
                continue
            r = run(probe, bench, "--param", f"{key}=/" + "x" * LIMIT)
            assert r.rc == 2 and r.stdout == "", (key, bench, r.rc, r.stderr)
            assert f"has {LIMIT + 1} bytes; at most {LIMIT} bytes" in r.stderr, r.stderr
            assert "less 128 for the work directory" in r.stderr, r.stderr
    # at the limit, the value is taken: what fails then is not its length
    f = long_dir(tmp_path, LIMIT, make=False)
    r = run(probe, "file.seq_read_cold", "--param", f"file={f}")
    assert r.rc == 1 and r.of_type("error")[0]["message"] == f"file={f}: No such file or directory", r.stderr
    r = run(probe, "file.stat", "--param", "dir=/" + "x" * 300)
    assert r.of_type("error")[0]["message"].endswith("a name in it has 300 bytes; at most 255 (NAME_MAX)"), r.stderr


@pytest.mark.slow
def test_every_file_benchmark_runs_in_a_directory_at_the_limit(probe, tmp_path):
    """Whatever the parser accepts does not fail later for its length: the
    work directory and every file the family makes fit under dir=, and the
    record names the directory whole."""
    d = long_dir(tmp_path, LIMIT)
    for bench, extra in FILE_BENCHES.items():
        r = run(probe, bench, *params(f"dir={d}", *extra), timeout=300)
        assert not r.of_type("error"), (bench, r.of_type("error"))
        (rec,) = r.of_type("result") or r.of_type("skip")
        assert rec["info"]["dir"] == str(d), bench
        assert "too long" not in rec.get("reason", "") and "PATH_MAX" not in rec.get("reason", ""), rec
    assert not list(d.iterdir()), "a work directory was left behind"
    # file= at the limit too: its directory is the target
    f = long_dir(tmp_path / "f", LIMIT - 9) / "cold.dat"
    f.write_bytes(b"a" * (1 << 20))
    assert len(str(f)) == LIMIT
    r = run(probe, "file.seq_read_cold", *params(f"file={f}", "block=4K"))
    assert not r.of_type("error"), r.of_type("error")
    assert (r.of_type("result") or r.of_type("skip"))[0]["info"]["file"] == str(f)


def test_a_symlink_to_a_long_directory_is_measured_there(probe, tmp_path):
    # 600 bytes: more than the 512 the family's paths used to hold, where
    # the real path was cut to its parent without a word.
    d = long_dir(tmp_path, 600)
    (tmp_path / "s").symlink_to(d)
    r = run(probe, "file.stat", *params(f"dir={tmp_path / 's'}", "files=5"))
    assert r.rc == 0, (r.stderr, r.of_type("error"))
    assert r.result("file.stat")["info"]["dir"] == str(d)


def test_a_short_name_for_a_path_beyond_the_limit_is_an_error_naming_it(probe, tmp_path):
    d = long_dir(tmp_path, LIMIT + 33)
    (tmp_path / "s").symlink_to(d)
    (d / "f").write_bytes(b"a" * 8192)
    (tmp_path / "sf").symlink_to(d / "f")
    for bench, key, link, real in (("file.stat", "dir", "s", d), ("file.seq_read_cold", "file", "sf", d / "f")):
        r = run(probe, bench, *params(f"{key}={tmp_path / link}", "files=5" if key == "dir" else "block=4K"))
        assert r.rc == 1, r.stderr
        (err,) = r.of_type("error")
        assert err["message"].startswith(f"{key}={tmp_path / link} is {real}, {len(str(real))} bytes: it may "
                                         f"have at most {LIMIT} bytes (PATH_MAX - 1, less 128 for the work "
                                         "directory"), err


def test_a_long_mount_point_is_its_own_mount(probe, tmp_path):
    """/proc/self/mountinfo is read whole: a tmpfs mounted at a 600-byte path
    is described as tmpfs (a fixed 511-byte field used to miss it)."""
    import shutil
    import subprocess

    d = long_dir(tmp_path, 600)
    unshare = shutil.which("unshare")
    if not unshare or subprocess.run([unshare, "-rm", "true"], capture_output=True).returncode:
        optional_tool_missing("unshare -rm (a private mount namespace) does not work here")
    script = f'mount -t tmpfs osm-long "$1" && exec "$2" run file.stat --param "dir=$1" --param files=5 {" ".join(TINY)}'
    p = subprocess.run([unshare, "-rm", "sh", "-c", script, "sh", str(d), probe], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    (res,) = [x for x in map(__import__("json").loads, p.stdout.splitlines()) if x["type"] == "result"]
    assert res["info"]["fs_type"] == "tmpfs" and res["info"]["device"] == "osm-long", res["info"]
