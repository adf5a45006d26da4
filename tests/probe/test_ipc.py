"""ipc.* with tiny budgets: plausible round trips and bandwidths, both
modes and placements, the datagram size limit, LEBench's send/recv rows
(their parameters, the send buffer rule, the labels in the lebench suite),
and a partner that dies: an error record, never a hang, no child left."""
import json
import os
import signal
import subprocess
import time

import pytest

from probe_helpers import TINY, probe_finished, probe_started, run_probe
from task_helpers import children, wait_children, wait_gone

LAT = ["ipc.pipe_lat", "ipc.fifo_lat", "ipc.unix_lat", "ipc.eventfd"]
BW = ["ipc.pipe_bw", "ipc.unix_bw"]
LEB = ["ipc.unix_send", "ipc.unix_recv"]
LONG = ["--min-time", "30", "--max-time", "30", "--max-samples", "10000000", "--quiet"]


def ncpus():
    return len(os.sched_getaffinity(0))


def wmem_default():
    with open("/proc/sys/net/core/wmem_default") as f:
        return int(f.read())


def test_every_ipc_benchmark_gives_a_plausible_figure(probe):
    r = run_probe(probe, "run", *LAT, *BW, *LEB, *TINY)
    assert r.rc == 0, r.stderr
    results = {x["bench"]: x for x in r.of_type("result")}
    assert set(results) == set(LAT + BW + LEB), r.of_type("skip") + r.of_type("error")
    for res in results.values():
        assert res["placement"] == "same_cpu" and res["params"]["placement"] == "same_cpu", res
    for name in LAT:
        res = results[name]
        # Two wake-ups and four system calls: more than a system call,
        # far less than a timer tick.
        assert res["unit"] == "ns" and 300 < res["median"] < 2_000_000, res
    for name in BW:
        res = results[name]
        # 64 KiB writes: from an ARM board's ~100 MB/s to a server's tens of GB/s.
        assert res["unit"] == "bytes_per_s" and 20e6 < res["median"] < 200e9, res
        assert res["extra"]["total_bytes"] == 10 << 20  # lmbench's 10 MiB
    for name in LEB:
        res = results[name]
        assert res["unit"] == "ns" and 50 < res["median"] < 200_000, res
        assert res["params"] == {"size": 1, "per_conn": 0, "placement": "same_cpu"}
        assert res["extra"]["per_conn"] == 50  # LEBench's 50 per connection
        assert res["extra"]["sndbuf_bytes"] == wmem_default()


def test_threads_and_datagrams(probe):
    r = run_probe(probe, "run", "ipc.pipe_lat", "ipc.fifo_lat", "ipc.unix_lat", "ipc.eventfd", "ipc.unix_bw",
                  "--param", "mode=thread", "--param", "type=stream,dgram", *TINY)
    assert r.rc == 0, r.stderr
    assert len(r.of_type("result")) == 7, r.of_type("skip") + r.of_type("error")
    for res in r.of_type("result"):
        assert res["params"]["mode"] == "thread"
        if res["unit"] == "ns":
            assert 300 < res["median"] < 2_000_000, res
        else:
            assert 20e6 < res["median"] < 200e9, res
    assert r.result("ipc.unix_lat", type="dgram")["median"] > 0


def test_round_trip_grows_with_the_size(probe):
    """64 KiB each way is a pipe's whole buffer, copied twice per direction:
    more than a 1-byte round trip."""
    r = run_probe(probe, "run", "ipc.pipe_lat", "ipc.unix_lat", "--param", "size=1,64K", *TINY)
    assert r.rc == 0, r.stderr
    for name in ("ipc.pipe_lat", "ipc.unix_lat"):
        assert r.result(name, size=65536)["median"] > 1.5 * r.result(name, size=1)["median"]


def test_bandwidth_transfer_size(probe):
    """total=0: lmbench's 10 MiB, or 1024 writes when less; an explicit
    total is what is moved per sample."""
    r = run_probe(probe, "run", "ipc.pipe_bw", "--param", "size=4K,1M", *TINY)
    assert r.rc == 0, r.stderr
    assert r.result("ipc.pipe_bw", size=4096)["extra"]["total_bytes"] == 4096 * 1024
    assert r.result("ipc.pipe_bw", size=1 << 20)["extra"]["total_bytes"] == 10 << 20
    r = run_probe(probe, "run", "ipc.unix_bw", "--param", "total=1M", "--param", "type=dgram", *TINY)
    assert r.rc == 0, r.stderr
    res = r.result("ipc.unix_bw")
    assert res["extra"]["total_bytes"] == 1 << 20 and 20e6 < res["median"] < 200e9


