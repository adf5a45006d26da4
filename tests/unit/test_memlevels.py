"""Cache-level detection on synthetic latency curves (osmeter.memlevels)."""
from __future__ import annotations

import math
import random
from types import SimpleNamespace

import pytest

from osmeter.memlevels import (
    CurvePoint,
    analyse_results,
    compare_with_sysfs,
    curves_from_results,
    detect_levels,
    render_text,
    tlb_penalty,
)

KiB, MiB = 1024, 1024 * 1024


def sizes(lo: int = KiB, hi: int = 512 * MiB, per_doubling: int = 3) -> list[int]:
    out, k = [], 0
    while True:
        s = int(round(lo * 2 ** (k / per_doubling) / 64)) * 64
        if s > hi:
            return out
        out.append(s)
        k += 1


def staircase(steps: list[tuple[int, float]], memory_ns: float, noise: float = 0.0, seed: int = 1,
              per_doubling: int = 3, hi: int = 512 * MiB, cycles_per_ns: float | None = 2.0) -> list[CurvePoint]:
    """Latency = the first step whose capacity holds the working set; over
    the doubling past each capacity it climbs geometrically to the next
    level (as real caches with imperfect replacement show)."""
    rnd = random.Random(seed)
    pts = []
    for s in sizes(hi=hi, per_doubling=per_doubling):
        ns = memory_ns
        for cap, lat in steps:
            if s <= cap:
                ns = lat
                break
        for i, (cap, lat) in enumerate(steps):
            nxt = steps[i + 1][1] if i + 1 < len(steps) else memory_ns
            if cap < s < 2 * cap:
                ns = lat * (nxt / lat) ** math.log2(s / cap)
        ns *= 1 + rnd.uniform(-noise, noise)
        pts.append(CurvePoint(s, ns, ns * cycles_per_ns if cycles_per_ns else None))
    return pts


def test_clear_plateaus_are_found_with_sizes_latencies_and_cycles():
    pts = staircase([(32 * KiB, 1.5), (1 * MiB, 5.0), (32 * MiB, 30.0)], memory_ns=100.0)
    det = detect_levels(pts)
    assert [lv.name for lv in det.levels] == ["L1", "L2", "L3", "memory"]
    l1, l2, l3, mem = det.levels
    assert l1.last_bytes == 32 * KiB and l1.ns == pytest.approx(1.5) and l1.cycles == pytest.approx(3.0)
    assert 0.5 * MiB <= l2.last_bytes <= MiB and l2.ns == pytest.approx(5.0)
    assert 16 * MiB <= l3.last_bytes <= 32 * MiB and l3.ns == pytest.approx(30.0)
    assert det.memory is mem and mem.ns == pytest.approx(100.0) and mem.last_bytes == 512 * MiB
    assert l1.next_bytes and l1.next_bytes > l1.last_bytes
    # The size: half-way (in log latency) up the climb, which the synthetic
    # curve puts at capacity x sqrt(2).
    assert l1.edge_bytes == pytest.approx(32 * KiB * 2**0.5, rel=0.1) and l1.size_bytes == l1.edge_bytes
    assert l3.edge_bytes == pytest.approx(32 * MiB * 2**0.5, rel=0.1)
    assert mem.edge_bytes is None and mem.size_bytes == mem.last_bytes
    assert len(det.rises) == 3  # the ramps between levels
    assert det.caches == (l1, l2, l3)


def test_two_similar_points_in_a_ramp_are_not_a_level():
    pts = staircase([(32 * KiB, 1.5), (1 * MiB, 5.0)], memory_ns=100.0)
    # flatten the ramp past 32 KiB into two equal points
    ramp = [i for i, p in enumerate(pts) if 32 * KiB < p.size_bytes < 64 * KiB]
    assert len(ramp) == 2
    for i in ramp:
        pts[i] = CurvePoint(pts[i].size_bytes, 2.7)
    assert [lv.name for lv in detect_levels(pts).levels] == ["L1", "L2", "memory"]


def test_noisy_curve_gives_the_same_levels():
    for seed in range(5):
        pts = staircase([(48 * KiB, 2.0), (2 * MiB, 7.0)], memory_ns=140.0, noise=0.06, seed=seed)
        det = detect_levels(pts)
        assert [lv.name for lv in det.levels] == ["L1", "L2", "memory"], seed
        l1, l2, mem = det.levels
        # within a factor 1.5 of the true capacity (the ramp starts gently)
        assert 32 * KiB <= l1.last_bytes <= 72 * KiB
        assert 1.33 * MiB <= l2.last_bytes <= 3 * MiB
        assert mem.ns == pytest.approx(140.0, rel=0.06)


