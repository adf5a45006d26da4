"""compare's maximum and variance: the Brown-Forsythe test and Rosenbaum's
exceedance test against scipy on constructed samples, their false-alarm
rate on independent and autocorrelated runs, their power, and the command
line (table, JSON, HTML, heatmap figure) on stored rt runs."""

from __future__ import annotations

import re

import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.stats as ss
from scipy.signal import lfilter

from osmeter import compare as cmp
from osmeter import twosample

from ..synthetic import add_run, noisy


def ar1(rng: np.random.Generator, n: int, phi: float) -> np.ndarray:
    """Unit-variance AR(1) samples with lag-1 correlation phi."""
    return lfilter([1.0], [1.0, -phi], rng.normal(size=n)) * math.sqrt(1 - phi * phi)


# --- Brown-Forsythe -----------------------------------------------------------


@pytest.mark.parametrize("seed, sizes, scales", [
    (1, (300, 200), (1.0, 1.3)),
    (2, (50, 51), (1.0, 1.0)),
    (3, (2, 3), (1.0, 2.0)),
    (4, (1000, 40), (2.0, 1.0)),
])
def test_brown_forsythe_is_scipys_levene_about_the_median(seed, sizes, scales) -> None:
    rng = np.random.default_rng(seed)
    a = 100 + scales[0] * rng.standard_t(3, sizes[0])  # heavy tails, as latencies have
    b = 100 + scales[1] * rng.standard_t(3, sizes[1])
    ours = twosample.brown_forsythe(a, b)
    ref = ss.levene(a, b, center="median")
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-10)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-8, abs=1e-14)
    assert ours.df == sizes[0] + sizes[1] - 2 and ours.taus == (1.0, 1.0)


def test_brown_forsythe_at_effective_sizes() -> None:
    """W with n replaced by n / tau in the standard error, p from F(1, m_a + m_b - 2)."""
    rng = np.random.default_rng(8)
    a, b = rng.normal(0, 1, 400), rng.normal(0, 1.2, 300)
    bf = twosample.brown_forsythe(a, b, (2.0, 4.0))
    za, zb = np.abs(a - np.median(a)), np.abs(b - np.median(b))
    pooled = (np.sum((za - za.mean()) ** 2) + np.sum((zb - zb.mean()) ** 2)) / (400 + 300 - 2)
    w = (za.mean() - zb.mean()) ** 2 / (pooled * (2.0 / 400 + 4.0 / 300))
    assert bf.statistic == pytest.approx(w, rel=1e-12)
    assert bf.df == pytest.approx(200 + 75 - 2)
    assert bf.p_value == pytest.approx(ss.f.sf(w, 1, 273), rel=1e-8)
    assert bf.p_value > twosample.brown_forsythe(a, b).p_value  # fewer effective samples: less certain


def test_brown_forsythe_undefined_cases() -> None:
    assert math.isnan(twosample.brown_forsythe([1.0], [1.0, 2.0]).p_value)
    assert math.isnan(twosample.brown_forsythe([5.0, 5.0, 5.0], [7.0, 7.0]).p_value)  # no spread at all


@pytest.mark.parametrize("phi", [0.0, 0.5, 0.9])
def test_integrated_tau_of_ar1(phi: float) -> None:
    """tau of an AR(1) mean is (1 + phi) / (1 - phi)."""
    rng = np.random.default_rng(int(phi * 10))
    taus = [twosample.integrated_tau(ar1(rng, 5000, phi)) for _ in range(20)]
    assert np.mean(taus) == pytest.approx((1 + phi) / (1 - phi), rel=0.15)
    assert twosample.integrated_tau([3.0] * 10) == 1.0 and twosample.integrated_tau([1.0]) == 1.0


# --- Rosenbaum's exceedance test ------------------------------------------------


