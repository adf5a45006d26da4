"""The rt study's plan (configurations, probe arguments per part, the
budget), its tables and summary on constructed results, its figures (drawn,
readable, none for skipped points), the cyclictest histogram, and the
FakeProbe's rt family against the real catalogue."""

from __future__ import annotations

import argparse
import json
from types import SimpleNamespace

import numpy as np
import pytest

from osmeter.studies import rt as study_rt
from osmeter.studies import rt_analysis
from osmeter.runner import probe_argv
from osmeter.errors import UsageError
from osmeter.model import BenchResult
from osmeter.report.figures import RunData
from osmeter.report.figures import rt as rt_figures
from osmeter.report.figures.rt import Config
from osmeter.stats import summary

from ..fake_probe import RT, RT_COMMON, RT_KERNELS
from ..probe_helpers import run_probe

KERNELS = RT_KERNELS  # the spec's 19 names, as the fake probe has them


def plan_args(**kw) -> argparse.Namespace:
    base = dict(quick=True, output="out", jobs=None, kernels=None, cyclic_s=None, priority=None, cpu=None,
                label=None, store=None)
    base.update(kw)
    return argparse.Namespace(**base)


def params(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == "--param"]


def option(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv else None


# --- the plan -----------------------------------------------------------------


@pytest.mark.parametrize("cpus, labels", [
    (1, ["no stress", "1 x read", "1 x write"]),  # stress=1 asked for: the probe's skip says why
    (2, ["no stress", "1 x read", "1 x write"]),
    (4, ["no stress", "1 x read", "1 x write", "2 x read", "2 x write", "3 x read", "3 x write"]),
])
def test_stress_configurations(cpus: int, labels: list[str]) -> None:
    assert [c.label for c in study_rt.stress_configs(cpus)] == labels


def test_parts_per_configuration(tmp_path) -> None:
    """Unstressed: one workload part for every kernel, then rt.cyclic; each
    stressed configuration: one workload part per kernel (its period the
    unstressed part's), then rt.cyclic."""
    plan = study_rt.make_plan(plan_args(quick=False, cpu=1), 2, KERNELS)
    n = len(KERNELS)
    assert len(plan.parts) == 2 + 2 * (n + 1) and plan.jobs == 1000 and plan.cyclic_loops == 60000
    workload, cyclic = plan.parts[2], plan.parts[2 + n]  # 1 x read: the first kernel, then the cycles
    assert workload.resolve is not None and cyclic.resolve is None
    # Planned: the period is the unstressed part's, not known yet.
    assert params(probe_argv(tmp_path / "probe", workload.opts)) == [
        f"kernel={KERNELS[0]}", "period_us=UNSTRESSED", "stress=1", "stress_op=read", "priority=80"]
    unstressed = SimpleNamespace(bench="rt.workload", params={"kernel": KERNELS[0], "stress": 0},
                                 extra={"period_ns": 123456.0})
    other = SimpleNamespace(bench="rt.workload", params={"kernel": KERNELS[1], "stress": 0},
                            extra={"period_ns": 999000.0})
    argv = probe_argv(tmp_path / "probe", workload.resolve(SimpleNamespace(results=[other, unstressed])))
    assert argv[3] == "rt.workload"
    assert params(argv) == [f"kernel={KERNELS[0]}", "stress=1", "stress_op=read", "priority=80", "period_us=123"]
    # No unstressed figure (skipped): the probe's own default period.
    argv0 = probe_argv(tmp_path / "probe", workload.resolve(SimpleNamespace(results=[other])))
    assert params(argv0)[-1] == "period_us=0"
    assert option(argv, "--min-samples") == option(argv, "--max-samples") == "1000"  # exactly N jobs
    assert option(argv, "--cpu") == "1" and float(option(argv, "--max-time") or 0) >= 60
    assert "--budget-fraction" not in argv  # one repetition: the study's parts are not repeated
    argv = probe_argv(tmp_path / "probe", cyclic.opts)
    assert argv[3] == "rt.cyclic"
    assert params(argv) == ["loops=60000", "interval_us=1000", "stress=1", "stress_op=read", "priority=80"]
    assert option(argv, "--max-samples") == "60000" and 61 <= float(option(argv, "--max-time") or 0) <= 63
    assert params(probe_argv(tmp_path / "probe", plan.parts[0].opts)) == [
        "kernel=" + ",".join(KERNELS), "stress=0", "priority=80"]
    assert "1 x read stressor" in workload.title and KERNELS[0] in workload.title and "60000 cycles" in cyclic.title


def test_quick_kernels_jobs_priority(tmp_path) -> None:
    plan = study_rt.make_plan(plan_args(kernels="crc,bsort,crc", jobs=50, cyclic_s=2.5, priority=0), 2, KERNELS)
    assert plan.kernels == ("crc", "bsort") and plan.jobs == 50 and plan.cyclic_loops == 2500
    argv = probe_argv(tmp_path / "probe", plan.parts[0].opts)
    assert params(argv) == ["kernel=crc,bsort", "stress=0", "priority=0"]
    assert option(argv, "--max-time") == "3"  # the quick cap per point
    quick = study_rt.make_plan(plan_args(), 2, KERNELS)
    assert quick.jobs == study_rt.QUICK_JOBS and quick.cyclic_s == study_rt.QUICK_CYCLIC_S


@pytest.mark.parametrize("text, message", [
    ("crc,nope", "unknown kernel nope"),
    (",", "no kernel named"),
])
def test_bad_kernels(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        study_rt.make_plan(plan_args(kernels=text), 2, KERNELS)


def test_one_cpu_says_why_nothing_is_stressed() -> None:
    (note,) = study_rt.make_plan(plan_args(), 1, KERNELS).notes
    assert "one CPU" in note and "skipped" in note


def test_the_quick_study_fits_five_minutes_on_two_cpus() -> None:
    """The worst case the quick plan allows (every point at its time cap),
    before the machine is asked: under the issue's 5 minutes."""
    plan = study_rt.make_plan(plan_args(), 2, KERNELS)
    worst = study_rt.worst_case_s(len(plan.kernels), len(plan.configs), plan.jobs, plan.cyclic_s, True)
    def kernels_in(p) -> int:
        kernel = next(x for x in p.opts.params if x.startswith("kernel="))
        return len(kernel.split("=", 1)[1].split(","))

    caps = sum(float(p.opts.max_time or 0) * (kernels_in(p) if p.opts.names == ("rt.workload",) else 1)
               for p in plan.parts)
    assert caps + len(plan.parts) * study_rt.PART_OVERHEAD_S == pytest.approx(worst, rel=0.01)
    assert worst < study_rt.QUICK_LIMIT_S, worst
    # the expected time, at the study's jobs of at most 1 ms: well under it
    assert 19 * 3 * plan.jobs * study_rt.JOB_SLOT_S + 3 * plan.cyclic_s < 60


def test_probe_kernels_from_the_catalogue() -> None:
    param = SimpleNamespace(name="kernel", choices=("a", "b"))
    cat = SimpleNamespace(probe_version="9", benchmarks=[SimpleNamespace(name="rt.workload", params=[param])])
    assert study_rt.probe_kernels(cat) == ("a", "b")
    with pytest.raises(UsageError, match="has no rt.workload"):
        study_rt.probe_kernels(SimpleNamespace(probe_version="0.1", benchmarks=[]))


def test_priority_option() -> None:
    assert study_rt.rt_priority("0") == 0 and study_rt.rt_priority("99") == 99
    with pytest.raises(argparse.ArgumentTypeError):
        study_rt.rt_priority("100")


# --- tables on constructed results --------------------------------------------------


def workload(seq: int, kernel: str, values: np.ndarray, stress: int = 0, op: str = "read", misses: int = 0,
             policy: str = "SCHED_FIFO 80", flags: tuple[str, ...] = ()) -> BenchResult:
    p = {"kernel": kernel, "period_us": 0, "deadline_us": 0, "priority": 80, "stress": stress, "stress_op": op,
         "stress_size": 0}
    extra = {"period_ns": 2 * float(np.median(values)), "misses": misses, "jobs": values.size,
             "unstressed_median_ns": float(np.median(values))}
    info = {"policy": policy, "mlock": "locked", "stress": "none" if not stress else f"{stress} x {op} over 64 MiB"}
    return BenchResult(seq=seq, bench="rt.workload", params=p, status="ok", unit="ns", summary=summary(values),
                       batch=1, extra=extra, record={"info": info}, flags=flags)


def skipped(seq: int, bench: str, stress: int, op: str, **p) -> BenchResult:
    return BenchResult(seq=seq, bench=bench, params={**p, "stress": stress, "stress_op": op}, status="skip",
                       reason=f"stress={stress} needs {stress} other CPUs; this machine gives 0")


def cyclic(seq: int, values: np.ndarray, stress: int = 0, op: str = "read", hist: int = 1000) -> BenchResult:
    p = {"interval_us": 1000, "priority": 80, "loops": values.size, "cpus": "", "breaktrace_us": 0, "hist_us": hist,
         "stress": stress, "stress_op": op, "stress_size": 0}
    return BenchResult(seq=seq, bench="rt.cyclic", params=p, status="ok", unit="ns", summary=summary(values),
                       batch=1, extra={"overflows": int(np.sum(values > hist * 1e3)), "cycles": values.size},
                       record={"info": {"policy": "SCHED_FIFO 80", "mlock": "locked"}})


def study_data() -> tuple[RunData, dict[int, np.ndarray]]:
    """Two kernels: crc (compute: unmoved) and matrix1 (memory-bound: a tail
    under write stress); write stress only (read skipped); rt.cyclic idle and
    under write stress."""
    rng = np.random.default_rng(4)
    samples: dict[int, np.ndarray] = {}
    results = []

    def add(r_fn, values, *a, **kw):
        r = r_fn(len(results), *a, values=values, **kw) if r_fn is not cyclic else cyclic(len(results), values, *a,
                                                                                            **kw)
        samples[r.seq] = values
        results.append(r)

    base = {"crc": 30e3 + rng.exponential(300, 1000), "matrix1": 200e3 + rng.exponential(2e3, 1000)}
    for k, x in base.items():
        add(lambda seq, values, **kw: workload(seq, k, values), x)
    for k, x in base.items():
        results.append(skipped(len(results), "rt.workload", 1, "read", kernel=k))
    crc_w = 30e3 + rng.exponential(300, 1000)
    mat_w = 204e3 + rng.exponential(2e3, 1000)
    mat_w[rng.choice(1000, 60, replace=False)] += rng.uniform(100e3, 300e3, 60)
    add(lambda seq, values, **kw: workload(seq, "crc", values, 1, "write"), crc_w)
    add(lambda seq, values, **kw: workload(seq, "matrix1", values, 1, "write", misses=12), mat_w)
    add(cyclic, 4e3 + rng.exponential(1.5e3, 5000))
    results.append(skipped(len(results), "rt.cyclic", 1, "read", loops=5000))
    stressed = 6e3 + rng.exponential(5e3, 5000)
    stressed[:3] = [1.5e6, 2.0e6, 900e3]  # two above hist_us (1000 us)
    add(cyclic, stressed, 1, "write")
    run = SimpleNamespace(machine={"preemption": "rt", "realtime": True, "kernel_hz": 1000, "isolated_cpus": ""})
    data = RunData(run=run, results=tuple(results), samples=lambda r: samples.get(r.seq))  # type: ignore[arg-type]
    return data, samples


def test_workload_table_rows() -> None:
    data, samples = study_data()
    rows = rt_analysis.workload_rows(data.results, Config(1, "write"), ["crc", "matrix1", "lms"])
    crc, mat, lms = (dict(zip(rt_analysis.WORKLOAD_HEADER, r.csv)) for r in rows)
    x = samples[5]
    assert float(mat["median_us"]) == pytest.approx(np.median(x) / 1e3, rel=1e-6)
    assert float(mat["average_us"]) == pytest.approx(np.mean(x) / 1e3, rel=1e-6)
    assert float(mat["variance_us2"]) == pytest.approx(np.var(x / 1e3, ddof=1), rel=1e-5)
    assert float(mat["max_us"]) == pytest.approx(x.max() / 1e3, rel=1e-6)
    assert float(mat["median_ci_low_us"]) < float(mat["median_us"]) < float(mat["median_ci_high_us"])
    assert mat["deadline_misses"] == "12" and float(mat["miss_percent"]) == pytest.approx(1.2)
    assert mat["jobs"] == "1000" and mat["status"] == "ok" and crc["status"] == "ok"
    assert lms["status"] == "not run" and lms["median_us"] == ""
    text = rows[1].text
    assert text[7] == "12 (1.2%)" and ".." in text[4]
    (skip_row,) = rt_analysis.workload_rows(data.results, Config(1, "read"), ["crc"])
    assert skip_row.text[-1] == "skip: stress=1 needs 1 other CPUs; this machine gives 0"


def test_ratios_and_the_finding() -> None:
    data, samples = study_data()
    configs = [Config(0, ""), Config(1, "read"), Config(1, "write")]
    rs = rt_analysis.ratios(data, configs, ["crc", "matrix1"])
    assert [(x.kernel, x.config.label) for x in rs] == [("crc", "1 x write"), ("matrix1", "1 x write")]
    crc, mat = rs
    assert mat.median == pytest.approx(np.median(samples[5]) / np.median(samples[1]))
    assert mat.variance == pytest.approx(np.var(samples[5], ddof=1) / np.var(samples[1], ddof=1))
    assert mat.max == pytest.approx(samples[5].max() / samples[1].max())
    assert mat.median < 1.05 and mat.variance > 100 and mat.max > 1.4  # the finding, in miniature
    assert mat.max_change is not None and mat.max_change.verdict == "higher"
    assert mat.variance_change is not None and mat.variance_change.verdict == "higher"
    assert crc.variance_change is not None and crc.variance_change.verdict == "no significant change"
    (line,) = rt_analysis.finding_lines(rs, configs)
    assert line.startswith("1 x write: median x") and "significantly higher for 1 (matrix1)" in line
    csv, text = rt_analysis.ratio_rows(rs)
    assert dict(zip(rt_analysis.RATIO_HEADER, csv[1]))["max_test"] == "higher"
    assert text[0][:2] == ["crc", "1 x write"]


def test_cyclic_rows_and_notes() -> None:
    data, samples = study_data()
    configs = [Config(0, ""), Config(1, "read"), Config(1, "write")]
    csv, text = rt_analysis.cyclic_rows(data.results, configs)
    idle, skip, write = (dict(zip(rt_analysis.CYCLIC_HEADER, row)) for row in csv)
    assert float(idle["max_us"]) == pytest.approx(samples[6].max() / 1e3, abs=1e-3)  # ns in the CSV
    assert float(idle["p99_us"]) == pytest.approx(np.percentile(samples[6], 99) / 1e3, abs=1e-3)
    assert float(idle["p99.9_us"]) == pytest.approx(np.percentile(samples[6], 99.9) / 1e3, abs=1e-3)
    assert write["overflows"] == "2" and write["policy"] == "SCHED_FIFO 80"
    assert skip["status"].startswith("skip: stress=1 needs")
    assert text[1][-1].startswith("skip:")
    assert rt_analysis.setting_notes(data.results) == ["stressors 1 x write: 1 x write over 64 MiB"]
    other = [workload(0, "crc", np.full(5, 1.0), policy="SCHED_OTHER: SCHED_FIFO 80 refused: needs root")]
    assert rt_analysis.setting_notes(other) == [
        "policy: SCHED_OTHER: SCHED_FIFO 80 refused: needs root: these latencies are not a real-time thread's"]
    x = np.linspace(1e4, 2e4, 50)
    held, unset = cyclic(0, x), cyclic(1, x, 1, "write")
    held.record["info"]["pm_qos"] = "/dev/cpu_dma_latency held at 0 us"
    unset.record["info"]["pm_qos"] = "not set: /dev/cpu_dma_latency: Permission denied (needs root)"
    assert rt_analysis.setting_notes([held, unset])[0] == (
        "rt.cyclic pm_qos: not set: /dev/cpu_dma_latency: Permission denied (needs root): deep CPU idle states may "
        "add to the wake-up latency")


def test_render_has_a_table_per_configuration() -> None:
    data, _ = study_data()
    plan = study_rt.make_plan(plan_args(kernels="crc,matrix1"), 2, KERNELS)
    tables, text = study_rt.render(data, plan)
    assert [name for name, _ in tables] == ["rt-workload-stress0.csv", "rt-workload-stress1-read.csv",
                                           "rt-workload-stress1-write.csv", "rt-study-ratios.csv", "rt-cyclic.csv",
                                           "rt-study.txt"]
    for title in ("rt.workload, no stress", "rt.workload, 1 x read stressor on other CPUs",
                  "rt.workload, 1 x write stressor on other CPUs", "stressed / unstressed, per kernel",
                  "rt.cyclic: wake-up latency"):
        assert title in text
    assert "machine: preemption rt, realtime yes, kernel_hz 1000, isolated_cpus none" in text
    assert "skip: stress=1 needs 1 other CPUs" in text
    assert "[precision-unmet]" not in text
    x = np.linspace(1e4, 2e4, 50)
    flagged = RunData(run=data.run, results=(workload(0, "crc", x, flags=("precision-unmet",)),),
                      samples=lambda r: x)
    _, text = study_rt.render(flagged, study_rt.make_plan(plan_args(kernels="crc"), 2, KERNELS))
    assert "ok [precision-unmet]" in text and "note: [precision-unmet]: the study takes a fixed number" in text


# --- figures ------------------------------------------------------------------


def test_histogram_is_cyclictests() -> None:
    x = np.array([0.0, 999.0, 1000.0, 1500.0, 2999.9, 5000.0, 7000.0, 9999.0])  # ns
    counts, over = rt_figures.histogram(x, 5)
    assert counts.tolist() == [2, 2, 1, 0, 0] and over == 3  # [0,1) [1,2) [2,3) us; 5, 7, 9.999 us over
    rng = np.random.default_rng(1)
    y = rng.exponential(20e3, 10_000)
    counts, over = rt_figures.histogram(y, 100)
    ref, _ = np.histogram(y / 1e3, bins=np.arange(101))
    assert counts.tolist() == ref.tolist() and over == int(np.sum(y >= 100e3))


def test_figures_drawn_and_readable() -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from .test_figures_readable import assert_inside

    data, _ = study_data()
    named = rt_figures.figures(data)
    assert [f.name for f in named] == ["rt-workload-distributions", "rt-deadline-misses", "rt-cyclic-histogram"]
    for f in named:
        FigureCanvasAgg(f.figure)
        f.figure.draw_without_rendering()
        assert_inside(f.figure, f.figure.canvas.get_renderer())
    dist = named[0].figure
    assert [ax.get_title() for ax in dist.axes if ax.get_visible()] == ["crc", "matrix1"]
    assert [t.get_text() for t in dist.axes[0].get_xticklabels()] == ["no stress", "1xwrite"]  # skipped: absent
    hist = named[2].figure.axes[0]
    assert hist.get_yscale() == "log" and "1 us bins" in hist.get_xlabel()
    assert "2" in [t.get_text() for t in hist.texts]  # the overflow bar's count
    assert "no stress (idle)" in hist.get_legend().get_texts()[0].get_text()


def test_no_figure_from_skips_only() -> None:
    results = (skipped(0, "rt.workload", 1, "read", kernel="crc"), skipped(1, "rt.cyclic", 1, "read"))
    data = RunData(run=SimpleNamespace(machine={}), results=results, samples=lambda r: None)  # type: ignore[arg-type]
    assert rt_figures.figures(data) == []


def test_no_misses_is_said_in_the_figure() -> None:
    x = np.linspace(1e4, 2e4, 50)
    data = RunData(run=SimpleNamespace(machine={}), results=(workload(0, "crc", x),),  # type: ignore[arg-type]
                   samples=lambda r: x)
    fig = rt_figures.misses_figure(data)
    assert fig is not None and "no job missed its deadline" in [t.get_text() for t in fig.figure.axes[0].texts]


# --- the FakeProbe against the real probe -------------------------------------------


def test_fake_rt_family_matches_the_real_catalogue(probe: str) -> None:
    doc = json.loads(run_probe(probe, "list", "--json", jsonl=False).stdout)
    real = {b["name"]: b for b in doc["benchmarks"] if b["family"] == "rt"}
    if not real:
        pytest.skip("this probe has no rt family yet (the lead's branch not merged)")
    for name, own in RT.items():
        got = {p["name"]: p for p in real[name]["params"]}
        assert set(got) == set({**own, **RT_COMMON}), name
    kernel = next(p for p in real["rt.workload"]["params"] if p["name"] == "kernel")
    assert tuple(kernel["choices"]) == RT_KERNELS
