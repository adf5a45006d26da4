"""osmeter study net: the course project's network table and figures, one stored run.

The matrix, on loopback (the probe's own peer, `placement` cross_cpu unless
--placement says otherwise) and, with `--peer HOST:PORT`, against a remote
peer (`osmeter serve` there):

1. **Latencies**: `net.tcp_rtt`, `net.udp_rtt` and `net.icmp_rtt` (ICMP
   echo, ping's round trip, to the same host) by message size, 16 B to
   32 KiB (three sizes with --quick); `net.tcp_connect`; `net.tcp_close`,
   the active and the passive side; the probe's default budget per
   instance (0.5 to 3 s; 0.05 to 0.5 s with --quick).
2. **Bandwidth**: `net.tcp_bw` by write size, 1 KiB to 1 MiB (three with
   --quick), both directions, samples of 100 ms of streaming (the default
   `duration`) for 0.5 to 3 s per instance (0.2 to 1 s with --quick).

Each part is one osmeter-probe invocation (the bandwidth gets its own
budget, and a `--param peer=` would else multiply the loopback part),
recorded as one run (studies/common.py). Then, in DIR: the table
(net-study.csv, net-study.txt, printed) with a loopback-against-remote
summary, and the figures of osmeter.report.figures.net (RTT against
message size, bandwidth against write size, loopback against remote) as
SVG and PNG.

Without --peer the remote column is absent and the output says how to get
it. A --peer is checked before anything runs: its address, the token (a
--token-file, or OSMETER_PEER_TOKEN in the environment; a peer that is not
on loopback refuses a client without one), and that the peer answers and
accepts the token.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import socket
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

from .. import outfile, textsafe
from ..argtypes import non_negative_int
from ..inputs import read_bounded
from ..errors import UsageError
from ..report.figures import net as net_figures
from ..report.figures.net import PLACED, placed, where
from ..fmt import MISSING, fmt_num, render_table
from ..runner import RunOptions
from ..store import open_store, resolve_location
from .common import Part, check_figures_possible, conclude, record_parts, write_files
from .common import render_csv as table_csv

NAME = "net"
HELP = ("TCP/UDP/ICMP round trips by message size, TCP bandwidth by write size, connect and close, loopback "
        "against a remote peer")
DESCRIPTION = ("The course project's network table and figures as one stored run: TCP and UDP round trips by "
               "message size next to ICMP echo (ping), TCP bandwidth by write size in both directions, TCP connect "
               "and close, on loopback and, with --peer (`osmeter serve` on the other machine), against a remote "
               "peer.")
# From 16 bytes (net.udp_rtt's smallest with room for a sequence number,
# and its default) to 32 KiB; every size is valid for TCP, UDP and ICMP.
RTT_SIZES = (16, 64, 256, 1024, 4096, 16384, 32768)
QUICK_RTT_SIZES = (16, 1024, 16384)
WRITE_SIZES = ("1K", "4K", "16K", "64K", "128K", "256K", "1M")
QUICK_WRITE_SIZES = ("16K", "128K", "1M")
LATENCY_BENCHES = ("net.tcp_rtt", "net.udp_rtt", "net.icmp_rtt", "net.tcp_connect", "net.tcp_close")
QUICK_LATENCY_BUDGET = (0.05, 0.5)  # min/max time per latency instance with --quick
# net.tcp_bw: a sample is one connection streaming for its `duration` (100 ms
# by default) after a warm-up; the harness' budget decides how many.
QUICK_BW_BUDGET = (0.2, 1.0)
TOKEN_ENV = "OSMETER_PEER_TOKEN"
CONNECT_TIMEOUT_S = 5.0
SERVE_HINT = ("run `osmeter serve --listen ADDR:PORT --token-file F` on the other machine and give "
              "`--peer ADDR:PORT --token-file F` here")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The net study's options (the `study` command adds --store after them)."""
    p.add_argument("--quick", action="store_true", help="fewer sizes and less time: under a minute on loopback")
    p.add_argument("-o", "--output", metavar="DIR", default="osmeter-net-study",
                   help="directory for figures and table")
    p.add_argument("--peer", metavar="HOST:PORT",
                   help="a remote peer (`osmeter serve` there): loopback against remote; without it, loopback only")
    p.add_argument("--token-file", metavar="F",
                   help=f"the file holding the peer's token (default: ${TOKEN_ENV}); needed by a peer not on "
                   "loopback")
    p.add_argument("--family", choices=("ipv4", "ipv6"), help="address family of the loopback peer (default ipv4)")
    p.add_argument("--placement", choices=("same_cpu", "cross_cpu"),
                   help="the loopback peer on the probe's CPU or another (default cross_cpu)")
    p.add_argument("--cpu", type=non_negative_int, metavar="N", help="pin the probe to CPU N (default: the least busy)")
    p.add_argument("--label", help="a name for the stored run (default: 'net study')")


