"""The front end's layers (docs/frontend-layout.md): every import under
src/osmeter goes down the documented table or stays inside its module;
every file belongs to a module of the table; only cli.py imports
osmeter.commands; no module imports another's private name; no files
import each other in a circle. Each rule is also run on a small tree that
breaks it, so a rule that can no longer fail is noticed."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pytest
from layer_doc import layer_table

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src" / "osmeter"
DOC = REPO / "docs" / "frontend-layout.md"
PACKAGE = "osmeter"


def dotted(src: Path, path: Path) -> str:
    """src/osmeter/report/html.py -> osmeter.report.html; a package's __init__ -> the package."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PACKAGE, *parts])


def module_of(name: str) -> str:
    """osmeter.report.html -> report; osmeter.runner -> runner; osmeter -> __init__."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


@dataclass(frozen=True)
class Import:
    source: str  # the importing file, dotted
    line: int
    target: str  # the imported module, dotted
    names: tuple[str, ...]  # what `from target import ...` takes (empty for `import target`)


@lru_cache(maxsize=None)
def _parsed(path: Path, mtime_ns: int) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def parse(path: Path) -> ast.Module:
    """The file's syntax tree, parsed once while it is unchanged (every rule walks every file)."""
    return _parsed(path, path.stat().st_mtime_ns)


def sources(src: Path) -> list[Path]:
    return sorted(p for p in src.rglob("*.py") if "alembic" not in p.relative_to(src).parts)


def _is_module(src: Path, name: str) -> bool:
    rel = Path(*name.split(".")[1:]) if "." in name else Path()
    return (src / rel).with_suffix(".py").is_file() or (src / rel / "__init__.py").is_file()


def imports(src: Path) -> list[Import]:
    """Every import of an osmeter module, anywhere in every file (functions and TYPE_CHECKING too);
    `from .pkg import mod` is an import of the module pkg.mod."""
    out = []
    for path in sources(src):
        me = dotted(src, path)
        package = me if path.name == "__init__.py" else me.rpartition(".")[0]
        for node in ast.walk(parse(path)):
            if isinstance(node, ast.Import):
                out += [Import(me, node.lineno, a.name, ()) for a in node.names
                        if a.name == PACKAGE or a.name.startswith(PACKAGE + ".")]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target != PACKAGE and not target.startswith(PACKAGE + "."):
                    continue
                plain = tuple(a.name for a in node.names if not _is_module(src, f"{target}.{a.name}"))
                out += [Import(me, node.lineno, f"{target}.{a.name}", ()) for a in node.names
                        if _is_module(src, f"{target}.{a.name}")]
                if plain:
                    out.append(Import(me, node.lineno, target, plain))
    return out


def where(imp: Import) -> str:
    return f"{imp.source.replace('.', '/')}.py:{imp.line}"


def layer_violations(src: Path, table: dict[str, int]) -> list[str]:
    bad = []
    for path in sources(src):
        mod = module_of(dotted(src, path))
        if mod not in table:
            bad.append(f"{path.relative_to(src.parent)}: module '{mod}' is in no layer of docs/frontend-layout.md")
    for imp in imports(src):
        mod, tmod = module_of(imp.source), module_of(imp.target)
        if mod == tmod or mod not in table or tmod not in table:
            continue
        if table[tmod] >= table[mod]:
            way = "up" if table[tmod] > table[mod] else "sideways"
            bad.append(f"{where(imp)}: imports {imp.target} ({tmod}, layer {table[tmod]}): goes {way} from "
                       f"{mod} (layer {table[mod]})")
    return bad


