"""The net study's plan (probe arguments per part), its table and summary,
its figures (drawn and readable), without a probe; and the FakeProbe's
net family against the real catalogue."""

from __future__ import annotations

import argparse
import json
from itertools import combinations
from types import SimpleNamespace

import numpy as np
import pytest

from osmeter.studies import net as study_net
from osmeter.runner import probe_argv
from osmeter.errors import UsageError
from osmeter.model import BenchResult
from osmeter.report.figures import RunData
from osmeter.report.figures import net as net_figures
from osmeter.stats import summary

from ..fake_probe import NET, NET_COMMON


def params(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == "--param"]


def test_two_parts_per_location_with_their_own_budgets(tmp_path) -> None:
    latency, bw = study_net.build_parts(False, [], 1, "net study")
    argv = probe_argv(tmp_path / "probe", latency.opts)
    assert argv[3:8] == ["net.tcp_rtt", "net.udp_rtt", "net.icmp_rtt", "net.tcp_connect", "net.tcp_close"]
    assert params(argv) == ["size=16,64,256,1024,4096,16384,32768", "side=active,passive"]
    assert "--min-time" not in argv and argv[argv.index("--cpu") + 1] == "1"  # the probe's default budget
    argv = probe_argv(tmp_path / "probe", bw.opts)
    assert argv[3] == "net.tcp_bw"
    assert params(argv) == ["direction=send,recv", "write_size=1K,4K,16K,64K,128K,256K,1M"]  # 100 ms samples
    assert "--min-time" not in argv and "--min-samples" not in argv
    assert "loopback" in latency.title and "loopback" in bw.title

    q_lat, q_bw = study_net.build_parts(True, ["peer=192.0.2.7:7478", "token_file=/t"], None, "x")
    argv = probe_argv(tmp_path / "probe", q_lat.opts)
    assert params(argv) == ["size=16,1024,16384", "side=active,passive", "peer=192.0.2.7:7478", "token_file=/t"]
    assert argv[argv.index("--max-time") + 1] == "0.5"
    argv = probe_argv(tmp_path / "probe", q_bw.opts)
    assert params(argv)[1] == "write_size=16K,128K,1M" and argv[argv.index("--max-time") + 1] == "1"
    assert "remote peer 192.0.2.7:7478" in q_lat.title


def test_a_quick_study_fits_in_a_minute_on_loopback() -> None:
    """The budget the quick plan asks for (each instance's max-time), before
    any overhead: well under 60 s."""
    lat, bw = study_net.build_parts(True, [], None, "x")
    n_lat = len(study_net.QUICK_RTT_SIZES) * 3 + 1 + 2
    n_bw = len(study_net.QUICK_WRITE_SIZES) * 2
    budget = n_lat * lat.opts.max_time + n_bw * bw.opts.max_time
    assert budget < 20, budget


def plan_args(**kw) -> argparse.Namespace:
    base = dict(quick=True, output="out", peer=None, token_file=None, family=None, placement=None, cpu=None,
                label=None, store=None)
    base.update(kw)
    return argparse.Namespace(**base)


def test_the_plan_without_a_peer_says_how_to_get_the_remote_column() -> None:
    plan = study_net.make_plan(plan_args(family="ipv6", placement="same_cpu"))
    assert len(plan.parts) == 2 and plan.peer is None
    assert plan.parts[0].opts.params[-2:] == ("family=ipv6", "placement=same_cpu")
    (note,) = plan.notes
    assert "the remote column is absent" in note and "osmeter serve --listen ADDR:PORT --token-file F" in note


@pytest.mark.parametrize("text, expected", [
    ("192.0.2.7:7478", ("192.0.2.7", 7478)),
    ("[2001:db8::7]:7478", ("2001:db8::7", 7478)),
    ("peer.example:1", ("peer.example", 1)),
])
def test_peer_addresses(text, expected) -> None:
    assert study_net.split_address(text) == expected


@pytest.mark.parametrize("text", ["192.0.2.7", ":7478", "host:", "host:65536", "host:x", "2001:db8::7:7478"])
def test_bad_peer_addresses(text) -> None:
    with pytest.raises(UsageError, match="--peer"):
        study_net.split_address(text)


def test_the_token_file_first_line(tmp_path) -> None:
    f = tmp_path / "token"
    f.write_bytes(b"abc123 \nsecond line\n")
    assert study_net.read_token(str(f)) == "abc123"
    f.write_bytes(b"\n")
    with pytest.raises(UsageError, match="holds no token"):
        study_net.read_token(str(f))
    f.write_bytes("tökén\n".encode())
    with pytest.raises(UsageError, match="printable ASCII"):
        study_net.read_token(str(f))