def test_an_isolated_spike_does_not_split_a_plateau():
    pts = staircase([(32 * KiB, 1.5)], memory_ns=80.0)
    i = next(k for k, p in enumerate(pts) if p.size_bytes >= 8 * KiB)
    pts[i] = CurvePoint(pts[i].size_bytes, 4.0)  # one interrupt-hit size
    det = detect_levels(pts)
    assert [lv.name for lv in det.levels] == ["L1", "memory"]
    assert det.levels[0].first_bytes == KiB and det.levels[0].last_bytes == 32 * KiB


def test_single_level_curve():
    pts = [CurvePoint(s, 2.0) for s in sizes(hi=16 * KiB)]
    det = detect_levels(pts)
    assert [lv.name for lv in det.levels] == ["L1"]
    assert det.memory is None
    assert any("one plateau" in n for n in det.notes)


def test_no_plateau_in_a_smooth_rise():
    pts = [CurvePoint(s, 1.0 * (s / KiB) ** 0.5) for s in sizes()]
    det = detect_levels(pts)
    assert det.levels == () and det.memory is None
    assert any("no plateau" in n for n in det.notes)


def test_memory_with_tlb_drift_is_one_level_not_a_cache():
    # Base pages: memory latency grows with TLB misses at large sizes.
    pts = staircase([(32 * KiB, 2.0), (MiB, 7.0)], memory_ns=140.0, hi=4 * MiB)
    pts += [CurvePoint(s, 140.0 * (s / (4 * MiB)) ** 0.08) for s in sizes(lo=5 * MiB) if s > 4 * MiB]
    pts.append(CurvePoint(1024 * MiB, 140.0 * 256 ** 0.08 * 1.3))  # a last, steeper step
    det = detect_levels(pts)
    assert [lv.name for lv in det.levels] == ["L1", "L2", "memory"]
    assert det.memory.last_bytes == 1024 * MiB
    assert det.memory.ns_high > 1.5 * det.memory.ns_low


def test_a_curve_cut_inside_a_big_step_reports_no_memory():
    pts = [CurvePoint(s, 2.0) for s in sizes(hi=32 * KiB)] + [CurvePoint(64 * KiB, 9.0), CurvePoint(128 * KiB, 40.0)]
    det = detect_levels(pts)
    assert [lv.name for lv in det.levels] == ["L1"] and det.memory is None
    assert any("still rises" in n for n in det.notes)


def test_empty_and_invalid_input():
    assert detect_levels([]).levels == ()
    with pytest.raises(ValueError):
        CurvePoint(0, 1.0)
    with pytest.raises(ValueError):
        CurvePoint(1024, float("nan"))


CACHES = [
    {"level": 1, "type": "Data", "size_bytes": 48 * KiB},
    {"level": 1, "type": "Instruction", "size_bytes": 32 * KiB},
    {"level": 2, "type": "Unified", "size_bytes": 2 * MiB},
    {"level": 3, "type": "Unified", "size_bytes": 105 * MiB},
]


def test_sysfs_agreement_and_disagreement_are_stated_never_bent():
    # L1 and L2 where sysfs says; no L3 plateau (a VM's thin LLC slice).
    pts = staircase([(48 * KiB, 2.0), (2 * MiB, 7.0)], memory_ns=140.0)
    det = detect_levels(pts)
    checks = {c.level: c for c in compare_with_sysfs(det, CACHES)}
    assert checks[1].agree and checks[1].sysfs_type == "Data" and 0.5 <= checks[1].ratio <= 2
    assert checks[2].agree
    assert checks[3].agree is False and checks[3].detected is None
    assert "no plateau" in checks[3].text
    # Detection did not move: the same levels without sysfs.
    assert detect_levels(pts) == det

    # A curve whose L2 plateau ends far from sysfs: disagreement, both sizes stated.
    pts = staircase([(48 * KiB, 2.0), (8 * MiB, 7.0)], memory_ns=140.0)
    c2 = {c.level: c for c in compare_with_sysfs(detect_levels(pts), CACHES)}[2]
    assert c2.agree is False and c2.ratio >= 3 and "DISAGREES" in c2.text and "2 MiB" in c2.text