# --- the peer, checked before anything runs ----------------------------------


@dataclass(frozen=True)
class PeerCheck:
    address: str  # as given, HOST:PORT
    token_file: str | None
    version: str  # what the peer answered: its probe version
    answer: str  # the rest of its answer line (mtu=...)


def split_address(text: str) -> tuple[str, int]:
    """HOST:PORT or [V6]:PORT -> (host, port); a UsageError naming the form otherwise."""
    host, sep, port = text.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise UsageError(f"--peer {text}: write an IPv6 address in brackets, [ADDR]:PORT")
    if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise UsageError(f"--peer {text}: expected HOST:PORT (a port 1-65535), e.g. 192.0.2.7:7478")
    return host, int(port)


def _is_loopback(host: str) -> bool:
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        return False
    return bool(infos) and all(ipaddress.ip_address(str(i[4][0]).split("%")[0]).is_loopback for i in infos)


def read_token(token_file: str | None) -> str | None:
    """The token the probe will present: the file's first line, or $OSMETER_PEER_TOKEN."""
    if token_file is None:
        return os.environ.get(TOKEN_ENV) or None
    raw = read_bounded(token_file, 4096, what="token file (--token-file)", idle_s=5, total_s=10)
    token = raw.split(b"\n", 1)[0].strip()
    if not token:
        raise UsageError(f"--token-file {token_file}: the file holds no token (its first line is empty)")
    try:
        return token.decode("ascii")
    except UnicodeDecodeError:
        raise UsageError(f"--token-file {token_file}: a token is printable ASCII") from None


def _ask(host: str, port: int, hello: bytes) -> str:
    with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S) as s:
        s.sendall(hello)
        buf = b""
        while b"\n" not in buf and len(buf) < 512:
            chunk = s.recv(512)
            if not chunk:
                break
            buf += chunk
    return buf.split(b"\n", 1)[0].decode("ascii", "replace").strip()


def check_peer(address: str, token_file: str | None) -> PeerCheck:
    """Before the study: the address parses, a token is at hand where one is
    needed, and the peer answers a hello (the `close` service, the lightest:
    docs/peer.md) with OK."""
    host, port = split_address(address)
    token = read_token(token_file)
    if token is None and not _is_loopback(host):
        raise UsageError(f"--peer {address}: a peer that is not on loopback needs its token: give --token-file F "
                         f"(the file the peer was started with) or set {TOKEN_ENV}")
    hello = "OSMPEER 1 close" + (f" token={token}" if token else "") + "\n"
    try:
        answer = _ask(host, port, hello.encode("ascii"))
    except OSError as e:
        why = e.strerror or str(e) or type(e).__name__
        raise UsageError(f"cannot reach the peer {address}: {why}; is it running? {SERVE_HINT}") from None
    words = answer.split()
    if words[:1] == ["ERR"]:
        raise UsageError(f"the peer {address} refused the study: {textsafe.line(answer[4:])}"
                         + (" (check --token-file)" if "token" in answer else ""))
    if len(words) < 2 or words[0] != "OK":
        raise UsageError(f"{address} is not an osmeter peer (it answered {textsafe.line(answer[:80])!r}); "
                         f"{SERVE_HINT}")
    return PeerCheck(address, token_file, words[1], " ".join(words[2:]))


