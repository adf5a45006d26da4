"""The page cache's knee (osmeter.pagecache) on synthetic file.cache_sweep
curves: steps, gradual rises, noise, no knee, too few points; and the
analysis of stored results with what the machine suggested."""

from __future__ import annotations

import math

import numpy as np
import pytest

from osmeter import pagecache
from osmeter.model import BenchResult
from osmeter.pagecache import SweepPoint, detect_knee
from osmeter.stats import summary

MiB = 1 << 20
C = 512 * MiB  # the cache of the synthetic machine
HIT, MISS = 50e3, 800e3  # ns per 1 MiB block from memory / from the device


def sizes(lo_mib: int = 32, hi_mib: int = 2048, per_doubling: int = 4) -> list[int]:
    k = round(math.log2(hi_mib / lo_mib) * per_doubling)
    return sorted({round(lo_mib * 2 ** (i / per_doubling)) * MiB for i in range(k + 1)})


def ideal(size: int, cache: int = C) -> tuple[float, float]:
    """(mean ns per block, resident fraction) when the cache keeps `cache` bytes of the file."""
    held = min(1.0, cache / size)
    return HIT + (1 - held) * (MISS - HIT), held


def curve(cache: int = C, resident: bool = True, noise: float = 0.0, seed: int = 0,
          ss: list[int] | None = None) -> list[SweepPoint]:
    rng = np.random.default_rng(seed)
    out = []
    for s in ss or sizes():
        t, r = ideal(s, cache)
        t *= float(rng.lognormal(0, noise)) if noise else 1.0
        out.append(SweepPoint(s, t, HIT, r if resident else None, 3.0))
    return out


def test_a_step_gives_the_cache_size_from_what_the_cache_kept():
    k = detect_knee(curve())
    assert k.status == "knee" and k.method == "resident"
    assert k.low_bytes is not None and k.high_bytes is not None
    assert k.low_bytes <= C < k.high_bytes
    assert k.size_bytes == C  # resident x size of the points past the knee is the cache exactly
    assert k.plateau_ns == HIT and k.threshold_ns == HIT * (1 + pagecache.TOL)


def test_without_residency_the_midpoint_of_the_bracket():
    k = detect_knee(curve(resident=False))
    assert k.method == "midpoint"
    assert k.size_bytes == round(math.sqrt(k.low_bytes * k.high_bytes))
    assert abs(k.size_bytes / C - 1) < 0.25


@pytest.mark.parametrize("cache_mib", [100, 300, 512, 1000, 1500])
def test_any_cache_size_inside_the_sweep_is_found_within_a_few_percent(cache_mib):
    k = detect_knee(curve(cache=cache_mib * MiB))
    assert k.status == "knee"
    assert abs(k.size_bytes / (cache_mib * MiB) - 1) < 0.02


@pytest.mark.parametrize("seed", range(20))
def test_noise_of_ten_percent_moves_the_knee_less_than_a_quarter(seed):
    k = detect_knee(curve(noise=0.10, seed=seed))
    assert k.status == "knee"
    assert abs(k.size_bytes / C - 1) < 0.25, (k.size_bytes / MiB, k.notes)


def test_a_gradual_rise_starts_where_the_time_leaves_the_tolerance():
    # Time climbs 40 % per doubling from the start: the plateau is the median of
    # the first three, and the knee the last point within x1.5 of it.
    ss = sizes(32, 2048, 2)
    pts = [SweepPoint(s, HIT * 1.4 ** math.log2(s / ss[0])) for s in ss]
    k = detect_knee(pts)
    plateau = pts[1].ns
    assert k.plateau_ns == pytest.approx(plateau)
    first_slow = next(p for p in pts if p.ns > 1.5 * plateau)
    assert k.high_bytes == first_slow.size_bytes
    assert k.low_bytes == pts[pts.index(first_slow) - 1].size_bytes
    assert k.method == "midpoint"


def test_an_isolated_slow_point_in_the_plateau_is_ignored_and_said():
    pts = curve()
    pts[5] = SweepPoint(pts[5].size_bytes, 10 * HIT, HIT, 1.0, 3.0)
    k = detect_knee(pts)
    assert k.status == "knee" and k.size_bytes == C
    assert any("isolated slow point" in n for n in k.notes)


