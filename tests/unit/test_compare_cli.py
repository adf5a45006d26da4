"""osmeter compare on the command line: table, JSON, heatmaps, --fail-above, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from osmeter import errors

from ..synthetic import MACHINE, add_run, noisy
from .test_report import Page, assert_self_contained


@pytest.fixture
def three_runs(store_path: Path) -> tuple[int, int, int]:
    """Run 1 (baseline), run 2: syscall.null +10 % on a new kernel; run 3: mem bandwidth -20 %."""
    rng = np.random.default_rng(42)

    def specs(null: float = 1.0, bw: float = 1.0) -> list:
        return [
            ("syscall.null", {}, "ns", noisy(rng, 100.0 * null, 2000)),
            ("cpu.call", {"args": 0}, "ns", noisy(rng, 1.5, 3000)),
            ("mem.bandwidth_read", {"size": 67108864}, "bytes_per_s", noisy(rng, 1.2e10 * bw, 500)),
        ]

    a = add_run(store_path, specs(), label="base", skips=[("file.read_cold", {"size": 4096}, "needs root")])
    b = add_run(store_path, specs(null=1.10), label="newkernel", machine=dict(MACHINE, kernel_release="6.9.0-synth"))
    c = add_run(store_path, specs(bw=0.80), label="slowmem")
    return a, b, c


def test_terminal_table_sorted_by_change(cli, three_runs) -> None:
    r = cli("compare", "1", "2")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0] == "baseline: run 1 'base'; compared: run 2 'newkernel'"
    assert any(l.split() == ["kernel_release", "6.8.0-synth", "6.9.0-synth"] for l in lines)
    rows = [l for l in lines if l.startswith(("syscall.", "cpu.", "mem."))]
    assert rows[0].split()[0] == "syscall.null" and rows[0].endswith("slower")
    assert rows[0].split()[-2] in ("+9.9%", "+10.0%", "+10.1%")
    assert all(l.endswith("no significant change") for l in rows[1:])
    assert "3 compared, 1 significant (1 slower, 0 faster; 0 with a caveat)" in r.out


def test_rates_that_fall_are_slower(cli, three_runs) -> None:
    r = cli("compare", "1", "3", "--json")
    doc = json.loads(r.out)
    assert doc["osmeter_compare"] == 1 and doc["baseline"] == 1 and doc["threshold"] == 0.05
    first = doc["comparisons"][0]
    assert first["bench"] == "mem.bandwidth_read" and first["verdict"] == "slower"
    assert first["change"] == pytest.approx(-0.2, abs=0.02) and first["worse"] == pytest.approx(0.2, abs=0.02)
    assert first["ci_low"] < first["ratio"] < first["ci_high"] < 1
    assert {d["key"] for d in doc["differences"]} == set()  # same machine, same suite
    assert "bootstrap" in doc["method"]


def test_three_runs_html_heatmap(cli, three_runs, tmp_path: Path) -> None:
    out = tmp_path / "heat.html"
    r = cli("compare", "1", "2", "3", "-o", str(out))
    assert r.code == 0, r.err
    text = out.read_text()
    assert_self_contained(text)
    page = Page(text)
    assert "heatmap" in page.ids()
    cells = [a for t, a in page.tags if t == "td" and "cell" in (a.get("class") or "")]
    assert len(cells) == 3 * 2
    significant = [a for a in cells if a.get("class") == "cell"]
    assert len(significant) == 2  # syscall.null in run 2, the bandwidth in run 3
    assert all("background:#" in (a.get("style") or "") for a in cells)
    assert "kernel_release" in text and "6.9.0-synth" in text  # what differs, above the heatmap
    assert text.index("What differs") < text.index('id="heatmap"')
    assert "Significant changes" in text


@pytest.mark.parametrize("suffix, magic", [(".svg", b"<?xml"), (".png", b"\x89PNG"), (".pdf", b"%PDF")])
def test_heatmap_as_a_figure(cli, three_runs, tmp_path: Path, suffix: str, magic: bytes) -> None:
    out = tmp_path / f"heat{suffix}"
    assert cli("compare", "1", "2", "3", "-o", str(out)).code == 0
    assert out.read_bytes().startswith(magic)


def test_baseline_option(cli, three_runs) -> None:
    doc = json.loads(cli("compare", "1", "2", "--baseline", "2", "--json").out)
    assert doc["baseline"] == 2 and [r["id"] for r in doc["runs"]] == [2, 1]
    (null,) = [c for c in doc["comparisons"] if c["bench"] == "syscall.null"]
    assert null["verdict"] == "faster"
    doc = json.loads(cli("compare", "2", "--baseline", "1", "--json").out)  # the baseline need not be listed
    assert doc["baseline"] == 1


def test_fail_above(cli, three_runs, tmp_path: Path) -> None:
    out = tmp_path / "heat.html"
    r = cli("compare", "1", "2", "3", "--fail-above", "5", "-o", str(out))
    assert r.code == errors.EXIT_REGRESSION == 10
    assert "2 significant regression(s) above 5%" in r.err
    assert "mem.bandwidth_read size=67108864 in run 3 -19.7%, syscall.null in run 2 +9.9%" in r.err  # worst first
    assert "syscall.null" in r.out and out.exists()  # the table and the heatmap are still there
    assert cli("compare", "1", "2", "3", "--fail-above", "15").code == errors.EXIT_REGRESSION  # the -20 % bandwidth
    assert cli("compare", "1", "2", "3", "--fail-above", "25").code == 0
    assert cli("compare", "1", "2", "--fail-above", "10%").code == 0  # +9.9 %: not above 10
    doc = json.loads(cli("compare", "1", "3", "--fail-above", "5", "--json").out)
    assert doc["regressions_above"] == 1 and doc["fail_above"] == 0.05


def test_threshold_option(cli, three_runs) -> None:
    doc = json.loads(cli("compare", "1", "2", "--threshold", "15", "--json").out)
    assert not any(c["significant"] for c in doc["comparisons"])
    r = cli("compare", "1", "2", "--threshold", "-3")
    assert r.code == errors.EXIT_USAGE and "at least 0" in r.err


def test_unknown_run(cli, three_runs, tmp_path: Path) -> None:
    out = tmp_path / "heat.html"
    r = cli("compare", "1", "99", "-o", str(out))
    assert r.code == errors.EXIT_NOT_FOUND and "no run 99" in r.err
    assert not out.exists() and list(tmp_path.glob(".heat.html*")) == []
    r = cli("compare", "1", "2", "--baseline", "98")
    assert r.code == errors.EXIT_NOT_FOUND and "no run 98" in r.err


def test_no_benchmark_in_common(cli, store_path: Path, tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    a = add_run(store_path, [("syscall.null", {}, "ns", noisy(rng, 100.0, 100))])
    b = add_run(store_path, [("cpu.call", {"args": 0}, "ns", noisy(rng, 1.5, 100)),
                             ("syscall.null", {"x": 1}, "ns", noisy(rng, 100.0, 100))])
    out = tmp_path / "heat.html"
    r = cli("compare", str(a), str(b), "-o", str(out))
    assert r.code == errors.EXIT_USAGE
    assert f"run {b} and the baseline run {a} have no benchmark in common" in r.err
    assert not out.exists()


def test_skipped_and_missing_instances_are_listed(cli, store_path: Path) -> None:
    rng = np.random.default_rng(0)
    a = add_run(store_path, [("syscall.null", {}, "ns", noisy(rng, 100.0, 100)), ("cpu.call", {"args": 1}, "ns", noisy(rng, 1.5, 100))])
    b = add_run(store_path, [("syscall.null", {}, "ns", noisy(rng, 100.0, 100))], skips=[("cpu.call", {"args": 1}, "needs root")])
    r = cli("compare", str(a), str(b))
    assert r.code == 0
    assert "not compared:\n  cpu.call args=1: skip (needs root) (run 2)" in r.out


def test_bad_command_lines(cli, three_runs, tmp_path: Path) -> None:
    r = cli("compare", "1")
    assert r.code == errors.EXIT_USAGE and "at least two different runs" in r.err
    r = cli("compare", "1", "1")
    assert r.code == errors.EXIT_USAGE and "given twice" in r.err
    r = cli("compare", "1", "2", "-o", str(tmp_path / "heat.txt"))
    assert r.code == errors.EXIT_USAGE and ".html" in r.err
    r = cli("compare", "1", "2", "-o", str(tmp_path / "missing" / "heat.html"))
    assert r.code == errors.EXIT_USAGE and "cannot write" in r.err and "No such file" in r.err
    r = cli("compare", "1", "x")
    assert r.code == errors.EXIT_USAGE and "'latest'" in r.err


def test_exit_code_is_documented() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "exit-codes.md").read_text()
    assert "| 10 | `EXIT_REGRESSION` |" in doc


def test_many_runs_list_differences_by_value(cli, store_path: Path, tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    for i in range(10):
        kernel = "6.8.0" if i < 4 else "6.9.0"
        add_run(store_path, [("syscall.null", {}, "ns", noisy(rng, 100.0, 50))], machine=dict(MACHINE, kernel_release=kernel))
    out = tmp_path / "heat.html"
    assert cli("compare", *[str(i) for i in range(1, 11)], "-o", str(out)).code == 0
    text = out.read_text()
    assert "6.8.0  (runs 1, 2, 3, 4)" in text and "6.9.0  (runs 5, 6, 7, 8, 9, 10)" in text
    assert text.count('class="cell') == 9


def test_samples_read_a_window_ahead_give_the_same_comparison(cli, three_runs, monkeypatch) -> None:
    """compare RUN RUN reads its instances' samples a window of instances at a time (one query for all
    runs on the same seqs): windows of one instance, or of as few values as one result has, give the
    same comparison, number for number, as the default window."""
    from osmeter.comparing import _SampleWindow

    want = cli("compare", "1", "2", "3", "--json").out
    assert json.loads(want)["comparisons"]
    monkeypatch.setattr(_SampleWindow, "WINDOW_INSTANCES", 1)
    assert cli("compare", "1", "2", "3", "--json").out == want
    monkeypatch.setattr(_SampleWindow, "WINDOW_INSTANCES", 64)
    monkeypatch.setattr(_SampleWindow, "WINDOW_VALUES", 1)  # every window: one instance, however large
    assert cli("compare", "1", "2", "3", "--json").out == want


def test_samples_of_reads_pairs_the_same_either_way(store_path: Path, three_runs) -> None:
    """SQLStore.samples_of: pairs of the same seqs in every run (one query over runs x seqs) and pairs
    that are not (a query per seq) give each pair's samples; a pair that does not exist is None."""
    from osmeter.store import open_store

    store = open_store(str(store_path), create=False)
    try:
        square = [(r, q) for r in (1, 2, 3) for q in (0, 1)]
        got = store.samples_of(square)
        assert all(got[p] is not None and got[p].size > 0 for p in square)
        for p in square:  # alone: a query of its own
            assert np.array_equal(store.samples_of([p])[p], got[p])
        sparse = [(1, 0), (2, 1), (3, 2), (3, 999)]  # 3 runs x 4 seqs for 4 pairs: a query per seq
        some = store.samples_of(sparse)
        assert some[(3, 999)] is None and set(some) == set(sparse)
        assert np.array_equal(some[(1, 0)], got[(1, 0)]) and np.array_equal(some[(2, 1)], got[(2, 1)])
    finally:
        store.close()


