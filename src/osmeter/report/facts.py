"""The facts in words a benchmark records with its result (schema.md `info`),
as every view of a run shows them (show, the Markdown and HTML reports).

A net result's `info` says which peer answered (`peer`, `peer_version`) and
how it was placed (`placement`), `net.icmp_rtt` how it sent its echoes, a
poll result what its descriptors were, a file result where it measured.
The path MTU of a net result is a number (`extra.path_mtu`), but it belongs
with the peer's address, so it is shown among the facts too (SHOWN_EXTRA).

Results of one benchmark with the same facts are one group: a sweep of
`net.tcp_rtt` over six sizes against one peer gives one line, not six.
The keys come sorted (the store keeps a record's keys sorted). Every view
escapes the text itself: the facts come from the probe and, for net, partly
from a remote peer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from ..model import BenchResult
from ..records import format_params
from ..fmt import fmt_num

HEADING = "recorded with the results (info; docs/schema.md)"
TITLE = "Recorded with the results"  # the reports' section heading
EXPLAIN = ("What each benchmark recorded in words (info, docs/schema.md): the peer a net benchmark measured "
           "against and its probe version, where a file benchmark measured, what a poll benchmark watched. "
           "Results of one benchmark that recorded the same are one row.")
SHOWN_EXTRA = ("path_mtu",)  # extra figures that are facts about the set-up, shown with the info


@dataclass(frozen=True)
class Group:
    """Results of one benchmark that recorded the same facts."""

    bench: str
    instances: tuple[str, ...]  # each result's parameters (format_params), in run order
    every: bool  # the group holds every result of `bench` in the run
    facts: tuple[tuple[str, str], ...]

    @property
    def who(self) -> str:
        """`net.tcp_rtt` (its only instance), `net.tcp_rtt (all 6 instances)`, `net.tcp_rtt size=1`
        (one of several), or the bench and the parameters of each instance of the group, `;`-separated."""
        if self.every:
            return self.bench if len(self.instances) == 1 else f"{self.bench} (all {len(self.instances)} instances)"
        if len(self.instances) == 1:
            return f"{self.bench} {self.instances[0]}" if self.instances[0] else self.bench
        return f"{self.bench} ({'; '.join(self.instances)})"


def facts(r: BenchResult, skip: Sequence[str] = ()) -> tuple[tuple[str, str], ...]:
    """The result's info as sorted (key, value) pairs, then the SHOWN_EXTRA figures it has;
    the keys in `skip` left out."""
    pairs = [(k, v) for k, v in sorted(r.info.items()) if k not in skip]
    for key in SHOWN_EXTRA:
        value = (r.extra or {}).get(key)
        if key not in skip and isinstance(value, (int, float)) and not isinstance(value, bool) \
                and math.isfinite(value):
            pairs.append((key, f"{value:.0f}" if float(value).is_integer() else fmt_num(float(value))))
    return tuple(pairs)


def groups(results: Sequence[BenchResult], skip_for: dict[int, Sequence[str]] | None = None,
           params_of: Callable[[BenchResult], Mapping[str, Any]] = lambda r: r.params) -> list[Group]:
    """The results that recorded facts, grouped by benchmark and facts, in run order.
    `skip_for`: per result seq, keys another part of the view shows already; `params_of`: the
    parameters each instance is named by (report.params)."""
    skip_for = skip_for or {}
    count: dict[str, int] = {}
    for r in results:
        count[r.bench] = count.get(r.bench, 0) + 1
    found: dict[tuple[str, tuple[tuple[str, str], ...]], list[str]] = {}
    for r in results:
        pairs = facts(r, skip_for.get(r.seq, ()))
        if pairs:
            found.setdefault((r.bench, pairs), []).append(format_params(params_of(r)))
    return [Group(bench, tuple(inst), len(inst) == count[bench], pairs) for (bench, pairs), inst in found.items()]


def pairs_text(pairs: Sequence[tuple[str, str]]) -> str:
    """`peer=127.0.0.1:41234; peer_version=0.3.0`: one line of text (escaping is the caller's)."""
    return "; ".join(f"{k}={v}" for k, v in pairs)
