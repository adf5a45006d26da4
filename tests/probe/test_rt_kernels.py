"""The rt study's workload kernels (probe/src/bench/rt_kernels*.c,
docs/methods/rt-kernels.md) against their independent Python reference
(rt_kernels_ref.py): the checksums the C table expects are the reference's,
the reference itself computes what the descriptions say, and, once the probe
has rt.workload, every kernel's job in the probe returns the reference's
checksum. (That the C jobs return the table's checksums, natively and under
qemu, is probe/tests/test_rt_kernels.c.)"""
from __future__ import annotations

import json
import math
import random
import re

import pytest
import rt_kernels_ref as ref
from probe_helpers import REPO, run_probe

TABLE = REPO / "probe" / "src" / "bench" / "rt_kernels.c"
# One table row: {"name", "description", ws_bytes expression, run, 0x........u},
ROW = re.compile(r'\{\s*"(\w+)",\s*"[^"]*",[^{}]*?\b(0x[0-9a-fA-F]{8})u?\s*\}', re.DOTALL)


def table_rows() -> list[tuple[str, int]]:
    text = TABLE.read_text()
    body = text[text.index("osm_rt_kernels[] = {"):]
    body = body[:body.index("\n};")]
    return [(name, int(value, 16)) for name, value in ROW.findall(body)]


# --- (a) the C table's expected checksums are the reference's ----------------------


def test_the_table_lists_exactly_the_19_kernels():
    names = [name for name, _ in table_rows()]
    assert names == list(ref.NAMES)
    assert len(set(names)) == 19


@pytest.mark.parametrize("name", ref.NAMES)
def test_expected_checksum_is_the_reference(name):
    expected = dict(table_rows())[name]
    assert expected == ref.checksum(name), (
        f"{name}: rt_kernels.c expects 0x{expected:08x}, the reference computes 0x{ref.checksum(name):08x}")


def test_checksums_mapping_covers_every_kernel():
    assert set(ref.CHECKSUMS) == set(ref.NAMES)
    assert dict(ref.CHECKSUMS.items()) == {n: ref.checksum(n) for n in ref.NAMES}


# --- the reference's own building blocks ----------------------------------------------


def test_fnv1a_and_lcg_known_values():
    assert ref.fnv1a(b"") == 0x811C9DC5
    assert ref.fnv1a(b"a") == 0xE40C292C
    assert ref.fnv1a(b"foobar") == 0xBF9CF968
    g = ref.Lcg("x")
    g.x = 0  # Numerical Recipes' quick generator from 0
    assert [g.next(), g.next()] == [1013904223, 1196435762]
    assert ref.encode([1.0, ref.U32(-1), ref.U64(1)]) == (
        bytes.fromhex("000000000000f03f") + b"\xff\xff\xff\xff" + b"\x01" + bytes(7))


def test_unit_draws_are_exact_in_minus_one_to_one():
    g = ref.Lcg("unit")
    for _ in range(1000):
        u = g.unit()
        assert -1.0 <= u < 1.0 and (u * 2**23).is_integer()


def test_inversion_count_is_the_pairs_out_of_order():
    rng = random.Random(7)
    for n in (0, 1, 2, 5, 50, 200):
        a = [rng.randrange(20) for _ in range(n)]
        brute = sum(a[i] > a[j] for i in range(n) for j in range(i + 1, n))
        assert ref.inversions(a) == brute


# --- the reference computes what the descriptions say -------------------------------


def test_jfdctint_is_eight_times_the_orthonormal_dct():
    g = ref.Lcg("dct-check")
    for _ in range(4):
        block = [g.below(256) - 128 for _ in range(64)]
        out = ref.jfdct_block(block)
        for u in range(8):
            for v in range(8):
                cu = math.sqrt(0.5) if u == 0 else 1.0
                cv = math.sqrt(0.5) if v == 0 else 1.0
                exact = 0.25 * cu * cv * sum(
                    block[8 * y + x] * math.cos((2 * y + 1) * u * math.pi / 16)
                    * math.cos((2 * x + 1) * v * math.pi / 16) for y in range(8) for x in range(8))
                assert abs(out[8 * u + v] - 8 * exact) <= 2, (u, v, out[8 * u + v], 8 * exact)