def test_no_sysfs_caches():
    det = detect_levels(staircase([(32 * KiB, 1.5)], memory_ns=90.0))
    checks = compare_with_sysfs(det, None)
    assert [c.level for c in checks] == [1] and checks[0].agree is None


def result(size, ns, thp=0, status="ok", cycles=None, pattern="random"):
    rec = {"median": ns, "ref_cycles": cycles}
    return SimpleNamespace(bench="mem.latency", status=status, params={"size": size, "pattern": pattern,
                           "stride": 64, "thp": thp}, extra={"size_bytes": size}, summary=None, record=rec)


def test_stored_results_to_curves_and_text():
    base = staircase([(48 * KiB, 2.0), (2 * MiB, 7.0)], memory_ns=140.0)
    res = [result(p.size_bytes, p.ns, cycles=p.cycles) for p in base]
    res += [result(s, 7.0 if s <= 2 * MiB else 130.0, thp=1) for s in (256 * KiB, MiB, 2 * MiB, 8 * MiB, 64 * MiB)]
    res += [result(4096, 1.0, status="skip"), SimpleNamespace(bench="mem.bandwidth", status="ok")]
    curves = curves_from_results(res)
    assert set(curves) == {("random", 64, 0), ("random", 64, 1)}
    an = analyse_results(res, {"caches": CACHES})
    assert [a.thp for a in an] == [0, 1]
    # The huge-page curve starts at 256 KiB; its levels take the base curve's names.
    assert [lv.name for lv in an[1].detection.levels] == ["L2", "memory"]
    text = render_text(an)
    assert "L1" in text and "agrees" in text and "TLB misses" in text
    assert an[0].as_dict()["levels"]["memory"]["ns"] == pytest.approx(140.0)
    assert tlb_penalty(an[0].points, an[1].points)[0][0] == 256 * KiB


def test_no_results_text():
    assert "no mem.latency results" in render_text([])


def test_mem_figures_from_stored_results():
    """The latency curve (levels and sysfs marked) and both bandwidth figures."""
    pytest.importorskip("matplotlib")
    import numpy as np

    from osmeter.model import BenchResult
    from osmeter.report.figures import FIGURES, RunData
    from osmeter.report.figures.mem import figures
    from osmeter.stats import summary

    seq = iter(range(1000))

    def br(bench, params, unit, value, extra, cycles=None):
        return BenchResult(seq=next(seq), bench=bench, params=params, status="ok", unit=unit,
                           summary=summary(np.asarray([value, value, value])), batch=1, extra=extra,
                           record={"median": value, "ref_cycles": cycles})

    pts = staircase([(48 * KiB, 2.0), (2 * MiB, 7.0)], memory_ns=140.0)
    results = [br("mem.latency", {"size": p.size_bytes, "pattern": "random", "stride": 64, "thp": 0}, "ns",
                  p.ns, {"size_bytes": p.size_bytes}, p.cycles) for p in pts]
    results += [br("mem.bandwidth", {"op": "read", "threads": "1", "size": s}, "bytes_per_s", 5e10 if s < MiB else 9e9,
                   {"size_bytes": s}) for s in (4 * KiB, 64 * KiB, 8 * MiB, 64 * MiB)]
    results += [br("mem.bandwidth", {"op": op, "threads": t, "size": 0}, "bytes_per_s", 8e9, {"size_bytes": 420 * MiB})
                for op in ("read", "memcpy") for t in ("1", "all")]
    run = SimpleNamespace(machine={"caches": CACHES})
    data = RunData(run=run, results=tuple(results), samples=lambda r: None)  # type: ignore[arg-type]
    figs = {f.name: f for f in figures(data)}
    assert set(figs) == {"mem-latency", "mem-bandwidth-curve", "mem-bandwidth"}
    ax = figs["mem-latency"].figure.axes[0]
    assert "ns" in ax.get_ylabel() and "log2" in ax.get_xlabel()
    texts = [t.get_text() for t in ax.texts]
    assert any(t.startswith("L1: 2 ns") and "~" in t for t in texts) and any(t.startswith("memory:") for t in texts)
    assert any("sysfs L2 2M" in t for t in texts)
    assert "GB/s" in figs["mem-bandwidth"].figure.axes[0].get_ylabel()
    assert FIGURES["mem"] is figures
    # A run without mem results has no mem figures.
    assert figures(RunData(run=run, results=(), samples=lambda r: None)) == []  # type: ignore[arg-type]