def test_one_odd_point_among_the_three_smallest_does_not_move_the_plateau():
    pts = curve()
    pts[0] = SweepPoint(pts[0].size_bytes, 5 * HIT, HIT, 1.0, 3.0)
    pts[1] = SweepPoint(pts[1].size_bytes, 0.8 * HIT, HIT, 1.0, 3.0)
    k = detect_knee(pts)
    assert k.plateau_ns == HIT and k.size_bytes == C


def test_a_rise_at_the_last_point_only_still_counts():
    ss = sizes(32, 1024)
    pts = [SweepPoint(s, HIT if s < ss[-1] else 20 * HIT, None, None) for s in ss]
    k = detect_knee(pts)
    assert k.status == "knee" and (k.low_bytes, k.high_bytes) == (ss[-2], ss[-1])


def test_a_curve_that_never_rises_has_no_knee_up_to_its_largest_size():
    pts = curve(cache=4096 * MiB, noise=0.05)
    k = detect_knee(pts)
    assert k.status == "no-knee" and k.size_bytes is None and k.largest_bytes == 2048 * MiB
    a = pagecache.CacheAnalysis(MiB, "", tuple(pts), k, 8 << 30, None, None)
    assert pagecache.knee_text(a).startswith("no knee up to 2 GiB")
    assert a.ratio is None


@pytest.mark.parametrize("n", [0, 1, 2])
def test_too_few_points(n):
    k = detect_knee(curve()[:n])
    assert k.status == "too-few-points" and k.size_bytes is None
    assert "at least 3" in k.notes[0]


def test_no_plateau_when_every_point_is_slow():
    # A threshold under every point; without residency (with it, the sizes
    # whose files were wholly cached missed nothing and cannot start a rise).
    k = detect_knee(curve(resident=False), tol=-0.99)
    assert k.status == "no-plateau" and k.size_bytes is None


def test_same_sizes_merge_and_unsorted_input_is_sorted():
    pts = curve()
    twice = pts[::-1] + [SweepPoint(p.size_bytes, p.ns * 1.02, p.median_ns, p.resident, 0.5) for p in pts]
    k = detect_knee(twice)
    assert k.status == "knee" and k.size_bytes == pytest.approx(C, rel=0.02)
    assert any("covers 0.5 of a pass" in n for n in k.notes)  # the merged point keeps the smaller coverage


def test_residency_outside_the_bracket_is_kept_inside_it_with_a_note():
    pts = [SweepPoint(p.size_bytes, p.ns, p.median_ns, 0.1 if p.ns > 1.5 * HIT else 1.0) for p in curve()]
    k = detect_knee(pts)
    assert k.size_bytes == k.low_bytes  # the last plateau file was all in the cache: no less than that
    assert any("outside the bracket" in n for n in k.notes)


def test_points_with_nonsense_figures_are_left_out():
    pts = curve() + [SweepPoint(3 * MiB, math.nan), SweepPoint(5 * MiB, -1.0), SweepPoint(0, HIT)]
    assert detect_knee(pts).size_bytes == C


# --- from stored results ------------------------------------------------------


def result(seq: int, size: int, values: list[float], resident: float, available: int = 24 << 30,
           bench: str = "file.cache_sweep", block: int = MiB) -> BenchResult:
    return BenchResult(seq=seq, bench=bench, params={"size": size, "block": block, "dir": ""}, status="ok",
                       unit="ns", summary=summary(np.asarray(values)), batch=1,
                       extra={"size_bytes": size, "block_bytes": block, "resident_fraction": resident,
                              "passes": 2.0, "mem_available_bytes": available, "cgroup_headroom_bytes": -1})


def stored() -> list[BenchResult]:
    out = []
    for i, s in enumerate(sizes(64, 1024, 2)):
        t, r = ideal(s)
        # bimodal blocks past the knee: the median stays fast, the mean climbs
        n_miss = min(49, round(100 * (1 - r)))
        out.append(result(i, s, [HIT] * (100 - n_miss) + [MISS] * n_miss, r, available=(20 << 30) + i))
    out.append(BenchResult(seq=99, bench="file.cache_sweep", params={"size": 4 << 30, "block": MiB}, status="skip",
                           reason="no room"))
    out.append(result(100, 64 * MiB, [1.0, 2.0, 3.0], 1.0, bench="file.read"))
    return out


