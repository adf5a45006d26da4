"""Folded stacks: parsing, the table of functions, the depth view, the diff.

A profile is a list of (frames, weight): frames root first, the first frame
the process, kernel frames ending in "_[k]" (the flame graph tools'
convention), weight a positive integer (samples, or ns in function mode).
docs/methods/hotspots.md defines every figure here.

Every figure is linear in time and memory in the size of the input: a
frame name is kept once however many stacks hold it, and nothing is built
per stack prefix. The input is bounded (docs/methods/hotspots.md, "Limits"):
a weight is at most MAX_WEIGHT and so is the sum of a profile's weights
(they fit a signed 64-bit integer, as the store keeps them), and the
distinct stacks of a profile hold at most MAX_FRAMES frames in all. The
flame graphs and the depth view show the first DEPTH_SHOWN levels of a
stack (every share still counts the whole stack): what a reader can use,
and what keeps a pathological stack of a million frames from an SVG file
of gigabytes.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Sequence

from ..errors import UsageError

Stacks = list[tuple[tuple[str, ...], int]]
KERNEL_SUFFIX = "_[k]"
MAX_WEIGHT = 2**63 - 1  # a weight, and the sum of a profile's weights: a signed 64-bit integer
MAX_FRAMES = 1_000_000  # frames in a profile's distinct stacks, all together (memory: at most about 0.5 KiB each)
DEPTH_SHOWN = 1024  # levels of a stack the flame graphs draw and the depth view lists (perf keeps 127 by default)
_DIGITS = re.compile(r"[0-9]+")  # ASCII only: str.isdigit() takes "²", which int() refuses


class _Builder:
    """Stacks summed as they come, within the bounds above; `where` names
    the input (a file and line, a record's item) in every refusal."""

    def __init__(self) -> None:
        self.acc: dict[tuple[str, ...], int] = {}
        self.names: dict[str, str] = {}  # each frame name once
        self.frames = 0  # in the distinct stacks so far
        self.total = 0

    def add(self, stack: str, weight: int, where: str) -> None:
        depth = stack.count(";") + 1
        if depth > MAX_FRAMES:  # refused before the split, which takes memory per frame
            self._too_many(where)
        intern = self.names.setdefault
        frames = tuple([intern(f, f) for f in stack.split(";")])
        if "" in self.names:
            raise UsageError(f"{where}: an empty frame in {stack[:80]!r}")
        self.total += weight
        if self.total > MAX_WEIGHT:
            raise UsageError(f"{where}: the weights add up to more than {MAX_WEIGHT} (2**63-1), the limit")
        old = self.acc.get(frames)
        if old is None:
            self.frames += depth
            if self.frames > MAX_FRAMES:
                self._too_many(where)
        self.acc[frames] = (old or 0) + weight

    @staticmethod
    def _too_many(where: str) -> None:
        raise UsageError(f"{where}: the profile holds more than {MAX_FRAMES:,} frames in its distinct stacks, "
                         "the limit (each costs memory): profile a shorter time, or cut the stacks")

    def stacks(self) -> Stacks:
        return sorted(self.acc.items(), key=lambda kv: (-kv[1], kv[0]))


def _merge(pairs: Iterable[tuple[tuple[str, ...], int]]) -> Stacks:
    acc: dict[tuple[str, ...], int] = defaultdict(int)
    for frames, weight in pairs:
        acc[frames] += weight
    return sorted(acc.items(), key=lambda kv: (-kv[1], kv[0]))


def lines(text: str) -> Iterator[tuple[int, str]]:
    """(number, line) of every non-empty line (split at "\n" only, as the format is)."""
    n, at = 1, 0
    for m in re.finditer(r"[^\n]+", text):
        n += text.count("\n", at, m.start())
        at = m.start()
        yield n, m.group()


def _weight(text: str, where: str, line: str) -> int:
    if not _DIGITS.fullmatch(text) or not text.strip("0"):
        raise UsageError(f"{where}: not a folded stack ('frame;frame;... WEIGHT' with a positive "
                         f"integer weight): {line[:80]!r}")
    digits = text.lstrip("0")
    if len(digits) > len(str(MAX_WEIGHT)) or int(digits) > MAX_WEIGHT:
        shown = digits if len(digits) <= 24 else f"{digits[:20]}... ({len(digits)} digits)"
        raise UsageError(f"{where}: the weight {shown} is more than {MAX_WEIGHT} (2**63-1), the largest a "
                         "weight may be")
    return int(digits)


def parse_folded(text: str, source: str = "<input>") -> Stacks:
    """`frame;frame;leaf WEIGHT` per line (the weight after the last space);
    blank lines and `#` comments ignored; identical stacks summed."""
    out = _Builder()
    for n, line in lines(text):
        if line.startswith("#") or not line.strip():
            continue
        where = f"{source}:{n}"
        stack, sep, weight = line.rstrip().rpartition(" ")
        if not sep or not stack:
            raise UsageError(f"{where}: not a folded stack ('frame;frame;... WEIGHT' with a positive "
                             f"integer weight): {line[:80]!r}")
        out.add(stack, _weight(weight, where, line), where)
    return out.stacks()


def _utf8(text: str) -> str:
    """`text` with what UTF-8 cannot hold (a lone surrogate, from JSON's \\ud800) as '?'."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def stacks_from_record(items: Sequence[Any], source: str = "") -> Stacks:
    """The `stacks` field of a profile record: [[folded, weight], ...]."""
    out = _Builder()
    if not isinstance(items, (list, tuple)):
        raise UsageError(f"{source}{': ' if source else ''}stacks is not a list of [\"frame;...\", weight]")
    for i, item in enumerate(items):
        where = f"{source}{': ' if source else ''}stacks[{i}]"
        if (not isinstance(item, (list, tuple)) or len(item) != 2 or not isinstance(item[0], str)
                or not isinstance(item[1], int) or isinstance(item[1], bool) or item[1] <= 0 or not item[0]):
            raise UsageError(f"{where} is not [\"frame;...\", positive weight]: {str(item)[:80]}")
        if item[1] > MAX_WEIGHT:
            raise UsageError(f"{where}: a weight of {item[1].bit_length()} bits is more than {MAX_WEIGHT} "
                             "(2**63-1), the largest a weight may be")
        out.add(_utf8(item[0]), item[1], where)
    return out.stacks()


def format_folded(stacks: Stacks) -> str:
    return "".join(f"{';'.join(frames)} {weight}\n" for frames, weight in _merge(stacks))


def is_kernel(frame: str) -> bool:
    return frame.endswith(KERNEL_SUFFIX)


def display_name(frame: str) -> str:
    return frame[: -len(KERNEL_SUFFIX)] if is_kernel(frame) else frame


def total_weight(stacks: Stacks) -> int:
    return sum(w for _, w in stacks)


@dataclass(frozen=True, slots=True)
class FunctionRow:
    function: str  # as in the stacks (kernel functions with "_[k]")
    kernel: bool
    self_weight: int  # stacks whose leaf it is
    total_weight: int  # stacks that hold it, once each however often it recurses
    self_share: float  # of all weight
    total_share: float
    calls: int | None  # function mode: exact entries counted by the tracer


def _weights(stacks: Stacks) -> tuple[dict[str, int], dict[str, int]]:
    self_w: dict[str, int] = defaultdict(int)
    total_w: dict[str, int] = defaultdict(int)
    for frames, w in stacks:
        body = frames[1:]  # the first frame is the process
        if not body:
            continue
        self_w[body[-1]] += w
        for f in set(body):
            total_w[f] += w
    return self_w, total_w


def function_table(stacks: Stacks, calls: dict[str, int] | None = None) -> list[FunctionRow]:
    """Every function, by total share (then self, then name)."""
    n = total_weight(stacks) or 1
    self_w, total_w = _weights(stacks)
    rows = [FunctionRow(f, is_kernel(f), self_w.get(f, 0), t, self_w.get(f, 0) / n, t / n,
                        (calls or {}).get(f) if calls is not None else None)
            for f, t in total_w.items()]
    return sorted(rows, key=lambda r: (-r.total_weight, -r.self_weight, r.function))


@dataclass(frozen=True, slots=True)
class Depth:
    depth: int  # 0: the first kernel frame (the syscall or exception entry)
    inclusive: int  # weight of the stacks that reach this depth
    self_weight: int  # weight of the stacks whose leaf is at this depth
    functions: list[tuple[str, int]]  # the function at this depth, by inclusive weight


@dataclass(frozen=True, slots=True)
class DepthView:
    total: int  # all weight (the shares' denominator)
    outside: int  # weight of stacks with no frame at depth 0 (no kernel frame, for kernel_only)
    depths: list[Depth]  # the first DEPTH_SHOWN depths
    deeper: int = 0  # weight of the stacks that go deeper than those
    deepest: int = 0  # the depth of the deepest frame (0: the first)


def depth_view(stacks: Stacks, kernel_only: bool = True) -> DepthView:
    """The fork study's view: weight per call depth, and per function at each
    depth. kernel_only: depth 0 is the first kernel frame (as ftrace's
    function_graph counts); else the first frame after the process. Only
    the first DEPTH_SHOWN depths are listed (`deeper` weighs the rest)."""
    inclusive: dict[int, int] = defaultdict(int)
    leaf: dict[int, int] = defaultdict(int)
    per_fn: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    outside = deeper = deepest = 0
    for frames, w in stacks:
        start = 1
        if kernel_only:
            start = next((i for i in range(1, len(frames)) if is_kernel(frames[i])), len(frames))
        if start >= len(frames):
            outside += w
            continue
        body = frames[start: start + DEPTH_SHOWN]
        for d, f in enumerate(body):
            inclusive[d] += w
            per_fn[d][f] += w
        deepest = max(deepest, len(frames) - start - 1)
        if len(frames) - start > DEPTH_SHOWN:
            deeper += w
        else:
            leaf[len(body) - 1] += w
    depths = [Depth(d, inclusive[d], leaf.get(d, 0),
                    sorted(per_fn[d].items(), key=lambda kv: (-kv[1], kv[0])))
              for d in sorted(inclusive)]
    return DepthView(total_weight(stacks), outside, depths, deeper, deepest)


@dataclass(frozen=True, slots=True)
class DiffRow:
    function: str
    kernel: bool
    self_a: float  # shares of all weight in A and in B
    self_b: float
    total_a: float
    total_b: float
    self_weight_a: int  # the counts behind the shares
    self_weight_b: int
    total_weight_a: int
    total_weight_b: int
    calls_a: int | None
    calls_b: int | None
    se: float | None  # standard error of self_b - self_a (binomial, sampled profiles only)

    @property
    def self_change(self) -> float:
        return self.self_b - self.self_a

    @property
    def total_change(self) -> float:
        return self.total_b - self.total_a


def diff_table(a: Stacks, b: Stacks, calls_a: dict[str, int] | None = None, calls_b: dict[str, int] | None = None,
               weight_unit: str = "samples") -> list[DiffRow]:
    """Per function, A's and B's shares; ranked by how much the self share
    (where the time is actually spent) moved, then the total share. The
    standard error is the binomial one of two independent sample counts,
    sqrt(pa(1-pa)/na + pb(1-pb)/nb); None for weights in ns (function
    mode: no sampling error, and tracing overhead instead)."""
    na, nb = total_weight(a), total_weight(b)
    sa, ta = _weights(a)
    sb, tb = _weights(b)
    rows = []
    for f in set(ta) | set(tb):
        psa, psb = sa.get(f, 0) / (na or 1), sb.get(f, 0) / (nb or 1)
        se = None
        if weight_unit == "samples" and na and nb:
            se = math.sqrt(psa * (1 - psa) / na + psb * (1 - psb) / nb)
        rows.append(DiffRow(f, is_kernel(f), psa, psb, ta.get(f, 0) / (na or 1), tb.get(f, 0) / (nb or 1),
                            sa.get(f, 0), sb.get(f, 0), ta.get(f, 0), tb.get(f, 0),
                            (calls_a or {}).get(f) if calls_a is not None else None,
                            (calls_b or {}).get(f) if calls_b is not None else None, se))
    return sorted(rows, key=lambda r: (-abs(r.self_change), -abs(r.total_change), r.function))
