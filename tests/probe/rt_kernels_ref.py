"""Independent Python reference of the rt study's 19 workload kernels
(docs/methods/rt-kernels.md): every kernel's checksum, computed from the
kernels' descriptions, never from the C code (probe/src/bench/rt_kernels*.c).

Where Python has an independent way to the same results it is used: sorted()
for the three sorts, bisect for the lookups, zlib.crc32 and binascii.crc_hqx
for the CRCs, math.factorial for n!, a merge sort for inversion counts,
closed forms and memoised recurrences for the call counts, a sieve for the
smallest factors. The floating-point kernels must do the same IEEE 754
operations in the same order as C (each Python float operation is one
correctly rounded double operation, as in C without FP contraction); there
the reference is the description written again.

    checksum(name) -> int     one kernel's checksum
    CHECKSUMS                 {name: checksum} for all 19 (computed lazily)
    results(name) -> list     the kernel's result values, in hash order
"""
from __future__ import annotations

import binascii
import bisect
import functools
import math
import struct
import zlib
from collections.abc import Callable, Iterator

NAMES = ("bsort", "binarysearch", "bitonic", "complex_updates", "countnegative", "crc", "factorial",
         "filterbank", "fir2dim", "iir", "insertsort", "jfdctint", "lms", "ludcmp", "matrix1",
         "minver", "prime", "recursion", "st")

M32 = 0xFFFFFFFF

# --- checksum: FNV-1a 32 over typed values, little-endian --------------------------


class U32(int):
    """A value hashed as 4 bytes (two's complement for negatives)."""


class U64(int):
    """A value hashed as 8 bytes."""


def fnv1a(data: bytes, h: int = 0x811C9DC5) -> int:
    for b in data:
        h = ((h ^ b) * 0x01000193) & M32
    return h


