"""The network peer (`osmeter-probe serve`, docs/peer.md): every service,
the hello's refusals, its limits, and the peer under abuse (issue 12):
garbage, a slowloris client, 200 concurrent clients, clients that vanish
mid-transfer, a wrong or missing token on a non-loopback address. After
each abuse the peer is still up, its memory and processes stay bounded,
and the next honest client is served. SIGTERM and SIGINT stop it with
exit 0 and leave no process."""
from __future__ import annotations

import os
import random
import select
import signal
import socket
import subprocess
import sys
import time

import pytest

from peer_helpers import (Peer, assert_serves, hello, read_line, recv_exactly, remote_namespace, reset_close,
                          serving, wait_until)
from probe_helpers import REPO, run_probe
from task_helpers import alive, wait_gone

MAX_SESSIONS = 32  # docs/peer.md defaults
MAX_PENDING = 256
RSS_BOUND_KIB = 64 * 1024  # the listening process: a hello buffer per pending connection, the source data


def version(probe: str) -> str:
    return run_probe(probe, "version", jsonl=False).stdout.split()[1]


# ---- the services ----------------------------------------------------------

def test_every_service_answers_as_documented(probe):
    with serving(probe) as peer:
        s, ans = hello(peer.addr, "echo")
        with s:
            words = ans.split()
            assert words[:2] == ["OK", version(probe)] and words[2].startswith("mtu="), ans
            s.sendall(b"x" * 70000)
            assert recv_exactly(s, 70000) == b"x" * 70000
        s, ans = hello(peer.addr, "sink")
        with s:
            assert ans.startswith("OK "), ans
            s.sendall(os.urandom(1 << 20))
            s.shutdown(socket.SHUT_WR)
            assert read_line(s) == f"DONE {1 << 20}"
            assert s.recv(1) == b""  # then the peer closes
        s, ans = hello(peer.addr, "source", "size=1000")
        with s:
            assert ans.startswith("OK "), ans
            data = recv_exactly(s, 100_000)
            assert len(data) == 100_000 and len(set(data)) > 200  # not one repeated byte
        s, ans = hello(peer.addr, "close")
        with s:
            assert ans.startswith("OK "), ans
            s.sendall(b"C")
            assert s.recv(1) == b""  # the peer closed first
        assert peer.alive()


def test_udp_echoes_only_datagrams_with_the_cookie(probe):
    with serving(probe) as peer:
        s, ans = hello(peer.addr, "udp")
        with s:
            kv = dict(w.split("=", 1) for w in ans.split()[2:])
            cookie = bytes.fromhex(kv["cookie"])
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            u.settimeout(3)
            with u:
                target = (peer.host, int(kv["udp_port"]))
                for n in (8, 100, 1400, 60000):
                    msg = cookie + os.urandom(n - 8)
                    u.sendto(msg, target)
                    assert u.recv(65536) == msg
                u.sendto(bytes(8) + b"stray", target)
                u.sendto(b"short", target)
                u.settimeout(0.3)
                with pytest.raises(TimeoutError):
                    u.recv(65536)
        # The control connection closed: the session and its UDP port go.
        assert wait_until(lambda: not peer.sessions())


@pytest.mark.parametrize("line,reason", [
    ("GET / HTTP/1.1", "not an osmeter peer hello"),
    ("OSMPEER 2 echo", "protocol version '2' not supported"),
    ("OSMPEER 1", "unknown service ''"),
    ("OSMPEER 1 dance", "unknown service 'dance'; allowed: echo, sink, source, udp, close"),
    ("OSMPEER 1 source size=0", "size: 0 is out of range"),
    ("OSMPEER 1 source size=16777217", "size: 16777217 is out of range"),
    ("OSMPEER 1 source size=1 size=2", "size: given twice"),
    ("OSMPEER 1 echo size=5", "unknown key 'size' for echo"),
    ("OSMPEER 1 echo loud", "'loud' is not KEY=VALUE"),
    ("OSMPEER 1 echo\x07", "not printable ASCII"),
    ("OSMPEER 1 echo " + "a=b " * 20, "more than 16 words"),
])
def test_bad_hellos_are_refused_with_the_reason(probe, line, reason):
    with serving(probe) as peer:
        s = socket.create_connection(peer.addr, timeout=10)
        with s:
            s.sendall(line.encode() + b"\n")
            ans = read_line(s)
            assert ans.startswith("ERR ") and reason in ans, ans
            assert s.recv(1) == b""
        assert_serves(peer.addr)