@pytest.mark.parametrize("k, n_over, n_ref", [(1, 10, 10), (3, 100, 200), (6, 1000, 1000), (10, 10, 5), (0, 5, 5)])
def test_exceedance_p_is_the_hypergeometric_tail(k, n_over, n_ref) -> None:
    """P(the k largest of all are all from the n_over) = hypergeom(N, n_over, k).pmf(k)."""
    expected = ss.hypergeom(n_over + n_ref, n_over, k).pmf(k) if k else 1.0
    assert twosample.exceedance_p(k, n_over, n_ref) == pytest.approx(expected, rel=1e-10)
    assert twosample.exceedance_p(n_over + 1, n_over, n_ref) == 0.0


def test_exceedance_p_against_permutations() -> None:
    """The count of one sample above the other's maximum, over random labellings."""
    rng = np.random.default_rng(3)
    n_over, n_ref, trials = 30, 20, 40_000
    ranks = rng.permuted(np.tile(np.arange(50), (trials, 1)), axis=1)
    ref_max = ranks[:, n_over:].max(axis=1)
    counts = (ranks[:, :n_over] > ref_max[:, None]).sum(axis=1)
    for k in (1, 2, 3, 5):
        assert np.mean(counts >= k) == pytest.approx(twosample.exceedance_p(k, n_over, n_ref), abs=0.006)


def test_exceedance_counts_and_clusters() -> None:
    base = np.random.default_rng(1).permutation(np.arange(1.0, 1001.0))  # max 1000, no trend (tau 1)
    spread = base.copy()
    spread[::100] = 2000.0  # 10 samples above, far apart
    ex = twosample.exceedance_test(base, spread)
    assert (ex.above, ex.below, ex.counted, ex.gap) == (10, 0, 10, 1)
    assert ex.p_value == pytest.approx(2 * ss.hypergeom(2000, 1000, 10).pmf(10))
    burst = base.copy()
    burst[500:510] = 2000.0  # the same 10, in one burst: one cluster, not significant
    ex = twosample.exceedance_test(base, burst)
    assert (ex.above, ex.counted) == (10, 1) and ex.p_value == pytest.approx(1.0)
    assert twosample.exceedance_test(base, burst, decluster=False).counted == 10
    down = twosample.exceedance_test(spread, base)  # the other way round: the run's maximum fell
    assert (down.above, down.below, down.counted) == (0, 10, 10) and down.p_value < 1e-2
    same = twosample.exceedance_test(base, base[::-1].copy())
    assert (same.above, same.below, same.p_value) == (0, 0, 1.0)


def test_clusters_with_a_gap() -> None:
    flags = np.array([1, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1], dtype=bool)
    assert twosample.clusters(flags, 1) == 4  # runs of consecutive
    assert twosample.clusters(flags, 2) == 3  # one False between joins
    assert twosample.clusters(flags, 4) == 2
    assert twosample.clusters(np.zeros(5, dtype=bool), 3) == 0


# --- calibration: false alarms and power --------------------------------------------


@pytest.mark.parametrize("phi", [0.0, 0.5, 0.9])
def test_no_more_false_alarms_than_the_level_on_dependent_runs(phi: float) -> None:
    """Two runs from the same AR(1) process: each test's p < 0.05 in about 5 %
    of trials (at most 9 % here, 200 trials); without the effective sizes
    Brown-Forsythe would alarm in half of them at phi = 0.9."""
    rng = np.random.default_rng(100 + int(10 * phi))
    trials, bf, ex, naive = 200, 0, 0, 0
    for _ in range(trials):
        a, b = np.exp(0.3 * ar1(rng, 1000, phi)), np.exp(0.3 * ar1(rng, 1000, phi))
        bf += twosample.dependent_brown_forsythe(a, b).p_value < 0.05
        ex += twosample.exceedance_test(a, b).p_value < 0.05
        naive += twosample.brown_forsythe(a, b).p_value < 0.05
    assert bf / trials <= 0.09 and ex / trials <= 0.09, (bf, ex)
    if phi == 0.9:
        assert naive / trials > 0.3  # what the effective sizes are for