# --- the plan ----------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    parts: tuple[Part, ...]
    rtt_sizes: tuple[int, ...]
    write_sizes: tuple[str, ...]
    peer: PeerCheck | None
    notes: tuple[str, ...] = ()


def _options(names: tuple[str, ...], params: Sequence[str], cpu: int | None, label: str,
             budget: tuple[float | None, float | None]) -> RunOptions:
    return RunOptions(names=names, suite=None, params=tuple(params), cpu=cpu, label=label, min_time=budget[0],
                      max_time=budget[1], min_samples=None, fifo=None, mlock=False, clock=None, repeat=1)


def build_parts(quick: bool, where: Sequence[str], cpu: int | None, label: str) -> tuple[Part, ...]:
    """Two parts (latencies, bandwidth) per location; `where` holds the
    location's --param assignments: none or family/placement for the own
    peer, peer= and token_file= for a remote one."""
    sizes = QUICK_RTT_SIZES if quick else RTT_SIZES
    writes = QUICK_WRITE_SIZES if quick else WRITE_SIZES
    remote = any(w.startswith("peer=") for w in where)
    place = f"remote peer {next(w[5:] for w in where if w.startswith('peer='))}" if remote else "loopback"
    latency = _options(LATENCY_BENCHES, ["size=" + ",".join(map(str, sizes)), "side=active,passive", *where],
                       cpu, label, QUICK_LATENCY_BUDGET if quick else (None, None))
    bw = _options(("net.tcp_bw",), ["direction=send,recv", "write_size=" + ",".join(writes), *where],
                  cpu, label, QUICK_BW_BUDGET if quick else (None, None))
    return (
        Part(f"latencies ({place}): TCP, UDP and ICMP round trips by message size, TCP connect and close", latency),
        Part(f"bandwidth ({place}): net.tcp_bw by write size, send and recv", bw),
    )


def make_plan(args: argparse.Namespace) -> Plan:
    """Everything checked and decided before anything runs."""
    if args.token_file and not args.peer:
        raise UsageError("--token-file goes with --peer (the loopback peer needs no token)")
    label = args.label or "net study"
    local = [f"family={args.family}"] if args.family else []
    local += [f"placement={args.placement}"] if args.placement else []
    parts = build_parts(args.quick, local, args.cpu, label)
    notes = []
    peer = None
    if args.peer:
        peer = check_peer(args.peer, args.token_file)
        remote = [f"peer={args.peer}"] + ([f"token_file={os.path.abspath(args.token_file)}"]
                                          if args.token_file else [])
        parts += build_parts(args.quick, remote, args.cpu, label)
        if args.family or args.placement:
            notes.append("--family and --placement apply to the loopback peer; the remote peer's address decides "
                         "the family, and its machine where it runs")
    else:
        notes.append(f"no --peer: the remote column is absent (loopback only); to get it, {SERVE_HINT}")
    return Plan(parts, QUICK_RTT_SIZES if args.quick else RTT_SIZES,
                QUICK_WRITE_SIZES if args.quick else WRITE_SIZES, peer, tuple(notes))


# --- the table ---------------------------------------------------------------

PART_OF = {"net.tcp_rtt": "round trip", "net.udp_rtt": "round trip", "net.icmp_rtt": "round trip",
           "net.tcp_connect": "connection", "net.tcp_close": "connection", "net.tcp_bw": "bandwidth"}
HEADER = ["part", "benchmark", "where", "placement", "size_bytes", "variant", "n", "min_us", "median_us",
          "mean_us", "mbit_per_s", "mb_per_s", "status"]
RIGHT = [False, False, False, False, True, False, True, True, True, True, True, True, False]
PLACEMENT_COLUMN = HEADER.index("placement")
# The result's `placement` in words is report.figures.net's PLACED and
# placed(), which the figures say too.


def _size(r: Any) -> int | None:
    p = r.params or {}
    v = p.get("write_size") if r.bench == "net.tcp_bw" else p.get("size")
    return v if isinstance(v, int) and r.bench != "net.tcp_connect" and r.bench != "net.tcp_close" else None