def test_a_hello_over_512_bytes_is_refused(probe):
    with serving(probe) as peer:
        s = socket.create_connection(peer.addr, timeout=10)
        with s:
            s.sendall(b"OSMPEER 1 echo " + b"k=v " * 130)  # 535 bytes, no newline
            assert read_line(s) == "ERR hello too long"
        assert_serves(peer.addr)


def test_connections_closed_before_the_hello_are_accepted_and_closed(probe):
    """What net.tcp_connect does, many times: no answer, no session."""
    with serving(probe) as peer:
        for _ in range(100):
            socket.create_connection(peer.addr, timeout=10).close()
        assert_serves(peer.addr)
        assert not any("refused" in line for line in peer.lines), peer.stderr()


# ---- limits ---------------------------------------------------------------

@pytest.mark.slow
def test_session_time_limit_closes_a_client_that_never_reads(probe):
    with serving(probe, "--session-time", "1") as peer:
        s, ans = hello(peer.addr, "source", "size=65536")
        with s:
            assert ans.startswith("OK ")
            t0 = time.monotonic()
            assert wait_until(lambda: not peer.sessions(), timeout=10)
            assert 0.5 < time.monotonic() - t0 < 6
        assert any("time limit (1 s) reached" in line for line in peer.lines), peer.stderr()
        assert_serves(peer.addr)


def test_session_byte_limit(probe):
    with serving(probe, "--session-bytes", "100k") as peer:
        s, ans = hello(peer.addr, "source", "size=1000")
        with s:
            assert ans.startswith("OK ")
            got = 0
            while b := s.recv(65536):
                got += len(b)
        assert got == 102_000  # 102 whole chunks of 1000 bytes fit under 102 400
        s, ans = hello(peer.addr, "echo")
        back = b""
        with s:
            try:
                s.sendall(b"y" * 200_000)
                while b := s.recv(65536):
                    back += b
            except (ConnectionResetError, BrokenPipeError):
                pass  # closed with our bytes unread: a reset
        assert len(back) < 102_400 and back == b"y" * len(back)
        assert any("byte limit (102400 bytes) reached" in line for line in peer.lines), peer.stderr()


def test_max_sessions_busy(probe):
    with serving(probe, "--max-sessions", "2") as peer:
        held = [hello(peer.addr, "echo")[0] for _ in range(2)]
        t0 = time.monotonic()
        s, ans = hello(peer.addr, "echo")
        s.close()
        assert ans == "ERR busy" and 0.4 < time.monotonic() - t0 < 3
        # A hello that finds every session taken waits up to 0.5 s for one
        # to end before it is refused.
        waiting = socket.create_connection(peer.addr, timeout=10)
        with waiting:
            waiting.sendall(b"OSMPEER 1 echo\n")
            time.sleep(0.1)
            held.pop().close()
            assert read_line(waiting).startswith("OK ")
        for h in held:
            h.close()
        assert wait_until(lambda: not peer.sessions())
        assert_serves(peer.addr)


def test_short_sessions_back_to_back_are_never_busy(probe):
    """What net.tcp_close does: a session, closed, the next at once. A
    session that ended is reaped before a newcomer is called busy."""
    with serving(probe, "--max-sessions", "1", "--quiet") as peer:
        answers = []
        for _ in range(300):
            s, ans = hello(peer.addr, "close")
            answers.append(ans)
            s.close()
        assert all(a.startswith("OK ") for a in answers), [a for a in answers if not a.startswith("OK ")][:3]


# ---- abuse ----------------------------------------------------------------