def encode(values: list) -> bytes:
    """float -> IEEE 754 binary64 little-endian; U64 -> 8 bytes; int/U32 -> 4."""
    out = bytearray()
    for v in values:
        if isinstance(v, float):
            out += struct.pack("<d", v)
        elif isinstance(v, U64):
            out += (int(v) & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little")
        else:
            out += (int(v) & M32).to_bytes(4, "little")
    return bytes(out)


# --- inputs: the LCG ---------------------------------------------------------------


class Lcg:
    """x' = 1664525 x + 1013904223 mod 2^32, seeded with FNV-1a of the name."""

    def __init__(self, name: str):
        self.x = fnv1a(name.encode())

    def next(self) -> int:
        self.x = (self.x * 1664525 + 1013904223) & M32
        return self.x

    def below(self, n: int) -> int:
        return (self.next() * n) >> 32

    def unit(self) -> float:
        return ((self.next() >> 8) - (1 << 23)) / float(1 << 23)


def inversions(a: list[int]) -> int:
    """Pairs i < j with a[i] > a[j], by merge sort."""
    def sort(s: list[int]) -> tuple[list[int], int]:
        if len(s) < 2:
            return s, 0
        left, nl = sort(s[: len(s) // 2])
        right, nr = sort(s[len(s) // 2:])
        merged, n, i = [], nl + nr, 0
        for r in right:
            k = bisect.bisect_right(left, r, i)
            merged += left[i:k]
            n += len(left) - k
            i = k
            merged.append(r)
        merged += left[i:]
        return merged, n
    return sort(a)[1]


# --- integer kernels ----------------------------------------------------------------


def bsort() -> list:
    g = Lcg("bsort")
    a = [4 * i + g.below(32) for i in range(8192)]
    return [U32(v) for v in sorted(a)] + [U32(inversions(a))]


def insertsort() -> list:
    g = Lcg("insertsort")
    a = [8 * i + g.below(256) for i in range(16384)]
    return [U32(v) for v in sorted(a)] + [U32(inversions(a))]


def bitonic() -> list:
    g = Lcg("bitonic")
    return [U32(v) for v in sorted(g.next() for _ in range(8192))]


def binarysearch() -> list:
    g = Lcg("binarysearch")
    n = 16384
    keys, vals = [], []
    for i in range(n):
        keys.append(4 * i + g.below(4))
        vals.append(g.next())
    out, found = [], 0
    for _ in range(2048):
        q = g.below(4 * n)
        i = bisect.bisect_left(keys, q)
        if i < n and keys[i] == q:
            out.append(U32(vals[i]))
            found += 1
        else:
            out.append(U32(M32))
    return out + [U32(found)]


def countnegative() -> list:
    g = Lcg("countnegative")
    n = 256
    out, tot = [], [0, 0, 0, 0]
    rows = [[g.below(2001) - 1000 for _ in range(n)] for _ in range(n)]
    for row in rows:
        neg = [v for v in row if v < 0]
        pos = [v for v in row if v > 0]
        r = [len(neg), sum(neg), len(pos), sum(pos)]
        out += [U32(v) for v in r]
        tot = [t + v for t, v in zip(tot, r)]
    return out + [U32(v) for v in tot]


def crc() -> list:
    g = Lcg("crc")
    msg = bytes(g.next() >> 24 for _ in range(8192))
    out = [U32(zlib.crc32(msg[b:b + 1024])) for b in range(0, len(msg), 1024)]
    return out + [U32(zlib.crc32(msg)), U32(binascii.crc_hqx(msg, 0xFFFF))]


def factorial() -> list:
    f = math.factorial(1000)
    limbs = []
    while f:
        limbs.append(U32(f & M32))
        f >>= 32
    return [U32(len(limbs))] + limbs + [U64(sum(math.factorial(k) for k in range(21)))]


# JPEG's islow DCT: 13-bit constants of the LL&M factors.
_FIX = {c: int(c * 8192 + 0.5) for c in (
    0.298631336, 0.390180644, 0.541196100, 0.765366865, 0.899976223, 1.175875602, 1.501321110,
    1.847759065, 1.961570560, 2.053119869, 2.562915447, 3.072711026)}


def _descale(v: int, n: int) -> int:
    return (v + (1 << (n - 1))) >> n  # Python's >> floors, as C's rt_asr


def _fdct8(d: list[int], second: bool) -> list[int]:
    f = _FIX
    t0, t7 = d[0] + d[7], d[0] - d[7]
    t1, t6 = d[1] + d[6], d[1] - d[6]
    t2, t5 = d[2] + d[5], d[2] - d[5]
    t3, t4 = d[3] + d[4], d[3] - d[4]
    sh = 15 if second else 11
    o = [0] * 8
    t10, t13, t11, t12 = t0 + t3, t0 - t3, t1 + t2, t1 - t2
    o[0] = _descale(t10 + t11, 2) if second else (t10 + t11) * 4
    o[4] = _descale(t10 - t11, 2) if second else (t10 - t11) * 4
    z1 = (t12 + t13) * f[0.541196100]
    o[2] = _descale(z1 + t13 * f[0.765366865], sh)
    o[6] = _descale(z1 - t12 * f[1.847759065], sh)
    z5 = (t4 + t6 + t5 + t7) * f[1.175875602]
    z1, z2 = -(t4 + t7) * f[0.899976223], -(t5 + t6) * f[2.562915447]
    z3, z4 = z5 - (t4 + t6) * f[1.961570560], z5 - (t5 + t7) * f[0.390180644]
    o[7] = _descale(t4 * f[0.298631336] + z1 + z3, sh)
    o[5] = _descale(t5 * f[2.053119869] + z2 + z4, sh)
    o[3] = _descale(t6 * f[3.072711026] + z2 + z3, sh)
    o[1] = _descale(t7 * f[1.501321110] + z1 + z4, sh)
    return o


def jfdct_block(block: list[int]) -> list[int]:
    """8 x 8 samples (row-major) -> 8 x the orthonormal DCT-II, rounded."""
    rows = [_fdct8(block[8 * r:8 * r + 8], False) for r in range(8)]
    cols = [_fdct8([rows[r][c] for r in range(8)], True) for c in range(8)]
    return [cols[c][r] for r in range(8) for c in range(8)]


def jfdctint() -> list:
    g = Lcg("jfdctint")
    blocks = [[g.below(256) - 128 for _ in range(64)] for _ in range(128)]
    return [U32(v) for b in blocks for v in jfdct_block(b)]


def matrix1() -> list:
    g = Lcg("matrix1")
    n = 64
    a = [[g.next() for _ in range(n)] for _ in range(n)]
    b = [[g.next() for _ in range(n)] for _ in range(n)]
    bt = list(zip(*b))
    return [U32(sum(x * y for x, y in zip(row, col)) & M32) for row in a for col in bt]


@functools.lru_cache(maxsize=1)
def _small_primes() -> list[int]:
    limit = math.isqrt(1 << 25) + 1
    sieve = bytearray([1]) * (limit + 1)
    sieve[0:2] = b"\0\0"
    for p in range(2, math.isqrt(limit) + 1):
        if sieve[p]:
            sieve[p * p::p] = bytes(len(range(p * p, limit + 1, p)))
    return [p for p in range(3, limit + 1) if sieve[p]]


def prime() -> list:
    g = Lcg("prime")
    out, count = [], 0
    for _ in range(128):
        n = (1 << 24) | (g.next() >> 8) | 1
        f = next((p for p in _small_primes() if p * p <= n and n % p == 0), n)
        count += f == n
        out.append(U32(f))
    return out + [U32(count)]


def recursion() -> list:
    fib = [0, 1]
    while len(fib) < 24:
        fib.append(fib[-1] + fib[-2])
    fib_calls = 2 * fib[23] - 1  # calls of fib(22): C(n) = 1 + C(n-1) + C(n-2), C(0) = C(1) = 1

    def ack(m: int, n: int) -> int:
        return {0: n + 1, 1: n + 2, 2: 2 * n + 3}[m]

    @functools.cache
    def ack_calls(m: int, n: int) -> int:
        if m == 0:
            return 1
        if n == 0:
            return 1 + ack_calls(m - 1, 1)
        return 1 + ack_calls(m, n - 1) + ack_calls(m - 1, ack(m, n - 1))

    return [U32(fib[22]), U32(fib_calls), U32(ack(2, 40)), U32(ack_calls(2, 40))]


# --- floating-point kernels: the same operations in the same order ---------------


def complex_updates() -> list:
    g = Lcg("complex_updates")
    ar, ai, br, bi, cr, ci = ([0.0] * 1024 for _ in range(6))
    for i in range(1024):
        ar[i], ai[i], br[i], bi[i], cr[i], ci[i] = (g.unit() for _ in range(6))
    for _ in range(16):
        for i in range(1024):
            cr[i] = cr[i] + (ar[i] * br[i] - ai[i] * bi[i])
            ci[i] = ci[i] + (ar[i] * bi[i] + ai[i] * br[i])
            br[i], bi[i] = cr[i] * 0.5, ci[i] * 0.5
    return [v for pair in zip(cr, ci) for v in pair]


def _fir(c: list[float], x: list[float]) -> list[float]:
    out = []
    for n in range(len(x)):
        acc = 0.0
        for k in range(min(len(c), n + 1)):
            acc = acc + c[k] * x[n - k]
        out.append(acc)
    return out


def filterbank() -> list:
    g = Lcg("filterbank")
    length, branches, taps = 256, 8, 32
    x = [g.unit() for _ in range(length)]
    h = [[g.unit() for _ in range(taps)] for _ in range(branches)]
    f = [[g.unit() for _ in range(taps)] for _ in range(branches)]
    y = [0.0] * length
    for m in range(branches):
        v = _fir(h[m], x)
        u = [v[n] if n % branches == 0 else 0.0 for n in range(length)]
        w = _fir(f[m], u)
        y = [a + b for a, b in zip(y, w)]
    return y


def fir2dim() -> list:
    g = Lcg("fir2dim")
    n = 128
    c = [g.unit() for _ in range(9)]
    img = [[g.unit() for _ in range(n)] for _ in range(n)]
    out = []
    for i in range(n - 2):
        rows = img[i:i + 3]
        for j in range(n - 2):
            acc = 0.0
            for r in range(3):
                row = rows[r]
                acc = acc + c[3 * r] * row[j]
                acc = acc + c[3 * r + 1] * row[j + 1]
                acc = acc + c[3 * r + 2] * row[j + 2]
            out.append(acc)
    return out


IIR_SECTIONS = (  # a1, a2, b0, b1, b2
    (-1.5, 0.75, 0.25, 0.5, 0.25),
    (-1.25, 0.5625, 0.125, -0.25, 0.125),
    (-0.5, 0.375, 1.0, 0.75, 0.5),
    (0.75, 0.25, 0.5, -1.0, 0.5),
)


def iir() -> list:
    g = Lcg("iir")
    x = [g.unit() for _ in range(4096)]
    state = [[0.0, 0.0] for _ in IIR_SECTIONS]
    y = []
    for v in x:
        for (a1, a2, b0, b1, b2), s in zip(IIR_SECTIONS, state):
            w1, w2 = s
            w = v - a1 * w1 - a2 * w2
            v = b0 * w + b1 * w1 + b2 * w2
            s[0], s[1] = w, w1
        y.append(v)
    return y + [v for s in state for v in s]


def lms() -> list:
    g = Lcg("lms")
    length, taps = 1024, 32
    x = [0.0] * (taps - 1) + [g.unit() for _ in range(length)]
    h = [g.unit() for _ in range(taps)]
    noise = [g.unit() for _ in range(length)]
    w = [0.0] * taps
    errors = []
    for n in range(length):
        past = x[n:n + taps][::-1]  # past[k] = x[n - k]
        d = 0.0
        for hk, xk in zip(h, past):
            d = d + hk * xk
        d = d + noise[n] / 128.0
        y = 0.0
        for wk, xk in zip(w, past):
            y = y + wk * xk
        e = d - y
        step = e / 64.0
        w = [wk + step * xk for wk, xk in zip(w, past)]
        errors.append(e)
    return errors + w


def ludcmp() -> list:
    g = Lcg("ludcmp")
    n = 80
    a = [[g.unit() for _ in range(n)] for _ in range(n)]
    for i in range(n):
        a[i][i] = a[i][i] + float(n)
    b = [g.unit() for _ in range(n)]
    for k in range(n):
        pivot_row = a[k]
        for i in range(k + 1, n):
            row = a[i]
            m = row[k] / pivot_row[k]
            row[k] = m
            for j in range(k + 1, n):
                row[j] = row[j] - m * pivot_row[j]
    y = []
    for i in range(n):
        s = b[i]
        for j in range(i):
            s = s - a[i][j] * y[j]
        y.append(s)
    x = [0.0] * n
    for i in reversed(range(n)):
        s = y[i]
        for j in range(i + 1, n):
            s = s - a[i][j] * x[j]
        x[i] = s / a[i][i]
    return x + [a[i][i] for i in range(n)]


def minver() -> list:
    g = Lcg("minver")
    n = 48
    m = [[g.unit() for _ in range(n)] + [1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]
    det, pivots = 1.0, []
    for k in range(n):
        p = k
        for i in range(k + 1, n):
            if abs(m[i][k]) > abs(m[p][k]):
                p = i
        pivots.append(U32(p))
        if p != k:
            m[p], m[k] = m[k], m[p]
            det = -det
        pv = m[k][k]
        det = det * pv
        m[k] = [v / pv for v in m[k]]
        rk = m[k]
        for i in range(n):
            if i != k:
                f = m[i][k]
                m[i] = [v - f * r for v, r in zip(m[i], rk)]
    return [v for row in m for v in row[n:]] + [det] + pivots


def st() -> list:
    g = Lcg("st")
    n = 8192
    a, b = [], []
    for _ in range(n):
        u, v = g.unit(), g.unit()
        a.append(u)
        b.append(u * 0.75 + v * 0.25)

    def total(vals: Iterator[float]) -> float:
        s = 0.0  # left to right from 0.0 (not math.fsum)
        for v in vals:
            s = s + v
        return s

    sa, sb = total(iter(a)), total(iter(b))
    ma, mb = sa / n, sb / n
    va = total((x - ma) * (x - ma) for x in a) / n
    vb = total((y - mb) * (y - mb) for y in b) / n
    cov = total((x - ma) * (y - mb) for x, y in zip(a, b)) / n
    da, db = math.sqrt(va), math.sqrt(vb)
    return [sa, sb, ma, mb, va, vb, da, db, cov / (da * db)]


KERNELS: dict[str, Callable[[], list]] = {name: globals()[name] for name in NAMES}


def results(name: str) -> list:
    return KERNELS[name]()


@functools.cache
def checksum(name: str) -> int:
    return fnv1a(encode(results(name)))


class _Checksums(dict):
    """{name: checksum}, each computed on first use."""

    def __missing__(self, name: str) -> int:
        if name not in KERNELS:
            raise KeyError(name)
        self[name] = checksum(name)
        return self[name]

    def __iter__(self):
        return iter(NAMES)

    def __len__(self) -> int:
        return len(NAMES)

    def items(self):
        return [(n, self[n]) for n in NAMES]


CHECKSUMS: dict[str, int] = _Checksums()


if __name__ == "__main__":
    import time

    for kname in NAMES:
        t = time.perf_counter()
        c = checksum(kname)
        print(f"{kname:16s} 0x{c:08x} {time.perf_counter() - t:6.3f} s")
