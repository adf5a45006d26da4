"""`osmeter list NAME...`: one benchmark in detail (method, parameters,
unit, suites, the standard suite's instances, LEBench rows, docs section),
by name or fnmatch pattern; unknown names are a usage error."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from osmeter import errors
from osmeter.benchinfo import select, size_text, sweep_groups
from osmeter.catalog import Benchmark, Param
from osmeter.methoddocs import MethodDocs, bounded, slug

from ..conftest import ROOT


@pytest.fixture
def real_probe(probe: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OSMETER_PROBE", probe)
    monkeypatch.setenv("COLUMNS", "100")
    return probe


@pytest.fixture
def catalogue(cli, real_probe: str) -> dict:
    """The probe's catalogue, hidden benchmarks included, as `list --json` with names gives it."""
    r = cli("list", "--json", "*", "test.*")
    assert r.code == 0, r.err
    return json.loads(r.out)


def blocks(out: str) -> dict[str, list[str]]:
    """The detail view cut at its benchmarks: name -> its lines."""
    found: dict[str, list[str]] = {}
    name = ""
    for line in out.splitlines():
        if line and not line.startswith(" "):
            name = line
            found[name] = []
        elif line:
            found[name].append(line)
    return found


def field(lines: list[str], key: str) -> list[str]:
    """A key's value lines ("  key   value" and the lines under it)."""
    at = next(i for i, line in enumerate(lines) if line.split()[0] == key)
    indent = len(lines[at]) - len(lines[at][2 + len(key):].lstrip())
    values = [lines[at][indent:]]
    for line in lines[at + 1:]:
        if len(line) - len(line.lstrip()) < indent:
            break
        values.append(line.strip())
    return values


def github_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a file's headings, computed here independently."""
    anchors: set[str] = set()
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        m = None if fenced else re.match(r"#{1,6}\s+(.*)", line)
        if m:
            text = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            anchor, n = text, 1
            while anchor in anchors:
                anchor, n = f"{text}-{n}", n + 1
            anchors.add(anchor)
    return anchors


def test_one_name_shows_method_params_unit_suites_sweep_and_docs(cli, catalogue: dict) -> None:
    entry = next(b for b in catalogue["benchmarks"] if b["name"] == "file.read")
    r = cli("list", "file.read")
    assert r.code == 0 and r.err == "", r.err
    view = blocks(r.out)
    assert list(view) == ["file.read"]
    lines = view["file.read"]
    assert " ".join(field(lines, "what")) == entry["description"]
    assert 1 <= len(field(lines, "method")) <= 2
    assert "read(fd, buf, size)" in " ".join(field(lines, "method"))  # its row in docs/methods/file.md
    assert field(lines, "unit") == [entry["unit"]]
    assert field(lines, "suites") == [", ".join(entry["suites"])]
    params = {line.split()[0]: line.split() for line in lines[lines.index("  params") + 3:]
              if line.startswith("    ") and line.split()[0] in {p["name"] for p in entry["params"]}}
    assert set(params) == {p["name"] for p in entry["params"]}
    assert params["size"][1:4] == ["size", "4KiB", "1B..1GiB"]  # sizes in binary units, as --param takes them
    assert params["buffer"][1:4] == ["enum", "reused", "reused|malloc"]
    sweep = field(lines, "sweep")
    assert sweep[0] == f"{len(entry['sweep'])} instances in the standard suite:"
    assert sweep[1] == "size=" + ", ".join(size_text(s["size"]) for s in entry["sweep"])
    assert field(lines, "docs") == [entry["docs_section"]] == ["docs/methods/file.md#fileread-and-filewrite"]


def test_a_benchmark_with_lebench_rows_shows_each_with_its_parameters(cli, catalogue: dict) -> None:
    r = cli("list", "task.fork")
    assert r.code == 0, r.err
    rows = [row for row in catalogue["benchmarks"] if row["name"] == "task.fork"][0]["lebench_rows"]
    assert [row["name"] for row in rows] == ["fork", "big fork", "huge fork"]
    shown = field(blocks(r.out)["task.fork"], "LEBench")
    assert shown == ['"fork": the defaults', '"big fork": vmas=6000', '"huge fork": vmas=12000']
    assert field(blocks(cli("list", "mem.latency").out)["mem.latency"], "LEBench") == ["-"]


def test_a_glob_lists_its_family_in_catalogue_order(cli, catalogue: dict) -> None:
    r = cli("list", "file.*")
    assert r.code == 0, r.err
    assert list(blocks(r.out)) == [b["name"] for b in catalogue["benchmarks"] if b["name"].startswith("file.")]
    r = cli("list", "net.*")
    assert r.code == 0 and len(blocks(r.out)) == sum(b["family"] == "net" for b in catalogue["benchmarks"]) > 1


