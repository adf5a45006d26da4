"""benchmarks/lebench_vs_osmeter.py's output: the ratio table as text, the
report under it (wall times, counts, the verdict) and the --json document."""
from __future__ import annotations

import dataclasses
import json
import math
import textwrap
from pathlib import Path
from typing import IO, Any, Mapping, Sequence

from _lebench_parse import HIGH, LOW, Counts, Line, count


def fmt_ns(v: float | None) -> str:
    if v is None or not math.isfinite(v):
        return "-"
    if abs(v) < 100:
        return f"{v:.1f}"
    return f"{v:,.0f}".replace(",", " ")


def fmt_ratio(r: float | None) -> str:
    return "-" if r is None else f"{r:.2f}"


def _yes(w: bool | None) -> str:
    return "-" if w is None else ("yes" if w else "NO")


def _errors_text(ln: Line) -> str | None:
    return f"LEBench's test printed: {ln.lebench_errors}" if ln.lebench_errors else None


def _join(*parts: str | None) -> str:
    return "; ".join(p for p in parts if p)


def render_table(lines: Sequence[Line], exact: bool) -> str:
    """The table as aligned text (figures in ns); the note column last. With
    a second LEBench run, a column of its k-best / the first's ("NO" when
    outside the tolerance: LEBench does not reproduce itself there)."""
    selfcheck = any(ln.lebench_self_ratio is not None for ln in lines)
    head = ["LEBench row", "LEBench k-best", "LEBench avg"]
    head += ["LEBench run2/run1"] if selfcheck else []
    head += ["osmeter median (95% CI)", "osmeter k-best", "ratio"]
    if exact:
        head += ["exact median", "exact ratio", "exact k-best (n)", "k-best ratio"]
    head += [f"in {LOW}-{HIGH}" + (" (default/exact)" if exact else ""), "note"]
    body = []
    for ln in lines:
        cells = [ln.row, fmt_ns(ln.lebench_kbest), fmt_ns(ln.lebench_average)]
        if selfcheck:
            r = ln.lebench_self_ratio
            cells.append("-" if r is None else fmt_ratio(r) + ("" if ln.lebench_self_within else " NO"))
        if ln.median is None:
            label = {"pending": "pending", "lebench-only": "(not in osmeter)"}.get(ln.status, ln.status)
            cells += [label, "", ""]
            if exact:
                cells += ["", "", "", ""]
            cells += ["", _join(ln.detail, _errors_text(ln))]
        else:
            cells += [f"{fmt_ns(ln.median)} ({fmt_ns(ln.ci_low)}..{fmt_ns(ln.ci_high)})", fmt_ns(ln.kbest),
                      fmt_ratio(ln.ratio)]
            if exact:
                kb = f"{fmt_ns(ln.exact_kbest)} ({ln.exact_n})" if ln.exact_kbest is not None else ""
                cells += [fmt_ns(ln.exact_median), fmt_ratio(ln.exact_ratio), kb, fmt_ratio(ln.exact_kbest_ratio)]
            cells.append(f"{_yes(ln.within)}/{_yes(ln.exact_within)}" if exact else _yes(ln.within))
            note = ln.note or ""
            if note and ln.flags:
                note += f" [osmeter flags: {', '.join(ln.flags)}]"
            cells.append(_join(ln.detail, note, _errors_text(ln)))
        body.append(cells)
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head) - 1)]
    right = set(range(1, len(head) - 2))  # figures right-aligned; row name, verdict and note left

    def fmt(cells: list[str]) -> str:
        out = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))]
        return "  ".join([*out, cells[-1]]).rstrip()

    rule = "  ".join("-" * w for w in widths) + "  ----"
    return "\n".join([fmt(head), rule, *(fmt(c) for c in body)]) + "\n"


def _jsonable(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


def report_document(lines: Sequence[Line], info: Mapping[str, Any]) -> dict[str, Any]:
    """Everything, for --json: the rows, the counts and what was run."""
    c = count(lines)
    return _jsonable({
        "schema": 1,
        "tolerance": [LOW, HIGH],
        "unit": "ns",
        **info,
        "counts": {**dataclasses.asdict(c), "judged_ok": c.judged_ok},
        "rows": [dataclasses.asdict(ln) for ln in lines],
    })


def print_report(lines: Sequence[Line], exact: bool, walls: Sequence[str], out: IO[str]) -> Counts:
    out.write(render_table(lines, exact))
    out.write("Figures in ns; ratio = osmeter median / LEBench k-best; CI = 95 % confidence interval of the median;\n"
              "k-best ratio = the --lebench-exact run's k-best (LEBench's calc_k_closest on single-call samples, n of\n"
              "them) / LEBench's k-best: the same statistic, which for a wide distribution is a low quantile that\n"
              "falls as n grows (LEBench takes 5 000 to 1 000 000 samples per row).\n")
    for w in walls:
        out.write(w + "\n")
    c = count(lines)
    out.write(f"within {LOW}-{HIGH}: default run {c.within} of {c.compared} rows")
    if exact:
        out.write(f", --lebench-exact run {c.exact_within} of {c.exact_compared} rows")
    out.write(f"; {c.pending} rows pending in osmeter\n")
    if c.self_compared:
        bad = [ln.row for ln in lines if ln.lebench_self_within is False]
        out.write(f"LEBench against itself (second run's k-best / first's): {c.self_within} of {c.self_compared} "
                  f"rows within {LOW}-{HIGH}" + (f"; not reproduced: {', '.join(bad)}" if bad else "") + "\n")
    for line in kbest_lines(lines):
        out.write(line + "\n")
    verdict = "--lebench-exact ratios" if c.exact_compared else "default ratios"
    out.write(f"tolerance {LOW}..{HIGH} ({verdict}): {'PASS' if c.judged_ok else 'FAIL'}\n")
    out.flush()
    return c


def kbest_lines(lines: Sequence[Line]) -> list[str]:
    """k-best against k-best (the same statistic on both sides), counted over the rows LEBench measures
    a working call in, and split by whether LEBench reproduced itself there (--lebench-runs 2)."""
    out = []
    for label, attr in (("default run", "kbest_ratio"), ("--lebench-exact run", "exact_kbest_ratio")):
        rows = [ln for ln in lines if getattr(ln, attr, None) is not None and ln.lebench_errors is None]
        if not rows:
            continue
        inside = [ln for ln in rows if LOW <= getattr(ln, attr) <= HIGH]
        outside = [f"{ln.row} {getattr(ln, attr):.2f}" + (" (LEBench not reproduced)"
                                                           if ln.lebench_self_within is False else "")
                   for ln in rows if ln not in inside]
        out.append(f"k-best ratio, {label}: {len(inside)} of {len(rows)} rows within {LOW}-{HIGH} "
                   "(LEBench's failing calls not counted)")
        if outside:
            out.extend(textwrap.wrap("outside: " + ", ".join(outside), 100, initial_indent="  ",
                                     subsequent_indent="    "))
    return out


def write_json(path: str | None, lines: Sequence[Line], info: Mapping[str, Any]) -> None:
    if path:
        Path(path).write_text(json.dumps(report_document(lines, info), indent=2) + "\n", encoding="utf-8")
        print(f"saved {path}")