def _variant(r: Any) -> str:
    p = r.params or {}
    v = p.get("direction") if r.bench == "net.tcp_bw" else p.get("side") if r.bench == "net.tcp_close" else None
    return str(v) if v else MISSING


def table_rows(results: Sequence[Any]) -> list[list[str]]:
    """One row per instance of the study's run, in run order."""
    rows = []
    for r in results:
        if r.bench not in PART_OF:
            continue
        size = _size(r)
        row = [PART_OF[r.bench], r.bench, where(r), r.placement or MISSING,
               str(size) if size is not None else MISSING, _variant(r)]
        if r.status == "ok" and r.summary is not None:
            s = r.summary
            if r.bench == "net.tcp_bw":
                row += [str(s.n), MISSING, MISSING, MISSING, fmt_num(s.median * 8 / 1e6), fmt_num(s.median / 1e6)]
            else:
                row += [str(s.n), fmt_num(s.min / 1e3), fmt_num(s.median / 1e3), fmt_num(s.mean / 1e3),
                        MISSING, MISSING]
            row.append("ok")
        else:
            row += [MISSING] * 6 + [f"{r.status}: {r.reason}"]
        rows.append(row)
    return rows


NUMERIC = {k for k, right in enumerate(RIGHT) if right}


def render_csv(rows: list[list[str]]) -> str:
    """The table for programs: numbers without the thousands separators the
    text shows (fmt_num's '16,000' is 16000 here)."""
    return table_csv(HEADER, [[c.replace(",", "") if k in NUMERIC else c for k, c in enumerate(row)]
                              for row in rows])


# --- the summary: loopback against remote, next to ping ----------------------


def _cell(r: Any, rate: bool) -> str:
    """A median with its placement (a remote column's is its host's)."""
    if r is None or r.summary is None:
        return MISSING
    m = r.summary.median
    figure = f"{fmt_num(m * 8 / 1e6)} Mbit/s" if rate else f"{fmt_num(m / 1e3)} us"
    return figure if r.placement == "remote" else f"{figure}, {placed(r)}"


def render_summary(results: Sequence[Any]) -> str:
    """Loopback against remote (medians), one column per location."""
    places = net_figures.places(results)
    if not places:
        return "no net results: no summary\n"
    header = ["median", *places]
    right = [False] + [True] * len(places)
    if "loopback" in places and len(places) > 1:
        header.append("remote / loopback")
        right.append(True)
    lines = []
    for row in net_figures.summary_rows(results):
        found = [net_figures.find(results, row, p) for p in places]
        cells = [row.label, *(_cell(r, row.rate) for r in found)]
        if len(header) > len(cells):
            a, b = found[0], found[1]
            cells.append(fmt_num(b.summary.median / a.summary.median, 3) if a is not None and b is not None
                         and a.summary.median > 0 else MISSING)
        lines.append(cells)
    return render_table(header, lines, right) + "\n"


def _ping(i: Any, place: str) -> str:
    """What net.icmp_rtt's round trip is (docs/methods/net.md, net.icmp_rtt)."""
    if place == "loopback":
        return f"ICMP echo, {placed(i)}: answered by this kernel in the sending CPU's softirq, no peer process woken"
    return "ICMP echo answered by the remote host's kernel, no peer process"


def ping_lines(results: Sequence[Any]) -> list[str]:
    """Per location: the TCP and UDP round trip next to ICMP echo at the same
    size, with the placement of each on loopback, and what ping's round trip is."""
    out = []
    for place in dict.fromkeys(where(r) for r in results if r.bench == "net.icmp_rtt" and r.status == "ok"):
        icmp = {r.params.get("size"): r for r in results
                if r.bench == "net.icmp_rtt" and r.status == "ok" and where(r) == place}
        for bench, what in (("net.tcp_rtt", "TCP"), ("net.udp_rtt", "UDP")):
            same = [(r, icmp[r.params.get("size")]) for r in results if r.bench == bench and r.status == "ok"
                    and where(r) == place and r.params.get("size") in icmp]
            if same:
                r, i = same[0]
                assert r.summary is not None and i.summary is not None
                how = f", {placed(r)}" if place == "loopback" else ""
                out.append(f"{place}: {what} round trip of {r.params['size']} B{how}: "
                           f"{fmt_num(r.summary.median / 1e3)} us, {r.summary.median / i.summary.median:.2f} x "
                           f"ping's {fmt_num(i.summary.median / 1e3)} us ({_ping(i, place)})")
    return out