def test_several_names_keep_their_order_each_once(cli, real_probe: str) -> None:
    r = cli("list", "mem.latency", "file.read", "cpu.*", "file.read", "cpu.call")
    assert r.code == 0, r.err
    names = list(blocks(r.out))
    assert names[:2] == ["mem.latency", "file.read"] and names[2:] == sorted(set(names[2:]), key=names.index)
    assert all(n.startswith("cpu.") for n in names[2:]) and "cpu.call" in names[2:] and len(names) == len(set(names))


@pytest.mark.parametrize("args, message, close", [
    (("file.raed",), "no benchmark named 'file.raed'", "file.read"),
    (("nett.*",), "no benchmark matches 'nett.*'", "net.*"),
    (("mem.latency", "fork"), "no benchmark named 'fork'", None),
    (("zzzz*",), "no benchmark matches 'zzzz*' (no close match)", None),
])
def test_a_name_or_pattern_that_matches_nothing_is_a_usage_error(cli, real_probe: str, args: tuple[str, ...],
                                                                 message: str, close: str | None) -> None:
    r = cli("list", *args)
    assert r.code == errors.EXIT_USAGE == 2
    assert r.out == ""  # nothing printed for the names that did match either
    assert r.err.startswith("osmeter: error: ") and message in r.err, r.err
    if close:
        assert re.search(r"close matches: [^)]*" + re.escape(close), r.err), r.err
    assert "mem.latency" not in r.err


def test_json_with_names_gives_the_catalogue_entries_and_the_extra_fields(cli, probe: str, catalogue: dict) -> None:
    import subprocess

    plain = json.loads(subprocess.run([probe, "list", "--json", "--all"], capture_output=True, text=True,
                                      check=True).stdout)
    r = cli("list", "--json", "file.read", "task.fork")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["probe_version"] == plain["probe_version"] and doc["schema"] == plain["schema"]
    assert [b["name"] for b in doc["benchmarks"]] == ["file.read", "task.fork"]
    for entry in doc["benchmarks"]:
        extra = {k: entry.pop(k) for k in ("lebench_rows", "docs_section", "method")}
        assert entry == next(b for b in plain["benchmarks"] if b["name"] == entry["name"])
        assert extra["lebench_rows"] == [row for row in plain["lebench_rows"] if row["bench"] == entry["name"]]
        assert extra["docs_section"].startswith(f"docs/methods/{entry['family']}.md#") and extra["method"]


@pytest.mark.parametrize("columns", [100, 80])
def test_the_detail_view_fits_columns(cli, real_probe: str, monkeypatch: pytest.MonkeyPatch, columns: int) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    r = cli("list", "*", "test.spin")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert max(len(line) for line in lines) <= columns, max(lines, key=len)
    monkeypatch.delenv("COLUMNS")  # piped: 100 columns
    assert max(len(line) for line in cli("list", "mem.*").out.splitlines()) <= 100
    wide = cli("list", "--wide", "mem.latency").out.splitlines()
    assert max(len(line) for line in wide) > 100  # --wide: nothing wrapped


def test_every_docs_section_shown_is_a_heading_of_its_file(catalogue: dict) -> None:
    names = [b["name"] for b in catalogue["benchmarks"]]
    assert "test.spin" in names  # hidden, named by the fixture's pattern 'test.*'
    for entry in catalogue["benchmarks"]:
        path, _, anchor = (entry["docs_section"] or "").partition("#")
        assert path.startswith("docs/methods/") and anchor, entry["name"]
        assert anchor in github_anchors((ROOT / path).read_text(encoding="utf-8")), (entry["name"], anchor)
        assert entry["method"], entry["name"]  # every benchmark's docs describe its method


def test_hidden_benchmarks_are_listed_when_named(cli, real_probe: str) -> None:
    assert list(blocks(cli("list", "test.spin").out)) == ["test.spin"]
    assert "test.spin" not in blocks(cli("list", "*").out)
    assert list(blocks(cli("list", "test.*").out)) == ["test.spin"]  # all the pattern matches


def bench(name: str, hidden: bool = False, params: tuple[Param, ...] = (), sweep: tuple = ()) -> Benchmark:
    return Benchmark(name, name.split(".")[0], "d", "ns", (), ("standard",), params, sweep, hidden=hidden)


