"""osmeter noise's figures (osmeter.noise): the spread and robust SD of the
runs' medians against numpy and scipy, the smallest change compare
resolves checked against compare's own code (a change just above it is
significant in every A/A comparison, one just below it is not in some),
the analysis of stored runs, and compare's caveat with and without a noise
result of the same machine."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from osmeter import compare as cmp
from osmeter import noise
from osmeter.comparing import Outcome, compare_runs
from osmeter.report import compare_text as ct
from osmeter.report import noise_text
from osmeter.differences import run_differences
from osmeter.model import BenchResult, NewRun
from osmeter.repeats import Uncertainty
from osmeter.stats import summary
from osmeter.store import open_store

from ..synthetic import MACHINE, META, noisy


@pytest.mark.parametrize("seed", range(5))
def test_spread_and_robust_sd_agree_with_numpy_and_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = 100.0 * rng.lognormal(0.0, 0.05, int(rng.integers(2, 21)))
    assert noise.spread(m) == pytest.approx(float(np.max(m) / np.min(m) - 1), rel=1e-12)
    want = float(sps.median_abs_deviation(np.log(m), scale="normal"))
    assert noise.robust_rsd(m) == pytest.approx(want, rel=1e-4)  # 1.4826 against 1/Phi^-1(3/4) = 1.482602...


def test_spread_needs_two_positive_medians() -> None:
    assert math.isnan(noise.spread([5.0])) and math.isnan(noise.robust_rsd([5.0]))
    assert math.isnan(noise.spread([5.0, 0.0])) and math.isnan(noise.robust_rsd([-1.0, 2.0]))
    assert noise.spread([2.0, 2.0]) == 0.0 and noise.robust_rsd([2.0, 2.0]) == 0.0


def _side(median: float, log_se: float, df: float = 2.0) -> cmp.Instance:
    return cmp.Instance("x.y", {}, "ns", median, np.empty(0), Uncertainty(log_se, df, "repetitions"))


def _scaled(x: cmp.Instance, factor: float) -> cmp.Instance:
    """The same instance after a real change by `factor`: its median and its spread with it."""
    assert x.uncertainty is not None
    return cmp.Instance(x.bench, x.params, x.unit, x.median * factor, x.samples, x.uncertainty)


def _significant(base: cmp.Instance, run: cmp.Instance, threshold: float) -> bool:
    return cmp.compare_instance(base, run, 2, 1, threshold).significant


def _a_a(seed: int) -> list[cmp.Instance]:
    """Three runs of one instance whose medians wobble by a few percent, each with its repetitions' error."""
    rng = np.random.default_rng(seed)
    return [_side(100.0 * math.exp(rng.normal(0, 0.03)), float(rng.uniform(0.002, 0.02))) for _ in range(3)]


@pytest.mark.parametrize(("seed", "threshold"), [(s, t) for s in range(4) for t in (0.02, 0.05, 0.10)])
def test_the_change_resolved_is_compares_own_limit(seed: int, threshold: float) -> None:
    """Scaled by just more than `resolves`, the run is significant against the baseline in every pair,
    both ways round and in both directions; by just less, compare misses it in some pair."""
    runs = _a_a(seed)
    pairs = list(itertools.permutations(runs, 2))
    found = [cmp.compare_instance(a, b, 2, 1, threshold) for a, b in itertools.combinations(runs, 2)]
    bounds = noise.Bounds.of([(c.ratio, c.ci_low, c.ci_high) for c in found])
    assert bounds is not None
    up, down = bounds.up(threshold), bounds.down(threshold)
    assert bounds.resolves(threshold) == max(up, down) >= threshold
    for a, b in pairs:
        assert _significant(a, _scaled(b, (1 + up) * (1 + 1e-6)), threshold)
        assert _significant(a, _scaled(b, (1 - down) * (1 - 1e-6)), threshold)
    assert not all(_significant(a, _scaled(b, (1 + up) * (1 - 1e-4)), threshold) for a, b in pairs)
    assert not all(_significant(a, _scaled(b, (1 - down) * (1 + 1e-4)), threshold) for a, b in pairs)


