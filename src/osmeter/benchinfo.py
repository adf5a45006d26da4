"""One benchmark in detail (`osmeter list NAME...`): its method, parameters,
suites, the instances a suite runs, its LEBench rows and its docs section.

`select()` resolves names and fnmatch patterns against the catalogue,
`details()` gathers what the catalogue, its LEBench table and the method
docs (osmeter.methoddocs) say of each benchmark, `render()` lays that out
for a reader at a width and `to_json()` as the probe's catalogue entries
with the extra fields.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Iterable, Mapping, Sequence

from .catalog import Benchmark, Catalog, LebenchRow, Param
from .errors import UsageError
from .fmt import MISSING, render_pairs, render_table
from .methoddocs import DOCS_PREFIX, MethodDocs, Section, bounded

GLOB = frozenset("*?[")
METHOD_LINES = 2  # the docs' gist, at most
WIDE = 1 << 20  # no wrapping (--wide)
KEYS = ("what", "method", "unit", "params", "suites", "sweep", "LEBench", "docs")  # the view's, in order
KEY_WIDTH = max(len(k) for k in KEYS)
MERGE_MAX = 4  # values of one parameter in a sweep line's label ("op=read|write|copy|memcpy")
PARAM_HEADERS = ("name", "type", "default", "range", "help")


def is_pattern(name: str) -> bool:
    return any(c in GLOB for c in name)


def _no_match(name: str, benchmarks: Sequence[Benchmark]) -> str:
    candidates = [b.name for b in benchmarks] + sorted({f"{b.family}.*" for b in benchmarks})
    close = difflib.get_close_matches(name.lower(), candidates, n=4, cutoff=0.6)
    what = f"no benchmark matches {name!r}" if is_pattern(name) else f"no benchmark named {name!r}"
    return what + (f" (close matches: {', '.join(close)})" if close else " (no close match)")


def select(benchmarks: Sequence[Benchmark], names: Iterable[str]) -> list[Benchmark]:
    """The benchmarks `names` name, in their order, each once. A name is
    exact (a hidden test benchmark included); a pattern (`*`, `?`, `[...]`,
    fnmatch) leaves hidden ones out unless they are all it matches. A name
    or pattern that matches nothing is a UsageError naming each such one
    and its close matches."""
    chosen: dict[str, Benchmark] = {}
    missing: list[str] = []
    for name in names:
        if is_pattern(name):
            hits = [b for b in benchmarks if fnmatchcase(b.name, name)]
            hits = [b for b in hits if not b.hidden] or hits
        else:
            hits = [b for b in benchmarks if b.name == name]
        if not hits:
            missing.append(name)
        for b in hits:
            chosen.setdefault(b.name, b)
    if missing:
        raise UsageError("; ".join(_no_match(name, benchmarks) for name in missing)
                         + "; `osmeter list` shows every benchmark")
    return list(chosen.values())


@dataclass(frozen=True)
class Detail:
    bench: Benchmark
    lebench: tuple[LebenchRow, ...]
    section: Section | None
    docs_found: bool  # False: no docs/methods beside osmeter (an installed wheel)


def details(catalog: Catalog, chosen: Iterable[Benchmark], docs: MethodDocs) -> list[Detail]:
    return [Detail(b, tuple(r for r in catalog.lebench_rows if r.bench == b.name), docs.section(b.name, b.family),
                   docs.found) for b in chosen]


def size_text(n: int) -> str:
    """A size exactly, in the largest binary unit that divides it, as `--param`
    takes it: 4096 -> 4KiB, 5184 -> 5184B, 2**40 -> 1024GiB; 0 stays 0."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return f"{n}B" if n else "0"


def value_text(param: Param | None, value: Any) -> str:
    """A parameter's value as people read it: sizes in binary units (4KiB)."""
    if param is not None and param.type == "size" and isinstance(value, int) and not isinstance(value, bool):
        return size_text(value)
    if isinstance(value, str):
        return value if value else '""'
    return json.dumps(value) if isinstance(value, (bool, type(None))) else str(value)