def test_the_sample_window_reads_ahead_once_and_skips_what_has_nothing_to_compare(monkeypatch) -> None:
    """Instances asked for in order, one with nothing to compare among them: one read for the window,
    every instance's samples found (before: asking for the one without pairs dropped the window)."""
    from osmeter.comparing import _SampleWindow

    calls: list[list[tuple[int, int]]] = []

    class Store:
        def samples_of(self, wanted):
            calls.append(list(wanted))
            return {p: np.full(3, float(p[1])) for p in wanted}

    a, b, c = ("x.a", "{}", 0), ("x.b", "{}", 0), ("x.c", "{}", 0)
    plan = [(a, [(1, 0), (2, 0)], 6), (b, [], 3), (c, [(1, 2), (2, 2)], 6)]
    window = _SampleWindow(Store(), plan)  # type: ignore[arg-type]
    assert list(window.samples(a)) == [(1, 0), (2, 0)]
    assert window.samples(b) == {}
    assert list(window.samples(c)) == [(1, 2), (2, 2)] and len(calls) == 1
    monkeypatch.setattr(_SampleWindow, "WINDOW_VALUES", 5)  # each instance in a window of its own
    calls.clear()
    window = _SampleWindow(Store(), plan)  # type: ignore[arg-type]
    assert [list(window.samples(k)) for k in (a, b, c)] == [[(1, 0), (2, 0)], [], [(1, 2), (2, 2)]]
    assert calls == [[(1, 0), (2, 0)], [(1, 2), (2, 2)]]