def test_the_bootstrap_pairs_too(tmp_path: Path) -> None:
    """Runs of one repetition (the bootstrap's interval): a change beyond `resolves` is found in
    every pair as compared, whichever run is scaled."""
    rng = np.random.default_rng(7)
    samples = [noisy(rng, 100.0 * f, 400, 0.05) for f in (1.0, 1.02, 0.985)]
    runs = [cmp.Instance("x.y", {}, "ns", float(np.median(s)), s) for s in samples]
    found = [cmp.compare_instance(a, b, 2, 1) for a, b in itertools.combinations(runs, 2)]
    bounds = noise.Bounds.of([(c.ratio, c.ci_low, c.ci_high) for c in found])
    assert bounds is not None
    for factor in ((1 + bounds.up(0.05)) * 1.001, (1 - bounds.down(0.05)) * 0.999):
        for a, b in itertools.combinations(runs, 2):
            changed = cmp.Instance("x.y", {}, "ns", b.median * factor, b.samples * factor)
            assert cmp.compare_instance(a, changed, 2, 1).significant


def test_bounds_without_a_usable_pair() -> None:
    assert noise.Bounds.of([]) is None
    assert noise.Bounds.of([(math.nan, math.nan, math.nan), (1.0, 0.0, 1.1)]) is None


# --- stored runs ------------------------------------------------------------

CALL = ("cpu.call", {"args": 3}, "ns")
NULL = ("syscall.null", {}, "ns")
FORK = ("task.fork", {"touched_mib": 1}, "ns")


def _store_runs(store_path: Path, runs: list[list[tuple]], machine: dict | None = None,
                tags: list[dict] | None = None) -> list[int]:
    """Complete runs of these (bench, params, unit, samples) in one opening of the store
    (synthetic.add_run's, with a noise tag in each run's meta when `tags`)."""
    store = open_store(str(store_path), create=True)
    ids = []
    try:
        for i, specs in enumerate(runs):
            meta = dict(META, suite="standard", **({noise.TAG_KEY: tags[i]} if tags else {}))
            run_id = store.create_run(NewRun(label=tags[i]["label"] if tags else None,
                                             start_time="2026-11-22T08:00:00Z", source="import",
                                             osmeter_version="0.1.0", probe_version="0.1.0", suite="standard",
                                             argv=["synthetic"], params={}, machine=dict(machine or MACHINE),
                                             meta=meta))
            for seq, (bench, params, unit, x) in enumerate(specs):
                store.add_result(run_id, BenchResult(seq=seq, bench=bench, params=dict(params), status="ok",
                                                     unit=unit, summary=summary(x), batch=1), x)
            store.finish_run(run_id, "complete", "2026-11-22T08:01:00Z", None)
            ids.append(run_id)
    finally:
        store.close()
    return ids


def _noise_runs(store_path: Path, factors: list[dict[str, float]], machine: dict | None = None,
                seed: int = 0) -> list[int]:
    """Runs stored as `osmeter noise` tags them; factors[i][bench] scales that run's instance."""
    rng = np.random.default_rng(seed)
    runs = [[(b, p, u, noisy(rng, base * scale.get(b, 1.0), 1000, 0.01))
             for (b, p, u), base in ((CALL, 1.0), (NULL, 50.0), (FORK, 90_000.0))] for scale in factors]
    tags = [{"series": "n", "index": i, "runs": len(factors), "label": f"n-{i}"} for i in range(1, len(factors) + 1)]
    return _store_runs(store_path, runs, machine, tags)


def _analysed(store_path: Path, ids: list[int]) -> dict:
    store = open_store(str(store_path), create=False)
    try:
        runs = [store.run(str(i)) for i in ids]
        doc = noise.document(noise.analyse(store, runs), runs, cmp.DEFAULT_THRESHOLD)
        store.set_run_meta(ids[-1], noise.RESULT_KEY, doc)
        return doc
    finally:
        store.close()