def test_a_wider_distribution_is_found() -> None:
    """sd x 1.3 (variance x 1.69) on dependent runs: the variance nearly always,
    the maximum in about half of the trials (it sees only the extreme tail)."""
    rng = np.random.default_rng(9)
    trials, bf, ex = 100, 0, 0
    for _ in range(trials):
        a, b = np.exp(0.3 * ar1(rng, 1000, 0.5)), np.exp(0.39 * ar1(rng, 1000, 0.5))
        bf += twosample.dependent_brown_forsythe(a, b).p_value < 0.05
        ex += twosample.exceedance_test(a, b).p_value < 0.05
    assert bf >= 95 and 30 <= ex <= 80, (bf, ex)


# --- compare_instance ----------------------------------------------------------------


def instance(bench: str, x: np.ndarray, unit: str = "ns") -> cmp.Instance:
    return cmp.Instance(bench, {}, unit, float(np.median(x)), x)


def test_rt_instances_get_max_and_variance_by_default() -> None:
    assert cmp.stats_for("rt.workload", None) == ("max", "variance")
    assert cmp.stats_for("syscall.null", None) == ()
    assert cmp.stats_for("syscall.null", ("variance", "max")) == ("max", "variance")
    assert cmp.stats_for("rt.cyclic", ()) == ()


def test_a_heavier_tail_with_the_same_median() -> None:
    """The study's finding in miniature: median unchanged, max and variance up."""
    rng = np.random.default_rng(12)
    base = 100.0 + rng.exponential(2.0, 1000)
    other = 100.0 + rng.exponential(2.0, 1000)
    hit = rng.choice(1000, 40, replace=False)
    other[hit] += rng.uniform(20, 60, 40)  # 4 % of the jobs slowed by a stressor
    c = cmp.compare_instance(instance("rt.workload", base), instance("rt.workload", other), 2, 1,
                             stats=cmp.stats_for("rt.workload", None))
    assert c.verdict == cmp.SAME
    mx, var = c.stat("max"), c.stat("variance")
    assert mx is not None and var is not None
    assert mx.significant and mx.verdict == cmp.HIGHER and mx.ratio == pytest.approx(other.max() / base.max())
    assert var.significant and var.ratio == pytest.approx(np.var(other, ddof=1) / np.var(base, ddof=1))
    assert mx.worse > 0 and var.worse > 0
    assert "of the run's 1000 samples above the baseline's maximum" in mx.test and "p=" in mx.test
    assert var.test.startswith("Brown-Forsythe W=")


def test_same_distribution_no_significant_spread_change_and_threshold() -> None:
    rng = np.random.default_rng(13)
    a, b = noisy(rng, 100.0, 2000), noisy(rng, 100.0, 2000)
    c = cmp.compare_instance(instance("rt.workload", a), instance("rt.workload", b), 2, 1, stats=cmp.EXTRA_STATS)
    assert [st.verdict for st in c.stats] == [cmp.SAME, cmp.SAME]
    # a change with p < 0.05 but within the noise threshold is not significant
    st = cmp.StatChange("max", "ns", 100.0, 104.0, 1.04, 0.001, False, "")
    assert not cmp._stat_significant(st.ratio, st.p_value, 0.05, 0.95)
    assert cmp._stat_significant(1.06, 0.001, 0.05, 0.95) and not cmp._stat_significant(1.5, 0.2, 0.05, 0.95)


def test_for_a_rate_a_higher_maximum_is_better_more_variance_worse() -> None:
    up = cmp.StatChange("max", "bytes_per_s", 1.0, 2.0, 2.0, 0.0, True, "")
    var = cmp.StatChange("variance", "bytes_per_s", 1.0, 2.0, 2.0, 0.0, True, "")
    assert up.worse == -1.0 and var.worse == 1.0


