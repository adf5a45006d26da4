"""One wording per cause of a skip (issue 28): the same cause, in whatever
benchmark, gives the same reason, so a run's skips read alike and a reader
of many runs can group them. The shared causes are worded in one place each:
a second CPU (bench.c, osm_skip_one_cpu) and thp=1 (bench/mem_util.c,
osm_thp_check and osm_thp_granted)."""
from __future__ import annotations

import os
import re
from pathlib import Path

from probe_helpers import REPO, TINY, run_probe

SRC = REPO / "probe" / "src"
# The cause's words -> the one file that may say them in a skip.
CAUSES = {
    "needs a second CPU": "bench.c",
    "transparent huge pages": "bench/mem_util.c",
    "got transparent huge pages": "bench/mem_util.c",
}
FAIL_CALL = re.compile(r"osm_fail\s*\(\s*ctx\s*,\s*OSM_SKIP\s*,((?:\s*\"(?:[^\"\\]|\\.)*\")+)")


def skip_strings(path: Path) -> list[str]:
    """The format strings of the file's osm_fail(ctx, OSM_SKIP, ...) calls, joined."""
    return ["".join(re.findall(r"\"((?:[^\"\\]|\\.)*)\"", m.group(1)))
            for m in FAIL_CALL.finditer(path.read_text())]


def test_each_shared_cause_is_worded_in_one_place():
    where: dict[str, set[str]] = {}
    for path in sorted(SRC.rglob("*.c")):
        rel = path.relative_to(SRC).as_posix()
        for text in skip_strings(path):
            for cause in CAUSES:
                if cause in text:
                    where.setdefault(cause, set()).add(rel)
    assert where == {cause: {home} for cause, home in CAUSES.items()}, where


def test_a_second_cpu_is_one_reason_in_every_family(probe):
    """Under a one-CPU affinity mask, cross_cpu (ctxsw, ipc, task threads,
    net) and the fork study's migrate=1 skip with the same words after the
    setting they name."""
    one = min(os.sched_getaffinity(0))
    names = ["ctxsw.futex", "ctxsw.pipe", "ipc.pipe_lat", "task.thread_create", "net.tcp_rtt"]
    r = run_probe(probe, "run", *names, "--param", "placement=cross_cpu", *TINY,
                  preexec_fn=lambda: os.sched_setaffinity(0, {one}))
    m = run_probe(probe, "run", "task.fork", "--param", "migrate=1", *TINY,
                  preexec_fn=lambda: os.sched_setaffinity(0, {one}))
    assert r.rc == 0 and m.rc == 0, r.stderr + m.stderr
    reasons = {x["bench"]: x["reason"] for x in r.of_type("skip") + m.of_type("skip")}
    assert set(reasons) == set(names) | {"task.fork"}, reasons
    cause = f" needs a second CPU, but the probe may use only CPU {one} here"
    tails = {b: why.split(cause, 1) for b, why in reasons.items()}
    assert all(len(t) == 2 for t in tails.values()), reasons
    assert {t[0] for b, t in tails.items() if b != "task.fork"} == {"placement=cross_cpu"}
    assert tails["task.fork"][0] == "migrate=1"
    assert len({t[1] for b, t in tails.items() if b != "task.fork"}) == 1, reasons
    assert tails["task.fork"][1].replace("migrate=0", "placement=same_cpu") == tails["net.tcp_rtt"][1]