def param_row(p: Param) -> list[str]:
    if p.type == "enum" and p.choices:
        allowed = "|".join(p.choices)
    elif p.min is not None or p.max is not None:
        allowed = "..".join("" if v is None else value_text(p, v) for v in (p.min, p.max))
    else:
        allowed = MISSING
    return [p.name, p.type, value_text(p, p.default), allowed, p.help or MISSING]


def _suite(b: Benchmark) -> str | None:
    return next((s for s in ("standard", "full", "quick") if s in b.suites), None)


def _instances(b: Benchmark, suite: str) -> list[dict[str, Any]]:
    sets = (b.sweep_full or b.sweep) if suite == "full" else b.sweep
    return [dict(s) for s in sets] or [{p.name: p.default for p in b.params}]


def _merged(groups: Sequence[tuple[dict[str, str], list[str]]]) -> list[tuple[dict[str, list[str]], list[str]]]:
    """Groups with the same values of the axis that differ in one other
    parameter as one ("op=write|copy threads=1"; at most MERGE_MAX values),
    the same instances still."""
    out: list[tuple[dict[str, list[str]], list[str]]] = []
    for label, values in groups:
        for known, known_values in out:
            diff = [k for k in label if label[k] not in known[k]]
            multi = [k for k in known if len(known[k]) > 1]
            if known_values == values and len(diff) == 1 and multi in ([], diff) and len(known[diff[0]]) < MERGE_MAX:
                known[diff[0]].append(label[diff[0]])
                break
        else:
            out.append(({k: [v] for k, v in label.items()}, values))
    return out


def _grouped(instances: Sequence[Mapping[str, str]], varying: Sequence[str], axis: str) -> list[str]:
    groups: dict[tuple[str, ...], tuple[dict[str, str], list[str]]] = {}
    for i in instances:
        label = {k: i[k] for k in varying if k != axis}
        groups.setdefault(tuple(label.values()), (label, []))[1].append(i[axis])
    lines = []
    for label, values in _merged(list(groups.values())):
        head = " ".join(f"{k}={'|'.join(v)}" for k, v in label.items())
        lines.append(f"{head}: " * bool(head) + f"{axis}=" + ", ".join(values))
    return lines


def sweep_groups(b: Benchmark, instances: Sequence[Mapping[str, Any]]) -> list[str]:
    """The instances in a few lines: the values every one shares where they
    are not the defaults ("every one: ..."), then the values of one varying
    parameter, one line per combination of the others; the parameter is the
    one that gives the fewest lines (of those, the one with most values)."""
    params = {p.name: p for p in b.params}
    keys = list(dict.fromkeys([*params, *(k for i in instances for k in i)]))
    shown = [{k: value_text(params.get(k), i.get(k)) for k in keys} for i in instances]
    varying = [k for k in keys if len({i[k] for i in shown}) > 1]
    fixed = [f"{k}={shown[0][k]}" for k in keys if k not in varying and k in instances[0]
             and (k not in params or instances[0][k] != params[k].default)]
    lines = [f"every one: {' '.join(fixed)}"] if fixed else []
    if not varying:
        return lines or ["the defaults"]

    def lines_of(axis: str) -> tuple[int, int]:
        return len(_grouped(shown, varying, axis)), -len({i[axis] for i in shown})

    return lines + _grouped(shown, varying, min(varying, key=lines_of))


def sweep_text(b: Benchmark) -> str:
    suite = _suite(b)
    if suite is None:
        extra = f" (--sweep: {len(b.sweep)})" if b.sweep else ""
        return f"in no suite: `osmeter run {b.name}` measures the defaults{extra}"
    instances = _instances(b, suite)
    n = len(instances)
    head = f"{n} instance{'s' if n != 1 else ''} in the {suite} suite"
    if suite == "standard" and "full" in b.suites and _instances(b, "full") != instances:
        head += f" ({len(_instances(b, 'full'))} in the full suite)"
    elif suite != "standard":
        head += " (none in the standard suite)"
    return head + ":\n" + "\n".join(sweep_groups(b, instances))