def test_ludcmp_solves_the_system():
    g = ref.Lcg("ludcmp")
    n = 80
    a = [[g.unit() for _ in range(n)] for _ in range(n)]
    for i in range(n):
        a[i][i] += n
    b = [g.unit() for _ in range(n)]
    x = ref.results("ludcmp")[:n]
    for i in range(n):
        assert abs(sum(a[i][j] * x[j] for j in range(n)) - b[i]) < 1e-12


def test_minver_inverts_and_its_determinant_is_the_lu_one():
    g = ref.Lcg("minver")
    n = 48
    a = [[g.unit() for _ in range(n)] for _ in range(n)]
    res = ref.results("minver")
    inv = [res[i * n:(i + 1) * n] for i in range(n)]
    for i in range(n):
        for j in range(n):
            s = sum(a[i][k] * inv[k][j] for k in range(n))
            assert abs(s - (1.0 if i == j else 0.0)) < 1e-9
    det, pivots = res[n * n], res[n * n + 1:]
    assert len(pivots) == n and all(k <= p < n for k, p in enumerate(pivots))
    # log|det| from an independent elimination (numpy)
    np = pytest.importorskip("numpy")
    sign, logdet = np.linalg.slogdet(np.array(a))
    assert sign == math.copysign(1.0, det) and abs(logdet - math.log(abs(det))) < 1e-9


def test_st_statistics():
    r = ref.results("st")
    sa, sb, ma, mb, va, vb, da, db, corr = r
    assert ma == sa / 8192 and mb == sb / 8192
    assert da == math.sqrt(va) and db == math.sqrt(vb)
    # b = 0.75 u + 0.25 v of independent uniforms: corr = 3 / sqrt(10)
    assert abs(corr - 3 / math.sqrt(10)) < 0.02
    assert abs(va - 1 / 3) < 0.02


def test_recursion_counts_are_the_calls_made():
    calls = [0]

    def fib(n):
        calls[0] += 1
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    def ack(m, n):
        calls[0] += 1
        if m == 0:
            return n + 1
        if n == 0:
            return ack(m - 1, 1)
        return ack(m - 1, ack(m, n - 1))

    f = fib(22)
    fc, calls[0] = calls[0], 0
    a = ack(2, 40)
    assert [int(v) for v in ref.results("recursion")] == [f, fc, a, calls[0]]


def test_prime_factors_are_smallest_factors():
    r = ref.results("prime")
    g = ref.Lcg("prime")
    factors, count = r[:-1], r[-1]
    for f in factors:
        n = (1 << 24) | (g.next() >> 8) | 1
        assert n % f == 0 and all(n % d for d in range(3, min(f, math.isqrt(n) + 1), 2))
        assert (f == n) == all(pow(w, n - 1, n) == 1 for w in (2, 3, 5, 7, 11, 13))
    assert count == sum(f > (1 << 24) for f in factors)


def test_sorts_sort_and_count_inversions():
    for name, n in (("bsort", 8192), ("insertsort", 16384), ("bitonic", 8192)):
        r = [int(v) for v in ref.results(name)]
        keys = r[:n]
        assert keys == sorted(keys) and len(keys) == n
        assert len(r) == n + (0 if name == "bitonic" else 1)


def test_every_kernel_has_results():
    for name in ref.NAMES:
        assert ref.results(name), name


# --- (b) the probe's rt.workload returns the reference's checksum ---------------------


@pytest.fixture(scope="module")
def workload_probe(probe):
    cat = json.loads(run_probe(probe, "list", "--json", jsonl=False).stdout)
    if not any(b["name"] == "rt.workload" for b in cat["benchmarks"]):
        pytest.skip("rt.workload not in this probe yet")
    return probe


@pytest.mark.parametrize("name", ref.NAMES)
def test_workload_job_checksum_is_the_reference(workload_probe, name):
    r = run_probe(workload_probe, "run", "rt.workload", "--param", f"kernel={name}",
                  "--param", "period_us=2000", "--param", "priority=0",
                  "--min-samples", "3", "--max-samples", "3", "--min-time", "0", "--quiet")
    assert r.rc == 0, r.stderr
    res = r.result("rt.workload", kernel=name)
    assert res["info"]["checksum"] == f"0x{ref.checksum(name):08x}"