def test_select_matches_names_and_patterns() -> None:
    cat = [bench("a.x"), bench("a.y"), bench("b.x"), bench("t.s", hidden=True)]
    assert [b.name for b in select(cat, ["b.x", "a.*", "a.x", "?.s"])] == ["b.x", "a.x", "a.y", "t.s"]
    assert [b.name for b in select(cat, ["*.[st]"])] == ["t.s"]
    assert [b.name for b in select(cat, ["*"])] == ["a.x", "a.y", "b.x"]
    with pytest.raises(errors.UsageError, match=r"no benchmark named 'A\.X' \(close matches: a\.x"):
        select(cat, ["A.X"])


def test_sweep_groups_group_by_the_parameter_with_most_values() -> None:
    params = (Param("op", "enum", "read", choices=("read", "write", "copy")), Param("threads", "enum", "1"),
              Param("size", "size", 0), Param("k", "int", 5))
    sweep = tuple({"op": op, "threads": t, "size": s, "k": 7}
                  for op, t, s in [("read", "1", 0), ("read", "1", 4096), ("read", "1", 5184), ("read", "1", 2 << 30),
                                   ("write", "1", 0), ("copy", "1", 0), ("read", "all", 0), ("write", "all", 0)])
    assert sweep_groups(bench("m.bw", params=params), sweep) == [
        "every one: k=7",
        "op=read threads=1: size=0, 4KiB, 5184B, 2GiB",
        "op=write|copy threads=1: size=0",
        "op=read|write threads=all: size=0",
    ]
    assert sweep_groups(bench("m.x", params=params), [{"op": "read", "threads": "1", "size": 0, "k": 5}]) == [
        "the defaults"]


def test_slug_is_githubs() -> None:
    assert slug("cpu.timer_overhead — ns per clock read") == "cputimer_overhead--ns-per-clock-read"
    assert slug("file.read and file.write") == "fileread-and-filewrite"
    assert slug("Fidelity: sockperf and iperf3") == "fidelity-sockperf-and-iperf3"
    assert slug("`osmeter study net -o DIR`") == "osmeter-study-net--o-dir"
    assert slug("See [the peer](../peer.md)") == "see-the-peer"


NOTE = """# fam: a family

| benchmark | timed | unit |
| --- | --- | --- |
| `fam.row` | one `row()` call | ns |

## fam.own (its own heading)

Parameters: `n`.

**Method.** The own benchmark does one thing. Then another thing that is long enough to need a second line.

## Shared: fam.one, fam.two

- `fam.one`: the first, described in a list item.
- `fam.two`: the second.

## Shared

The same heading twice.

## Shared

Here `fam.dup` is mentioned, in passing.
"""


def test_method_docs_find_the_section_and_its_gist(tmp_path: Path) -> None:
    (tmp_path / "fam.md").write_text(NOTE)
    (tmp_path / "other.md").write_text("# other\n\n## Ground truth\n\nThe hidden `fam.hidden` spins.\n")
    docs = MethodDocs(tmp_path)
    own = docs.section("fam.own", "fam")
    assert own is not None and own.ref == "docs/methods/fam.md#famown-its-own-heading"
    assert own.gist.startswith("The own benchmark does one thing.")  # not the parameters
    row = docs.section("fam.row", "fam")
    assert row is not None and row.anchor == "fam-a-family" and row.gist == "timed: one row() call"
    one = docs.section("fam.one", "fam")
    assert one is not None and one.anchor == "shared-famone-famtwo"
    assert one.gist == "the first, described in a list item."
    hidden = docs.section("fam.hidden", "fam")
    assert hidden is not None and hidden.ref == "docs/methods/other.md#ground-truth"
    assert docs.section("fam.none", "fam") is None
    assert "fam.md" in str(docs.directory / "fam.md") and not MethodDocs(tmp_path / "absent").found
    dup = docs.section("fam.dup", "fam")
    assert dup is not None and dup.anchor == "shared-1" and dup.gist == "Here fam.dup is mentioned, in passing."
    assert github_anchors(NOTE) >= {"shared", "shared-1"}


def test_bounded_keeps_whole_sentences_or_cuts_with_an_ellipsis() -> None:
    text = "First sentence is here. " + "word " * 40
    assert bounded("short.", 30) == ["short."]
    lines = bounded(text, 30)
    assert len(lines) == 2 and all(len(line) <= 30 for line in lines) and lines[-1].endswith("…")
    two = "A first sentence long enough to fill both lines of forty characters. A second one, which does not fit."
    assert bounded(two, 40) == ["A first sentence long enough to fill", "both lines of forty characters."]