def test_a_write_bigger_than_the_default_total_is_one_whole_write(probe):
    """size above lmbench's 10 MiB: the default total is one write of size,
    never a quietly smaller write; an explicit total below size is refused
    before anything runs."""
    r = run_probe(probe, "run", "ipc.pipe_bw", "--param", "size=16M", *TINY)
    assert r.rc == 0, r.stderr
    assert r.result("ipc.pipe_bw")["extra"]["total_bytes"] == 16 << 20
    for bench in ("ipc.pipe_bw", "ipc.unix_bw"):
        r = run_probe(probe, "run", "syscall.getuid", bench, "--param", "size=1M", "--param", "total=512K", *TINY)
        assert r.rc == 2 and r.stdout == "", r.stdout
        assert f"{bench} (size=1048576, total=524288): total=524288 is less than size=1048576" in r.stderr, r.stderr


def test_a_datagram_over_the_socket_limit_is_a_skip(probe):
    limit = wmem_default() - 32
    r = run_probe(probe, "run", "ipc.unix_lat", "ipc.unix_bw", "--param", "type=dgram",
                  "--param", f"size={limit},{limit + 1}", *TINY)
    assert r.rc == 0, r.stderr
    for name in ("ipc.unix_lat", "ipc.unix_bw"):
        assert r.result(name, size=limit)["median"] > 0
    skips = r.of_type("skip")
    assert {(s["bench"], s["params"]["size"]) for s in skips} == {
        ("ipc.unix_lat", limit + 1), ("ipc.unix_bw", limit + 1)}
    for s in skips:
        assert "SO_SNDBUF" in s["reason"] and "type=stream" in s["reason"], s


@pytest.mark.skipif(ncpus() < 2, reason="needs two CPUs")
def test_cross_cpu_placement_is_recorded(probe):
    r = run_probe(probe, "run", *LAT, *BW, *LEB, "--param", "placement=cross_cpu", *TINY)
    assert r.rc == 0, r.stderr
    results = r.of_type("result")
    assert len(results) == 8 and {x["placement"] for x in results} == {"cross_cpu"}