def command_violations(src: Path) -> list[str]:
    """Only cli.py (and the commands themselves) import osmeter.commands."""
    return [f"{where(i)}: imports {i.target}; only cli.py may import the commands (move what it needs below them)"
            for i in imports(src)
            if module_of(i.target) == "commands" and module_of(i.source) not in ("commands", "cli")]


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_violations(src: Path) -> list[str]:
    """`from other import _name`, or `other._name` on a module imported as `other`."""
    bad = []
    for imp in imports(src):
        if imp.target != imp.source:
            bad += [f"{where(imp)}: imports the private name {n} of {imp.target}" for n in imp.names if _private(n)]
    for path in sources(src):
        me = dotted(src, path)
        tree = parse(path)
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                for a in node.names:
                    aliases[a.asname or a.name] = a.name
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith(PACKAGE):
                        aliases[a.asname or a.name.split(".")[0]] = a.name
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                    and _private(node.attr)):
                bad.append(f"{me.replace('.', '/')}.py:{node.lineno}: uses the private name {node.attr} of the "
                           f"module {aliases[node.value.id]}")
    return bad


def circles(src: Path) -> list[list[str]]:
    """Strongly connected groups of more than one file in the import graph (Tarjan)."""
    graph: dict[str, set[str]] = {dotted(src, p): set() for p in sources(src)}
    for imp in imports(src):
        if imp.target in graph and imp.target != imp.source:
            graph[imp.source].add(imp.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_table_and_the_sources_are_found() -> None:
    table = layer_table(DOC.read_text(encoding="utf-8"), "frontend-layout.md")
    assert table["fmt"] == 0 and table["commands"] > table["report"] > table["store"] and table["cli"] > 10
    assert len(imports(SRC)) > 300


def test_every_import_goes_down_the_layers() -> None:
    bad = layer_violations(SRC, layer_table(DOC.read_text(encoding="utf-8"), "frontend-layout.md"))
    assert not bad, "imports against docs/frontend-layout.md:\n" + "\n".join(bad)


def test_only_cli_imports_the_commands() -> None:
    bad = command_violations(SRC)
    assert not bad, "\n".join(bad)


def test_no_module_imports_a_private_name_of_another() -> None:
    bad = private_violations(SRC)
    assert not bad, "\n".join(bad)


def test_no_import_circles() -> None:
    found = circles(SRC)
    assert not found, "files that import each other in a circle:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_version_is_pyprojects() -> None:
    from osmeter import __version__

    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")  # no tomllib before Python 3.11
    assert re.search(r'^version = "([^"]+)"$', pyproject, re.M).group(1) == __version__


# --- each rule on a tree that breaks it --------------------------------------------


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    src = tmp_path / "osmeter"
    files = {
        "__init__.py": "",
        "low.py": "from .high import thing\n_secret = 1\n",  # up
        "high.py": "from . import low\nx = low._secret\n",  # a private name by attribute
        "peer.py": "from .low import _secret\n",  # a private name by import
        "stray.py": "",  # in no layer
        "commands/__init__.py": "",
        "commands/run.py": "",
        "report/__init__.py": "",
        "report/a.py": "def f():\n    from ..commands import run\n    from . import b\n",  # a command; a circle
        "report/b.py": "from .a import f\n",
    }
    for name, text in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    return src


TABLE = {"low": 0, "high": 1, "peer": 1, "report": 2, "commands": 3, "__init__": 4}


def test_a_tree_that_breaks_the_rules_is_caught(broken: Path) -> None:
    layers = "\n".join(layer_violations(broken, TABLE))
    assert "low.py:1: imports osmeter.high (high, layer 1): goes up from low (layer 0)" in layers
    assert "module 'stray' is in no layer" in layers
    assert "report/a.py:2: imports osmeter.commands.run (commands, layer 3): goes up" in layers
    assert [v.split(":")[0] for v in command_violations(broken)] == ["osmeter/report/a.py"]
    private = "\n".join(private_violations(broken))
    assert "peer.py:1: imports the private name _secret of osmeter.low" in private
    assert "high.py:2: uses the private name _secret of the module low" in private
    assert circles(broken) == [["osmeter.high", "osmeter.low"], ["osmeter.report.a", "osmeter.report.b"]]
