"""The rt study's analysis: its tables and findings from the stored results of its run.

Pure functions over results (osmeter.model.BenchResult, a run's RunData
for the samples): no options, no probe, nothing printed. Per configuration
a row per kernel (`workload_rows`: average, median with its 95 % CI,
variance, max, deadline misses, period); per kernel and stressed
configuration the stressed / unstressed ratios of median, variance and
max with compare's tests of the max and the variance (`ratios`,
`ratio_rows`) and, over the kernels, the finding (`finding_lines`);
rt.cyclic's wake-up latency per configuration (`cyclic_rows`); and what
the measured thread ran as where it was not what the study asks
(`setting_notes`). Each table is given as CSV cells (plain numbers) and
as text cells (osmeter.fmt's), with its headers here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from .. import compare as cmp
from .. import textsafe
from ..fmt import MISSING, fmt_g, fmt_num
from ..report.figures.rt import CYCLIC, WORKLOAD, Config, config_of, find, hist_us, miss_share

WORKLOAD_HEADER = ["kernel", "jobs", "average_us", "median_us", "median_ci_low_us", "median_ci_high_us",
                   "variance_us2", "max_us", "deadline_misses", "miss_percent", "period_us", "status"]
WORKLOAD_TEXT = ["kernel", "jobs", "average", "median", "95% CI of median", "variance (us^2)", "max",
                 "deadline misses", "period", "status"]
WORKLOAD_RIGHT = [False, True, True, True, True, True, True, True, True, False]
RATIO_HEADER = ["kernel", "configuration", "median_ratio", "variance_ratio", "max_ratio", "max_test",
                "variance_test", "max_p", "variance_p"]
RATIO_TEXT = ["kernel", "configuration", "median x", "variance x", "max x", "max change", "variance change"]
RATIO_RIGHT = [False, False, True, True, True, False, False]
CYCLIC_HEADER = ["configuration", "cycles", "min_us", "average_us", "median_us", "p99_us", "p99.9_us", "max_us",
                 "overflows", "hist_us", "policy", "status"]
CYCLIC_TEXT = ["configuration", "cycles", "min", "average", "median", "p99", "p99.9", "max", "overflows", "hist_us",
               "policy", "status"]
CYCLIC_RIGHT = [False, True, True, True, True, True, True, True, True, True, False, False]


def _us(ns: float) -> float:
    return ns / 1e3


def _extra(r: Any, key: str) -> float | None:
    v = (r.extra or {}).get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _info(r: Any, key: str) -> str | None:
    info = r.record.get("info") if isinstance(r.record, dict) else None
    v = info.get(key) if isinstance(info, dict) else None
    return str(v) if v is not None else None


def _status(r: Any) -> str:
    text = "ok" if r.status == "ok" else f"{r.status}: {r.reason}"
    return text + (f" [{', '.join(r.flags)}]" if r.status == "ok" and r.flags else "")


@dataclass(frozen=True)
class WorkloadRow:
    kernel: str
    csv: list[str]
    text: list[str]


def workload_rows(results: Sequence[Any], config: Config, kernels: Sequence[str]) -> list[WorkloadRow]:
    """One row per kernel of one configuration: its statistics, or the reason it has none."""
    rows = []
    for k in kernels:
        r = find(results, WORKLOAD, config, kernel=k)
        if r is None:
            rows.append(WorkloadRow(k, [k] + [""] * 10 + ["not run"], [k] + [MISSING] * 8 + ["not run"]))
            continue
        if r.status != "ok" or r.summary is None:
            status = textsafe.line(_status(r))
            rows.append(WorkloadRow(k, [k] + [""] * 10 + [status], [k] + [MISSING] * 8 + [status]))
            continue
        s = r.summary
        var = s.std**2 / 1e6 if math.isfinite(s.std) else math.nan
        misses, share, period = _extra(r, "misses"), miss_share(r), _extra(r, "period_ns")
        csv = [k, str(s.n), f"{_us(s.mean):.4f}", f"{_us(s.median):.4f}", f"{_us(s.ci_low):.4f}",
               f"{_us(s.ci_high):.4f}", "" if math.isnan(var) else f"{var:.6g}", f"{_us(s.max):.4f}",
               "" if misses is None else str(int(misses)), "" if share is None else f"{100 * share:.3f}",
               "" if period is None else f"{_us(period):.3f}", textsafe.line(_status(r))]
        text = [k, str(s.n), fmt_num(_us(s.mean)), fmt_num(_us(s.median)),
                f"{fmt_num(_us(s.ci_low))}..{fmt_num(_us(s.ci_high))}", fmt_num(var), fmt_num(_us(s.max)),
                MISSING if misses is None or share is None else f"{int(misses)} ({100 * share:.1f}%)",
                MISSING if period is None else fmt_num(_us(period)), textsafe.line(_status(r))]
        rows.append(WorkloadRow(k, csv, text))
    return rows


@dataclass(frozen=True)
class Ratio:
    kernel: str
    config: Config
    median: float
    variance: float
    max: float
    max_change: cmp.StatChange | None
    variance_change: cmp.StatChange | None


def ratios(data: Any, configs: Sequence[Config], kernels: Sequence[str]) -> list[Ratio]:
    """Per kernel and stressed configuration: stressed / unstressed median,
    variance and max, with compare's tests of the max and the variance
    (both ok only)."""
    out = []
    base_cfg = Config(0, "")
    for k in kernels:
        base = find(data.results, WORKLOAD, base_cfg, kernel=k)
        if base is None or base.status != "ok" or base.summary is None:
            continue
        bx = data.samples(base)
        for c in configs:
            if c.stress == 0:
                continue
            r = find(data.results, WORKLOAD, c, kernel=k)
            if r is None or r.status != "ok" or r.summary is None:
                continue
            x = data.samples(r)
            b, s = base.summary, r.summary
            ratio = Ratio(
                k, c,
                s.median / b.median if b.median > 0 else math.nan,
                (s.std / b.std) ** 2 if b.std > 0 and math.isfinite(s.std) else math.nan,
                s.max / b.max if b.max > 0 else math.nan,
                cmp.max_change(bx, x, "ns") if bx is not None and x is not None else None,
                cmp.variance_change(bx, x, "ns") if bx is not None and x is not None else None,
            )
            out.append(ratio)
    return out


def _verdict(st: cmp.StatChange | None) -> str:
    return MISSING if st is None else st.verdict


def ratio_rows(rs: Sequence[Ratio]) -> tuple[list[list[str]], list[list[str]]]:
    """(csv rows, text rows) of the summary, kernel by kernel."""
    csv, text = [], []
    for x in rs:
        csv.append([x.kernel, x.config.label, f"{x.median:.4f}", f"{x.variance:.4f}", f"{x.max:.4f}",
                    _verdict(x.max_change), _verdict(x.variance_change),
                    "" if x.max_change is None else f"{x.max_change.p_value:.3g}",
                    "" if x.variance_change is None or math.isnan(x.variance_change.p_value)
                    else f"{x.variance_change.p_value:.3g}"])
        text.append([x.kernel, x.config.label, f"{x.median:.3f}", fmt_num(x.variance, 3), f"{x.max:.3f}",
                     _verdict(x.max_change), _verdict(x.variance_change)])
    return csv, text


def _geomean(values: Sequence[float]) -> float:
    v = [x for x in values if x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else math.nan


def finding_lines(rs: Sequence[Ratio], configs: Sequence[Config]) -> list[str]:
    """Per stressed configuration: the geometric means of the ratios over the
    kernels, and the kernels whose max or variance rose significantly, with
    how far their median moved meanwhile."""
    out = []
    for c in configs:
        mine = [x for x in rs if x.config == c]
        if not mine:
            continue
        line = (f"{c.label}: median x{_geomean([x.median for x in mine]):.3f}, variance "
                f"x{fmt_g(_geomean([x.variance for x in mine]))}, max x{_geomean([x.max for x in mine]):.3f} "
                f"(geometric means over {len(mine)} kernels)")
        risen = [x for x in mine if any(st is not None and st.verdict == cmp.HIGHER
                                        for st in (x.max_change, x.variance_change))]
        if risen:
            line += (f"; max or variance significantly higher for {len(risen)} ({', '.join(x.kernel for x in risen)}): "
                     f"their median x{_geomean([x.median for x in risen]):.3f}, variance "
                     f"x{fmt_g(_geomean([x.variance for x in risen]))}, max x{_geomean([x.max for x in risen]):.3f}")
        else:
            line += "; no kernel's max or variance rose significantly"
        out.append(line)
    return out


def cyclic_rows(results: Sequence[Any], configs: Sequence[Config]) -> tuple[list[list[str]], list[list[str]]]:
    csv, text = [], []
    for c in configs:
        r = find(results, CYCLIC, c)
        if r is None:
            row = [c.label] + [""] * 10 + ["not run"]
            csv.append(row)
            text.append([c.label] + [MISSING] * 10 + ["not run"])
            continue
        if r.status != "ok" or r.summary is None:
            status = textsafe.line(_status(r))
            csv.append([c.label] + [""] * 10 + [status])
            text.append([c.label] + [MISSING] * 10 + [status])
            continue
        s = r.summary
        over = _extra(r, "overflows")
        policy = textsafe.line(_info(r, "policy") or "")
        cells = [s.n, _us(s.min), _us(s.mean), _us(s.median), _us(s.p99), _us(s.p999), _us(s.max)]
        csv.append([c.label, str(s.n)] + [f"{v:.3f}" for v in cells[1:]]
                   + ["" if over is None else str(int(over)), str(hist_us(r)), policy, textsafe.line(_status(r))])
        text.append([c.label, str(s.n)] + [fmt_num(v) for v in cells[1:]]
                    + [MISSING if over is None else str(int(over)), str(hist_us(r)), policy or MISSING,
                       textsafe.line(_status(r))])
    return csv, text


def setting_notes(results: Sequence[Any]) -> list[str]:
    """What the measured thread ran as, where it was not what the study asks
    (SCHED_FIFO, memory locked), and each configuration's stressors, once."""
    out: list[str] = []
    policies = {p for r in results if r.bench.startswith("rt.") and r.status == "ok"
                and (p := _info(r, "policy")) is not None}
    for p in sorted(policies):
        if not p.startswith("SCHED_FIFO"):
            out.append(f"policy: {p}: these latencies are not a real-time thread's")
    locks = {m for r in results if r.bench.startswith("rt.") and r.status == "ok"
             and (m := _info(r, "mlock")) is not None and not m.startswith("locked")}
    out += [f"memory: {m}" for m in sorted(locks)]
    qos = {q for r in results if r.bench == CYCLIC and r.status == "ok"
           and (q := _info(r, "pm_qos")) is not None and not q.startswith("/dev/cpu_dma_latency held")}
    out += [f"rt.cyclic pm_qos: {q}: deep CPU idle states may add to the wake-up latency" for q in sorted(qos)]
    seen: dict[Config, str] = {}
    for r in results:
        if r.bench.startswith("rt.") and r.status == "ok" and config_of(r).stress and config_of(r) not in seen:
            st = _info(r, "stress")
            if st:
                seen[config_of(r)] = st
    out += [f"stressors {c.label}: {st}" for c, st in seen.items()]
    return [textsafe.line(x) for x in out]


def unstressed_period_us(results: Sequence[Any], kernel: str) -> int | None:
    """The period the unstressed part used for `kernel` (twice its median
    measured alone), in whole us (at least 1); None when it has none."""
    for r in results:
        if r.bench == WORKLOAD and (r.params or {}).get("kernel") == kernel and (r.params or {}).get("stress") == 0:
            ns = _extra(r, "period_ns")
            if ns is not None:
                return max(1, round(ns / 1e3))
    return None