@pytest.mark.slow  # 5 s: the unterminated hellos wait for the hello deadline
def test_garbage_bytes(probe):
    """Random bytes of every length around the hello's limit, with and
    without a line end, some half-closed: each gets an ERR or is closed,
    all at once (the short ones without a line end wait for the hello
    deadline together)."""
    rng = random.Random(12)
    with serving(probe) as peer:
        conns = []
        for k in range(40):
            blob = rng.randbytes(rng.choice([1, 10, 511, 512, 513, 5000, 1 << 20]))
            if k % 3 == 0:
                blob = blob.replace(b"\n", b"") + b"\n"
            s = socket.create_connection(peer.addr, timeout=15)
            conns.append(s)
            try:
                s.sendall(blob)
                if k % 4 == 1:
                    s.shutdown(socket.SHUT_WR)
            except OSError:  # reset, broken pipe, not connected
                pass  # the peer answered and closed while we were still sending
        for s in conns:
            with s:
                ans = read_line(s)
                assert ans == "" or ans.startswith("ERR "), ans
        assert peer.alive() and not peer.sessions()
        assert peer.rss_kib() < RSS_BOUND_KIB
        assert_serves(peer.addr)


@pytest.mark.slow  # 5 s: the hello deadline
def test_slowloris_is_closed_at_the_hello_deadline_while_others_are_served(probe):
    with serving(probe) as peer:
        slow = socket.create_connection(peer.addr, timeout=10)
        t0 = time.monotonic()
        answer = ""
        with slow:
            for i, byte in enumerate(b"OSMPEER 1 echo\n"):
                if i == 2:
                    assert_serves(peer.addr)  # served at once, not after the slow one
                    assert time.monotonic() - t0 < 4
                try:
                    slow.sendall(bytes([byte]))
                except (BrokenPipeError, ConnectionResetError):
                    break
                r, _, _ = select.select([slow], [], [], 1.0)
                if r:
                    answer = read_line(slow)
                    break
            took = time.monotonic() - t0
        assert answer == "ERR hello timeout", answer
        assert 4.5 < took < 8, took
        assert_serves(peer.addr)


def test_200_concurrent_clients(probe):
    """32 sessions, 168 'ERR busy', the peer up, bounded in memory and
    processes; then the next honest client is served."""
    with serving(probe, "--quiet") as peer:
        rss0 = peer.rss_kib()
        conns = [socket.create_connection(peer.addr, timeout=20) for _ in range(200)]
        try:
            for c in conns:
                c.sendall(b"OSMPEER 1 echo\n")
            answers = [read_line(c) for c in conns]
            assert sum(a.startswith("OK ") for a in answers) == MAX_SESSIONS, answers
            assert answers.count("ERR busy") == 200 - MAX_SESSIONS
            assert len(peer.sessions()) == MAX_SESSIONS
            assert peer.alive() and peer.rss_kib() < max(RSS_BOUND_KIB, 2 * rss0)
        finally:
            for c in conns:
                c.close()
        assert wait_until(lambda: not peer.sessions())
        assert_serves(peer.addr)


def test_connections_that_never_say_hello_are_bounded(probe):
    """300 silent connections: the oldest go beyond 256, memory stays flat,
    and an honest client is still served."""
    with serving(probe, "--quiet") as peer:
        conns = [socket.create_connection(peer.addr, timeout=20) for _ in range(MAX_PENDING + 44)]
        try:
            def closed_by_peer() -> int:
                r, _, _ = select.select(conns, [], [], 0)
                return len(r)
            assert wait_until(lambda: closed_by_peer() >= 44, timeout=5), closed_by_peer()
            assert peer.rss_kib() < RSS_BOUND_KIB and not peer.sessions()
            assert_serves(peer.addr)
        finally:
            for c in conns:
                c.close()


@pytest.mark.parametrize("service", ["source", "sink", "echo"])
def test_client_vanishing_mid_transfer(probe, service):
    with serving(probe) as peer:
        for _ in range(3):
            s, ans = hello(peer.addr, service, *(["size=65536"] if service == "source" else []))
            assert ans.startswith("OK "), ans
            if service == "source":
                recv_exactly(s, 1 << 20)
            else:
                s.setblocking(False)
                sent = 0
                try:
                    while sent < 8 << 20:
                        sent += s.send(b"z" * 65536)
                except BlockingIOError:
                    pass  # echo: the peer's answers fill up unread
                assert sent > 0
            reset_close(s)
        assert wait_until(lambda: not peer.sessions(), timeout=10), peer.sessions()
        assert peer.alive()
        assert_serves(peer.addr)


