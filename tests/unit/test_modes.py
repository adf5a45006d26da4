"""modes.two_modes: two modes named where the samples have them, and not
for a heavy tail, a skew, a coarse clock's steps or a small second mode
(issue 28: `syscall.open_close` at 1.6 and 1.9 us)."""

from __future__ import annotations

import numpy as np
import pytest

from osmeter import modes, stats
from osmeter.repeats import BIMODAL, Repetition, pool


def _mix(rng: np.random.Generator, parts: list[tuple[float, float, int]]) -> np.ndarray:
    x = np.concatenate([rng.normal(m, sd, k) for m, sd, k in parts])
    rng.shuffle(x)
    return x


@pytest.mark.parametrize("n", [200, 1000, 5000])
def test_two_modes_are_found_and_named(n: int) -> None:
    for seed in range(20):
        x = _mix(np.random.default_rng(seed), [(1600, 30, int(0.4 * n)), (1900, 40, n - int(0.4 * n))])
        m = modes.two_modes(x)
        assert m is not None, seed
        assert m.low == pytest.approx(1600, rel=0.03) and m.high == pytest.approx(1900, rel=0.03)
        assert m.low_share == pytest.approx(0.4, abs=0.05)


def _unimodal(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    return {
        "normal": rng.normal(1000, 20, n),
        "lognormal": rng.lognormal(5, 0.3, n),
        "lognormal, wide": rng.lognormal(5, 1.5, n),
        "skewed": rng.gamma(2, 50, n) + 100,
        "exponential": rng.exponential(100, n) + 10,
        "uniform": rng.uniform(100, 200, n),
        # a few interrupted samples far out: the heavy tail that made CV 500 %
        "heavy tail": np.concatenate([rng.normal(100, 2, n), rng.pareto(1.5, n // 10) * 100 + 100]),
        # a coarse clock: three values a step apart
        "steps": rng.choice([19.0, 20.0, 21.0], n, p=[0.3, 0.4, 0.3]),
        "two close modes (3 %, under MIN_GAP)": _mix(rng, [(100, 0.5, n // 2), (103, 0.5, n - n // 2)]),
        "a 5 % second mode (under MIN_SHARE)": _mix(rng, [(100, 2, n - n // 20), (150, 2, n // 20)]),
    }


@pytest.mark.parametrize("n", [modes.MIN_SAMPLES, 1000, 5000])
def test_one_mode_is_not_two(n: int) -> None:
    for seed in range(20):
        for name, x in _unimodal(np.random.default_rng(seed), n).items():
            assert modes.two_modes(x) is None, (name, seed)


def test_too_few_or_unusable_samples_have_no_modes() -> None:
    half = modes.MIN_SAMPLES // 2
    two = _mix(np.random.default_rng(5), [(100, 2, half), (150, 2, half - 1)])
    assert modes.two_modes(two) is None  # one under MIN_SAMPLES
    assert modes.two_modes(np.concatenate([two, two * 1.001])) is not None
    assert modes.two_modes(np.full(500, 7.0)) is None
    assert modes.two_modes(np.concatenate([two, two, [0.0]])) is None  # not all positive: no log scale


def test_the_summary_carries_the_modes_and_pool_flags_them() -> None:
    rng = np.random.default_rng(3)
    x = _mix(rng, [(1600, 30, 800), (1900, 40, 1200)])
    s = stats.summary(x)
    assert s.bimodal and s.mode_low == pytest.approx(1600, rel=0.03) and s.mode_high == pytest.approx(1900, rel=0.03)
    one = stats.summary(rng.normal(1600, 30, 2000))
    assert not one.bimodal and np.isnan(one.mode_low) and np.isnan(one.mode_high)
    rep = Repetition("ok", n=x.size, median=s.median, ci_low=s.ci_low, ci_high=s.ci_high)
    assert BIMODAL in pool([x], [rep]).flags
    assert BIMODAL not in pool([rng.normal(1600, 30, 2000)], [rep]).flags