@pytest.mark.slow
def test_a_token_file_that_never_ends_or_never_sends_is_refused(tmp_path, monkeypatch) -> None:
    """Issue 27: a FIFO without a writer blocked `study net` for ever; /dev/zero is not a token."""
    import os
    import time

    from osmeter import inputs

    monkeypatch.setattr(inputs, "IDLE_S", 0.2)
    with pytest.raises(UsageError, match="more than 4 KiB"):
        study_net.read_token("/dev/zero")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(UsageError, match="sent nothing for"):
        study_net.read_token(str(fifo))
    assert time.monotonic() - started < 30
    with pytest.raises(UsageError, match="it is a directory"):
        study_net.read_token(str(tmp_path))


# --- the table, the summary and the figures ---------------------------------


def result(seq: int, bench: str, values: list[float], peer: str = "", **p) -> BenchResult:
    """As the probe records it: placement cross_cpu asked, recorded as such on
    loopback but for ICMP echo (same_cpu: the kernel answers on the sending
    CPU), remote with a peer."""
    unit = "bytes_per_s" if bench == "net.tcp_bw" else "ns"
    placement = "remote" if peer else "same_cpu" if bench == "net.icmp_rtt" else "cross_cpu"
    return BenchResult(seq=seq, bench=bench, params={**p, "peer": peer, "placement": "cross_cpu"}, status="ok",
                       unit=unit, summary=summary(np.asarray(values)), batch=1, extra={"path_mtu": 65536},
                       record={"placement": placement, "info": {"peer": peer or "127.0.0.1:1 (own peer on CPU 1)"}})


def study_results() -> tuple[BenchResult, ...]:
    out = []
    for peer, lat, rate in (("", 20e3, 2e9), ("10.254.0.2:7478", 100e3, 11.9e6)):
        for bench, k in (("net.tcp_rtt", 1.0), ("net.udp_rtt", 0.9), ("net.icmp_rtt", 0.4)):
            for size in (1, 64, 1024):
                out.append(result(len(out), bench, [k * lat + size, k * lat + size + 10], peer, size=size))
        out.append(result(len(out), "net.tcp_connect", [2 * lat, 2 * lat], peer))
        for side in ("active", "passive"):
            out.append(result(len(out), "net.tcp_close", [lat / 2, lat / 2], peer, side=side))
        for d in ("send", "recv"):
            for w in (4096, 131072):
                out.append(result(len(out), "net.tcp_bw", [rate, rate], peer, direction=d, write_size=w,
                                  duration=1.0))
    out.append(BenchResult(seq=len(out), bench="net.tcp_bw", params={"peer": "", "direction": "send",
                           "write_size": 1 << 20}, status="error", reason="the peer vanished"))
    return tuple(out)


def test_table_rows() -> None:
    rows = study_net.table_rows(study_results())
    assert len(rows) == 2 * (9 + 3 + 4) + 1
    header = study_net.HEADER
    first = dict(zip(header, rows[0]))
    assert first == {"part": "round trip", "benchmark": "net.tcp_rtt", "where": "loopback",
                     "placement": "cross_cpu", "size_bytes": "1", "variant": "-", "n": "2", "min_us": "20.00",
                     "median_us": "20.01", "mean_us": "20.01", "mbit_per_s": "-", "mb_per_s": "-", "status": "ok"}
    bw = dict(zip(header, rows[12]))
    assert bw["benchmark"] == "net.tcp_bw" and bw["variant"] == "send" and bw["size_bytes"] == "4096"
    assert bw["mbit_per_s"] == "16,000" and bw["mb_per_s"] == "2000" and bw["median_us"] == "-"
    assert dict(zip(header, rows[6]))["placement"] == "same_cpu"  # ICMP echo: the kernel answers on this CPU
    assert dict(zip(header, rows[16]))["where"] == "remote 10.254.0.2:7478"
    assert dict(zip(header, rows[16]))["placement"] == "remote"
    assert rows[-1][-1] == "error: the peer vanished"
    csv_lines = study_net.render_csv(rows).splitlines()
    assert csv_lines[0] == ",".join(header)
    assert dict(zip(header, csv_lines[13].split(",")))["mbit_per_s"] == "16000"  # no separator in the CSV