# ---- tokens and non-loopback addresses ---------------------------------------

def test_refuses_to_start_on_a_non_loopback_address_without_a_token(probe):
    env = {k: v for k, v in os.environ.items() if k != "OSMETER_PEER_TOKEN"}
    r = subprocess.run([probe, "serve", "--listen", "192.0.2.7:7478"], capture_output=True, text=True,
                       timeout=20, env=env)
    assert r.returncode == 2 and "not a loopback address" in r.stderr and "token" in r.stderr, r.stderr
    # The token in the environment counts: past that check, 192.0.2.7 is not ours (exit 3).
    r = subprocess.run([probe, "serve", "--listen", "192.0.2.7:7478"], capture_output=True, text=True,
                       timeout=20, env={**env, "OSMETER_PEER_TOKEN": "s3cret"})
    assert r.returncode == 3 and "cannot listen on 192.0.2.7:7478" in r.stderr, r.stderr


@pytest.fixture(scope="module")
def remote():
    with remote_namespace() as r:
        yield r


def test_token_on_a_non_loopback_address(probe, remote, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-Token\n")
    token_file.chmod(0o600)
    r = subprocess.run([*remote.exec_prefix(), probe, "serve", "--listen", f"{remote.remote_ip}:0"],
                       capture_output=True, text=True, timeout=20,
                       env={k: v for k, v in os.environ.items() if k != "OSMETER_PEER_TOKEN"})
    assert r.returncode == 2 and "needs a token" in r.stderr, r.stderr
    with serving(probe, "--token-file", str(token_file), listen=f"{remote.remote_ip}:0",
                 prefix=remote.exec_prefix()) as peer:
        assert peer.host == remote.remote_ip
        for token in (None, "s3cret-token", "s3cret-Toke", "s3cret-Token2", "x" * 256):
            s, ans = hello(peer.addr, "echo", token=token)
            s.close()
            assert ans == "ERR token", (token, ans)
        s, ans = hello(peer.addr, "dance", token="wrong")
        s.close()
        assert ans == "ERR token", "without the token nothing else is told"
        assert peer.alive()
        assert_serves(peer.addr, token="s3cret-Token")
        s, ans = hello(peer.addr, "udp", token="s3cret-Token")
        with s:
            kv = dict(w.split("=", 1) for w in ans.split()[2:])
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
                u.settimeout(3)
                msg = bytes.fromhex(kv["cookie"]) + b"over the veth"
                u.sendto(msg, (remote.remote_ip, int(kv["udp_port"])))
                assert u.recv(100) == msg
        mtu = int(ans.split("mtu=")[1].split()[0])
        assert 576 <= mtu <= 65535


# ---- what the peer says on stderr -----------------------------------------------

# Sessions that end as their client wanted (it closed), and one refused hello.
SESSIONS = [("echo", []), ("close", []), ("source", ["size=4096"])] * 5


def talk(peer: Peer) -> None:
    for service, extra in SESSIONS:
        s, ans = hello(peer.addr, service, *extra)
        s.close()
        assert ans.startswith("OK "), ans
    s, ans = hello(peer.addr, "nosuch")
    s.close()
    assert ans.startswith("ERR "), ans
    assert wait_until(lambda: not peer.sessions())
    assert peer.stop() == 0, peer.stderr()  # every line is read once it stopped


@pytest.mark.parametrize("args", [[], ["--quiet"]])
def test_the_peer_says_where_it_listens_then_only_problems(probe, args):
    """By default (and with --quiet, the same) a session that went well says
    nothing: the listening line, then the refused hello, and nothing else
    (a net.tcp_close run opens hundreds of sessions)."""
    with serving(probe, *args) as peer:
        talk(peer)
    assert len(peer.lines) == 2, peer.stderr()
    assert "peer: listening on 127.0.0.1:" in peer.lines[0]
    assert "peer: refused 127.0.0.1:" in peer.lines[1] and "ERR" in peer.lines[1]


def test_verbose_says_one_line_per_session(probe):
    """-v: one line per session, as it ends (not one as it starts and one as
    it ends), and one when the peer stops."""
    with serving(probe, "-v") as peer:
        talk(peer)
    said = [line for line in peer.lines if " session for 127.0.0.1:" in line]
    assert len(said) == len(SESSIONS), peer.stderr()
    assert all(" ended after " in line and line.rstrip().endswith(": the client closed") for line in said), said
    assert sorted(line.split("peer: ")[1].split()[0] for line in said) == sorted(svc for svc, _ in SESSIONS)
    assert "listening on" in peer.lines[0] and "refused" in peer.stderr() and "stopped" in peer.lines[-1]
    assert len(peer.lines) == len(SESSIONS) + 3, peer.stderr()


# ---- stopping ---------------------------------------------------------------

@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_stops_the_peer_and_leaves_no_process(probe, sig):
    with serving(probe, "-v") as peer:  # -v: the peer says when it stopped
        held = [hello(peer.addr, svc, *extra)[0] for svc, extra in
                [("echo", []), ("source", ["size=4096"]), ("udp", []), ("close", [])]]
        silent = socket.create_connection(peer.addr, timeout=10)
        kids = peer.sessions()
        assert len(kids) == 4
        assert peer.stop(sig) == 0, peer.stderr()
        assert not wait_gone(kids), kids
        assert "stopped" in peer.stderr()
        for c in held + [silent]:
            c.close()


def test_a_killed_peer_takes_its_sessions_along(probe):
    with serving(probe) as peer:
        held = [hello(peer.addr, "echo")[0] for _ in range(3)]
        kids = peer.sessions()
        peer.proc.kill()
        peer.proc.wait(10)
        assert not wait_gone(kids), "PR_SET_PDEATHSIG: sessions die with the peer"
        for c in held:
            c.close()


# ---- the command line ---------------------------------------------------------

@pytest.mark.parametrize("args,words", [
    (["--listen", "nowhere:1"], ["not a numeric IPv4 or IPv6 address"]),
    (["--listen", "127.0.0.1:99999"], ["out of range", "0..65535"]),
    (["--listen", "[::1"], ["[ADDR]:PORT"]),
    (["--max-sessions", "0"], ["--max-sessions", "1..1024"]),
    (["--max-sessions", "1025"], ["--max-sessions", "1..1024"]),
    (["--session-time", "0"], ["--session-time", "out of range"]),
    (["--session-time", "nan"], ["--session-time"]),
    (["--session-bytes", "0"], ["--session-bytes", "out of range"]),
    (["--session-bytes", "lots"], ["--session-bytes"]),
    (["--token", "has space"], ["--token", "printable ASCII without spaces"]),
    (["--token", "x" * 257], ["257 bytes", "1 to 256"]),
    (["--token", "a", "--token-file", "/dev/null"], ["give one of them"]),
    (["--token-file", "/no/such/file"], ["token file /no/such/file", "No such file"]),
    (["--token-file", "/dev/null"], ["not a regular file"]),
    (["--quiet=1"], ["takes no value"]),
    (["--verbose=1"], ["--verbose takes no value"]),
    (["--quiet", "-v"], ["--quiet and --verbose: give one of them"]),
    (["-v", "--verbose"], ["--verbose given twice"]),
    (["--max-sessions", "3", "--max-sessions", "3"], ["given twice"]),
    (["--listen"], ["needs a value"]),
    (["--lis", "127.0.0.1"], ["unknown argument '--lis'", "--listen"]),
    (["extra"], ["unknown argument 'extra'"]),
])
def test_bad_serve_options_exit_2_naming_what_is_allowed(probe, args, words):
    r = subprocess.run([probe, "serve", *args], capture_output=True, text=True, timeout=20)
    assert r.returncode == 2, (r.returncode, r.stderr)
    for w in words:
        assert w in r.stderr, r.stderr
    assert "usage: osmeter-probe serve" in r.stderr


def test_an_empty_token_file_is_refused(probe, tmp_path):
    f = tmp_path / "empty"
    f.write_text("\n")
    r = subprocess.run([probe, "serve", "--token-file", str(f)], capture_output=True, text=True, timeout=20)
    assert r.returncode == 2 and "0 bytes" in r.stderr, r.stderr


def test_a_token_file_others_can_read_is_warned_about(probe, tmp_path):
    f = tmp_path / "token"
    f.write_text("abc\n")
    f.chmod(0o644)
    with serving(probe, "--token-file", str(f)) as peer:
        assert "may be read by other users" in peer.stderr()
        assert_serves(peer.addr, token="abc")
        s, ans = hello(peer.addr, "echo")  # a token set on loopback is required too
        s.close()
        assert ans == "ERR token"


def test_a_port_in_use_exits_3(probe):
    with serving(probe) as peer:
        r = subprocess.run([probe, "serve", "--listen", f"127.0.0.1:{peer.port}"], capture_output=True,
                           text=True, timeout=20)
        assert r.returncode == 3 and "cannot listen" in r.stderr and "in use" in r.stderr, r.stderr


def test_ipv6_loopback(probe):
    try:
        socket.create_server(("::1", 0), family=socket.AF_INET6).close()
    except OSError as e:
        pytest.skip(f"no IPv6 loopback here: {e}")
    with serving(probe, listen="[::1]:0") as peer:
        assert peer.host == "::1"
        assert_serves(peer.addr)


def test_usage_lists_serve(probe):
    r = subprocess.run([probe, "help"], capture_output=True, text=True, timeout=20)
    assert "osmeter-probe serve [--listen ADDR[:PORT]]" in r.stdout


# ---- osmeter serve ----------------------------------------------------------------

def test_osmeter_serve_serves_and_stops_on_sigint(probe, tmp_path):
    env = {**os.environ, "OSMETER_PROBE": probe, "PYTHONPATH": str(REPO / "src")}
    peer = Peer([sys.executable, "-m", "osmeter", "serve", "--listen", "127.0.0.1:0", "--max-sessions", "4"],
                env=env)
    try:
        peer.wait_ready()
        assert_serves(peer.addr)
        assert wait_until(lambda: not peer.sessions())  # that session's process is gone
        s, ans = hello(peer.addr, "echo")
        held = peer.sessions()
        assert len(held) == 1 and alive(held[0])
        assert peer.stop(signal.SIGINT) == 0, peer.stderr()
        assert not wait_gone(held)
        s.close()
        assert "Traceback" not in peer.stderr()
    finally:
        peer.kill()


def test_osmeter_serve_verbose_passes_on(probe):
    """`osmeter serve -v`: the probe's serve with --verbose, a line per session;
    -v with --quiet is refused by osmeter itself."""
    env = {**os.environ, "OSMETER_PROBE": probe, "PYTHONPATH": str(REPO / "src")}
    peer = Peer([sys.executable, "-m", "osmeter", "serve", "-v", "--listen", "127.0.0.1:0"], env=env)
    try:
        peer.wait_ready()
        assert_serves(peer.addr)
        assert wait_until(lambda: any(" session for " in line for line in peer.lines)), peer.stderr()
        assert peer.stop(signal.SIGINT) == 0, peer.stderr()
        assert [line.split("peer: ")[1].split()[0] for line in peer.lines] == ["listening", "echo", "stopped"]
    finally:
        peer.kill()
    r = subprocess.run([sys.executable, "-m", "osmeter", "serve", "-v", "--quiet"], capture_output=True,
                       text=True, timeout=20, env=env)
    assert r.returncode == 2 and "not allowed with argument" in r.stderr, r.stderr


def test_osmeter_serve_passes_bad_options_on(probe):
    env = {**os.environ, "OSMETER_PROBE": probe, "PYTHONPATH": str(REPO / "src")}
    r = subprocess.run([sys.executable, "-m", "osmeter", "serve", "--listen", "192.0.2.7"], capture_output=True,
                       text=True, timeout=20, env={k: v for k, v in env.items() if k != "OSMETER_PEER_TOKEN"})
    assert r.returncode == 2 and "needs a token" in r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-m", "osmeter", "serve", "--max-sessions", "0"], capture_output=True,
                       text=True, timeout=20, env=env)
    assert r.returncode == 2 and "--max-sessions" in r.stderr, r.stderr