def test_analysis_of_stored_runs(store_path: Path) -> None:
    """cpu.call flips by 20 % in the second run (compare's false alarm, listed); the others are steady.
    The tag and the result live in the runs' meta, which compare's 'what differs' does not list."""
    ids = _noise_runs(store_path, [{}, {"cpu.call": 1.2}, {}])
    doc = _analysed(store_path, ids)
    assert [r["id"] for r in doc["runs"]] == ids and doc["run"] == ids[-1]
    assert doc["comparisons"] == 9  # 3 instances x 3 pairs
    rows = {x["bench"]: x for x in doc["instances"]}
    call = rows["cpu.call"]
    medians = list(call["medians"].values())
    assert call["spread"] == pytest.approx(max(medians) / min(medians) - 1) and call["spread"] > 0.15
    assert {(a["baseline"], a["run"]) for a in call["false_alarms"]} == {(ids[0], ids[1]), (ids[1], ids[2])}
    assert call["resolves"] > call["spread"]  # beyond what the identical runs differed by
    for bench in ("syscall.null", "task.fork"):
        assert rows[bench]["false_alarms"] == [] and rows[bench]["resolves"] < 0.10
    assert doc["false_alarms"] == 2
    # two of three instances agree within 10 % (cpu.call's 20 % does not); the shares are of instances
    spreads = sorted(x["spread"] for x in doc["instances"])
    for w, share in doc["within"].items():
        assert share == pytest.approx(sum(s <= float(w) for s in spreads) / 3)
    assert doc["within"]["0.1"] == pytest.approx(2 / 3)
    assert "instances whose run medians agree within 2%: " in noise_text.render_text(doc)
    verdicts = {f["family"]: f["verdict"] for f in doc["families"]}
    assert verdicts["cpu"].startswith("cpu: 1 instance, median spread ") and "2 false alarms" in verdicts["cpu"]
    json.dumps(doc, allow_nan=False)  # storable as it is
    store = open_store(str(store_path), create=False)
    try:
        runs = [store.run(str(i)) for i in ids]
    finally:
        store.close()
    assert runs[-1].meta[noise.RESULT_KEY] == doc and runs[-1].meta["command"] == "run"  # the probe's meta kept
    assert [noise.RESULT_KEY in r.meta for r in runs] == [False, False, True]
    assert [r.meta[noise.TAG_KEY]["index"] for r in runs] == [1, 2, 3]
    assert run_differences(runs) == []


def _compare(store_path: Path, a: int, b: int) -> Outcome:
    store = open_store(str(store_path), create=False)
    try:
        outcome = compare_runs(store, [store.run(str(a)), store.run(str(b))], cmp.DEFAULT_THRESHOLD)
        noise.apply(outcome, store, cmp.DEFAULT_THRESHOLD)
        return outcome
    finally:
        store.close()


def _pair(store_path: Path, machine: dict | None = None) -> tuple[int, int]:
    """Two runs: cpu.call 8 % slower in the second (significant, below its noise), task.fork 40 % (above)."""
    rng = np.random.default_rng(11)
    a, b = _store_runs(store_path, [[(*CALL, noisy(rng, f_call, 1000, 0.01)), (*NULL, noisy(rng, 50.0, 1000, 0.01)),
                                     (*FORK, noisy(rng, 90_000.0 * f_fork, 1000, 0.01))]
                                    for f_call, f_fork in ((1.0, 1.0), (1.08, 1.4))], machine)
    return a, b