def test_cross_cpu_on_one_cpu_is_a_skip(probe):
    cpu = min(os.sched_getaffinity(0))
    r = run_probe(probe, "run", *LAT, *BW, *LEB, "--param", "placement=cross_cpu", *TINY,
                  preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    assert r.rc == 0, r.stderr
    skips = r.of_type("skip")
    assert len(skips) == 8 and not r.of_type("result")
    assert all("second CPU" in s["reason"] for s in skips)


def test_lebench_rule_for_messages_per_connection(probe):
    """per_conn=0: 50 one-byte messages per connection, and one 96 000-byte
    message with the default 212 992-byte send buffer, which holds two."""
    r = run_probe(probe, "run", *LEB, "--param", "size=1,96000", *TINY)
    assert r.rc == 0, r.stderr
    for name in LEB:
        small, big = r.result(name, size=1), r.result(name, size=96000)
        assert small["extra"]["per_conn"] == 50
        if wmem_default() == 212992:
            assert big["extra"]["per_conn"] == 1
        # 96 000 bytes copied cost more than one byte.
        assert big["median"] > 2 * small["median"] and big["median"] > 1000, (small, big)


def test_more_messages_than_the_buffer_holds_is_a_skip(probe):
    r = run_probe(probe, "run", *LEB, "--param", "size=96000", "--param", "per_conn=1000", *TINY)
    assert r.rc == 0, r.stderr
    skips = r.of_type("skip")
    assert len(skips) == 2 and not r.of_type("result")
    for s in skips:
        assert "per_conn=1000" in s["reason"] and "SO_SNDBUF" in s["reason"], s
    # A size the buffer cannot hold twice: LEBench's region is impossible.
    r = run_probe(probe, "run", "ipc.unix_send", "--param", f"size={wmem_default()}", *TINY)
    assert r.rc == 0, r.stderr
    assert "wmem_default" in r.of_type("skip")[0]["reason"]


@pytest.mark.slow  # ~7 s; test_lebench.py runs the whole lebench suite, these rows included, by default
def test_lebench_rows_run_with_their_names_and_parameters(probe):
    cat = json.loads(run_probe(probe, "list", "--json").stdout)
    rows = {x["name"]: x for x in cat["lebench_rows"]}
    want = {"send": ("ipc.unix_send", 1, 50), "recv": ("ipc.unix_recv", 1, 50),
            "big send": ("ipc.unix_send", 96000, 1), "big recv": ("ipc.unix_recv", 96000, 1)}
    for name, (bench, size, per_conn) in want.items():
        row = rows[name]
        assert row["available"] and row["bench"] == bench
        assert row["params"] == {"size": size, "per_conn": per_conn, "placement": "same_cpu"}
        assert "MSG_DONTWAIT" in row["region"] and "a child forked for this connection" in row["region"]
    r = run_probe(probe, "run", "--suite", "lebench", *TINY, timeout=300)
    assert r.rc == 0, r.stderr
    got = {x["lebench_row"]: x for x in r.of_type("result") if x["bench"].startswith("ipc.")}
    assert set(got) == set(want)
    for name, (bench, size, per_conn) in want.items():
        assert got[name]["bench"] == bench and got[name]["params"]["size"] == size
        assert got[name]["extra"]["per_conn"] == per_conn and got[name]["median"] > 0


def test_lebench_exact_times_one_call_per_clock_pair(probe):
    r = run_probe(probe, "run", *LEB, "--lebench-exact", *TINY)
    assert r.rc == 0, r.stderr
    for res in r.of_type("result"):
        assert res["batch"] == 1 and 50 < res["median"] < 200_000, res


@pytest.mark.parametrize("bad", ["size=0", "size=2M", "mode=fiber", "placement=far", "type=seqpacket"])
def test_bad_parameters_are_rejected(probe, bad):
    r = run_probe(probe, "run", "ipc.unix_lat", "--param", bad)
    assert r.rc == 2 and r.stdout == "", bad
    key = bad.split("=")[0]
    assert key in r.stderr and ("allowed" in r.stderr), r.stderr


@pytest.mark.parametrize("bench,bad,allowed", [
    ("ipc.pipe_bw", "total=2G", "1 GiB"), ("ipc.pipe_bw", "size=32M", "16 MiB"),
    ("ipc.unix_send", "per_conn=1001", "0..1000"), ("ipc.unix_recv", "size=0", "64 MiB"),
    ("ipc.eventfd", "mode=coroutine", "process, thread"),
])
def test_bad_parameters_name_the_allowed_values(probe, bench, bad, allowed):
    r = run_probe(probe, "run", bench, "--param", bad)
    assert r.rc == 2 and r.stdout == "" and allowed in r.stderr, r.stderr


def test_send_and_recv_have_no_thread_mode(probe):
    """LEBench's partner is a process."""
    r = run_probe(probe, "run", "ipc.unix_send", "--param", "mode=thread")
    assert r.rc == 2 and "size, per_conn, placement" in r.stderr


@pytest.mark.parametrize("bench,params,stop_first", [
    ("ipc.pipe_lat", [], False),
    ("ipc.fifo_lat", [], False),
    ("ipc.unix_lat", ["--param", "type=stream"], False),
    # Stopped first, the partner leaves the probe blocked in its read: a
    # datagram socket and an eventfd then see nothing of its death but
    # what the SIGCHLD handler does.
    ("ipc.unix_lat", ["--param", "type=dgram"], True),
    ("ipc.eventfd", [], True),
    ("ipc.unix_bw", ["--param", "type=dgram"], True),
    ("ipc.pipe_bw", [], False),
])
@pytest.mark.slow
def test_a_partner_killed_mid_run_is_an_error_not_a_hang(probe, tmp_path, bench, params, stop_first):
    # A work directory of the test's: a probe killed by the test's clean-up
    # (after a failure) cannot remove its own.
    with probe_started(probe, "run", bench, *params, *LONG, env=dict(os.environ, TMPDIR=str(tmp_path))) as p:
        kids = wait_children(p.pid, 1)
        time.sleep(0.3)  # past set-up: measuring
        assert len(kids) == 1, kids
        if stop_first:
            os.kill(kids[0], signal.SIGSTOP)
            time.sleep(0.3)
        os.kill(kids[0], signal.SIGKILL)
        r = probe_finished(p, timeout=15)
    assert r.rc == 1, r.stderr
    errors = r.of_type("error")
    assert len(errors) == 1 and not r.of_type("result")
    assert "partner process" in errors[0]["message"] and "signal 9" in errors[0]["message"], errors
    assert r.records[-1]["type"] == "end" and r.records[-1]["counts"]["error"] == 1
    assert wait_gone(kids) == []


def state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def stop_with_partner(p):
    """Stops the probe where it has a live partner, blocked where it waits
    for the probe (LEBench's benchmarks fork one per connection: between two
    there is none, and one the probe is ending is running its exit), and
    returns it."""
    time.sleep(0.3)
    for _ in range(200):
        os.kill(p.pid, signal.SIGSTOP)
        time.sleep(0.02)
        kids = [k for k in children(p.pid) if state(k) == "S"]
        if kids:
            return kids
        os.kill(p.pid, signal.SIGCONT)
        time.sleep(0.01)  # let it run on to another point
    raise AssertionError(f"no partner found; the probe: {state(p.pid)}, exit status {p.poll()}")


def kill_a_connections_partner(probe, tmp_path, bench, size):
    """One run: the current partner killed, the run's exit status, output
    and the killed partner."""
    with probe_started(probe, "run", bench, "--param", f"size={size}", "--min-time", "3", "--max-time", "3",
                       "--max-samples", "10000000", "--quiet", env=dict(os.environ, TMPDIR=str(tmp_path))) as p:
        kids = stop_with_partner(p)
        assert len(kids) == 1, kids
        os.kill(kids[0], signal.SIGKILL)
        time.sleep(0.1)
        os.kill(p.pid, signal.SIGCONT)
        return probe_finished(p, timeout=15), kids


@pytest.mark.parametrize("bench,size", [("ipc.unix_send", 1), ("ipc.unix_send", 96000),
                                        ("ipc.unix_recv", 1), ("ipc.unix_recv", 96000)])
@pytest.mark.slow
def test_a_connections_partner_killed_is_an_error(probe, tmp_path, bench, size):
    """Killed while its connection is in use or before: the probe's next
    call, its wait for the partner's answer, or its check before the next
    connection (a recv partner's bytes are queued already) sees it. Killed
    in the microsecond between that check and the probe's own kill, it is
    not seen (and harms no figure): then the run ends normally, and the
    test tries again."""
    for _ in range(3):
        r, kids = kill_a_connections_partner(probe, tmp_path, bench, size)
        assert wait_gone(kids) == []
        if r.rc == 0:
            continue
        assert r.rc == 1, r.stderr
        errors = r.of_type("error")
        assert len(errors) == 1 and "partner process" in errors[0]["message"], errors
        assert "signal 9" in errors[0]["message"], errors
        return
    pytest.fail("three partners killed, none seen")


@pytest.mark.parametrize("bench,params", [
    ("ipc.fifo_lat", []), ("ipc.unix_lat", ["--param", "type=dgram"]), ("ipc.unix_send", []),
])
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
@pytest.mark.slow
def test_no_partner_survives_the_probe(probe, tmp_path, bench, params, sig):
    """SIGTERM: the cleanup stack kills and reaps the partner and removes
    the work directory (FIFOs, socket file); SIGKILL: the partner gets
    SIGKILL from PR_SET_PDEATHSIG."""
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ, TMPDIR=str(work))
    p = subprocess.Popen([probe, "run", bench, *params, *LONG], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    try:
        kids = stop_with_partner(p)
        assert len(kids) == 1, kids
    finally:
        p.send_signal(sig)
        os.kill(p.pid, signal.SIGCONT)
        out, _ = p.communicate(timeout=10)
    assert p.returncode == -sig
    assert wait_gone(kids) == []
    if sig == signal.SIGTERM:
        assert json.loads(out.splitlines()[-1])["status"] == "interrupted"
        assert list(work.iterdir()) == []


def test_files_are_gone_after_a_run(probe, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ, TMPDIR=str(work))
    p = subprocess.Popen([probe, "run", "ipc.fifo_lat", "ipc.unix_send", "ipc.unix_recv",
                          "ipc.unix_lat", "--param", "mode=thread", *TINY],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert len([line for line in out.splitlines() if '"type":"result"' in line]) == 4
    assert list(work.iterdir()) == []


def test_a_work_directory_too_deep_for_a_socket_address(probe, tmp_path):
    """sun_path holds 107 bytes: a deeper work directory is reached through
    /proc/self/fd/N; the socket file is still made, and removed, there."""
    work = tmp_path / ("d" * 100)
    work.mkdir()
    r = run_probe(probe, "run", *LEB, *TINY, env=dict(os.environ, TMPDIR=str(work)))
    assert r.rc == 0, r.stderr
    assert len(r.of_type("result")) == 2, r.of_type("skip") + r.of_type("error")
    assert list(work.iterdir()) == []