# --- the command line ---------------------------------------------------------------


@pytest.fixture
def rt_runs(store_path: Path) -> tuple[int, int]:
    """Run 1: rt.workload and syscall.null; run 2: the same medians, rt.workload
    kernel=crc with a heavier tail, kernel=fir2dim unchanged."""
    rng = np.random.default_rng(21)

    def specs(tail: bool) -> list:
        crc = 50_000.0 + rng.exponential(500.0, 1000)
        if tail:
            crc[rng.choice(1000, 50, replace=False)] += rng.uniform(10_000, 30_000, 50)
        return [
            ("rt.workload", {"kernel": "crc", "stress": 1, "stress_op": "write"}, "ns", crc),
            ("rt.workload", {"kernel": "fir2dim", "stress": 1, "stress_op": "write"}, "ns",
             20_000.0 + rng.exponential(300.0, 1000)),
            ("syscall.null", {}, "ns", noisy(rng, 100.0, 2000)),
        ]

    return add_run(store_path, specs(False), label="standard"), add_run(store_path, specs(True), label="stressed")


def test_table_shows_max_and_variance_rows_for_rt(cli, rt_runs) -> None:
    r = cli("compare", "1", "2")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("rt.workload") and "kernel=crc" in line)
    assert lines[at].endswith("no significant change")
    assert lines[at + 1].split()[0] == "max" and lines[at + 1].endswith("higher")
    assert lines[at + 2].split()[0] == "variance" and lines[at + 2].endswith("higher") and "ns^2" in lines[at + 2]
    assert re.search(r"p(=0\.\d+|<0\.001)", lines[at + 1])  # never an exponent
    null = next(i for i, line in enumerate(lines) if line.startswith("syscall.null"))
    assert not lines[null + 1].startswith("  max")  # not rt: the median only
    assert "max: 2 compared, 1 significant (1 higher, 0 lower)" in r.out
    assert "variance: 2 compared, 1 significant (1 higher, 0 lower)" in r.out
    assert "Rosenbaum" in r.out and "Brown-Forsythe" in r.out


def test_json_and_the_stat_option(cli, rt_runs) -> None:
    doc = json.loads(cli("compare", "1", "2", "--json").out)
    crc = next(c for c in doc["comparisons"] if c["params"].get("kernel") == "crc")
    assert [s["stat"] for s in crc["stats"]] == ["max", "variance"]
    assert all(s["significant"] and s["verdict"] == "higher" and 0 <= s["p_value"] < 0.05 for s in crc["stats"])
    assert set(doc["stat_methods"]) == {"max", "variance"}
    null = next(c for c in doc["comparisons"] if c["bench"] == "syscall.null")
    assert null["stats"] == []
    doc = json.loads(cli("compare", "1", "2", "--json", "--stat", "variance").out)
    assert {tuple(s["stat"] for s in c["stats"]) for c in doc["comparisons"]} == {("variance",)}
    doc = json.loads(cli("compare", "1", "2", "--json", "--stat", "none").out)
    assert all(c["stats"] == [] for c in doc["comparisons"]) and doc["stat_methods"] == {}
    bad = cli("compare", "1", "2", "--stat", "p99")
    assert bad.code == 2 and "expected max, variance" in bad.err


def test_html_and_figure_show_them(cli, rt_runs, tmp_path: Path) -> None:
    page = tmp_path / "c.html"
    assert cli("compare", "1", "2", "-o", str(page)).code == 0
    html = page.read_text()
    assert 'id="heatmap-max"' in html and 'id="heatmap-variance"' in html
    assert "Change of the maximum" in html and "Significant changes of the maximum and the variance" in html
    assert "Rosenbaum" in html
    svg = tmp_path / "c.svg"
    assert cli("compare", "1", "2", "-o", str(svg)).code == 0
    text = svg.read_text()
    for column in ("stressed: median", "stressed: max", "stressed: variance"):
        assert column in text
