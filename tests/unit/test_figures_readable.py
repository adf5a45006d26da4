"""Figures a reader can read: no label on another, titles and tick labels
inside the figure, byte counts in KiB/MiB/GiB. Measured on the laid-out
figure (the boxes matplotlib draws the text in)."""

from __future__ import annotations

import re
from itertools import combinations
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402

from osmeter.report.figures import RunData  # noqa: E402
from osmeter.report.figures.distribution import distribution_figure  # noqa: E402
from osmeter.report.figures.mem import bandwidth_ops_figure, latency_figure  # noqa: E402

from .test_memlevels import EPYC, exported_results  # noqa: E402

KiB, MiB = 1024, 1024 * 1024


def laid_out(fig):
    canvas = FigureCanvasAgg(fig)
    fig.draw_without_rendering()
    return canvas.get_renderer()


def drawn_tick_labels(ax):
    """The tick labels matplotlib draws: those of ticks inside the view."""
    labels = []
    for axis in (ax.xaxis, ax.yaxis):
        lo, hi = sorted(axis.get_view_interval())
        for tick in axis.get_major_ticks():
            if lo - 1e-9 * abs(lo) <= tick.get_loc() <= hi + 1e-9 * abs(hi):
                labels += [tick.label1, tick.label2]
    return labels


def visible_texts(fig, renderer):
    """Every non-empty drawn text of the figure with its box, tick labels included."""
    out = []
    for ax in [*fig.axes, *(c for a in fig.axes for c in a.child_axes)]:
        texts = [*ax.texts, ax.title, *drawn_tick_labels(ax)]
        legend = ax.get_legend()
        if legend is not None:
            texts += legend.get_texts()
        for t in texts:
            if t.get_visible() and t.get_text().strip():
                out.append((t.get_text(), t.get_window_extent(renderer)))
    return out


def assert_inside(fig, renderer):
    page = fig.bbox
    for text, box in visible_texts(fig, renderer):
        assert box.x0 >= page.x0 - 1 and box.x1 <= page.x1 + 1, f"{text!r} runs off the figure: {box}"
        assert box.y0 >= page.y0 - 1 and box.y1 <= page.y1 + 1, f"{text!r} runs off the figure: {box}"


def test_latency_figure_labels_never_overlap():
    """The recorded EPYC sweep: two curves whose L3 and memory levels sit
    close, and sysfs L3 (32 MiB) inside the memory plateau, where its label
    used to run into the memory levels' labels."""
    run, results = exported_results(EPYC)
    data = RunData(run=SimpleNamespace(machine=run["machine"]), results=tuple(results),
                   samples=lambda r: None)  # type: ignore[arg-type]
    named = latency_figure(data)
    assert named is not None
    fig = named.figure
    renderer = laid_out(fig)
    ax = fig.axes[0]
    labels = [(t.get_text(), t.get_window_extent(renderer)) for t in ax.texts]
    assert len(labels) >= 6  # both curves' levels
    top = ax.child_axes  # the sysfs scale above the axes
    sysfs = [(t.get_text(), t.get_window_extent(renderer)) for a in top for t in a.get_xticklabels()
             if t.get_text()]
    legend = ("legend", ax.get_legend().get_window_extent(renderer))
    title = (ax.title.get_text(), ax.title.get_window_extent(renderer))
    for (a, box_a), (b, box_b) in combinations([*labels, *sysfs, legend, title], 2):
        assert not box_a.overlaps(box_b), f"{a!r} overlaps {b!r}"
    assert [s for s, _ in sysfs] == ["L1 48 KiB", "L2 1 MiB", "L3 32 MiB"]
    assert_inside(fig, renderer)


def test_bandwidth_title_fits():
    seq = iter(range(100))
    results = [SimpleNamespace(seq=next(seq), bench="mem.bandwidth", status="ok", params={"op": op, "threads": t, "size": 0},
                               summary=SimpleNamespace(median=2e10), extra={"size_bytes": 128 * MiB})
               for op in ("read", "write", "copy", "memcpy") for t in ("1", "all")]
    data = RunData(run=SimpleNamespace(machine={}), results=tuple(results), samples=lambda r: None)  # type: ignore[arg-type]
    named = bandwidth_ops_figure(data)
    assert named is not None and "128 MiB buffer" in named.title
    fig = named.figure
    renderer = laid_out(fig)
    assert "\n" in fig.axes[0].title.get_text()  # wrapped, not cut
    assert_inside(fig, renderer)


@pytest.mark.parametrize("count", [62, 6])  # box plots, violins
def test_sweep_labels_are_sizes_and_fit(count: int):
    sizes = [int(KiB * 2 ** (k / 3)) for k in range(count)]
    rng = np.random.default_rng(1)
    results = [SimpleNamespace(bench="mem.latency", status="ok", unit="ns",
                               params={"size": s, "pattern": "random", "stride": 64, "thp": 0},
                               summary=SimpleNamespace(median=1.0 + k, lebench_kbest=1.0 + k))
               for k, s in enumerate(sizes)]
    samples = {id(r): rng.normal(1.0 + k, 0.05, 200) for k, r in enumerate(results)}
    data = RunData(run=SimpleNamespace(machine={}), results=tuple(results),  # type: ignore[arg-type]
                   samples=lambda r: samples[id(r)])
    named = distribution_figure(data, "mem.latency")
    assert named is not None
    fig = named.figure
    renderer = laid_out(fig)
    ticks = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert len(ticks) == count
    assert all(re.fullmatch(r"size=\d+(\.\d+)? (B|KiB|MiB|GiB)", t) for t in ticks), ticks
    assert not any(re.search(r"\d{5,}", t) for t in ticks)
    assert ticks[0] == "size=1 KiB" and ("size=1 MiB" in ticks if count > 30 else "size=2 KiB" in ticks)
    assert "pattern=random" in named.title and "stride=64" in named.title
    assert_inside(fig, renderer)
