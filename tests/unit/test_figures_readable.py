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


# --- value axes: plain numbers, scaled to their unit's step, never overlapping ---

PLAIN = re.compile(r"-?\d{1,3}(,\d{3})*(\.\d+)?")  # 0.05, 2.5, 40, 1,000: no 10^k, no e+06, no offset


def assert_plain_ticks(fig, renderer):
    """Every drawn tick label is a plain number or a word (a category), none
    overlaps another of its axis even 10 % wider (the HTML report's SVG text
    is drawn in the browser's font), and no text of the figure has an exponent."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            labels = [t.label1 for t in axis.get_major_ticks()
                      if lo - 1e-9 * abs(lo) <= t.get_loc() <= hi + 1e-9 * abs(hi) and t.label1.get_visible()
                      and t.label1.get_text()]
            boxes = [(t.get_text(), t.get_window_extent(renderer).expanded(1.1, 1.0)) for t in labels]
            for (a, box_a), (b, box_b) in combinations(boxes, 2):
                assert not box_a.overlaps(box_b), f"tick labels {a!r} and {b!r} overlap"
            for text, _ in boxes:  # a number (a category's name, such as size=4 KiB, may be anything)
                if re.match(r"[-\d]", text):
                    assert PLAIN.fullmatch(text) or re.fullmatch(r"[\d.]+[KMG]", text), f"tick label {text!r}"
        assert not (ax.xaxis.get_offset_text().get_text() or ax.yaxis.get_offset_text().get_text())
    for text, _ in visible_texts(fig, renderer):
        assert not re.search(r"\de[+-]?\d|\$|\\times|10\^\{", text), f"an exponent in {text!r}"


def _dist(bench, samples, params=None, unit="ns"):
    params = params or [{}] * len(samples)
    results = [SimpleNamespace(bench=bench, status="ok", unit=unit, params=p,
                               summary=SimpleNamespace(median=float(np.median(x)), lebench_kbest=float(np.min(x))))
               for p, x in zip(params, samples)]
    by_id = {id(r): x for r, x in zip(results, samples)}
    data = RunData(run=SimpleNamespace(machine={}), results=tuple(results),  # type: ignore[arg-type]
                   samples=lambda r: by_id[id(r)])
    return distribution_figure(data, bench)


def _mmap_like(rng, medians, n=3000):
    """Skewed samples (a log-normal body, a thin slow tail) around each median, in ns."""
    return [m * np.exp(rng.normal(0, 0.12, n)) * np.where(rng.random(n) < 0.03, rng.uniform(2, 12, n), 1.0)
            for m in medians]


@pytest.mark.parametrize("medians", [
    [3100, 2900, 3400, 3100],  # mem.mmap's LEBench sizes: close together
    [3100],  # one instance: a histogram, its axis logarithmic across less than a decade
    [1400, 2900, 190_000, 8_000_000],  # file.write's: four decades
    [29.5, 30.1, 29.8, 30.2, 2.1, 2.9, 3.0, 2.2],
    [4_000_000],
])
def test_value_ticks_are_plain_and_never_overlap(medians):
    """mem.mmap's tick labels overlapped (log minor ticks labelled 3x10^3,
    4x10^3, ... in math text, wider in a browser's font): ticks are now
    chosen as drawn, until no label touches the next."""
    rng = np.random.default_rng(7)
    sizes = [4096 * 10**k for k in range(len(medians))]
    named = _dist("mem.mmap", _mmap_like(rng, medians), [{"size": s, "group": 8} for s in sizes])
    fig = named.figure
    renderer = laid_out(fig)
    assert len([t for t in fig.axes[0].get_xticklabels() if t.get_text()]) >= 2
    assert_plain_ticks(fig, renderer)
    assert_inside(fig, renderer)


def test_a_time_axis_is_in_the_step_its_values_need():
    """Samples in the millions of ns: the axis in ms, the legend '2.654 ms'."""
    rng = np.random.default_rng(3)
    x = 2.654e6 * np.exp(rng.normal(0, 0.01, 2000))
    x[np.argmin(np.abs(x - np.median(x)))] = 2.654e6
    named = _dist("task.fork", [x])
    fig = named.figure
    renderer = laid_out(fig)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "time per operation (ms)"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(re.fullmatch(r"median 2\.6\d\d ms", t) for t in legend), legend
    ticks = [float(t.get_text()) for t in ax.get_xticklabels() if t.get_text()]
    assert ticks and all(2.5 <= t <= 2.8 for t in ticks), ticks  # ms, not ns
    assert_plain_ticks(fig, renderer)


@pytest.mark.slow  # about 2 s of drawing (CI runs it); the default run keeps the tick and axis tests above
def test_family_figures_have_plain_scaled_axes():
    """The fork study (ms), the memory curves (ns, GB/s): steps chosen from
    their data, plain tick labels that do not overlap, no 10^k anywhere."""
    from osmeter.report.figures.mem import figures as mem_figures
    from osmeter.report.figures.task import figures as task_figures

    run, results = exported_results(EPYC)
    seq = iter(range(10_000))
    fork = [SimpleNamespace(seq=next(seq), bench="task.fork", status="ok", unit="ns", counters=None, extra={},
                            params={"touched_mib": mib, "concurrency": 1, "migrate": 0},
                            summary=SimpleNamespace(n=100, min=8e4 * mib, mean=1e5 * mib, median=1e5 * mib,
                                                    max=3e5 * mib))
            for mib in (1, 8, 64, 512)]
    bw = [SimpleNamespace(seq=next(seq), bench="mem.bandwidth", status="ok",
                          params={"op": op, "threads": "1", "size": s},
                          summary=SimpleNamespace(median=2.3e10 if s < 2**20 else 9.1e9), extra={"size_bytes": s})
          for op in ("read", "write") for s in (4096, 65536, 2**23, 2**26)]
    data = RunData(run=SimpleNamespace(machine=run["machine"]), results=tuple(results) + tuple(fork) + tuple(bw),
                   samples=lambda r: None)  # type: ignore[arg-type]
    named = {f.name: f for f in [*task_figures(data), *mem_figures(data)]}
    assert {"task-fork-study", "mem-latency", "mem-bandwidth-curve"} <= set(named)
    assert named["task-fork-study"].figure.axes[0].get_ylabel().endswith("(ms, log scale)")
    assert named["mem-latency"].figure.axes[0].get_ylabel() == "load-to-use latency per load (ns, log scale)"
    assert named["mem-bandwidth-curve"].figure.axes[0].get_ylabel().startswith("bandwidth, decimal units (GB/s")
    for nf in named.values():
        renderer = laid_out(nf.figure)
        assert_plain_ticks(nf.figure, renderer)


@pytest.mark.parametrize("count", [4, 1])  # violins, a histogram
def test_a_few_huge_outliers_do_not_squeeze_the_samples(count):
    """cpu.timer_overhead: ~30 ns samples and a few interrupted ones at
    microseconds stretched the axis to 10^3 ns and squashed the violins
    into a sliver. The axis now spans the samples' p0.5..p99.5 (padded), and
    the legend counts the samples beyond it."""
    rng = np.random.default_rng(11)
    samples = []
    for k in range(count):
        x = rng.gamma(20.0, 0.5, 2000) + 20 + k  # a body around 30 ns, skewed right
        x[rng.choice(x.size, 6, replace=False)] = rng.uniform(1e3, 5e3, 6)  # interrupted samples
        samples.append(x)
    fig = _dist("cpu.timer_overhead", samples, [{"source": f"s{k}"} for k in range(count)]).figure
    renderer = laid_out(fig)
    ax = fig.axes[0]
    lo, hi = ax.get_xlim()
    q_lo = min(float(np.quantile(x, 0.005)) for x in samples)
    q_hi = max(float(np.quantile(x, 0.995)) for x in samples)
    assert ax.get_xscale() == "linear"  # the robust range spans under WIDE_SPREAD
    assert q_lo - 0.1 * (q_hi - q_lo) <= lo <= q_lo and q_hi <= hi <= q_hi + 0.1 * (q_hi - q_lo), (lo, hi)
    texts = [t.get_text() for t in (fig.legends[0] if fig.legends else ax.get_legend()).get_texts()]
    said = [m for t in texts if (m := re.fullmatch(r"(\d+) above ([\d.]+) ns not shown \(max ([\d.]+) µs\)", t))]
    assert len(said) == 1, texts
    n, cut = int(said[0][1]), float(said[0][2])
    assert cut <= hi * 1.001 and n >= 6 * count  # the legend rounds to 4 digits
    assert sum(int(np.count_nonzero(x > cut * 1.001)) for x in samples) <= n
    assert n <= sum(int(np.count_nonzero(x > cut * 0.999)) for x in samples)
    assert_plain_ticks(fig, renderer)
    assert_inside(fig, renderer)
