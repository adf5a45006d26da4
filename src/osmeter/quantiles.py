"""Quantiles of the normal and Student's t distributions (the t interval
of repetitions, the comparison from repetitions). Pure, standard library only."""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist



@lru_cache(maxsize=256)  # a few levels, asked for thousands of times (compare --by's cells)
def normal_quantile(p: float) -> float:
    """The standard normal quantile (statistics.NormalDist's, exact to 1e-15)."""
    return NormalDist().inv_cdf(p)


# Above this many degrees of freedom the t quantile is the normal one to
# better than 1e-6 (and the incomplete beta would lose its precision).
T_NORMAL_DF = 1e7


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        for num in (m * (b - m) * x / ((a + m2 - 1) * (a + m2)), -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) (Numerical Recipes 6.4)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """Student's t distribution function with df > 0 degrees of freedom."""
    if math.isinf(df) or df > T_NORMAL_DF:
        return NormalDist().cdf(t)
    tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """Student's t quantile for 0 < p < 1 and df > 0 (math.inf: the normal
    quantile); bisection on t_cdf to 1e-12, checked against scipy."""
    if not 0.0 < p < 1.0 or not df > 0:
        raise ValueError("t_quantile needs 0 < p < 1 and df > 0")
    if math.isinf(df) or df > T_NORMAL_DF:
        return normal_quantile(p)
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2.0
