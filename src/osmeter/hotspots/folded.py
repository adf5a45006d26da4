"""Folded stacks: parsing, the table of functions, the depth view, the diff.

A profile is a list of (frames, weight): frames root first, the first frame
the process, kernel frames ending in "_[k]" (the flame graph tools'
convention), weight a positive integer (samples, or ns in function mode).
docs/methods/hotspots.md defines every figure here.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ..errors import UsageError

Stacks = list[tuple[tuple[str, ...], int]]
KERNEL_SUFFIX = "_[k]"


def _merge(pairs: Iterable[tuple[tuple[str, ...], int]]) -> Stacks:
    acc: dict[tuple[str, ...], int] = defaultdict(int)
    for frames, weight in pairs:
        acc[frames] += weight
    return sorted(acc.items(), key=lambda kv: (-kv[1], kv[0]))


def parse_folded(text: str, source: str = "<input>") -> Stacks:
    """`frame;frame;leaf WEIGHT` per line (the weight after the last space);
    blank lines and `#` comments ignored; identical stacks summed."""
    pairs = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        stack, sep, weight = line.rstrip().rpartition(" ")
        if not sep or not stack or not weight.isdigit() or int(weight) <= 0:
            raise UsageError(f"{source}:{n}: not a folded stack ('frame;frame;... WEIGHT' with a positive "
                             f"integer weight): {line[:80]!r}")
        frames = tuple(stack.split(";"))
        if any(not f for f in frames):
            raise UsageError(f"{source}:{n}: an empty frame in {stack[:80]!r}")
        pairs.append((frames, int(weight)))
    return _merge(pairs)


def stacks_from_record(items: Sequence[Any]) -> Stacks:
    """The `stacks` field of a profile record: [[folded, weight], ...]."""
    pairs = []
    for i, item in enumerate(items):
        if (not isinstance(item, (list, tuple)) or len(item) != 2 or not isinstance(item[0], str)
                or not isinstance(item[1], int) or isinstance(item[1], bool) or item[1] <= 0 or not item[0]):
            raise UsageError(f"stacks[{i}] is not [\"frame;...\", positive weight]: {str(item)[:80]}")
        pairs.append((tuple(item[0].split(";")), item[1]))
    return _merge(pairs)


def format_folded(stacks: Stacks) -> str:
    return "".join(f"{';'.join(frames)} {weight}\n" for frames, weight in _merge(stacks))


def is_kernel(frame: str) -> bool:
    return frame.endswith(KERNEL_SUFFIX)


def display_name(frame: str) -> str:
    return frame[: -len(KERNEL_SUFFIX)] if is_kernel(frame) else frame


def total_weight(stacks: Stacks) -> int:
    return sum(w for _, w in stacks)


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Depth:
    depth: int  # 0: the first kernel frame (the syscall or exception entry)
    inclusive: int  # weight of the stacks that reach this depth
    self_weight: int  # weight of the stacks whose leaf is at this depth
    functions: list[tuple[str, int]]  # the function at this depth, by inclusive weight


@dataclass(frozen=True)
class DepthView:
    total: int  # all weight (the shares' denominator)
    outside: int  # weight of stacks with no frame at depth 0 (no kernel frame, for kernel_only)
    depths: list[Depth]


def depth_view(stacks: Stacks, kernel_only: bool = True) -> DepthView:
    """The fork study's view: weight per call depth, and per function at each
    depth. kernel_only: depth 0 is the first kernel frame (as ftrace's
    function_graph counts); else the first frame after the process."""
    inclusive: dict[int, int] = defaultdict(int)
    leaf: dict[int, int] = defaultdict(int)
    per_fn: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    outside = 0
    for frames, w in stacks:
        body = list(frames[1:])
        if kernel_only:
            first = next((i for i, f in enumerate(body) if is_kernel(f)), None)
            body = body[first:] if first is not None else []
        if not body:
            outside += w
            continue
        for d, f in enumerate(body):
            inclusive[d] += w
            per_fn[d][f] += w
        leaf[len(body) - 1] += w
    depths = [Depth(d, inclusive[d], leaf.get(d, 0),
                    sorted(per_fn[d].items(), key=lambda kv: (-kv[1], kv[0])))
              for d in sorted(inclusive)]
    return DepthView(total_weight(stacks), outside, depths)


@dataclass(frozen=True)
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
