"""A parameter sweep drawn as cost against the parameter (report/figures/sweep.py):
`osmeter plot` and the report drew only the distributions of a run measured
at several `nproc` or `size` values, never the line of medians."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from matplotlib.collections import PolyCollection  # noqa: E402

from osmeter.report.content import run_data  # noqa: E402
from osmeter.report.figures.distribution import distribution_figures  # noqa: E402
from osmeter.store import open_store  # noqa: E402

from ..synthetic import add_run, noisy  # noqa: E402
from .test_figures_readable import assert_inside, assert_plain_ticks, laid_out  # noqa: E402

NPROC = (2, 4, 8, 16)
SIZES = (4096, 40960, 4096000, 40960000)


def _sweep_run(store_path: Path) -> int:
    rng = np.random.default_rng(5)
    specs = [("ctxsw.pipe", {"nproc": n, "mode": mode, "placement": "same_cpu"}, "ns",
              noisy(rng, (3000 if mode == "thread" else 3500) * (1 + 0.1 * k), 400))
             for mode in ("process", "thread") for k, n in enumerate(NPROC)]
    specs += [("mem.mmap", {"size": s, "prot": "read", "group": 8}, "ns", noisy(rng, 2.5e3 * (1 + k), 300))
              for k, s in enumerate(SIZES)]
    specs += [("mem.latency", {"size": s, "pattern": "random"}, "ns", noisy(rng, 2.0 + k, 100))
              for k, s in enumerate(SIZES)]  # swept in the family figure (mem-latency): no second one
    specs += [("cpu.call", {"args": a}, "ns", noisy(rng, 2.0, 200)) for a in (0, 1)]  # two values: no sweep
    return add_run(store_path, specs)


def _figures(store_path: Path) -> dict:
    run_id = _sweep_run(store_path)
    store = open_store(str(store_path), create=False)
    try:
        data = run_data(store, store.run(str(run_id)))
        return {nf.name: (nf, data) for nf in distribution_figures(data)}
    finally:
        store.close()


def test_a_sweep_is_a_line_of_medians_with_their_interval(store_path: Path) -> None:
    named = _figures(store_path)
    sweeps = sorted(n for n in named if n.startswith("sweep-"))
    assert sweeps == ["sweep-ctxsw.pipe-nproc", "sweep-mem.mmap-size"]
    nf, data = named["sweep-ctxsw.pipe-nproc"]
    fig = nf.figure
    renderer = laid_out(fig)
    ax = fig.axes[0]
    lines = [ln for ln in ax.get_lines() if len(ln.get_xdata()) == len(NPROC)]
    assert [ln.get_label() for ln in lines] == ["mode=process", "mode=thread"]  # one per other varying parameter
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bands) == 2
    for mode, line, band in zip(("process", "thread"), lines, bands):
        results = sorted((r for r in data.ok("ctxsw.pipe") if r.params["mode"] == mode),
                         key=lambda r: r.params["nproc"])
        assert list(line.get_xdata()) == list(NPROC)
        assert np.allclose(line.get_ydata(), [r.summary.median for r in results])
        ys = band.get_paths()[0].vertices[:, 1]  # the band: from the lowest ci_low to the highest ci_high
        assert math.isclose(ys.min(), min(r.summary.ci_low for r in results), rel_tol=1e-9)
        assert math.isclose(ys.max(), max(r.summary.ci_high for r in results), rel_tol=1e-9)
        assert all(r.summary.ci_low < r.summary.median < r.summary.ci_high for r in results)
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "nproc (log scale)"
    assert ax.get_ylabel() == "time per operation, median (µs)"  # 3000 ns and up
    assert "placement=same_cpu" in nf.title and "nproc" in nf.title
    assert_plain_ticks(fig, renderer)
    assert_inside(fig, renderer)

    nf, _ = named["sweep-mem.mmap-size"]
    fig = nf.figure
    renderer = laid_out(fig)
    ax = fig.axes[0]
    (line,) = [ln for ln in ax.get_lines() if len(ln.get_xdata()) == len(SIZES)]
    assert line.get_label() == "median (band: its 95 % CI)"
    assert ax.get_xscale() == "log" and ax.xaxis.get_scale() == "log"
    assert all(t.get_text().endswith(("K", "M")) for t in ax.get_xticklabels() if t.get_text())
    assert_plain_ticks(fig, renderer)


def test_plot_writes_the_sweep_before_the_distribution(cli, store_path: Path, tmp_path: Path) -> None:
    run_id = _sweep_run(store_path)
    out = tmp_path / "figs"
    r = cli("plot", str(run_id), "ctxsw.pipe", "-o", str(out), "--format", "svg")
    assert r.code == 0, r.err
    assert r.out.split() == [str(out / f"run{run_id}-{n}.svg") for n in ("sweep-ctxsw.pipe-nproc", "dist-ctxsw.pipe")]
    svg = (out / f"run{run_id}-sweep-ctxsw.pipe-nproc.svg").read_text()
    assert "median against nproc" in svg and "mode=thread" in svg