def test_summary_loopback_against_remote_and_ping() -> None:
    results = study_results()
    labels = [r.label for r in net_figures.summary_rows(results)]
    assert labels == ["TCP round trip, 1 B", "UDP round trip, 1 B", "ping (ICMP echo), 1 B", "TCP connect",
                      "TCP close, active side", "TCP close, passive side", "TCP bandwidth, send, 128K writes",
                      "TCP bandwidth, recv, 128K writes"]
    text = study_net.render_summary(results)
    assert text.splitlines()[0].split() == ["median", "loopback", "remote", "10.254.0.2:7478", "remote", "/",
                                            "loopback"]
    tcp = next(line for line in text.splitlines() if line.startswith("TCP round trip"))
    assert tcp.split()[-1] == "5.00"  # (100001 + 5) / (20001 + 5) us
    pings = study_net.ping_lines(results)
    assert pings[0] == ("loopback: TCP round trip of 1 B, cross CPU: 20.01 us, 2.50 x ping's 8.006 us (ICMP echo, "
                        "same CPU: answered by this kernel in the sending CPU's softirq, no peer process woken)")
    assert pings[2] == ("remote 10.254.0.2:7478: TCP round trip of 1 B: 100.0 us, 2.50 x ping's 40.01 us (ICMP "
                        "echo answered by the remote host's kernel, no peer process)")
    assert len(pings) == 4
    assert study_net.peer_lines(results)[1] == "remote 10.254.0.2:7478: peer 10.254.0.2:7478, path mtu 65536"


def test_every_loopback_figure_of_the_text_says_its_placement() -> None:
    """A cross-CPU TCP round trip is never printed next to a same-CPU ping
    without saying so: the table's placement column (in words), each
    loopback median of the summary, each ping line."""
    results = study_results()
    text = study_net.render_text(results, study_net.table_rows(results), [])
    table, summary_text = text.split("\nloopback against remote\n")
    lines = table.splitlines()
    at = lines[0].index("placement")
    words = {line[at:].split("  ")[0].strip() for line in lines[2:]}
    assert words == {"cross CPU", "same CPU", "remote host", "-"}  # "-": the error row
    for line in lines[2:]:
        if " net.icmp_rtt " in line and "loopback" in line:
            assert line[at:].startswith("same CPU"), line
        elif "loopback" in line and line.rstrip().endswith("ok"):
            assert line[at:].startswith("cross CPU"), line
    medians = [line for line in summary_text.splitlines()[2:] if line.strip() and " x ping's " not in line
               and not line.startswith(("loopback:", "remote "))]
    for line in medians:
        loopback = line.split("  ")[0]
        assert ", cross CPU" in line or ", same CPU" in line, (loopback, line)
    ping_row = next(line for line in medians if line.startswith("ping (ICMP echo)"))
    tcp_row = next(line for line in medians if line.startswith("TCP round trip"))
    assert "us, same CPU" in ping_row and "us, cross CPU" in tcp_row
    assert "remote host" not in summary_text.split("\n\n")[0]  # the remote column is its own placement


def test_a_result_without_a_recorded_placement_says_so() -> None:
    r = result(0, "net.tcp_rtt", [1e3, 1e3], size=16)
    old = BenchResult(seq=0, bench=r.bench, params=r.params, status="ok", unit="ns", summary=r.summary, batch=1)
    assert study_net.placed(r) == "cross CPU" and study_net.placed(old) == "placement not recorded"


def data_of(results) -> RunData:
    return RunData(run=SimpleNamespace(machine={}, params={}), results=tuple(results),  # type: ignore[arg-type]
                   samples=lambda r: None)


def test_figures_of_a_study_and_only_what_the_run_holds() -> None:
    names = [f.name for f in net_figures.figures(data_of(study_results()))]
    assert names == ["net-rtt-by-size", "net-bw-by-write-size", "net-loopback-vs-remote"]
    loopback = [r for r in study_results() if r.params["peer"] == ""]
    assert [f.name for f in net_figures.figures(data_of(loopback))] == ["net-rtt-by-size", "net-bw-by-write-size"]
    one_size = [r for r in loopback if r.params.get("size") in (None, 1) and r.bench != "net.tcp_bw"]
    assert net_figures.figures(data_of(one_size)) == []


@pytest.mark.slow  # about 3 s of layout (CI runs it); the default run stays under 5 minutes
def test_figure_labels_never_overlap_and_stay_inside() -> None:
    from .test_figures_readable import assert_inside, laid_out

    for nf in [*net_figures.figures(data_of(study_results())), *net_figures.figures(data_of(both_placements()))]:
        fig = nf.figure
        renderer = laid_out(fig)
        for ax in fig.axes:
            ticks = [(t.get_text(), t.get_window_extent(renderer)) for t in ax.get_xticklabels() if t.get_text()]
            for (a, box_a), (b, box_b) in combinations(ticks, 2):
                assert not box_a.overlaps(box_b), f"{nf.name}: {a!r} overlaps {b!r}"
        assert_inside(fig, renderer)


