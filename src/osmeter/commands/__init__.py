"""The commands, explicit and in the order `osmeter --help` lists them.

Each module has NAME, add_parser(subparsers) -> parser and
run(args) -> exit code; the logic lives in plain functions beside them.
A command's module is imported only when it is needed (`load`): `osmeter
runs` does not pay for the imports of `report` or `fleet` (numpy,
matplotlib, Ansible's parsing...), about half a second of every start.
`COMMANDS` imports them all.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

# (the command's name, its module), in the order `osmeter --help` lists them
MODULES = (
    ("run", "run"), ("list", "list_"), ("runs", "runs"), ("show", "show"), ("compare", "compare"),
    ("noise", "noise"), ("report", "report"), ("plot", "plot"), ("export", "export"), ("import", "import_"),
    ("sysinfo", "sysinfo"), ("serve", "serve"), ("study", "study"), ("hotspots", "hotspots"),
    ("mem-levels", "memlevels"), ("page-cache", "pagecache"), ("fleet", "fleet"), ("kernels", "kernels"), ("store", "store_cmd"),
)
NAMES = tuple(name for name, _ in MODULES)


def load(name: str) -> ModuleType:
    """The module of the command `name` (one of NAMES)."""
    module = importlib.import_module(f".{dict(MODULES)[name]}", __name__)
    if module.NAME != name:  # pragma: no cover - a wrong row of MODULES
        raise AssertionError(f"commands.MODULES names {name!r} for a module whose NAME is {module.NAME!r}")
    return module


def load_all() -> tuple[ModuleType, ...]:
    return tuple(load(name) for name in NAMES)


def __getattr__(name: str) -> Any:
    if name == "COMMANDS":
        return load_all()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