def peer_lines(results: Sequence[Any]) -> list[str]:
    """What the results say of each peer: its address and version, the path MTU and the MSS."""
    out = []
    for place in dict.fromkeys(where(r) for r in results if r.bench in PART_OF and r.status == "ok"):
        r = next(x for x in results if x.bench in PART_OF and x.status == "ok" and where(x) == place)
        info = r.record.get("info") if isinstance(r.record, dict) else None
        info = info if isinstance(info, dict) else {}
        bw = next((x for x in results if x.bench == "net.tcp_bw" and x.status == "ok" and where(x) == place), r)
        facts = {**info, **{k: v for x in (r, bw) for k, v in (x.extra or {}).items() if k in ("path_mtu", "mss")}}
        bits = [f"{k.replace('_', ' ')} {facts[k]}" for k in ("peer", "peer_version", "path_mtu", "mss")
                if k in facts]
        if bits:
            out.append(f"{place}: " + ", ".join(str(b) for b in bits))
    return out


def render_text(results: Sequence[Any], rows: list[list[str]], notes: Sequence[str]) -> str:
    """The table (its placement in words), the summary, ping and the peers."""
    shown = [[PLACED.get(c, c) if k == PLACEMENT_COLUMN else c for k, c in enumerate(row)] for row in rows]
    text = render_table(HEADER, [[textsafe.line(c) for c in row] for row in shown], RIGHT) + "\n"
    text += "\nloopback against remote\n" + render_summary(results)
    extra = ping_lines(results) + peer_lines(results)
    text += ("\n" + "".join(f"{textsafe.line(x)}\n" for x in extra)) if extra else ""
    text += "".join(f"note: {n}\n" for n in notes)
    return text


# --- running -----------------------------------------------------------------

TABLES = ("net-study.csv", "net-study.txt")  # what write_outputs writes, checked before the study runs
FIGURES = ("net-*.svg", "net-*.png")  # report/figures/net.py names them so


def write_outputs(store: Any, run_id: int, directory: Path, notes: Sequence[str]) -> tuple[list[Path], str]:
    """Figures (SVG and PNG) and the table (CSV and text) of a stored net-study run."""
    from ..report.content import run_data
    from ..report.figures.net import figures

    data = run_data(store, store.run(str(run_id)))
    rows = table_rows(data.results)
    text = render_text(data.results, rows, notes)
    return write_files(directory, list(zip(TABLES, (render_csv(rows), text))), figures(data)), text


def run(args: argparse.Namespace) -> int:
    check_figures_possible()
    plan = make_plan(args)  # the peer answers, or nothing is made
    directory = outfile.prepare_directory(Path(args.output))  # checked and made before any work
    outfile.check_entries(directory, TABLES, FIGURES)
    for note in plan.notes:
        textsafe.say("note", note)
    if plan.peer is not None:
        textsafe.say("note", f"the peer {plan.peer.address} answered: osmeter-probe {plan.peer.version}"
                     + (f" {plan.peer.answer}" if plan.peer.answer else ""))
    store = open_store(resolve_location(args.store), create=True)
    try:
        params: dict[str, Any] = {"study": "net", "quick": bool(args.quick), "peer": args.peer,
                                  "peer_version": plan.peer.version if plan.peer else None,
                                  "rtt_sizes": list(plan.rtt_sizes), "write_sizes": list(plan.write_sizes),
                                  "parts": [asdict(p.opts) for p in plan.parts]}
        rec = record_parts(store, plan.parts, params)
        assert rec.recorder.run_id is not None  # record_parts raises otherwise
        written, text = write_outputs(store, rec.recorder.run_id, directory, plan.notes)
        return conclude(rec, len(plan.parts), text, written)
    finally:
        store.close()