def both_placements() -> tuple[BenchResult, ...]:
    """The study's results and, on loopback, a same-CPU TCP round trip (5 us
    below the cross-CPU one's 20) and a same-CPU bandwidth (its own panel)."""
    out = list(study_results())
    for size in (1, 64, 1024):
        r = result(len(out), "net.tcp_rtt", [5e3 + size, 5e3 + size + 10], size=size)
        out.append(BenchResult(seq=r.seq, bench=r.bench, params={**r.params, "placement": "same_cpu"},
                               status="ok", unit=r.unit, summary=r.summary, batch=1,
                               record={**r.record, "placement": "same_cpu"}))
    for d in ("send", "recv"):
        for w in (4096, 131072):
            r = result(len(out), "net.tcp_bw", [4e9, 4e9], direction=d, write_size=w, duration=1.0)
            out.append(BenchResult(seq=r.seq, bench=r.bench, params={**r.params, "placement": "same_cpu"},
                                   status="ok", unit=r.unit, summary=r.summary, batch=1,
                                   record={**r.record, "placement": "same_cpu"}))
    return tuple(out)


@pytest.mark.slow  # about 2 s of drawing (CI runs it)
def test_every_loopback_figure_says_its_placement() -> None:
    """A 20 us cross-CPU TCP round trip is never drawn next to a same-CPU one
    (or ping's, same CPU) without saying which: the round trips' legend and
    lines, the bandwidth panels' titles, the loopback-vs-remote bars' legend."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.lines import Line2D

    results = both_placements()
    figs = {f.name: f.figure for f in net_figures.figures(data_of(results))}
    for fig in figs.values():
        FigureCanvasAgg(fig).draw()  # rendered with Agg, as the study writes them
    assert net_figures.located(results[0]) == "loopback, cross CPU"
    assert net_figures.located(results[-1]) == "loopback, same CPU"

    (ax,) = figs["net-rtt-by-size"].axes
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["TCP, loopback, cross CPU", "TCP, loopback, same CPU", "TCP, remote 10.254.0.2:7478",
                      "UDP, loopback, cross CPU", "UDP, remote 10.254.0.2:7478",
                      "ICMP echo (ping), loopback, same CPU", "ICMP echo (ping), remote 10.254.0.2:7478"]
    lines = {line.get_label(): line for line in ax.get_lines() if isinstance(line, Line2D)}
    cross, same = lines["TCP, loopback, cross CPU"], lines["TCP, loopback, same CPU"]
    assert cross is not same
    assert list(cross.get_xdata()) == list(same.get_xdata()) == [1, 64, 1024]  # one point per size, not two
    def medians(placement: str) -> list[float]:
        return [r.summary.median for r in results if r.bench == "net.tcp_rtt" and r.placement == placement
                and r.params["peer"] == ""]

    assert list(same.get_ydata()) == medians("same_cpu") and list(cross.get_ydata()) == medians("cross_cpu")
    assert cross.get_linestyle() != same.get_linestyle()

    titles = [a.get_title() for a in figs["net-bw-by-write-size"].axes]
    assert titles == ["loopback, cross CPU", "loopback, same CPU", "remote 10.254.0.2:7478"]

    fig = figs["net-loopback-vs-remote"]
    (bars_legend,) = fig.legends
    assert [t.get_text() for t in bars_legend.get_texts()] == ["loopback, cross CPU", "loopback, same CPU",
                                                              "remote 10.254.0.2:7478"]
    latencies = fig.axes[0]
    by_label = {c.get_label(): len(c) for c in latencies.containers}
    assert by_label == {"loopback, cross CPU": 5, "loopback, same CPU": 1,  # ping's bar is same CPU
                        "remote 10.254.0.2:7478": 6}


def test_the_fake_probe_knows_the_net_family_as_the_probe_has_it(probe: str) -> None:
    """tests/fake_probe.py's net family (names, parameters, defaults, ranges,
    choices) is the real probe's catalogue, so the study's plan the FakeProbe
    accepts is one the probe accepts."""
    import subprocess

    from ..fake_probe import NET_CHOICES, NET_RANGES, net_value

    listing = json.loads(subprocess.run([probe, "list", "--json"], capture_output=True, text=True,
                                        check=True).stdout)
    net = {b["name"]: b for b in listing["benchmarks"] if b["family"] == "net"}
    assert set(net) == set(NET)
    for name, bench in net.items():
        real = {p["name"]: p for p in bench["params"]}
        assert set(real) == set(NET[name]) | set(NET_COMMON), name
        for key, spec in real.items():
            assert net_value(name, key, {**NET[name], **NET_COMMON}[key]) == spec["default"], (name, key)
            if "choices" in spec:
                assert tuple(spec["choices"]) == NET_CHOICES[key], (name, key)
            if "min" in spec:
                assert NET_RANGES[(name, key)] == (spec["min"], spec["max"]), (name, key)
