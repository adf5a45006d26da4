"""The copy of the user's inventory that Ansible reads.

Ansible reads an inventory without bounds: `fleet run /dev/zero` had it
grow to 24 GB before the kernel killed it. So Ansible never reads the
user's path: osmeter copies it into the fleet run's private directory
through osmeter.inputs.read_bounded (a size cap; a pipe or device given
up on when it stalls or never ends) and hands Ansible the copy.

- A file (or a pipe, `<(make-inventory)`): its bytes, at most
  MAX_BYTES, under its own name (Ansible picks its parser by the name:
  `.yml`, `.ini`, an executable script), executable if it was.
- A directory: its files and subdirectories, recursively (at most
  MAX_FILES entries, MAX_DEPTH levels, MAX_BYTES in all); anything that is
  neither a regular file nor a directory (a FIFO, a device, a socket) is
  refused, naming it.
- The `group_vars` and `host_vars` directories beside an inventory file
  go along, so Ansible finds them as it would next to the original.

Relative paths inside the inventory (ansible_ssh_private_key_file=keys/k)
are read by Ansible and ssh from Ansible's working directory, which is
not the caller's: docs/fleet.md asks for absolute ones.

A host Ansible reaches by its local connection (`localhost
ansible_connection=local`) runs Ansible's modules on this machine; with no
ansible_python_interpreter of its own, Ansible's discovery may pick a
pyenv or asdf shim there and fail with raw JSON text. Such a host gets
the Python that runs osmeter (local_interpreters), in a second inventory
source beside the copy (vars_source), which only adds that variable.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any, Mapping

from ..errors import UsageError
from ..inputs import MIB, read_bounded, size_text

MAX_BYTES = 16 * MIB  # all the inventory's files together
MAX_FILES = 5000
MAX_DEPTH = 8
VARS_DIRS = ("group_vars", "host_vars")
LOCAL_CONNECTIONS = ("local", "ansible.builtin.local")
INTERPRETER = "ansible_python_interpreter"
ENV_INTERPRETER = "ANSIBLE_PYTHON_INTERPRETER"  # Ansible's own setting for every host: then none is added


class _Budget:
    """What is left of MAX_BYTES and MAX_FILES while a tree is copied."""

    def __init__(self, shown: Path) -> None:
        self.shown = shown
        self.bytes = MAX_BYTES
        self.files = MAX_FILES

    def take_entry(self) -> None:
        self.files -= 1
        if self.files < 0:
            raise UsageError(f"inventory {self.shown}: more than {MAX_FILES} files and directories; "
                             "osmeter copies the inventory before Ansible reads it")


def _copy_file(src: Path, dest: Path, budget: _Budget) -> None:
    budget.take_entry()
    try:
        mode = os.stat(src).st_mode
    except OSError as e:
        raise UsageError(f"inventory {budget.shown}: cannot read {src}: {e.strerror}") from None
    if not stat.S_ISREG(mode) and src != budget.shown:  # the inventory itself may be a pipe
        raise UsageError(f"inventory {budget.shown}: {src} is not a regular file or a directory (a FIFO, "
                         "a device or a socket); Ansible would read it without bounds")
    data = read_bounded(src, max(budget.bytes, 0), what="inventory file",
                        too_large_hint=f"an inventory of more than {size_text(MAX_BYTES)} is refused")
    budget.bytes -= len(data)
    executable = stat.S_ISREG(mode) and mode & 0o111
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o700 if executable else 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _copy_tree(src: Path, dest: Path, budget: _Budget, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise UsageError(f"inventory {budget.shown}: {src} is more than {MAX_DEPTH} directories deep")
    budget.take_entry()
    dest.mkdir(mode=0o700)
    try:
        entries = sorted(os.scandir(src), key=lambda e: e.name)
    except OSError as e:
        raise UsageError(f"inventory {budget.shown}: cannot list {src}: {e.strerror}") from None
    for entry in entries:
        try:
            is_dir = entry.is_dir()  # a symbolic link to a directory counts as one, as for Ansible
        except OSError:
            is_dir = False
        if is_dir:
            _copy_tree(Path(entry.path), dest / entry.name, budget, depth + 1)
        else:
            _copy_file(Path(entry.path), dest / entry.name, budget)


def copy_inventory(src: Path, into: Path) -> Path:
    """Copy the inventory `src` into the new directory `into`; the path of
    the copy to give Ansible. UsageError naming `src` for a missing or
    unreadable inventory, a file past the limits, or a FIFO or device in a
    directory."""
    if not src.exists():
        raise UsageError(f"inventory {src}: no such file or directory")
    if not os.access(src, os.R_OK):
        raise UsageError(f"inventory {src}: not readable")
    into.mkdir(mode=0o700, parents=True)
    name = src.name if src.name not in ("", ".", "..") else "inventory"
    budget = _Budget(src)
    if src.is_dir():
        _copy_tree(src, into / name, budget)
        return into / name
    _copy_file(src, into / name, budget)
    for sub in VARS_DIRS:
        beside = src.parent / sub
        if beside.is_dir() and sub != name:
            _copy_tree(beside, into / sub, budget)
    return into / name


def local_interpreters(hostvars: Mapping[str, Mapping[str, Any]], python: str = sys.executable,
                       env: Mapping[str, str] = os.environ) -> dict[str, dict[str, str]]:
    """The variables osmeter adds to hosts, by host, from Ansible's resolved
    variables of each (`ansible-inventory --list`'s hostvars: host, group
    and group_vars files merged): `ansible_python_interpreter=python` (the
    Python that runs osmeter) for each host whose ansible_connection is
    local and that names no interpreter; none when $ANSIBLE_PYTHON_INTERPRETER
    names one for every host, or when `python` is not a plain path (Ansible
    would template a `{{`)."""
    if env.get(ENV_INTERPRETER) or "{" in python:
        return {}
    return {host: {INTERPRETER: python} for host, hv in hostvars.items()
            if isinstance(hv, Mapping) and hv.get("ansible_connection") in LOCAL_CONNECTIONS
            and hv.get(INTERPRETER) in (None, "")}


def vars_source(added: Mapping[str, Mapping[str, str]], into: Path) -> Path:
    """A YAML inventory (JSON is YAML) that gives these hosts these variables,
    written to `into`; Ansible reads it after the user's inventory."""
    into.write_text(json.dumps({"all": {"hosts": {h: dict(v) for h, v in added.items()}}}, indent=1) + "\n")
    return into
