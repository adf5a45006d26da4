"""The probe's layers (docs/probe-layout.md): every #include "..." under
probe/src goes down the documented table, or stays inside its module; every
file belongs to a module of the table; and every function a header declares
is defined in that header's own module, so calls go down too."""

from __future__ import annotations

from pathlib import Path

import c_source
from layer_doc import layer_table
from probe_helpers import REPO

SRC = REPO / "probe" / "src"
DOC = REPO / "docs" / "probe-layout.md"


# Modules split over several files named `<module>_<part>.c` (docs/probe-layout.md).
SPLIT_MODULES = ("sysinfo", "catalog", "cli", "peer", "profile", "cleanup", "init")


def module_of(rel: str) -> str:
    """probe/src-relative path -> module name (docs/probe-layout.md)."""
    if rel.startswith("arch/"):
        return "arch"
    if rel.startswith("bench/"):
        return "benchmarks"
    stem = rel.split("/")[-1].split(".")[0]
    for group in SPLIT_MODULES:
        if stem == group or stem.startswith(group + "_"):
            return group
    return stem


def include_violations(src: Path, table: dict[str, int]) -> list[str]:
    bad = []
    for path in c_source.sources(src):
        rel = path.relative_to(src).as_posix()
        mod = module_of(rel)
        if mod not in table:
            bad.append(f"probe/src/{rel}: module '{mod}' is in no layer of docs/probe-layout.md")
            continue
        for line, target in c_source.includes(path.read_text()):
            tpath = (path.parent / target).resolve()
            if not tpath.is_relative_to(src.resolve()):
                bad.append(f"probe/src/{rel}:{line}: includes {target}, outside probe/src")
                continue
            tmod = module_of(tpath.relative_to(src.resolve()).as_posix())
            if tmod == mod:
                continue
            if tmod not in table:
                bad.append(f"probe/src/{rel}:{line}: includes {target}, in no layer")
            elif table[tmod] >= table[mod]:
                way = "up" if table[tmod] > table[mod] else "sideways"
                bad.append(f"probe/src/{rel}:{line}: includes {target} ({tmod}, layer {table[tmod]}): "
                           f"goes {way} from {mod} (layer {table[mod]})")
    return bad


def definition_violations(src: Path) -> list[str]:
    defined: dict[str, set[str]] = {}
    for path in c_source.sources(src):
        if path.suffix == ".c":
            for f in c_source.functions(path.read_text()):
                defined.setdefault(f.name, set()).add(module_of(path.relative_to(src).as_posix()))
    bad = []
    for path in c_source.sources(src):
        if path.suffix != ".h":
            continue
        rel = path.relative_to(src).as_posix()
        mod = module_of(rel)
        for name in c_source.prototypes(path.read_text()):
            where = defined.get(name, set())
            if where and where != {mod}:
                bad.append(f"probe/src/{rel}: declares {name}(), defined in {', '.join(sorted(where))}, "
                           f"not in {mod}: define it in its own module")
    return bad


def test_the_table_covers_every_module():
    table = layer_table(DOC.read_text(), "probe-layout.md")
    assert {"status", "cleanup", "log", "bench", "benchmarks", "harness", "catalog", "main"} <= set(table)
    assert table["status"] < table["cleanup"] < table["bench"] < table["harness"] < table["catalog"]
    assert table["harness"] == table["benchmarks"]


def test_every_include_goes_down_the_layers():
    bad = include_violations(SRC, layer_table(DOC.read_text(), "probe-layout.md"))
    assert not bad, "\n".join(bad)


def test_every_declared_function_is_defined_in_its_own_module():
    bad = definition_violations(SRC)
    assert not bad, "\n".join(bad)


def test_the_checks_catch_what_they_forbid(tmp_path):
    """The checks on a small tree: cleanup including bench.h (up),
    harness including a benchmark (sideways), a file in no layer, and a
    bench.h helper defined in the catalogue."""
    src = tmp_path / "src"
    (src / "bench").mkdir(parents=True)
    (src / "status.h").write_text("enum osm_status { OSM_OK };\n")
    (src / "cleanup.c").write_text('#include "status.h"\n#include "bench.h"\n')
    (src / "bench.h").write_text('#include "status.h"\nint osm_fail(int st);\n')
    (src / "harness.c").write_text('#include "bench.h"\n#include "bench/cpu.h"\n')
    (src / "bench" / "cpu.h").write_text('#include "../bench.h"\n')
    (src / "catalog.c").write_text('#include "bench.h"\nint osm_fail(int st)\n{\n\treturn st;\n}\n')
    (src / "stray.c").write_text("")
    table = {"status": 0, "cleanup": 1, "bench": 3, "benchmarks": 4, "harness": 4, "catalog": 5}
    bad = "\n".join(include_violations(src, table))
    assert "cleanup.c:2: includes bench.h (bench, layer 3): goes up from cleanup (layer 1)" in bad
    assert "harness.c:2: includes bench/cpu.h (benchmarks, layer 4): goes sideways" in bad
    assert "stray.c: module 'stray' is in no layer" in bad
    assert "bench/cpu.h" not in bad.replace("harness.c:2: includes bench/cpu.h", "")
    assert len(bad.splitlines()) == 3
    assert definition_violations(src) == [
        "probe/src/bench.h: declares osm_fail(), defined in catalog, not in bench: define it in its own module"]