def test_the_curve_is_the_mean_not_the_median():
    (a,) = pagecache.analyse(stored(), {"cgroup": {"limit_bytes": C, "version": 1}})
    slow = [p for p in a.points if p.size_bytes > C]
    assert all(p.median_ns == HIT for p in slow) and all(p.ns > 2 * HIT for p in slow)
    assert a.knee.status == "knee" and abs(a.knee.size_bytes / C - 1) < 0.05
    assert a.mem_available == 20 << 30  # the smallest size's, at the start
    assert a.cgroup_limit == C and a.expected == C
    assert a.ratio == pytest.approx(a.knee.size_bytes / C)
    text = pagecache.knee_text(a)
    assert "effective page cache" in text and "MemAvailable at the start: 20 GiB" in text
    assert "memory cgroup limit: 512 MiB" in text and f"{a.ratio:.2f} x 512 MiB" in text
    d = a.as_dict()
    assert d["knee"]["status"] == "knee" and d["cgroup_limit_bytes"] == C and len(d["points"]) == len(a.points)


def test_without_a_cgroup_the_knee_is_set_against_memavailable():
    (a,) = pagecache.analyse(stored(), {})
    assert a.cgroup_limit is None and a.expected == 20 << 30
    assert "memory cgroup" not in pagecache.knee_text(a)


def test_curves_are_kept_apart_by_block_and_directory():
    rs = stored() + [result(200 + i, s, [HIT], 1.0, block=64 * 1024) for i, s in enumerate(sizes(64, 256, 1))]
    analyses = pagecache.analyse(rs)
    assert sorted(a.block for a in analyses) == [64 * 1024, MiB]


def test_render_text_lists_points_and_the_knee():
    text = pagecache.render_text(pagecache.analyse(stored()))
    assert "file.cache_sweep, block 1 MiB" in text and "mean us/block" in text and "effective page cache" in text
    assert "no file.cache_sweep results" in pagecache.render_text([])


# --- the figure -----------------------------------------------------------------


def test_the_figure_marks_the_knee_and_what_the_machine_suggested():
    pytest.importorskip("matplotlib")
    from types import SimpleNamespace

    from osmeter.report.figures import RunData
    from osmeter.report.figures.file import figures

    from .test_figures_readable import assert_inside, laid_out

    run = SimpleNamespace(params={"cgroup": {"limit_bytes": C, "version": 1}}, machine={})
    data = RunData(run=run, results=tuple(stored()), samples=lambda r: None)  # type: ignore[arg-type]
    (named,) = figures(data)  # no cold reads, no contention: the page cache only
    assert named.name == "file-cache-sweep"
    fig = named.figure
    renderer = laid_out(fig)
    ax = fig.axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[:2] == ["mean (the curve)", "median"] and any(t.startswith("knee 5") for t in legend)
    assert "in the page cache (%, right axis)" in legend
    notes = [(t.get_text(), t.get_window_extent(renderer)) for t in ax.texts]
    assert [n for n, _ in notes] == ["cgroup limit 512 MiB"]  # MemAvailable (20 GiB) is far off the axis
    box = ax.get_legend().get_window_extent(renderer)
    assert not any(b.overlaps(box) for _, b in notes)
    assert_inside(fig, renderer)


def test_a_rise_with_every_page_cached_is_not_the_knee():
    """Seen on a Xeon guest: the re-read time doubles from 64 MiB on while
    every page is still in the cache (the CPU's caches stop holding the
    file); the page cache's knee is where blocks start to miss."""
    pts = []
    for p in curve(cache=512 * MiB):
        slower = 1.9 if p.size_bytes >= 76 * MiB else 1.0
        pts.append(SweepPoint(p.size_bytes, p.ns * slower, HIT, p.resident, 3.0))
    k = detect_knee(pts)
    assert k.status == "knee" and k.method == "resident"
    assert k.size_bytes == 512 * MiB, (k.size_bytes / MiB, k.notes)
    assert any("with the whole file in the page cache" in n and "not the knee" in n for n in k.notes), k.notes
    # Without residency nothing tells the two apart: the first rise is taken.
    k = detect_knee([SweepPoint(p.size_bytes, p.ns) for p in pts])
    assert k.high_bytes is not None and k.high_bytes <= 91 * MiB