def lebench_text(rows: Sequence[LebenchRow]) -> str:
    return "\n".join(f'"{r.name}": {r.given_params or "the defaults"}' + ("" if r.available else " (pending)")
                     for r in rows) or MISSING


def method_lines(d: Detail, width: int) -> list[str]:
    if d.section is not None and d.section.gist:
        return bounded(d.section.gist, width, METHOD_LINES)
    if not d.docs_found:
        return [f"(no {DOCS_PREFIX} beside this osmeter: see the source tree's)"]
    return [MISSING]


def _pairs(pairs: Sequence[tuple[str, str]], width: int) -> list[str]:
    text = render_pairs([(k.ljust(KEY_WIDTH), v, "") for k, v in pairs], width=width - 2)
    return ["  " + line for line in text.split("\n")]


def params_lines(b: Benchmark, width: int | None) -> list[str]:
    rows = [param_row(p) for p in b.params]
    table = render_table(PARAM_HEADERS, rows, width=None if width is None else width - 4, wrap=(4, 3))
    lines = ["    " + line for line in table.split("\n")]
    if width is None or max(len(line) for line in lines) <= width:
        return lines
    pairs = [(r[0], f"{r[1]}, default {r[2]}, range {r[3]}: {r[4]}", "") for r in rows]  # too narrow for columns
    return ["    " + line for line in render_pairs(pairs, width=width - 4).split("\n")]


def render_one(d: Detail, width: int | None) -> str:
    """One benchmark's detail view, no line over `width` (None: no wrapping)."""
    b = d.bench
    room = WIDE if width is None else width
    value_width = max(20, room - 4 - KEY_WIDTH)
    method = method_lines(d, 100 if width is None else value_width)
    head = [b.name]
    what = b.description + (f" (needs {', '.join(b.requires)})" if b.requires else "")
    first = _pairs([("what", what), ("method", (" " if width is None else "\n").join(method)),
                    ("unit", b.unit.replace("_per_", "/")), ("params", "" if b.params else MISSING)], room)
    if b.params:
        first[-1] = "  params"
        first += params_lines(b, width)
    suites = ", ".join(b.suites) or ("none (hidden: a test benchmark, listed when named)" if b.hidden else "none")
    last = _pairs([("suites", suites), ("sweep", sweep_text(b)),
                   ("LEBench", lebench_text(d.lebench)), ("docs", d.section.ref if d.section else MISSING)], room)
    return "\n".join(head + first + last)


def render(ds: Sequence[Detail], width: int | None) -> str:
    return "\n\n".join(render_one(d, width) for d in ds)


def to_json(ds: Sequence[Detail], doc: Mapping[str, Any]) -> dict[str, Any]:
    """The probe's catalogue document cut to the chosen benchmarks, each
    entry with its LEBench rows (as `lebench_rows` gives them), its docs
    section (`docs_section`, path#anchor) and the docs' gist (`method`)."""
    entries = {e.get("name"): e for e in doc.get("benchmarks", []) if isinstance(e, dict)}
    rows = [r for r in doc.get("lebench_rows", []) if isinstance(r, dict)]
    out = []
    for d in ds:
        entry = dict(entries.get(d.bench.name, {"name": d.bench.name}))
        entry["lebench_rows"] = [r for r in rows if r.get("bench") == d.bench.name]
        entry["docs_section"] = d.section.ref if d.section else None
        entry["method"] = d.section.gist if d.section and d.section.gist else None
        out.append(entry)
    return {"schema": doc.get("schema"), "probe_version": doc.get("probe_version"), "benchmarks": out}