def test_compare_caveat_with_a_noise_result_of_this_machine(store_path: Path) -> None:
    """cpu.call 8 % slower (significant, below the 20 % it flipped by between identical runs): the
    caveat, in the comparison, the text, the JSON and the page; task.fork 40 % slower: none."""
    _analysed(store_path, _noise_runs(store_path, [{}, {"cpu.call": 1.2}, {}]))
    a, b = _pair(store_path)
    outcome = _compare(store_path, a, b)
    found = {c.bench: c for c in outcome.comparisons}
    assert found["cpu.call"].significant and found["task.fork"].significant
    assert found["cpu.call"].noise.startswith("below this machine's noise (noise run 3: +")
    assert found["task.fork"].noise == "" and found["syscall.null"].noise == ""
    assert outcome.deltas(found["cpu.call"]) == [] and outcome.key_of(found["cpu.call"])[0] == "cpu.call"
    doc = ct.document(outcome, cmp.DEFAULT_THRESHOLD, None)
    assert doc["noise"]["run"] == 3 and doc["noise"]["significant_below"] == 1
    assert {c["bench"]: bool(c["noise_caveat"]) for c in doc["comparisons"]} == {
        "cpu.call": True, "syscall.null": False, "task.fork": False}
    text = ct.render_text(outcome, cmp.DEFAULT_THRESHOLD)
    assert "slower [below this machine's noise (noise run 3: +" in text
    assert "1 significant change below this machine's noise" in text
    page = ct.heatmap_file(outcome, cmp.DEFAULT_THRESHOLD, "html")
    assert isinstance(page, str) and 'class="flag noise"' in page


def test_compare_without_a_noise_result_of_this_machine(store_path: Path) -> None:
    """A noise result of another machine changes nothing: the comparisons, the text, the JSON's keys."""
    a, b = _pair(store_path)
    before = _compare(store_path, a, b)
    _analysed(store_path, _noise_runs(store_path, [{}, {"cpu.call": 1.2}, {}],
                                      machine={**MACHINE, "hostname": "elsewhere"}))
    after = _compare(store_path, a, b)
    assert before.comparisons == after.comparisons and after.noise is None
    assert all(c.noise == "" for c in after.comparisons) and any(c.significant for c in after.comparisons)
    assert ct.render_text(before, 0.05) == ct.render_text(after, 0.05)
    assert ct.document(before, 0.05, None) == ct.document(after, 0.05, None)
    assert "noise" not in ct.document(after, 0.05, None)


@pytest.mark.slow  # about 2 s (compare's command and its imports); CI runs it
def test_compare_command_uses_the_noise_result(store_path: Path, cli) -> None:
    _analysed(store_path, _noise_runs(store_path, [{}, {"cpu.call": 1.2}, {}]))
    a, b = _pair(store_path)
    r = cli("compare", str(a), str(b), "--json")
    assert r.code == 0 and json.loads(r.out)["noise"]["significant_below"] == 1


def test_the_caveat_takes_the_changes_direction(store_path: Path) -> None:
    """cpu.call tripled between identical runs: a rise must pass about 3.2x, a fall only about 68 %
    (the same factor). A 4x fall (-75 %) is beyond the noise although below the rise's limit; a 2x
    fall (-50 %) and a 1.5x rise are below it, each shown with its own direction's limit."""
    _analysed(store_path, _noise_runs(store_path, [{}, {"cpu.call": 3.0}, {}]))
    rng = np.random.default_rng(5)
    base, *others = _store_runs(store_path, [[(*CALL, noisy(rng, f, 1000, 0.01))] for f in (1.0, 0.25, 0.5, 1.5)])
    found = [_compare(store_path, base, other).comparisons[0] for other in others]
    assert all(c.significant for c in found)
    four_fold, halved, rise = (c.noise for c in found)
    assert four_fold == ""
    assert halved.startswith("below this machine's noise (noise run 3: -6") and halved.endswith("%)")
    assert rise.startswith("below this machine's noise (noise run 3: 3.") and rise.endswith("x)")


def test_the_verdict_and_the_text_fit_100_columns(store_path: Path) -> None:
    doc = _analysed(store_path, _noise_runs(store_path, [{}, {"cpu.call": 3.0}, {}]))
    verdicts = {f["family"]: f["verdict"] for f in doc["families"]}
    assert verdicts["cpu"].startswith("cpu: 1 instance, median spread 3x; compare resolves a change over 3.")
    assert "worst cpu.call args=3 (spread 3x); 2 false alarms" in verdicts["cpu"]
    many = noise.family_verdict(dict(doc["families"][0], instances=12))
    assert "x in 90% of them; worst" in many
    text = noise_text.render_text(doc)
    assert max(len(line) for line in text.splitlines()) <= noise_text.WIDTH
    assert "    worst cpu.call args=3 (spread 3x); 2 false alarms\n" in text  # a verdict wrapped between pieces
