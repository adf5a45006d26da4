"""net.tcp_bw in bits/s wherever a run's summary is shown as text (show, and
run's end): 8 x the table's median, SI prefixes, and only for the results
the probe gives in bits too (extra.bits_per_s)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from osmeter.model import BenchResult, NewRun
from osmeter.report.summary import bits_text
from osmeter.stats import higher_is_better, summary
from osmeter.store import open_store

from ..synthetic import MACHINE, META


def add_run(store_path: Path) -> int:
    store = open_store(str(store_path), create=True)
    rng = np.random.default_rng(3)
    specs = [
        ("net.tcp_bw", {"direction": "send"}, "bytes_per_s", 1.25e9, {"bits_per_s": 1e10, "mss": 32768.0}),
        ("mem.bandwidth", {"op": "read"}, "bytes_per_s", 2e10, {}),
        ("net.tcp_rtt", {"size": 1}, "ns", 4e4, {"path_mtu": 65535.0}),
    ]
    try:
        with store.transaction():
            run_id = store.create_run(NewRun(None, "2026-11-22T08:00:00Z", "run", "0.2.0", "0.2.0", "standard",
                                             ["synthetic"], {}, dict(MACHINE), dict(META, suite="standard")))
            for seq, (bench, params, unit, median, extra) in enumerate(specs):
                x = median * rng.lognormal(0.0, 0.01, 200)
                result = BenchResult(seq=seq, bench=bench, params=params, status="ok", unit=unit,
                                     summary=summary(x, higher_is_better=higher_is_better(unit)), batch=1,
                                     record={}, extra=extra)
                store.add_result(run_id, result, x)
            store.finish_run(run_id, "complete", "2026-11-22T08:01:00Z", None)
        return run_id
    finally:
        store.close()


def test_show_gives_tcp_bw_in_bits_per_second(cli, store_path: Path) -> None:
    run = add_run(store_path)
    out = cli("show", str(run)).out
    store = open_store(str(store_path), create=False)
    median = next(r for r in store.results(run) if r.bench == "net.tcp_bw").summary.median
    store.close()
    block = out.split("in bits/s (median x 8")[1].split("\n\n")[0]
    lines = [x.strip() for x in block.splitlines()[1:]]
    assert lines == [f"net.tcp_bw: {bits_text(8 * median)}"]  # direction=send is its default: not said
    wide = cli("show", str(run), "--wide").out
    assert f"net.tcp_bw direction=send" in wide.split("in bits/s (median x 8")[1]
    assert bits_text(8 * median).endswith(" Gbit/s")


@pytest.mark.parametrize("value,text", [
    (1e10, "10 Gbit/s"), (941.6e6, "941.6 Mbit/s"), (7.5e3, "7.5 kbit/s"), (12.0, "12 bit/s"), (1.5e12, "1.5 Tbit/s"),
])
def test_bits_text(value: float, text: str) -> None:
    assert bits_text(value) == text
